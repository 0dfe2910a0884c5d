"""Plans and executes check cases: parameters -> samples -> inputs -> invocations -> expectations.

Random inputs come from ``numpy.random.default_rng(seed)`` (PCG64), a fresh generator per op
and sample: integers are drawn with ``integers(lower, upper, endpoint=True)`` (inclusive
bounds), floats with ``uniform(lower, upper)``; the same seed always gives the same tensor.

Invocations are ``kernel.launch`` (the case's tensors bound to the kernel's buffers, written in
place) and ``func.call`` of ordinary ``func.def`` reference implementations, which run on the
reference interpreter with value semantics (tensor arguments are copied on entry). Symbols a
module only declares are looked up by name in the linked ``libraries``.
"""

from __future__ import annotations

import itertools
import math
import os
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np

from loom.check.report import CaseResult, Failure, PlanningIssue, Report, SampleResult
from loom.diagnostics import op_source_range, render_range
from loom.dialects import check as C
from loom.dialects import kernel as K
from loom.dsl import Call
from loom.errors import LoomError, LoomRuntimeError
from loom.ir import DYNAMIC_INDEX, DictAttr, ShapedType, StaticDim
from loom.opview import operand_groups
from loom.registry import as_registry

_DTYPES = {
    "i1": np.bool_, "i8": np.int8, "i16": np.int16, "i32": np.int32, "i64": np.int64,
    "index": np.int64, "offset": np.uint64, "f16": np.float16, "f32": np.float32,
    "f64": np.float64,
}  # fmt: skip
_NAMED_DTYPES = {
    "u8": np.uint8, "u16": np.uint16, "u32": np.uint32, "u64": np.uint64, **_DTYPES,
}  # fmt: skip


class CheckError(LoomError):
    """A case that cannot be planned or run (bad parameters, unknown provider, bad file)."""


# --------------------------------------------------------------------------- sanitizer


SANITIZER_CATEGORIES: dict[str, frozenset[str]] = {
    "access": frozenset({"SANITIZE/001"}),
    "asan": frozenset({"SANITIZE/001"}),
    "race": frozenset({"SANITIZE/002", "SANITIZE/003"}),
    "tsan": frozenset({"SANITIZE/002", "SANITIZE/003"}),
    "operation": frozenset({"SANITIZE/004", "SANITIZE/005"}),
    "value": frozenset(),
    "ubsan": frozenset(),
}
"""Upstream's ``--sanitizer`` categories mapped onto our sanitizer's finding codes.

``access``/``asan``: reads of uninitialised bytes (out-of-bounds accesses are runtime errors
and always reported); ``race``/``tsan``: data races; ``operation``: barrier and collective
divergence; ``value``/``ubsan``: accepted, no finding of ours belongs to them (integer
division by zero and the like are runtime errors, always reported). ``all`` is every category,
``none`` turns the sanitizer off."""


def sanitizer_codes(spec: bool | str | None) -> frozenset[str] | None:
    """The finding codes a ``sanitize`` setting keeps (None: sanitizer off).

    ``True`` (or ``"all"``) keeps every finding, ``False``/``"none"`` none; a string joins
    category names with ``|`` or ``,`` (``"access|race"``)."""
    if spec is None or spec is True:
        spec = "all"
    if spec is False:
        return None
    parts = [p.strip() for p in str(spec).replace(",", "|").split("|") if p.strip()]
    if not parts:
        raise CheckError(
            "--sanitizer needs a category (none, all, " + ", ".join(SANITIZER_CATEGORIES) + ")"
        )
    if parts == ["none"]:
        return None
    codes: set[str] = set()
    for p in parts:
        if p == "all":
            codes.update(*SANITIZER_CATEGORIES.values())
        elif p in SANITIZER_CATEGORIES:
            codes.update(SANITIZER_CATEGORIES[p])
        else:
            known = ", ".join(["none", "all", *SANITIZER_CATEGORIES])
            raise CheckError(f"unknown sanitizer category '{p}' (known: {known})")
    return frozenset(codes)


_EVENT_TYPES = {
    "SANITIZE/001": ("asan_report", {"asan": {"access": "read"}}),
    "SANITIZE/002": ("tsan_report", {"tsan": {"check": "data_race"}}),
    "SANITIZE/003": ("tsan_report", {"tsan": {"check": "data_race"}}),
    "SANITIZE/004": ("ubsan_report", {"ubsan": {"check": "unknown"}}),
    "SANITIZE/005": ("ubsan_report", {"ubsan": {"check": "unknown"}}),
}


