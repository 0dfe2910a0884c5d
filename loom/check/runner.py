"""Plans and executes check cases: parameters -> samples -> inputs -> oracles -> expectations.

Random inputs come from ``numpy.random.default_rng(seed)`` (PCG64), a fresh generator per op
and sample: integers are drawn with ``integers(lower, upper, endpoint=True)`` (inclusive
bounds), floats with ``uniform(lower, upper)``; the same seed always gives the same tensor.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from loom.check.report import CaseResult, Failure, Report, SampleResult
from loom.diagnostics import op_source_range, render_range
from loom.dialects import check as C
from loom.dialects import kernel as K
from loom.errors import LoomError
from loom.ir.types import ShapedType, StaticDim
from loom.opview import operand_groups

_DTYPES = {
    "i1": np.bool_, "i8": np.int8, "i16": np.int16, "i32": np.int32, "i64": np.int64,
    "index": np.int64, "offset": np.uint64, "f16": np.float16, "f32": np.float32,
    "f64": np.float64,
}  # fmt: skip


class CheckError(LoomError):
    """A case that cannot be planned or run (bad parameters, unknown provider, bad file)."""


def _reference_matmul(*xs: np.ndarray, **attrs: Any) -> tuple:
    a, b = xs[0].astype(np.float64), xs[1].astype(np.float64)
    c = a @ b + (xs[2].astype(np.float64) if len(xs) > 2 else 0.0)
    return (c.astype(xs[0].dtype),)


ORACLES: dict[str, Callable[..., tuple]] = {
    "reference.matmul": _reference_matmul,
    "reference.copy": lambda *xs, **attrs: tuple(np.array(x, copy=True) for x in xs),
    "reference.add": lambda a, b, **attrs: (np.add(a, b),),
    "reference.mul": lambda a, b, **attrs: (np.multiply(a, b),),
    "reference.sum": lambda a, **attrs: (np.asarray(a.sum(dtype=a.dtype)),),
}
"""Oracle providers by name: NumPy functions from input arrays to a tuple of results."""


def _dtype(t: Any) -> Any:
    elem = t.element_type if isinstance(t, ShapedType) else t
    dt = _DTYPES.get(str(elem))
    if dt is None:
        raise CheckError(f"element type {elem} is not supported by the check runner")
    return np.dtype(dt)


def _shape(t: Any, env: dict) -> tuple[int, ...]:
    if not isinstance(t, ShapedType):
        return ()
    out = []
    for d in t.dims:
        out.append(d.size if isinstance(d, StaticDim) else int(env[id(d.value)]))
    return tuple(out)


def _domain(op: Any) -> list[Any]:
    a = op.attributes
    if op.name == C.PARAM_CHOICE.name:
        return list(a["values"])
    if op.name == C.PARAM_SEED.name:
        return list(range(int(a["base"]), int(a["base"]) + int(a["count"])))
    lo, hi = a["lower"], a["upper"]
    if a["policy"] == "po2":
        v = 1 << max(0, math.ceil(math.log2(lo)))
        out = []
        while v <= hi:
            out.append(v)
            v *= 2
        return out
    step = a.get("step", 1)
    n = math.floor((hi - lo) / step) + 1
    return [lo + k * step for k in range(max(n, 0))]


_PARAMS = (C.PARAM_RANGE.name, C.PARAM_CHOICE.name, C.PARAM_SEED.name)
_EXPECTS = (
    C.EXPECT_EQUAL.name, C.EXPECT_BITWISE.name, C.EXPECT_CLOSE.name, C.EXPECT_SHAPE.name,
    C.EXPECT.name, C.EXPECT_EVENT.name,
)  # fmt: skip


def _where(module: Any, op: Any) -> str:
    rng = op_source_range(module, op)
    if rng is None:
        return ""
    return "\n".join([f"{rng}:", *render_range(rng)])


def _compare(op: Any, got: Any, want: Any) -> tuple[str, Any] | None:
    """None when the expectation holds, else (detail, first failing index or None)."""
    got, want = np.asarray(got), np.asarray(want)
    if got.shape != want.shape or got.dtype != want.dtype:
        return (f"shape/type {got.shape} {got.dtype} != {want.shape} {want.dtype}", None)
    name = op.name
    if name == C.EXPECT_BITWISE.name:
        bad = got.view(np.uint8).reshape(got.shape + (-1,)) != want.view(np.uint8).reshape(
            want.shape + (-1,)
        )
        bad = bad.any(axis=-1)
        detail = "storage bytes differ"
    elif name == C.EXPECT_CLOSE.name:
        a, e = got.astype(np.float64), want.astype(np.float64)
        atol, rtol = op.attributes["atol"], op.attributes["rtol"]
        nan_a, nan_e = np.isnan(a), np.isnan(e)
        with np.errstate(invalid="ignore"):
            ok = np.abs(a - e) <= atol + rtol * np.abs(e)
        either = nan_a | nan_e
        same_nan = nan_a & nan_e if op.attributes["nan"] == "same" else np.zeros_like(ok)
        bad = np.where(either, ~same_nan, ~ok)
        detail = "values not within tolerance"
    else:
        bad = got != want
        detail = "values differ"
    if not bad.any():
        return None
    first = tuple(int(i) for i in np.argwhere(np.atleast_1d(bad))[0]) if got.ndim else ()
    return (f"{int(np.count_nonzero(bad))} of {bad.size} elements: {detail}", first)


class _Case:
    def __init__(self, module: Any, op: Any, base: Path | None, sanitize: bool = True) -> None:
        self.module = module
        self.sanitize = sanitize
        self.op = op
        self.name = op.attributes["case_symbol"]
        self.body = op.regions[0].blocks[0].ops
        self.base = base
        self.params = [o for o in self.body if o.name in _PARAMS]
        self.domains = [_domain(o) for o in self.params]
        for o, d in zip(self.params, self.domains, strict=True):
            if not d:
                raise CheckError(f"@{self.name}: parameter {self._pname(o)} has no values")

    def _pname(self, o: Any) -> str:
        return o.attributes.get("param_name") or f"%{o.results[0].display_name}"

    def samples(self) -> list[dict[int, Any]]:
        # Mixed radix with the first parameter varying fastest (upstream's order).
        combos = itertools.product(*reversed(self.domains))
        return [dict(zip(range(len(self.domains)), reversed(c), strict=True)) for c in combos]

    def skip_reason(self) -> str | None:
        for o in self.body:
            if o.name == C.REQUIRES.name:
                return f"requirement provider '{o.attributes['provider']}' is not registered"
            if o.name == C.SKIP_IF.name:
                return o.attributes.get("reason") or f"skip_if<{o.attributes['provider']}>"
        return None

    def run_sample(self, ordinal: int, choice: dict[int, Any]) -> SampleResult:
        env: dict[int, Any] = {}
        res = SampleResult(self.name, ordinal, {})
        for i, o in enumerate(self.params):
            v = choice[i]
            res.params[self._pname(o)] = v
            env[id(o.results[0])] = _dtype(o.results[0].type).type(v)
        n_exp = 0
        for o in self.body:
            if o.name in _PARAMS or o.name in (C.RETURN.name, C.REQUIRES.name, C.SKIP_IF.name):
                continue
            try:
                if o.name in _EXPECTS:
                    failure = self._expect(o, env, n_exp)
                    n_exp += 1
                    if failure is not None:
                        res.failures.append(failure)
                else:
                    self._value(o, env)
            except LoomError as e:
                res.issues.append(f"{_where(self.module, o)}\n{e}".strip())
                break
        res.expectation_count = n_exp
        return res

    def _launch(self, o: Any, env: dict) -> None:
        from loom.interp import launch

        groups = operand_groups(o, K.LAUNCH)
        workload = [int(env[id(v)]) for v in groups["workloads"]]
        # Tensors are passed by storage: the kernel writes straight into the case's arrays.
        args = [env[id(v)] for v in groups["arguments"]]
        result = launch(
            self.module, o.attributes["callee"], workload=workload, args=args,
            sanitize=self.sanitize,
        )  # fmt: skip
        if result.errors:
            raise CheckError(
                f"kernel @{o.attributes['callee']} reported "
                + "; ".join(d.headline() for d in result.errors)
            )

    def _value(self, o: Any, env: dict) -> None:
        a = o.attributes
        if o.name == K.LAUNCH.name:
            self._launch(o, env)
            return
        if o.name == C.ORACLE_CALL.name:
            fn = ORACLES.get(a["provider"])
            if fn is None:
                raise CheckError(f"no oracle provider '{a['provider']}' (known: {sorted(ORACLES)})")
            outs = fn(*(env[id(v)] for v in o.operands))
            for r, x in zip(o.results, outs, strict=True):
                env[id(r)] = np.asarray(x).astype(_dtype(r.type)).reshape(_shape(r.type, env))
            return
        if o.name == C.WRITE_NPY.name:
            return  # written after expectations; not yet implemented
        if o.name == C.TENSOR_VIEW.name:
            src = env[id(o.operands[0])]
            t = o.results[0].type
            shape, dt = _shape(t, env), _dtype(t)
            start = int(a["byte_offset"])
            raw = src.reshape(-1).view(np.uint8)
            need = int(np.prod(shape)) * dt.itemsize
            if start + need > raw.size:
                raise CheckError(f"view of {need} bytes at {start} exceeds {raw.size} bytes")
            env[id(o.results[0])] = raw[start : start + need].view(dt).reshape(shape)
            return
        r = o.results[0]
        shape, dt = _shape(r.type, env), _dtype(r.type)
        if o.name == C.LITERAL.name:
            env[id(r)] = dt.type(a["value"])
        elif o.name == C.FILL.name:
            env[id(r)] = np.full(shape, a["value"], dtype=dt)
        elif o.name == C.IOTA.name:
            k = np.arange(int(np.prod(shape)), dtype=np.int64)
            if a.get("period") is not None:
                k = k % int(a["period"])
            env[id(r)] = (a["offset"] + k * a["step"]).astype(dt).reshape(shape)
        elif o.name == C.UNIFORM.name:
            rng = np.random.default_rng(int(env[id(o.operands[0])]))
            lo, hi = a["lower"], a["upper"]
            if np.issubdtype(dt, np.integer):
                x = rng.integers(int(lo), int(hi), size=shape, endpoint=True)
            else:
                x = rng.uniform(float(lo), float(hi), size=shape)
            env[id(r)] = x.astype(dt)
        elif o.name == C.READ_NPY.name:
            path = Path(a["path"])
            if not path.is_absolute() and self.base is not None:
                path = self.base / path
            try:
                x = np.load(path, allow_pickle=False)
            except (OSError, ValueError) as e:
                raise CheckError(f"cannot read '{path}': {e}") from None
            if x.shape != shape or x.dtype != dt:
                raise CheckError(f"'{path}' holds {x.shape} {x.dtype}, declared {shape} {dt}")
            env[id(r)] = x
        else:
            raise CheckError(f"'{o.name}' is not supported inside a case by this runner yet")

    def _expect(self, o: Any, env: dict, index: int) -> Failure | None:
        kind = o.name.rsplit(".", 1)[-1] if o.name != C.EXPECT.name else "custom"
        if o.name == C.EXPECT_SHAPE.name:
            got = np.shape(env[id(o.operands[0])])
            dyn = iter(o.operands[1:])
            want = tuple(
                int(env[id(next(dyn))]) if s == -(2**63) else int(s)
                for s in o.attributes["static_dims"]
            )
            if got == want:
                return None
            return Failure("shape", f"shape {got} != {want}", index, _where(self.module, o),
                           got=got, want=want)  # fmt: skip
        if o.name in (C.EXPECT.name, C.EXPECT_EVENT.name):
            raise CheckError(f"provider '{o.attributes['provider']}' is not registered")
        got, want = env[id(o.operands[0])], env[id(o.operands[1])]
        found = _compare(o, got, want)
        if found is None:
            return None
        detail, first = found
        g, w = np.asarray(got), np.asarray(want)
        if first is not None and g.shape == w.shape:
            g, w = g[first] if g.ndim else g, w[first] if w.ndim else w
        close = o.name == C.EXPECT_CLOSE.name
        return Failure(
            kind, detail, index, _where(self.module, o), first_index=first,
            got=g.item() if np.ndim(g) == 0 else g.tolist(),
            want=w.item() if np.ndim(w) == 0 else w.tolist(),
            atol=o.attributes["atol"] if close else None,
            rtol=o.attributes["rtol"] if close else None,
        )  # fmt: skip


def run(
    module: Any,
    case: str | None = None,
    sample: int | None = None,
    sanitize: bool = True,
    *,
    max_samples_per_case: int = 4096,
    base_dir: str | Path | None = None,
) -> Report:
    """Run the module's check cases (or the one named ``case``) and report every sample."""
    name = case[1:] if case and case.startswith("@") else case
    cases = [o for o in module.ops if o.name == C.CASE.name]
    if name is not None:
        cases = [o for o in cases if o.attributes["case_symbol"] == name]
        if not cases:
            raise CheckError(f"no check case @{name} in the module")
    base = Path(base_dir) if base_dir is not None else None
    report = Report()
    for op in cases:
        c = _Case(module, op, base, sanitize)
        result = CaseResult(c.name)
        report.cases.append(result)
        result.skipped = c.skip_reason()
        if result.skipped is not None:
            continue
        plans = c.samples()[:max_samples_per_case]
        result.sample_count = len(plans)
        if sample is not None:
            if not 0 <= sample < len(plans):
                raise CheckError(f"@{c.name} has {len(plans)} samples; --sample={sample}")
            plans_idx = [sample]
        else:
            plans_idx = list(range(len(plans)))
        for s in plans_idx:
            result.samples.append(c.run_sample(s, plans[s]))
    return report


def plan_counts(
    module: Any, max_samples_per_case: int = 4096, case: str | None = None
) -> list[tuple[str, int]]:
    """(case name, sample count) for each case, without running any."""
    name = case[1:] if case and case.startswith("@") else case
    out = []
    for op in module.ops:
        if op.name == C.CASE.name and name in (None, op.attributes["case_symbol"]):
            c = _Case(module, op, None)
            out.append((c.name, min(math.prod(len(d) for d in c.domains), max_samples_per_case)))
    return out