def _event(d: Any, kernel: str) -> dict[str, Any]:
    kind, extra = _EVENT_TYPES.get(d.code, ("driver_failure", {}))
    return {"type": kind, "severity": d.severity.value, "export": kernel, "code": d.code, **extra}


def _event_matches(event: Mapping[str, Any], want: Mapping[str, Any]) -> bool:
    for key, value in want.items():
        if key == "count":
            continue
        got = event.get(key)
        if isinstance(value, Mapping):
            if not isinstance(got, Mapping) or not _event_matches(got, value):
                return False
        elif got != value:
            return False
    return True


# --------------------------------------------------------------------------- providers


def _cast(x: np.ndarray, name: Any, what: str) -> np.ndarray:
    if name is None:
        return x
    dt = _NAMED_DTYPES.get(str(name))
    if dt is None:
        raise CheckError(f"{what} type '{name}' is not one of {', '.join(_NAMED_DTYPES)}")
    return x.astype(dt)


def _matmul_attrs(a: np.ndarray, b: np.ndarray, attrs: Mapping[str, Any]) -> tuple:
    if np.issubdtype(a.dtype, np.floating):
        return a.astype(np.float64), b.astype(np.float64), np.float64
    a, b = _cast(a, attrs.get("lhs"), "lhs"), _cast(b, attrs.get("rhs"), "rhs")
    acc = _NAMED_DTYPES.get(str(attrs.get("accumulator", "i64")), np.int64)
    return a.astype(acc), b.astype(acc), acc


def _reference_matmul(*xs: np.ndarray, **attrs: Any) -> tuple:
    """C = A @ B (+ C_init); floats accumulate in f64, integers in ``accumulator``."""
    a, b, acc = _matmul_attrs(xs[0], xs[1], attrs)
    c = a @ b
    if len(xs) > 2:
        c = c + xs[2].astype(acc)
    return (_cast(c, attrs.get("result"), "result"),)


def _reference_tiled_matmul(*xs: np.ndarray, **attrs: Any) -> tuple:
    """Tiled C[Mt,Nt,M,N] = sum over Kt of A[Mt,Kt,M,K] @ B[Kt,Nt,K,N] (+ C_init)."""
    a, b, acc = _matmul_attrs(xs[0], xs[1], attrs)
    c = np.einsum("ikmr,kjrn->ijmn", a, b)
    if len(xs) > 2:
        c = c + xs[2].astype(acc)
    return (_cast(c, attrs.get("result"), "result"),)


ORACLES: dict[str, Callable[..., tuple]] = {
    "reference.matmul": _reference_matmul,
    "reference.tiled_matmul": _reference_tiled_matmul,
    "reference.copy": lambda *xs, **attrs: tuple(np.array(x, copy=True) for x in xs),
    "reference.add": lambda a, b, **attrs: (np.add(a, b),),
    "reference.mul": lambda a, b, **attrs: (np.multiply(a, b),),
    "reference.sum": lambda a, **attrs: (np.asarray(a.sum(dtype=a.dtype)),),
}
"""Oracle providers by name: NumPy functions from input arrays (and the op's ``attrs`` as
keywords) to a tuple of results. ``reference.scalar`` is not listed: it runs the ``callee``'s
reference implementation (a ``func.def``) on the reference interpreter."""

SCALAR_ORACLE = "reference.scalar"


def _topk_equal(got: np.ndarray, want: np.ndarray, attrs: Mapping[str, Any]) -> str | None:
    k = int(attrs.get("k", 1))
    g, w = np.sort(np.ravel(got))[::-1][:k], np.sort(np.ravel(want))[::-1][:k]
    if np.array_equal(g, w):
        return None
    return f"the {k} largest values differ: got {g.tolist()}, want {w.tolist()}"


VALIDATORS: dict[str, Callable[[np.ndarray, np.ndarray, Mapping[str, Any]], str | None]] = {
    "topk.equal": _topk_equal,
}
"""``check.expect<provider>`` validators: (actual, expected, attrs) -> None or what differs."""

REFERENCE_FEATURES = frozenset({"loom.reference", "sanitizer", "f16", "bf16", "f64", "i64"})
"""Features the reference target reports to ``check.requires<target.feature>``."""


def _host_memory() -> int | None:
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def _device_memory(attrs: Mapping[str, Any]) -> bool | None:
    """Satisfied when the host's memory lies in [min_bytes, max_bytes] (either optional)."""
    mem = _host_memory()
    if mem is None:
        return None
    return int(attrs.get("min_bytes", 0)) <= mem <= int(attrs.get("max_bytes", mem))


REQUIREMENTS: dict[str, Callable[[Mapping[str, Any]], bool | None]] = {
    C.TARGET_FEATURE: lambda attrs: attrs.get("feature") in REFERENCE_FEATURES,
    C.DEVICE_MEMORY: _device_memory,
}
"""Requirement providers of ``check.requires`` / ``check.skip_if``: attrs -> satisfied
(True/False) or None when the provider cannot tell (the case is then skipped)."""


# --------------------------------------------------------------------------- helpers


def _dtype(t: Any) -> Any:
    elem = t.element_type if isinstance(t, ShapedType) else t
    dt = _DTYPES.get(str(elem))
    if dt is None:
        raise CheckError(f"element type {elem} is not supported by the check runner")
    return np.dtype(dt)


def _shape(t: Any, env: Mapping[int, Any]) -> tuple[int, ...]:
    if not isinstance(t, ShapedType):
        return ()
    out = []
    for d in t.dims:
        if isinstance(d, StaticDim):
            out.append(d.size)
            continue
        v = int(env[id(d.value)])
        if v < 0:
            raise CheckError(f"dynamic dimension %{d.value.display_name} is negative ({v})")
        out.append(v)
    return tuple(out)


def _as_type(x: Any, t: Any, env: Mapping[int, Any]) -> Any:
    """A runner value of type ``t``: a dtype scalar or a dense array of the type's shape."""
    if isinstance(t, ShapedType):
        return np.asarray(x).astype(_dtype(t)).reshape(_shape(t, env))
    return _dtype(t).type(np.asarray(x).reshape(()).item())


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


MAX_MISMATCHES = 4
"""Differing elements a failure lists."""
_PARAMS = (C.PARAM_RANGE.name, C.PARAM_CHOICE.name, C.PARAM_SEED.name)
_EXPECTS = (
    C.EXPECT_EQUAL.name, C.EXPECT_BITWISE.name, C.EXPECT_CLOSE.name, C.EXPECT_SHAPE.name,
    C.EXPECT.name, C.EXPECT_EVENT.name,
)  # fmt: skip
_REQUIREMENT_OPS = (C.REQUIRES.name, C.SKIP_IF.name)
_SOURCES = (
    C.LITERAL.name, C.IOTA.name, C.FILL.name, C.UNIFORM.name, C.READ_NPY.name,
    C.TENSOR_VIEW.name, C.ORACLE_CALL.name,
)  # fmt: skip
_QUIET = (C.RETURN.name, C.WRITE_NPY.name, *_PARAMS, *_REQUIREMENT_OPS)


def _where(module: Any, op: Any) -> str:
    rng = op_source_range(module, op)
    if rng is None:
        return ""
    return "\n".join([f"{rng}:", *render_range(rng)])


def _location(module: Any, op: Any) -> dict[str, Any] | None:
    rng = op_source_range(module, op)
    if rng is None:
        return None
    return {
        "filename": rng.filename, "start_line": rng.line, "start_column": rng.column,
        "end_line": rng.end_line or rng.line, "end_column": rng.end_column or rng.column,
    }  # fmt: skip


def _compare(op: Any, got: Any, want: Any) -> tuple[str, Any] | None:
    """None when the expectation holds, else (detail, first failing index or None)."""
    got, want = np.asarray(got), np.asarray(want)
    if got.shape != want.shape or got.dtype != want.dtype:
        return (f"shape/type {got.shape} {got.dtype} != {want.shape} {want.dtype}", None)
    name = op.name
    close = name == C.EXPECT_CLOSE.name
    if name == C.EXPECT_BITWISE.name:
        bad = got.view(np.uint8).reshape(got.shape + (-1,)) != want.view(np.uint8).reshape(
            want.shape + (-1,)
        )
        bad = bad.any(axis=-1)
        detail = "storage bytes differ"
    elif close or (name == C.EXPECT_EQUAL.name and np.issubdtype(got.dtype, np.floating)):
        # equal on floats is close with zero tolerance and NaN never equal (upstream's rule)
        a, e = got.astype(np.float64), want.astype(np.float64)
        atol = op.attributes["atol"] if close else 0.0
        rtol = op.attributes["rtol"] if close else 0.0
        nan_a, nan_e = np.isnan(a), np.isnan(e)
        with np.errstate(invalid="ignore"):
            ok = np.abs(a - e) <= atol + rtol * np.abs(e)
        either = nan_a | nan_e
        same = close and op.attributes["nan"] == "same"
        same_nan = nan_a & nan_e if same else np.zeros_like(ok)
        bad = np.where(either, ~same_nan, ~ok)
        detail = "values not within tolerance" if close else "values differ"
    else:
        bad = got != want
        detail = "values differ"
    if not bad.any():
        return None
    if not got.ndim:
        return (f"1 of 1 elements: {detail}", ())
    where = [tuple(int(i) for i in ix) for ix in np.argwhere(bad)[:MAX_MISMATCHES]]
    return (f"{int(np.count_nonzero(bad))} of {bad.size} elements: {detail}", where)


def _is_declaration(op: Any) -> bool:
    return not op.regions or op.name.rsplit(".", 1)[-1] == "decl"


class Linker:
    """Resolves symbols: a module's own definitions first, then those of linked libraries
    for the symbols it only declares (``func.decl``, ``kernel.decl``...), by name."""

    def __init__(self, module: Any, libraries: Iterable[Any] = ()) -> None:
        self.module = module
        self.libraries = tuple(libraries)

    def resolve(self, name: str) -> tuple[Any, Any]:
        """(module holding the definition, defining op) of symbol ``name``."""
        op = self.module.symbols.get(name)
        if op is not None and not _is_declaration(op):
            return self.module, op
        for lib in self.libraries:
            lop = lib.symbols.get(name)
            if lop is not None and not _is_declaration(lop):
                return lib, lop
        if op is None:
            raise CheckError(f"no symbol @{name} in the module or its libraries")
        raise CheckError(
            f"@{name} is only declared ('{op.name}'); link a library that defines it "
            "(--library=FILE.loom or .loombc)"
        )


class _Host:
    """Runs ``func.def`` reference implementations on the reference interpreter, op by op:
    kernel launches and calls are run here, every other op by its interpreter semantics."""

    def __init__(self, case: CaseRunner) -> None:
        self.case = case
        self.programs: dict[int, Any] = {}

    def call(self, name: str, args: list[Any], depth: int = 0) -> tuple:
        from loom.interp.compile import Program

        mod, op = self.case.linker.resolve(name)
        prog = self.programs.get(id(mod))
        if prog is None:
            prog = self.programs[id(mod)] = Program(mod)
        try:
            func = prog.function(name)
        except LoomError as e:
            raise CheckError(f"@{name} cannot run on the reference interpreter: {e}") from None
        copied = [np.array(a, copy=True) if isinstance(a, np.ndarray) else a for a in args]
        return self.run(prog, func, copied, depth)

    def run(self, prog: Any, func: Any, args: list[Any], depth: int) -> tuple:
        from loom.interp.engine import HostContext

        if depth > 64:
            raise CheckError(f"calls nested more than 64 deep (in @{func.name})")
        region = func.body
        ctx = HostContext(SimpleNamespace(config=func, program=prog))
        ctx.env = env = [None] * func.nslots
        ctx.aff = [None] * func.nslots
        if region.cfg is not None:  # branches: the engine runs it whole (no launches inside)
            return tuple(ctx.run_func(func, args))
        for s, v in zip(region.args, args, strict=True):
            env[s] = v
        for step in region.steps:
            vals = [env[i] for i in step.ins]
            if step.term:
                return tuple(vals)
            if step.op.name == K.LAUNCH.name:
                groups = operand_groups(step.op, K.LAUNCH)
                n = len(groups["workloads"])
                self.case.launch(step.op, vals[:n], vals[n:])
                continue
            if step.callee is not None:
                res: Any = self.run(prog, step.callee, vals, depth + 1)
            elif step.ctrl is not None:
                res = ctx._control(step, vals)
            else:
                res = step.fn(ctx, step, *vals)
            if len(step.outs) == 1:
                env[step.outs[0]] = res if step.ctrl is None and step.callee is None else res[0]
            else:
                for s, v in zip(step.outs, res, strict=True):
                    env[s] = v
        return ()


class CaseRunner:
    """One case prepared to run: planned parameter domains, requirements, and per-sample
    execution (:meth:`run_sample`), shared by the serial and the Dask runners."""

    def __init__(
        self,
        module: Any,
        op: Any,
        base: Path | None,
        sanitize: bool | str = True,
        linker: Linker | None = None,
        write_files: bool = True,
    ) -> None:
        self.module = module
        self.codes = sanitizer_codes(sanitize)
        self.op = op
        self.name = op.attributes["case_symbol"]
        self.body = op.regions[0].blocks[0].ops
        self.base = base
        self.linker = linker or Linker(module)
        self.write_files = write_files
        self.registry = as_registry(None)
        self.params = [o for o in self.body if o.name in _PARAMS]
        self.issues: list[PlanningIssue] = []
        self.domains = [_domain(o) for o in self.params]
        self.captures_events = any(o.name == C.EXPECT_EVENT.name for o in self.body)
        self.events: list[dict[str, Any]] = []
        self.host = _Host(self)
        self._plan()

    def _issue(self, kind: str, message: str, o: Any | None = None, hint: str = "") -> None:
        self.issues.append(
            PlanningIssue(
                kind, message, self.name,
                o.name if o is not None else None,
                _location(self.module, o) if o is not None else None,
                hint or None,
            )
        )  # fmt: skip

    def _plan(self) -> None:
        names: set[str] = set()
        for o, d in zip(self.params, self.domains, strict=True):
            if not d:
                self._issue("invalid_parameter", f"parameter {self._pname(o)} has no values", o)
            name = o.attributes.get("param_name")
            if name:
                if name in names:
                    self._issue("duplicate_parameter_name", f"parameter name '{name}' repeats", o)
                names.add(name)
        for o in self.body:
            if o.name in _QUIET or o.name in _SOURCES or o.name in _EXPECTS:
                continue
            if o.name == K.LAUNCH.name:
                continue
            decl = self.registry.get(o.name)
            if decl is not None and decl.trait(Call) is not None:
                continue
            hint = "use check.literal" if o.name.endswith(".constant") else ""
            self._issue(
                "unsupported_case_body_op",
                f"'{o.name}' is not a value source, invocation or expectation of a case",
                o,
                hint,
            )

    def _pname(self, o: Any) -> str:
        return o.attributes.get("param_name") or f"%{o.results[0].display_name}"

    @property
    def cartesian_count(self) -> int:
        """The number of samples the parameters expand into (before any limit)."""
        return math.prod(len(d) for d in self.domains) if not self.issues else 0

    def choice(self, ordinal: int) -> dict[int, Any]:
        """Parameter values of sample ``ordinal`` (mixed radix, first parameter fastest)."""
        out = {}
        for i, d in enumerate(self.domains):
            out[i] = d[ordinal % len(d)]
            ordinal //= len(d)
        return out

    def samples(self) -> list[dict[int, Any]]:
        """Every sample's parameter values, in ordinal order."""
        combos = itertools.product(*reversed(self.domains))
        return [dict(zip(range(len(self.domains)), reversed(c), strict=True)) for c in combos]

    def skip(self) -> tuple[str, str, str, str | None] | None:
        """(code, op, provider, message) of the first requirement that skips the case."""
        for o in self.body:
            if o.name not in _REQUIREMENT_OPS:
                continue
            provider = o.attributes["provider"]
            attrs = o.attributes.get("attrs") or DictAttr()
            kind = "requires" if o.name == C.REQUIRES.name else "skip_if"
            reason = o.attributes.get("reason")
            fn = REQUIREMENTS.get(provider)
            if fn is None:
                msg = reason or f"requirement provider '{provider}' is not registered"
                return ("provider_not_registered", kind, provider, msg)
            answer = fn(attrs)
            if answer is None:
                return (
                    "provider_unavailable",
                    kind,
                    provider,
                    reason or f"'{provider}' cannot tell",
                )
            if kind == "requires" and not answer:
                return ("requirement_not_satisfied", kind, provider,
                        f"{provider} {dict(attrs)} is not satisfied")  # fmt: skip
            if kind == "skip_if" and answer:
                return ("skip_predicate_matched", kind, provider, reason or f"{provider} matched")
        return None

    def run_sample(self, ordinal: int, choice: dict[int, Any] | None = None) -> SampleResult:
        """Run one sample (its parameter values default to those of ``ordinal``)."""
        if choice is None:
            choice = self.choice(ordinal)
        env: dict[int, Any] = {}
        self.events = []
        res = SampleResult(self.name, ordinal, {})
        for i, o in enumerate(self.params):
            v = choice[i]
            res.params[self._pname(o)] = v
            env[id(o.results[0])] = _dtype(o.results[0].type).type(v)
        expects = []
        for o in self.body:
            if o.name in _QUIET:
                continue
            if o.name in _EXPECTS:
                expects.append(o)
                continue
            try:
                self._value(o, env)
            except LoomError as e:
                res.issues.append(f"{_where(self.module, o)}\n{e}".strip())
                break
        if not res.issues:
            for n, o in enumerate(expects):
                try:
                    failure = self._expect(o, env, n)
                except LoomError as e:
                    res.issues.append(f"{_where(self.module, o)}\n{e}".strip())
                    break
                if failure is not None:
                    res.failures.append(failure)
            res.expectation_count = len(expects)
            self._write_files(env, res)
        return res

    def _write_files(self, env: dict, res: SampleResult) -> None:
        if not self.write_files:
            return
        for o in self.body:
            if o.name != C.WRITE_NPY.name:
                continue
            if o.attributes.get("mode", "on_failure") == "on_failure" and res.passed:
                continue
            path = Path(o.attributes["path"])
            if not path.is_absolute() and self.base is not None:
                path = self.base / path
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
                np.save(path, env[id(o.operands[0])], allow_pickle=False)
            except OSError as e:
                res.issues.append(f"{_where(self.module, o)}\ncannot write '{path}': {e}".strip())

    def launch(self, o: Any, workload: list[Any], args: list[Any]) -> None:
        """Run ``kernel.launch`` op ``o``; tensors are passed by storage (written in place)."""
        from loom.interp import launch

        kernel = o.attributes["callee"]
        mod, _ = self.linker.resolve(kernel)
        try:
            result = launch(
                mod, kernel, workload=[int(w) for w in workload], args=args,
                sanitize=self.codes is not None,
            )  # fmt: skip
        except LoomRuntimeError as e:
            if not self.captures_events:
                raise
            # an out-of-bounds access stops the launch: captured as an address report
            codes = [d.code for d in e.diagnostics] or ["RUNTIME"]
            kind = "asan_report" if codes[0] == "RUNTIME/001" else "driver_failure"
            self.events.append({"type": kind, "severity": "error", "export": kernel,
                                "code": codes[0]})  # fmt: skip
            return
        keep = self.codes or frozenset()
        if self.captures_events:
            self.events += [_event(d, kernel) for d in result.findings if d.code in keep]
            return
        found = [d for d in result.errors if d.code in keep]
        if not found:
            return
        raise CheckError(
            f"kernel @{o.attributes['callee']} reported " + "; ".join(d.headline() for d in found)
        )

    def _value(self, o: Any, env: dict) -> None:
        a = o.attributes
        if o.name == K.LAUNCH.name:
            groups = operand_groups(o, K.LAUNCH)
            self.launch(
                o,
                [env[id(v)] for v in groups["workloads"]],
                [env[id(v)] for v in groups["arguments"]],
            )
            return
        if o.name == C.ORACLE_CALL.name or o.name not in _SOURCES:
            ins = [env[id(v)] for v in o.operands]
            if o.name != C.ORACLE_CALL.name:  # a call of a reference implementation
                outs: Any = self.host.call(a["callee"], ins)
            elif a["provider"] == SCALAR_ORACLE:
                outs = self.host.call(a["callee"], ins)
            else:
                fn = ORACLES.get(a["provider"])
                if fn is None:
                    known = sorted([*ORACLES, SCALAR_ORACLE])
                    raise CheckError(f"no oracle provider '{a['provider']}' (known: {known})")
                outs = fn(*ins, **dict(a.get("attrs") or {}))
            if len(outs) != len(o.results):
                raise CheckError(
                    f"'{o.name}' produced {len(outs)} values for {len(o.results)} results"
                )
            for r, x in zip(o.results, outs, strict=True):
                env[id(r)] = _as_type(x, r.type, env)
            return
        if o.name == C.TENSOR_VIEW.name:
            src = env[id(o.operands[0])]
            t = o.results[0].type
            shape, dt = _shape(t, env), _dtype(t)
            start = int(a["byte_offset"])
            raw = src.reshape(-1).view(np.uint8)
            need = int(np.prod(shape)) * dt.itemsize
            if start < 0 or start + need > raw.size:
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

    def _expect(self, o: Any, env: dict, index: int) -> Failure | None:
        f = self._expect_one(o, env, index)
        if f is not None and o.operands:
            f.actual_value_id = o.operands[0].id
            has_expected = o.name not in (C.EXPECT_SHAPE.name, C.EXPECT_EVENT.name)
            f.expected_value_id = o.operands[1].id if has_expected else None
        return f

    def _expect_one(self, o: Any, env: dict, index: int) -> Failure | None:
        kind = o.name.rsplit(".", 1)[-1] if o.name != C.EXPECT.name else "custom"
        where = _where(self.module, o)
        if o.name == C.EXPECT_SHAPE.name:
            got = np.shape(env[id(o.operands[0])])
            dyn = iter(o.operands[1:])
            static = o.attributes.get("static_dims") or (DYNAMIC_INDEX,) * (len(o.operands) - 1)
            want = tuple(int(env[id(next(dyn))]) if s == DYNAMIC_INDEX else int(s) for s in static)
            if got == want:
                return None
            return Failure("shape", f"shape {got} != {want}", index, where, got=got, want=want)
        attrs = o.attributes.get("attrs") or DictAttr()
        if o.name == C.EXPECT_EVENT.name:
            if o.attributes["provider"] != "device":
                raise CheckError(f"event provider '{o.attributes['provider']}' is not registered")
            want = int(attrs.get("count", 1))
            got = sum(1 for e in self.events if _event_matches(e, attrs))
            if got == want:
                return None
            return Failure("event", f"{got} matching device events, expected {want}", index,
                           where, got=got, want=want)  # fmt: skip
        got, want = env[id(o.operands[0])], env[id(o.operands[1])]
        if o.name == C.EXPECT.name:
            fn = VALIDATORS.get(o.attributes["provider"])
            if fn is None:
                raise CheckError(
                    f"validator provider '{o.attributes['provider']}' is not registered"
                )
            detail = fn(np.asarray(got), np.asarray(want), attrs)
            return None if detail is None else Failure("custom", detail, index, where)
        found = _compare(o, got, want)
        if found is None:
            return None
        detail, where_bad = found
        g, w = np.asarray(got), np.asarray(want)
        first = None
        mismatches = []
        if isinstance(where_bad, list):
            first = where_bad[0]
            mismatches = [(ix, g[ix].item(), w[ix].item()) for ix in where_bad]
            g, w = g[first], w[first]
        elif where_bad == ():
            first = ()
        close = o.name == C.EXPECT_CLOSE.name
        return Failure(
            kind, detail, index, where, first_index=first,
            got=g.item() if np.ndim(g) == 0 else g.tolist(),
            want=w.item() if np.ndim(w) == 0 else w.tolist(),
            atol=o.attributes["atol"] if close else None,
            rtol=o.attributes["rtol"] if close else None, mismatches=mismatches,
            dtype=str(np.asarray(got).dtype),
        )  # fmt: skip


def cases_of(module: Any, case: str | None = None) -> list[Any]:
    """The module's ``check.case`` ops in order (only ``case``, ``@name`` or ``name``, if set)."""
    name = case[1:] if case and case.startswith("@") else case
    cases = [o for o in module.ops if o.name == C.CASE.name]
    if name is not None:
        cases = [o for o in cases if o.attributes["case_symbol"] == name]
        if not cases:
            raise CheckError(f"no check case @{name} in the module")
    return cases


def plan(
    module: Any,
    case: str | None = None,
    sample: int | None = None,
    sanitize: bool | str = True,
    *,
    max_samples_per_case: int = 4096,
    base_dir: str | Path | None = None,
    libraries: Iterable[Any] = (),
    write_files: bool = True,
) -> tuple[Report, list[tuple[CaseRunner, CaseResult, list[int]]]]:
    """The report skeleton (skips, planning issues, sample counts) and the work: for each
    runnable case, its prepared runner, its result record and the sample ordinals to run."""
    if max_samples_per_case <= 0:
        raise CheckError("max_samples_per_case must be > 0")
    base = Path(base_dir) if base_dir is not None else None
    linker = Linker(module, libraries)
    report = Report()
    work = []
    for op in cases_of(module, case):
        c = CaseRunner(module, op, base, sanitize, linker, write_files)
        result = CaseResult(c.name)
        report.cases.append(result)
        if c.issues:
            report.planning_issues.extend(c.issues)
            continue
        skip = c.skip()
        if skip is not None:
            result.skip_code, result.skip_op, result.skip_provider, result.skipped = skip
            continue
        total = c.cartesian_count
        result.cartesian_sample_count = total
        result.sample_count = min(total, max_samples_per_case)
        if sample is not None:
            if not 0 <= sample < result.sample_count:
                raise CheckError(f"@{c.name} has {result.sample_count} samples; --sample={sample}")
            ordinals = [sample]
        else:
            ordinals = list(range(result.sample_count))
        work.append((c, result, ordinals))
        report.planning_issues.extend(benchmark_issues(module, c))
    return report, work


def benchmark_issues(module: Any, case: CaseRunner) -> list[PlanningIssue]:
    """Problems of the ``check.benchmark`` records of ``case``: each fixed parameter must be
    one of the case's named parameters and its value one of that parameter's values."""
    params = {o.attributes.get("param_name"): d for o, d in zip(case.params, case.domains)}
    out = []
    for b in module.ops:
        if b.name != C.BENCHMARK.name or b.attributes.get("case_ref") != case.name:
            continue
        name = b.attributes.get("benchmark") or case.name.removesuffix("_case") or case.name
        for key, value in (b.attributes.get("attrs") or {}).items():
            domain = params.get(key)
            if domain is None:
                msg = f"@{name} fixes '{key}', which is not a named parameter of @{case.name}"
            elif not any(
                value == v or (isinstance(v, float) and math.isclose(value, v, rel_tol=1e-9))
                for v in domain
            ):
                msg = f"@{name} fixes '{key}' = {value}, which is not one of its values"
            else:
                continue
            out.append(
                PlanningIssue(
                    "invalid_benchmark_assignment", msg, case.name, b.name,
                    _location(module, b), benchmark=name,
                )
            )  # fmt: skip
    return out


def run(
    module: Any,
    case: str | None = None,
    sample: int | None = None,
    sanitize: bool | str = True,
    *,
    max_samples_per_case: int = 4096,
    base_dir: str | Path | None = None,
    libraries: Iterable[Any] = (),
    progress: Callable[[int, int], None] | None = None,
    write_files: bool = True,
) -> Report:
    """Run the module's check cases (or the one named ``case``) and report every sample.

    ``sanitize`` is True/False or upstream's category list (``"access|race"``, see
    :data:`SANITIZER_CATEGORIES`). ``libraries`` are modules whose definitions satisfy the
    symbols the module only declares. ``progress(done, total)`` is called after each sample.
    ``file.write.npy`` writes below ``base_dir`` unless ``write_files`` is False.
    """
    report, work = plan(
        module, case, sample, sanitize, max_samples_per_case=max_samples_per_case,
        base_dir=base_dir, libraries=libraries, write_files=write_files,
    )  # fmt: skip
    total = sum(len(ordinals) for _, _, ordinals in work)
    done = 0
    for c, result, ordinals in work:
        for s in ordinals:
            result.samples.append(c.run_sample(s))
            done += 1
            if progress is not None:
                progress(done, total)
    return report


def plan_counts(
    module: Any, max_samples_per_case: int = 4096, case: str | None = None
) -> list[tuple[str, int]]:
    """(case name, sample count) for each case, without running any."""
    out = []
    for op in cases_of(module, case):
        c = CaseRunner(module, op, None)
        out.append((c.name, min(c.cartesian_count, max_samples_per_case)))
    return out
