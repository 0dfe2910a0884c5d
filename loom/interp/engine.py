"""The grid engine: runs whole workgroups (many at once) with lanes in lockstep.

A chunk of whole workgroups is one set of lanes; every SSA value is a NumPy array over those
lanes or a scalar when uniform. Regions run under an active mask (``None`` when every lane is
active: the fast path). Barriers are satisfied by lockstep execution; the sanitizer checks that
every live workitem of a workgroup reaches each barrier.

Speed (see ``benchmarks/interp_saxpy.py``): per-op Python work happens once per op and chunk;
results of lane-invariant ops (``Pure`` without a ``Uniformity`` trait, see
:func:`~loom.interp.compile.lane_invariant`) are reused while their operands are the same
objects; a chunk is a box of workgroups (whole planes, whole rows or part of a row), so index
values built from coordinates, sizes, counts, arguments and constants carry affine facts over
its six lane axes (:mod:`loom.interp.affine`) and their loads and stores become strided views
of the buffer, workgroup memory included (bounds from the facts, never from the lanes); an op
whose fact proves its result in range is computed from the fact (no arithmetic checks), and
only if an op reads its lanes (:class:`~loom.interp.affine.Lazy`); a
comparison of a fact against a uniform bound is a guard: under its mask, bounds come from the
guard and strided accesses touch only the guarded box of lanes (a guard on digit-like axes,
``group * size + item``, is exactly a few boxes: :func:`~loom.interp.affine.interval_boxes`;
nested guards intersect them), its mask is written from the boxes, values made from facts
under it fill only the boxes, and pure ops under one small box compute only its lanes; a
lane-local region under a mask that is exactly one box runs over that box alone, as if it
were the chunk (:mod:`loom.interp.compact`); chunks
are sized to stay in the CPU caches and write their results into the previous chunk's dead
arrays (fresh memory costs page faults). ``FAST_PATHS =
False`` turns these off; tests demand identical memory, findings and errors both ways.
"""

from __future__ import annotations

import sys
import time
import weakref
from dataclasses import dataclass, field
from functools import partial
from operator import is_
from typing import Any

import numpy as np

from loom.diagnostics import Diagnostic, DiagnosticSeverity
from loom.errors import LoomRuntimeError, LoomUsageError
from loom.interp import affine as A
from loom.interp import collectives, compact, transfers
from loom.interp import sanitizer as san
from loom.interp.cfg_exec import run_cfg
from loom.interp.compile import MAX_DEPTH, CFunc, CRegion, Program, find_kernel
from loom.interp.launch_args import bind_args, bind_functions, bind_scalar
from loom.interp.memory import Buf, Gathered
from loom.interp.report import format_lane, runtime_error
from loom.interp.semantics._records import ModuleRecords
from loom.ir import Module
from loom.opview import region_groups

CHUNK_LANES = 1 << 17
"""Most lanes run together (bounds the memory of lane arrays; chunks that fit the CPU caches
beat whole-grid arrays, whose page faults and cache misses cost more than the per-op Python)."""
SPARSE_DENSITY = 0.7
"""When the first chunk's ops ran over fewer than this share of its lanes on average (many ran
over compacted boxes of it), the fixed Python cost per op dominates: without the sanitizer, the
rest of the grid runs in chunks of ``SPARSE_GROWTH`` times the lanes."""
SPARSE_GROWTH = 8
MAX_SPARSE_GRIDS = 16
"""Most grids (counts, sizes) a plan remembers as sparse (their next launch starts with the
larger chunks)."""
DEFAULT_MAX_STEPS = 1_000_000
"""Ops one workitem may execute when ``max_steps`` is None (an infinite loop ends with
RUNTIME/009 within seconds; pass a larger ``max_steps`` for long-running kernels)."""
MAX_SCRATCH_BYTES = 1 << 30
"""Largest scratch allocation (``buffer.alloca``) for all its owners together."""
MAX_WORKGROUP_ITEMS = 1 << 20
"""Most workitems in one workgroup (a workgroup's lanes always run together)."""
MAX_WORKITEMS = 1 << 40
"""Most workitems in one launch (about a day of interpretation; ids stay far from 2^63)."""

FAST_PATHS = True
"""Off: the general paths only (no reuse of invariant results, no affine index recognition, no
slice accesses): tests compare both and demand identical memory, findings and errors."""
SPARE_BYTES = 32 << 20
"""Most memory of dead lane arrays a compiled kernel keeps between launches."""
MAX_GUARDED_MASKS = 16
"""Most masks whose guards (see :meth:`GridContext.guard`) a chunk remembers (the latest)."""
BOX_FRACTION = 4
"""Pure ops under a mask that is one box of at most 1/BOX_FRACTION of the lanes compute only
that box's lanes."""
MAX_SCRATCH_ARRAYS = 16
"""Most reusable lane arrays per dtype and chunk size (see :meth:`GridContext.scratch`)."""
MAX_SHAPE_ARRAYS = 64
"""Most lane arrays that depend only on the chunk shape a plan keeps between launches."""
SHARED_IDS = 1 << 21
"""Launches of at most this many workitems read dispatch ids from one shared int64 range."""
_I64 = np.dtype(np.int64)
_NO_GUARDS: tuple = (None, (), None, None)
_DIMS = {"x": 0, "y": 1, "z": 2}


@dataclass
class LaunchResult:
    """What a launch did: grid shape, counts, time and sanitizer findings."""

    kernel: str
    grid: tuple[int, int, int]
    workgroup: tuple[int, int, int]
    workitems: int
    ops_executed: int
    wall_time: float
    findings: list[Diagnostic] = field(default_factory=list)
    accesses: dict[str, Any] | None = None
    """Per buffer name, its :class:`~loom.interp.trace.AccessTrace` (``launch(trace=True)``)."""

    @property
    def errors(self) -> list[Diagnostic]:
        """Findings with error severity."""
        return [d for d in self.findings if d.is_error]

    @property
    def warnings(self) -> list[Diagnostic]:
        """Findings with warning severity."""
        return [d for d in self.findings if d.severity is DiagnosticSeverity.WARNING]

    def render(self) -> str:
        """Every finding as compiler-style text."""
        return "\n".join(d.render() for d in self.findings)

    def __repr__(self) -> str:
        return (
            f"<LaunchResult @{self.kernel} grid={self.grid} workgroup={self.workgroup} "
            f"workitems={self.workitems} ops={self.ops_executed} "
            f"findings={len(self.findings)} time={self.wall_time * 1e3:.2f}ms>"
        )


class KernelPlan:
    """A kernel compiled once: its config function, body function and parameter list."""

    def __init__(self, module: Module, kernel: str) -> None:
        op = find_kernel(module, kernel)
        self.module = module
        self.program = Program(module)
        decl = self.program.registry.lookup(op.name)
        regions = region_groups(op, decl)
        self.name = op.attributes.get(decl.symbol_trait.attr)
        self.op = op
        self.config = CFunc(self.program, module, self.name + ".config")
        self.config.body = self.program.compile_region(self.config, regions["config"])
        self.body = CFunc(self.program, module, self.name)
        self.body.body = self.program.compile_region(self.body, regions["body"])
        self.params = regions["body"].entry.args
        self.workload_params = regions["config"].entry.args
        self.compact_inputs: dict[int, tuple | None] = {}
        """id(region) -> :func:`loom.interp.compact.region_inputs` of it (computed once)."""
        self.view_loads: set[int] = compact.view_loads(self.body.body)
        """Step indices of the loads whose result may be a read-only view of memory (see
        :func:`loom.interp.compact.view_loads`)."""
        for func in self.program.funcs.values():
            self.view_loads |= compact.view_loads(func.body)
        self.spares: list[dict] = []
        """Dead result arrays of the last launch's last chunk (at most SPARE_BYTES), which the
        next launch writes into instead of paging in fresh memory."""
        self.pools: list[dict] = []
        """Free scratch arrays and scratch memory of the last launch (see
        :meth:`GridContext.scratch`), at most SPARE_BYTES."""
        self.sparse_grids: dict[tuple, None] = {}
        """(counts, sizes) of grids whose latest launch ran sparse (see SPARSE_DENSITY)."""
        self.shapes: tuple = ((), {})
        """(workgroup size, lane arrays that depend only on a chunk's shape) of the latest
        launch (see :meth:`GridContext._per_shape`), for launches with the same workgroup
        size."""

    def grid(
        self, workload: tuple, max_workgroup: int = MAX_WORKGROUP_ITEMS
    ) -> tuple[tuple[int, int, int], tuple[int, int, int]]:
        """Run the config region: (workgroup counts, workgroup size), refused past the limits."""
        if len(workload) != len(self.workload_params):
            names = ", ".join(f"%{p.display_name}" for p in self.workload_params)
            raise LoomRuntimeError(
                f"kernel '@{self.name}' takes {len(self.workload_params)} "
                f"workload values ({names}), got {len(workload)}"
            )
        vals = [
            bind_scalar(w, p.type, f"workload value %{p.display_name}")
            for p, w in zip(self.workload_params, workload)
        ]
        ctx = HostContext(self)
        out = ctx.run_func(self.config, vals)
        nums = [int(v) for v in out[:6]]
        for v, what in zip(
            nums,
            (
                "workgroup count x",
                "workgroup count y",
                "workgroup count z",
                "workgroup size x",
                "workgroup size y",
                "workgroup size z",
            ),
        ):
            if v < 0:
                raise LoomRuntimeError(
                    f"kernel '@{self.name}': the config region computed a negative {what} ({v})"
                )
        counts, sizes = (nums[0], nums[1], nums[2]), (nums[3], nums[4], nums[5])
        check_grid(self.name, counts, sizes, max_workgroup)
        return counts, sizes

    def subgroup_size(self) -> int:
        """The reference target's subgroup size (decision 9: default 32)."""
        target = self.op.attributes.get("target")
        rec = self.module.symbols.get(target) if isinstance(target, str) else None
        if rec is not None:
            v = rec.attributes.get("subgroup_size")
            if isinstance(v, int) and v > 0:
                return v
        return 32


def check_grid(kernel: str, counts: tuple, sizes: tuple, max_workgroup: int) -> None:
    """Refuse a grid the interpreter cannot run, before anything is allocated."""
    wg = sizes[0] * sizes[1] * sizes[2]
    total = wg * counts[0] * counts[1] * counts[2]
    if wg > max_workgroup:
        raise LoomRuntimeError(
            f"kernel '@{kernel}': a workgroup of {wg} workitems {sizes} exceeds the "
            f"interpreter's limit of {max_workgroup} workitems per workgroup"
        )
    if total > MAX_WORKITEMS:
        raise LoomRuntimeError(
            f"kernel '@{kernel}': a grid of {total} workitems exceeds the interpreter's limit "
            f"of {MAX_WORKITEMS} workitems per launch"
        )


def item_coords(item: int, counts: tuple, sizes: tuple) -> tuple:
    """((wx, wy, wz), (tx, ty, tz)) of a global flat workitem id (x fastest)."""
    g, flat = divmod(int(item), sizes[0] * sizes[1] * sizes[2])
    gx, gy, _ = counts
    sx, sy, _ = sizes
    return (
        (g % gx, (g // gx) % gy, g // (gx * gy)),
        (flat % sx, (flat // sx) % sy, flat // (sx * sy)),
    )


def scratch_bytes(ctx: Any, step: Any, nbytes: Any, owners: int, limit: int) -> int:
    """The size of a ``buffer.alloca``, refused when negative or beyond ``limit`` in total."""
    size = int(nbytes)
    if size < 0:
        raise ctx.error(step, "RUNTIME/006", f"size is negative ({size} bytes)", None)
    if size * owners > limit:
        raise ctx.error(
            step,
            "RUNTIME/010",
            f"scratch memory of {size} bytes for {owners} owner(s) exceeds the interpreter's "
            f"limit of {limit} bytes",
            None,
        )
    return size


class BaseContext:
    """Shared machinery of the engine contexts: running compiled regions with masks."""

    n = 1
    lazies = 0
    """:class:`~loom.interp.affine.Lazy` values made in this chunk (none: nothing to make)."""
    mask: Any = None
    memo: dict | None = None
    track_affine = True
    extents: tuple = ()
    _ins: tuple = ()
    functions: dict = {}
    """Declaration name -> the Python function bound to it (``launch(functions=...)``)."""

    def __init__(self, plan: KernelPlan, max_steps: int | None = None) -> None:
        self.plan = plan
        self.max_steps = DEFAULT_MAX_STEPS if max_steps is None else max_steps
        self.steps = 0
        self.ops = 0
        self.width = 0
        """Lanes the executed ops ran over (the chunk's, or a compacted box's)."""
        self.env: list = []
        self.aff: list = []
        self.retired = False
        self.depth = 0

    # -------------------------------------------------------------- running regions

    def run_func(self, func: CFunc, args: list) -> tuple:
        """Run a function body in a fresh environment; returns the passed-on values."""
        saved = (self.env, self.aff)
        self.env = [None] * func.nslots
        self.aff = [None] * func.nslots
        try:
            return self.run_region(func.body, args, self.mask)
        finally:
            self.env, self.aff = saved

    def run_region(self, region: CRegion, args: Any, mask: Any) -> tuple:
        """Run ``region`` for the lanes in ``mask``; returns its terminator's values."""
        if region.cfg is not None:
            return run_cfg(self, region, args, mask)
        env, aff = self.env, self.aff
        for s, v in zip(region.args, args):
            env[s] = v
            aff[s] = None
        outer = self.mask
        self.mask = mask
        count = self.n if mask is None else self.count_active(mask)
        memo = self.memo
        try:
            for step in region.steps:
                self.steps += 1
                self.width += self.n
                self.ops += count
                if self.steps > self.max_steps:
                    self._budget(step)
                ins = step.ins
                if step.ctrl is not None:
                    if self.lazies:
                        self._make_lazies(ins, len(ins))
                    res = self._control(step, [env[i] for i in ins])
                    if len(step.outs) == 1:
                        res = res[0]
                    if self.retired:
                        self.retired = False
                        mask = self.mask = self.narrow(mask)
                        if mask is not None and not mask.any():
                            return ()
                        count = self.n if mask is None else self.count_active(mask)
                    fact = None
                else:
                    rule = step.aff if self.track_affine else None
                    fact = res = None
                    if rule is not None:
                        affs = tuple(aff[i] for i in ins)
                        if not ins or any(a is not None for a in affs):
                            fact = rule(self, step, [env[i] for i in ins], affs)
                            if fact is not None:
                                res = self._lazy(step, fact)
                    if res is None and self.lazies:
                        self._make_lazies(ins, step.lazy_from)
                    if res is not None:
                        pass
                    elif step.invariant and memo is not None:
                        # lane-uniform operands: reuse the result of an earlier chunk
                        key = [env[i] for i in step.keys]
                        hit = memo.get(step.index)
                        if hit is not None and all(map(is_, hit[0], key)):
                            res = hit[1]
                        else:
                            self._ins = ins
                            res = None
                            if mask is not None and len(step.outs) == 1:
                                res = self.on_box(step, key[: len(ins)])
                            if res is None:
                                res = step.fn(self, step, *key[: len(ins)])
                            if not any(map(A.lanes, key)):
                                memo[step.index] = (key, res)
                    else:
                        self._ins = ins
                        res = step.fn(self, step, *[env[i] for i in ins])
                        if step.term:
                            return res
                outs = step.outs
                if len(outs) == 1:
                    o = outs[0]
                    env[o] = res
                    aff[o] = fact
                elif outs:
                    for s, v in zip(outs, res):
                        env[s] = v
                        aff[s] = None
            return ()
        finally:
            self.mask = outer

    def _lazy(self, step: Any, fact: A.Fact) -> A.Lazy | None:
        """The result of an op with an affine rule as a :class:`~loom.interp.affine.Lazy`
        value (the fact is its value on every lane), when the fact varies over the lanes and
        its span over the chunk is inside the result's domain (no lane can fail); else None
        (the op's semantics run). Its lanes are made only if an op reads them: in one pass
        from the fact (a coordinate by its semantics), instead of the op's arithmetic and
        domain checks."""
        ext = self.extents
        if not any(c and e > 1 for c, e in zip(fact[1], ext)):
            return None
        if not step.ins:  # a coordinate
            make = partial(step.fn, self, step)
        else:
            lo, hi = A.span(fact, ext)
            if lo < step.floor or hi >= 2**63:
                return None
            boxes = self.guard_boxes() if self.mask is not None else None
            make = partial(self._from_fact, step, fact, boxes)
        self.lazies += 1
        return A.Lazy(fact, make)

    def _make_lazies(self, ins: tuple, first: int) -> None:
        """Make the :class:`~loom.interp.affine.Lazy` values among operands ``ins`` before
        position ``first`` into lane arrays (in the environment)."""
        env = self.env
        for i in ins[:first]:
            v = env[i]
            if type(v) is A.Lazy:
                env[i] = v.get()

    def _from_fact(self, step: Any, fact: A.Fact, boxes: list | None) -> np.ndarray:
        """The lanes of ``fact`` (the result of ``step``); only those of ``boxes`` (slices
        per lane axis) when given: the active lanes when the value was made."""
        ext = self.extents
        out = self.out_array(step, _I64)
        if out is None:
            out = self.fresh(step, _I64, boxes is not None)
        if boxes is None:
            A.fill_positions(fact, ext, out)
            return out
        # only the active lanes' values are ever read (the masked-off lanes of a value made
        # under a mask are not seen): fill the boxes of active lanes
        shaped = out.reshape(ext)
        for b in boxes:
            first = sum(c * s.start for c, s in zip(fact[1], b))
            sub = shaped[b]
            A.fill_positions((fact[0] + first, fact[1]), sub.shape, sub)
        return out

    @property
    def affs(self) -> tuple:
        """Affine facts ``(start, stride)`` (or None) of the running op's operands."""
        aff = self.aff
        return tuple(aff[i] for i in self._ins)

    def _control(self, step: Any, vals: list) -> tuple:
        if self.depth >= MAX_DEPTH:
            raise self.error(step, "RUNTIME/011", depth_message(step), None)
        self.depth += 1
        try:
            return self._control_loop(step, vals)
        finally:
            self.depth -= 1

    def _control_loop(self, step: Any, vals: list) -> tuple:
        state, action = step.ctrl.enter(self, step, tuple(vals))
        while action[0] == "run":
            _, r, args, m = action
            m = self._normalize(m)
            if m is False:
                yielded = None
            elif r == -1 or type(r) is not int:  # a call: of step.callee or of r itself
                saved_mask = self.mask
                self.mask = m
                try:
                    yielded = self.run_func(step.callee if r == -1 else r, list(args))
                finally:
                    self.mask = saved_mask
            else:
                region = step.regions[r]
                yielded = None
                if type(m) is np.ndarray and FAST_PATHS:
                    yielded = self.compacted(region, args, m)
                if yielded is None:
                    yielded = self.run_region(region, args, m)
            state, action = step.ctrl.resume(self, step, state, yielded)
        return action[1]

    def _normalize(self, m: Any) -> Any:
        """``m`` as a run mask: the outer mask, None (every lane), False (no lane) or an array."""
        if m is None:
            return self.mask
        if type(m) is not np.ndarray or m.ndim == 0:
            return self.mask if bool(m) else False
        c = self.count_active(m) if m.shape == (self.n,) else np.count_nonzero(m)
        if not c:
            return False
        if self.mask is None and c == m.size:
            return None  # every lane active: the unmasked fast path
        return m

    def count_active(self, mask: np.ndarray) -> int:
        """The number of true lanes of the bool lane array ``mask``."""
        return int(np.count_nonzero(mask))

    def narrow(self, mask: Any) -> Any:
        """The mask after lanes exited."""
        return mask

    def per_shape(self, key: Any, make: Any) -> Any:
        """``make()``: a lane value that depends only on the shape of the running lanes (the
        grid engine builds it once per chunk shape and reuses it, read-only)."""
        return make()

    def masked_lanes(self) -> np.ndarray | None:
        """Indices of the active lanes while a run mask holds (only the grid engine, whose
        element accesses then work on those lanes only), else None."""
        return None

    def compacted(self, region: CRegion, args: Any, mask: np.ndarray) -> tuple | None:
        """``region``'s results run over the box of lanes ``mask`` is, when it is one box and
        the region is lane-local (None otherwise: only the grid engine compacts)."""
        return None

    def out_array(self, step: Any, dtype: np.dtype) -> np.ndarray | None:
        """A recycled array for ``step``'s result (only the grid engine recycles)."""
        return None

    def produced(self, step: Any, arr: Any) -> Any:
        """Note a fresh result array (only the grid engine recycles)."""
        return arr

    def fresh(self, step: Any, dtype: np.dtype, partial: bool = False) -> np.ndarray:
        """A new lane array for ``step``'s result (``partial``: only some lanes are written)."""
        return np.empty(self.n, dtype)

    def _budget(self, step: Any) -> None:
        raise self.error(
            step,
            "RUNTIME/009",
            f"exceeded the step budget (max_steps={self.max_steps}); is there an infinite loop?",
            None,
        )

    # -------------------------------------------------------------- semantics helpers

    def active(self, cond: Any) -> Any:
        """``cond`` restricted to the active lanes."""
        if self.mask is None:
            return cond
        return self.mask & cond

    def guard(self, cond: Any, fact: Any, lo: int | None, hi: int | None) -> None:
        """Note that ``lo <= fact <= hi`` on every lane where the bool lane array ``cond``
        holds (a comparison of an affine index against a uniform bound; only the grid engine
        uses it)."""

    def guard_bounds(self, fact: Any) -> tuple[int, int] | None:
        """Bounds of ``fact`` over the active lanes from the guards of the mask (or None)."""
        return None

    def on_box(self, step: Any, vals: list) -> Any:
        """The result of the pure op ``step`` computed on the active lanes only, when they are
        a small box (else None: the op runs on every lane; only the grid engine does this)."""
        return None

    def guard_mask(self, fact: Any, lo: int | None, hi: int | None) -> Any:
        """The bool lane array of ``lo <= fact <= hi`` built from the fact (noted as a guard),
        or None when the comparison must run on the values (only the grid engine builds it)."""
        return None

    def value_of(self, v: Any) -> Any:
        """The current value of SSA value ``v`` (for dynamic dims)."""
        func = self._func_of_env()
        return A.values(self.env[func.slots[v.id]])

    def _func_of_env(self) -> CFunc:
        raise NotImplementedError

    def check(self, step: Any, bad: Any, code: str, fmt: str, *values: Any) -> None:
        """Raise a runtime error for the first active lane where ``bad`` holds."""
        if self.mask is not None:
            bad = bad & self.mask
        if not np.any(bad):
            return
        lane = int(np.argmax(bad)) if np.ndim(bad) else None
        raise self.error(step, code, format_lane(fmt, values, lane), lane)

    def error(self, step: Any, code: str, message: str, lane: int | None) -> LoomRuntimeError:
        """The runtime error of ``lane`` at ``step``."""
        return runtime_error(step, code, message, self.coords_of_lane(lane))

    def coords_of_lane(self, lane: int | None) -> Any:
        """((wx, wy, wz), (tx, ty, tz)) of a lane, or None on the host."""
        return None


class HostContext(BaseContext):
    """Runs a kernel's config region (pure index math on the host)."""

    def __init__(self, plan: KernelPlan) -> None:
        super().__init__(plan)
        self._func = plan.config

    def _func_of_env(self) -> CFunc:
        return self._func

    def coord(self, kind: str, dim: str, step: Any = None) -> Any:
        raise LoomRuntimeError("workitem coordinates are not available in a config region")

    def __getattr__(self, name: str) -> Any:
        if name in ("load", "store", "alloca", "barrier", "retire", "load_bytes", "store_bytes"):
            raise LoomRuntimeError("the config region cannot access memory or synchronise")
        raise AttributeError(name)


class GridContext(BaseContext):
    """Many lanes (a chunk of whole workgroups) in lockstep."""

    def __init__(
        self,
        plan: KernelPlan,
        counts: tuple,
        sizes: tuple,
        sanitize: bool,
        max_steps: int | None,
        findings: san.Findings | None,
    ) -> None:
        super().__init__(plan, max_steps)
        self.counts, self.sizes = counts, sizes
        self.wg = sizes[0] * sizes[1] * sizes[2]
        self.workitems = self.wg * counts[0] * counts[1] * counts[2]
        self.sanitize = sanitize
        self.findings = findings
        self.subgroup = plan.subgroup_size()
        self._func = plan.body
        self.memo = {} if FAST_PATHS else None
        self._recycle: dict[int, np.ndarray] = (
            plan.spares.pop() if plan.spares and FAST_PATHS else {}
        )
        self.recycling = FAST_PATHS
        self._pool: dict[tuple, list] = plan.pools.pop() if plan.pools and FAST_PATHS else {}
        """(dtype, n) -> lane arrays made by :meth:`scratch`, ("alloca", bytes) -> scratch
        memory made by :meth:`alloca` (reused once nothing else holds them; the latest
        launch's are kept on the plan, bounded)."""
        self._shape_cache: dict[tuple, Any] = {}
        self._guards: dict[int, tuple] = {}
        if FAST_PATHS:
            if plan.shapes[0] != sizes or len(plan.shapes[1]) > MAX_SHAPE_ARRAYS:
                plan.shapes = (sizes, {})
            self._shape_cache = plan.shapes[1]
        self._produced: dict[int, Any] = {}
        self.track_affine = FAST_PATHS
        self.views = FAST_PATHS and not sanitize
        """Loads may hand out read-only views of memory (see :meth:`_load_view`); off with the
        sanitizer (and so with traces), whose access checks then see the usual copies."""
        self.tracer: Any = None
        self._uniform = {("size", d): np.int64(v) for d, v in enumerate(sizes)} | {
            ("count", d): np.int64(v) for d, v in enumerate(counts)
        }
        """Launch-uniform coordinates as fixed objects, so invariant results downstream are
        reused across chunks (the reuse compares operands by identity)."""

    def _func_of_env(self) -> CFunc:
        return self._func

    # -------------------------------------------------------------- chunks

    def run_chunk(self, first_group: int, ngroups: int, args: list, box: tuple = ()) -> None:
        """Run workgroups ``first_group .. first_group + ngroups - 1`` together; ``box`` is
        their (origin, extents) in the grid when they form a box (lane axes for affine
        facts)."""
        self.g0, self.ng = first_group, ngroups
        self.n = ngroups * self.wg
        if not box:
            box = _box_of(first_group, ngroups, self.counts) or ((0, 0, 0), ())
        self.origin, kext = box
        sx, sy, sz = self.sizes
        self.extents = (*kext, sz, sy, sx) if kext else ()
        self.chunk_extents = self.extents
        self.corner: tuple | None = None
        """While a compacted region runs (see :meth:`compacted`): the corner of its box of
        lanes in the chunk's lane axes (``n`` and ``extents`` are then the box's)."""
        self._lane_maps: dict[tuple, np.ndarray] = {}
        self.coords: dict[Any, Any] = {}
        self.live = None
        self.epochs = np.zeros(ngroups, dtype=np.int32)
        self._epoch_version = 0
        self.mask = None
        self.steps = 0
        self.lazies = 0
        self._range_cache: tuple | None = None
        self._lanes_cache: tuple | None = None
        self._box_cache: tuple | None = None
        self._guards: dict[int, tuple] = {}
        """id(mask) -> (mask, guards): see :meth:`guard` (this chunk's masks only)."""
        try:
            self.run_func(self.plan.body, args)
        finally:
            # every lane array of this chunk is dead now: the next chunk may write into them
            self._recycle, self._produced = self._produced, {}

    def out_array(self, step: Any, dtype: np.dtype) -> np.ndarray | None:
        """A dead array of the previous chunk for the result of ``step``'s first run in this
        chunk (None otherwise). Writing into memory that is already mapped and cached, rather
        than into a fresh allocation the system must page in, is most of the speed of large
        launches; a step's later runs in the same chunk get None (their older result may be
        alive)."""
        if not self.recycling:
            return None
        arr = self._recycle.pop(step.index, None)
        if arr is None or arr.dtype != dtype or arr.size != self.n:
            if arr is None and step.index not in self._produced:
                self._produced[step.index] = None  # first run: remember the fresh result
            return None
        self._produced[step.index] = arr
        return arr

    def scratch(self, dtype: np.dtype) -> np.ndarray:
        """A lane array of ``dtype`` with any content: one made earlier that nothing refers to
        any more (its only references are the pool's and this check's), else a new one kept
        for reuse. Results written only on a few boxes of lanes touch every page of a fresh
        array, whose page faults cost more than the writes."""
        key = (dtype, self.n)
        pool = self._pool.get(key)
        if pool is None:
            pool = self._pool[key] = []
        for arr in pool:
            if sys.getrefcount(arr) <= 3:  # the pool, the loop variable, the call's argument
                self._guards.pop(id(arr), None)  # new contents: the old guards do not hold
                return arr
        arr = np.empty(self.n, dtype)
        if len(pool) < MAX_SCRATCH_ARRAYS:
            pool.append(arr)
        return arr

    def zeroed_bytes(self, nbytes: int) -> np.ndarray:
        """``nbytes`` zero bytes for scratch memory: memory of an earlier allocation of the
        same size that nothing refers to any more, cleared, when fast paths are on (clearing
        mapped memory is cheaper than the page faults of fresh memory), else new."""
        if not FAST_PATHS or self.tracer is not None:
            return np.zeros(nbytes, dtype=np.uint8)
        pool = self._pool.setdefault(("alloca", nbytes), [])
        for arr in pool:
            if sys.getrefcount(arr) <= 3:  # the pool, the loop variable, the call's argument
                arr.fill(0)
                return arr
        arr = np.zeros(nbytes, dtype=np.uint8)
        if len(pool) < MAX_SCRATCH_ARRAYS:
            pool.append(arr)
        return arr

    def fresh(self, step: Any, dtype: np.dtype, partial: bool = False) -> np.ndarray:
        # results written on a few boxes, or inside a compacted region (whose arrays are not
        # recycled between chunks): reusable scratch arrays, no page faults
        if partial or not self.recycling:
            return self.scratch(dtype)
        return self.produced(step, np.empty(self.n, dtype))

    def produced(self, step: Any, arr: np.ndarray) -> np.ndarray:
        """Note ``arr`` as the fresh result of ``step``'s first run in this chunk (only an
        array that owns its data: a later run writes into it, never into memory or another
        array)."""
        if self.recycling and arr.flags.owndata and self._produced.get(step.index, 0) is None:
            self._produced[step.index] = arr
        return arr

    def hand_back(self) -> None:
        """After a launch: keep the last chunk's dead arrays (bounded) for the next launch."""
        self.memo = None  # its results may hold scratch memory
        spare, total = {}, 0
        for k, arr in self._recycle.items():
            if arr is not None and total + arr.nbytes <= SPARE_BYTES:
                spare[k] = arr
                total += arr.nbytes
        self._recycle = {}
        if spare and not self.plan.spares:
            self.plan.spares.append(spare)
        pools, total = {}, 0
        for key, pool in self._pool.items():
            kept = []
            for item in pool:
                # a mask's entry (see _box_mask) or an array: free when only the pool, this
                # loop and the call hold it
                arr, free = (item[0], 3) if type(item) is list else (item, 4)
                if sys.getrefcount(arr) <= free and total + arr.nbytes <= SPARE_BYTES:
                    kept.append(item)
                    total += arr.nbytes
            if kept:
                pools[key] = kept
        self._pool = {}
        if pools and FAST_PATHS and not self.plan.pools:
            self.plan.pools.append(pools)

    def lane_group(self) -> np.ndarray:
        """Workgroup index within the chunk of every lane."""
        return self._per_shape(
            "glocal", lambda: np.repeat(np.arange(self.ng, dtype=np.int64), self.wg)
        )

    def _per_shape(self, key: Any, make: Any) -> Any:
        """A lane array that only depends on the chunk's shape: built once per workgroup size
        and chunk shape, kept between launches (read-only: lane values are never modified in
        place)."""
        cache_key = (key, self.ng)
        v = self._shape_cache.get(cache_key)
        if v is None:
            v = self._shape_cache[cache_key] = make()
            if isinstance(v, np.ndarray):
                v.flags.writeable = False
        return v

    def per_shape(self, key: Any, make: Any) -> Any:
        return self._per_shape(("per-shape", key), make)

    def lane_items(self) -> np.ndarray:
        """Global flat workitem id of every lane."""
        it = self.coords.get("items")
        if it is None:
            it = self.coords["items"] = np.arange(self.n, dtype=np.int64) + self.g0 * self.wg
        return it

    def coord(self, kind: str, dim: str, step: Any = None) -> Any:
        """A coordinate query (``workitem``, ``workgroup``, ``size``, ``count``, ``dispatch``)."""
        d = _DIMS[dim]
        if kind in ("size", "count"):
            return self._uniform[(kind, d)]
        key = (kind, d)
        v = self.coords.get(key)
        if v is not None:
            return v
        sx, sy, _ = self.sizes
        gx, gy, _ = self.counts
        if kind == "workitem":
            if self.wg == 1:
                v = np.int64(0)
            elif (f := self.coord_affine(kind, dim)) is not None:
                # from its fact: one broadcast copy, no lane-wise division (the same for every
                # box of ``ng`` groups: lanes are in flat workitem order)
                v = self._per_shape(key, lambda: A.positions(f, self.extents))
            else:

                def make() -> np.ndarray:
                    fact = self.coord_affine(kind, dim)
                    if fact is not None:  # one pass over the lanes
                        return A.positions(fact, self.extents)
                    flat = np.tile(np.arange(self.wg, dtype=np.int64), self.ng)
                    return (flat % sx, (flat // sx) % sy, flat // (sx * sy))[d]

                v = self._per_shape(key, make)
        elif kind == "workgroup" and self.ng > 1 and self.extents:
            a = self.coord_affine(kind, dim)
            # one coordinate for the whole box of workgroups: a uniform value
            v = np.int64(self.origin[2 - d]) if a is None else A.positions(a, self.extents)
        elif kind == "workgroup":
            if self.ng == 1:
                g = self.g0
                v = np.int64((g % gx, (g // gx) % gy, g // (gx * gy))[d])
            else:
                g = self.lane_group() + self.g0
                v = (g % gx, (g // gx) % gy, g // (gx * gy))[d]
        else:
            a = self.coord_affine("dispatch", dim)
            a = a if a is not None and A.flat_stride(a[1], self.extents) == 1 else None
            if a is not None:
                if self.workitems <= SHARED_IDS:
                    # a read-only window on a shared 0..N-1: no memory written per chunk
                    v = san.lane_range(self.workitems)[a[0] : a[0] + self.n]
                else:
                    out = self.out_array(step, _I64) if step is not None else None
                    if out is None:
                        v = np.arange(a[0], a[0] + self.n, dtype=np.int64)
                        if step is not None:
                            self.produced(step, v)
                    else:
                        v = np.add(san.lane_range(self.n), a[0], out=out)
            else:
                v = self.coord("workgroup", dim) * self.sizes[d] + self.coord("workitem", dim)
        self.coords[key] = v
        return v

    def coord_affine(self, kind: str, dim: str) -> Any:
        """The coordinate's affine fact over the chunk's lane axes (None when uniform)."""
        if not self.extents or kind in ("size", "count"):
            return None
        d = _DIMS[dim]
        co = [0] * 6
        if kind == "workitem":
            if self.sizes[d] == 1:
                return None
            co[5 - d] = 1
            return (0, tuple(co))
        group = self.origin[2 - d]
        if self.extents[2 - d] > 1:
            co[2 - d] = 1
        if kind == "workgroup":
            return (group, tuple(co)) if any(co) else None
        s = self.sizes[d]
        co = [c * s for c in co]
        if s > 1:
            co[5 - d] = 1
        return (group * s, tuple(co)) if any(co) else None

    def coords_of_lane(self, lane: int | None) -> Any:
        if lane is None:
            lane = 0 if self.mask is None or np.ndim(self.mask) == 0 else int(np.argmax(self.mask))
        if self.corner is not None:
            lane = int(self.chunk_lanes(np.int64(lane)))
        return self.coords_of_item(self.g0 * self.wg + lane)

    def coords_of_item(self, item: int) -> Any:
        """((wx, wy, wz), (tx, ty, tz)) of a global flat workitem id."""
        return item_coords(item, self.counts, self.sizes)

    # -------------------------------------------------------------- guards

    def active(self, cond: Any) -> Any:
        """``cond`` restricted to the active lanes (guards of both carry over)."""
        mask = self.mask
        if mask is None:
            return cond
        if type(cond) is not np.ndarray and cond:
            return mask  # a uniform true condition: the same lanes, the same guards
        out = mask & cond
        if type(out) is np.ndarray:
            a, b = self._guard_entry(mask), self._guard_entry(cond)
            both = a[1] + b[1]
            if both:
                boxes = None
                if a[2] is not None and b[2] is not None:
                    boxes = A.intersect_boxes(a[2], b[2])
                self._note(out, both, boxes)
        return out

    def guard(self, cond: Any, fact: Any, lo: int | None, hi: int | None) -> None:
        if type(cond) is np.ndarray and self.extents:
            # over lane axes that are digits (``group * size + item``) the lanes where the
            # comparison holds are exactly a few boxes
            self._note(cond, ((fact, lo, hi),), A.interval_boxes(fact, self.extents, lo, hi))

    def _small_box(self) -> tuple | None:
        """The box of active lanes when they are exactly one box of at most
        ``n / BOX_FRACTION`` lanes (cached per mask), else None."""
        mask = self.mask
        cached = self._box_cache
        if cached is not None and cached[0] is mask:
            return cached[1]
        box = self.exact_box()
        if box is not None:
            k = 1
            for b in box:
                k *= b.stop - b.start
            if k * BOX_FRACTION > self.n:
                box = None
        self._box_cache = (mask, box)
        return box

    def on_box(self, step: Any, vals: list) -> Any:
        # a pure op's lane is a function of that lane's operands alone: under a mask of one
        # small box, compute the box's lanes (copied out contiguous) and write them back; the
        # masked-off lanes of a value made under a mask are never read
        box = self._small_box()
        if box is None:
            return None
        n, ext = self.n, self.extents
        args = []
        lanes = False
        for v in vals:
            if type(v) is np.ndarray:
                if v.shape != (n,):
                    return None
                v = v.reshape(ext)[box].reshape(-1)
                lanes = True
            elif not isinstance(v, np.generic):
                return None
            args.append(v)
        if not lanes:
            return None
        saved = (self.mask, self.extents, self.aff, self.recycling)
        self.n = args_n = next(a.size for a in args if type(a) is np.ndarray)
        self.mask, self.extents, self.recycling = None, (), False
        self.aff = [None] * len(self.aff)
        try:
            r = step.fn(self, step, *args)
        except LoomRuntimeError:
            r = None  # the op runs again on every lane: the error names the right lane
        finally:
            self.n = n
            self.mask, self.extents, self.aff, self.recycling = saved
        if type(r) is not np.ndarray:
            return r if isinstance(r, np.generic) else None
        if r.shape != (args_n,):
            return None
        out = self.out_array(step, r.dtype)
        if out is None:
            out = self.scratch(r.dtype)
        out.reshape(ext)[box] = r.reshape(tuple(b.stop - b.start for b in box))
        return out

    def compacted(self, region: CRegion, args: Any, mask: np.ndarray) -> tuple | None:
        # see loom.interp.compact: the box's lanes alone, unmasked, as if they were the chunk
        n, ext = self.n, self.extents
        if self.tracer is not None or not ext or mask.shape != (n,):
            return None
        boxes = self._guard_entry(mask)[2]
        if boxes is None or len(boxes) != 1:
            return None
        inputs = self.plan.compact_inputs.get(id(region), ())
        if inputs == ():
            inputs = self.plan.compact_inputs[id(region)] = compact.region_inputs(region)
        if inputs is None:
            return None
        first = tuple(a for a, _ in boxes[0])
        sub = tuple(b - a + 1 for a, b in boxes[0])
        k = 1
        for e in sub:
            k *= e
        if k >= n:
            return None
        box = tuple(slice(a, b + 1) for a, b in boxes[0])

        def rebase(f: A.Fact) -> A.Fact:  # the same lanes counted from the box's corner
            return (f[0] + sum(c * a for c, a in zip(f[1], first)), f[1])

        def shrink(v: Any) -> Any:
            if type(v) is A.Lazy:
                if v.value is not None:
                    v = v.value
                else:  # still unmade: the box's lanes of its fact, made when read
                    f = rebase(v.fact)
                    return A.Lazy(f, partial(A.positions, f, sub))
            if type(v) is np.ndarray and v.ndim:
                return v.reshape(ext)[box].reshape(-1) if v.shape == (n,) else None
            return None if compact.holds_lanes(v) else v

        cargs = [shrink(v) for v in args]
        if any(c is None and v is not None for c, v in zip(cargs, args)):
            return None
        env, aff = self.env, self.aff
        saved_slots = [(s, env[s], aff[s]) for s in inputs]
        saved = (n, ext, self.memo, self.recycling, self.corner)

        try:
            for s, v, f in saved_slots:
                c = shrink(v)
                if c is None and v is not None:
                    return None
                env[s] = c
                if f is not None:
                    aff[s] = rebase(f)
                if type(v) is np.ndarray and v.dtype == bool and (g := self._guard_entry(v))[1]:
                    # a guard made outside holds on the box's lanes too (a box of the box)
                    inner = A.intersect_boxes(g[2], boxes) if g[2] is not None else None
                    if inner is not None:
                        inner = [
                            tuple((p - a, q - a) for (p, q), a in zip(b, first)) for b in inner
                        ]
                    self._note(c, tuple((rebase(f), lo, hi) for f, lo, hi in g[1]), inner)
            corner = self.corner
            self.corner = first if corner is None else tuple(a + b for a, b in zip(corner, first))
            self.n, self.extents, self.memo, self.recycling = k, sub, None, False
            out = self.run_region(region, cargs, None)
        finally:
            self.n, self.extents, self.memo, self.recycling, self.corner = saved
            for s, v, f in saved_slots:
                env[s], aff[s] = v, f
        return tuple(self._grow(v, box, sub) for v in out)

    def _grow(self, v: Any, box: tuple, sub: tuple) -> Any:
        """A compacted region's result over the chunk (lanes outside ``box`` unset)."""
        if type(v) is not np.ndarray or not v.ndim:
            return v
        out = self.scratch(v.dtype)
        out.reshape(self.extents)[box] = v.reshape(sub)
        return out

    def chunk_lanes(self, lanes: Any) -> Any:
        """Chunk lane indices of the running lanes ``lanes`` (they differ while a compacted
        region runs over a box of the chunk)."""
        corner = self.corner
        if corner is None:
            return lanes
        key = (corner, self.extents)
        lane_map = self._lane_maps.get(key)
        if lane_map is None:
            strides = A.lane_strides(self.chunk_extents)
            at = sum(a * s for a, s in zip(corner, strides))
            lane_map = self._lane_maps[key] = A.positions((at, strides), self.extents)
            if len(self._lane_maps) > MAX_GUARDED_MASKS:
                del self._lane_maps[next(iter(self._lane_maps))]
        if (
            type(lanes) is np.ndarray
            and lanes.size == self.n
            and lanes.size
            and lanes[-1] == lanes.size - 1
        ):
            return lane_map  # every running lane, in order (lanes are sorted and distinct)
        return lane_map[lanes]

    def guard_mask(self, fact: Any, lo: int | None, hi: int | None) -> Any:
        ext = self.extents
        if not ext:
            return None
        span = A.span(fact, ext)
        if span[0] < -(2**63) or span[1] >= 2**63:
            return None  # the fact is the value on every lane only inside int64
        boxes = A.interval_boxes(fact, ext, lo, hi)
        if boxes is None:
            return None
        # writing the few boxes of lanes where it holds beats comparing every lane's value
        out = self._box_mask(boxes)
        self._note(out, ((fact, lo, hi),), boxes)
        return out

    def _box_mask(self, boxes: list) -> np.ndarray:
        """A bool lane array true exactly on ``boxes`` (inclusive ranges per lane axis): an
        earlier one nothing refers to any more, whose true boxes are known, with only those
        cleared (a few boxes, not every lane), else a new one kept for reuse."""
        ext, n = self.extents, self.n
        pool = self._pool.setdefault(("mask", n), [])
        entry = None
        for e in pool:
            arr = e[0]
            if sys.getrefcount(arr) <= 3:  # the entry, the loop variable, the argument
                entry = e
                break
        if entry is None:
            arr = np.zeros(n, dtype=bool)
            entry = [arr, ext, []]
            if len(pool) < MAX_SCRATCH_ARRAYS:
                pool.append(entry)
        else:
            self._guards.pop(id(arr), None)  # new contents: the old guards do not hold
            old_ext, old = entry[1], entry[2]
            if old_ext == ext and _rewrite_one_box(arr.reshape(ext), old, boxes):
                entry[2] = boxes
                return arr
            if 2 * A.boxes_volume(old) > n:
                arr.fill(False)
            else:
                shaped = arr.reshape(old_ext)
                for box in old:
                    shaped[tuple(slice(a, b + 1) for a, b in box)] = False
        shaped = arr.reshape(ext)
        for box in boxes:
            shaped[tuple(slice(a, b + 1) for a, b in box)] = True
        entry[1], entry[2] = ext, boxes
        return arr

    def count_active(self, mask: np.ndarray) -> int:
        # from the boxes when the mask is exactly their union: no pass over the lanes
        boxes = self._guard_entry(mask)[2]
        if boxes is not None:
            return A.boxes_volume(boxes)
        return int(np.count_nonzero(mask))

    def _note(self, mask: np.ndarray, guards: tuple, boxes: list | None) -> None:
        table = self._guards
        if len(table) >= MAX_GUARDED_MASKS:
            del table[next(iter(table))]
        slices = None if boxes is None else [tuple(slice(a, b + 1) for a, b in x) for x in boxes]
        # a weak reference: the table must not keep a dead mask's scratch array from reuse
        table[id(mask)] = (weakref.ref(mask), guards, boxes, slices)

    def _guard_entry(self, mask: Any) -> tuple:
        """(mask reference, guards, boxes, slices): ``boxes`` (disjoint, inclusive ranges per
        lane axis) when the mask is precisely their union, else None; ``slices`` the same as
        slices."""
        entry = self._guards.get(id(mask))
        return entry if entry is not None and entry[0]() is mask else _NO_GUARDS

    def _guards_of(self, mask: Any) -> tuple:
        return self._guard_entry(mask)[1]

    def guard_boxes(self) -> list[tuple] | None:
        """Disjoint boxes (slices per lane axis) whose union is exactly the active lanes, from
        the mask's guards (None when unknown)."""
        if self.mask is None:
            return None
        return self._guard_entry(self.mask)[3]

    def exact_box(self) -> tuple | None:
        """The box of lanes when the active lanes are exactly one box (else None)."""
        boxes = self.guard_boxes()
        return boxes[0] if boxes is not None and len(boxes) == 1 else None

    def guard_bounds(self, fact: Any) -> tuple[int, int] | None:
        """Bounds of ``fact`` over the active lanes: its span over the chunk narrowed by every
        guard of the mask on a fact with the same coefficients (then they differ by a
        constant)."""
        guards = self._guards_of(self.mask)
        if not guards:
            return None
        lo, hi = A.span(fact, self.extents)
        found = False
        for g, glo, ghi in guards:
            if g[1] == fact[1]:
                d = fact[0] - g[0]
                if glo is not None:
                    lo = max(lo, glo + d)
                if ghi is not None:
                    hi = min(hi, ghi + d)
                found = True
        return (lo, hi) if found else None

    def guard_box(self) -> tuple | None:
        """Slices (one per lane axis) of a box holding every active lane, from the mask's
        guards on facts that vary along one lane axis (None when there are none)."""
        guards = self._guards_of(self.mask)
        ext = self.extents
        box = None
        for g, glo, ghi in guards:
            axes = [d for d, (c, e) in enumerate(zip(g[1], ext)) if c and e > 1]
            if len(axes) != 1:
                continue
            d = axes[0]
            c = g[1][d]
            # glo <= g0 + c * i <= ghi for the lane index i along axis d
            lo, hi = 0, ext[d] - 1
            if c > 0:
                if glo is not None:
                    lo = max(lo, -((g[0] - glo) // c))
                if ghi is not None:
                    hi = min(hi, (ghi - g[0]) // c)
            else:
                if ghi is not None:
                    lo = max(lo, -((ghi - g[0]) // -c))
                if glo is not None:
                    hi = min(hi, (g[0] - glo) // -c)
            if box is None:
                box = [(0, e - 1) for e in ext]
            box[d] = (max(box[d][0], lo), min(box[d][1], hi))
        if box is None:
            return None
        return tuple(slice(a, max(a, b + 1)) for a, b in box)

    # -------------------------------------------------------------- lanes

    def active_lanes(self) -> list[int]:
        """Indices of the active lanes."""
        if self.mask is None:
            return list(range(self.n))
        return [int(i) for i in np.flatnonzero(self.mask)]

    def masked_lanes(self) -> np.ndarray | None:
        m = self.mask
        if type(m) is not np.ndarray or not FAST_PATHS:
            return None
        return self.mask_lanes()

    def mask_lanes(self) -> np.ndarray:
        """``np.flatnonzero`` of the run mask (cached per mask; every lane when there is none)."""
        m = self.mask
        if m is None:
            return np.arange(self.n, dtype=np.int64)
        cached = self._lanes_cache
        if cached is not None and cached[0] is m:
            return cached[1]
        lanes = np.flatnonzero(m)
        self._lanes_cache = (m, lanes)
        return lanes

    def active_range(self) -> tuple[int, int] | None:
        """(lo, hi) when the active lanes are exactly lanes lo..hi-1."""
        m = self.mask
        if m is None:
            return (0, self.n)
        cached = self._range_cache
        if cached is not None and cached[0] is m:
            return cached[1]
        count = int(np.count_nonzero(m))
        lo = int(np.argmax(m))
        rng = (lo, lo + count) if count and m[lo + count - 1] else None
        self._range_cache = (m, rng)
        return rng

    def retire(self, step: Any, leaving: Any) -> None:
        """Lanes in ``leaving`` exit the kernel (they stop taking part in barriers)."""
        leaving = np.broadcast_to(np.asarray(leaving, dtype=bool), (self.n,))
        live = np.ones(self.n, dtype=bool) if self.live is None else self.live.copy()
        live &= ~leaving
        self.live = live
        self.retired = True

    def narrow(self, mask: Any) -> Any:
        if self.live is None:
            return mask
        return self.live.copy() if mask is None else mask & self.live

    # -------------------------------------------------------------- collectives and transfers

    def collective(self, step: Any, scope: str, fn: Any, values: tuple) -> Any:
        """A subgroup/workgroup collective over the active lanes (see loom.interp.collectives)."""
        return collectives.grid_collective(self, step, scope, fn, values)

    def subgroup_width(self) -> int:
        """The target's subgroup size."""
        return self.subgroup

    def workgroup_items(self) -> int:
        """Workitems per workgroup."""
        return self.wg

    def flat_local(self) -> Any:
        """Flat workitem id inside its workgroup, per lane."""
        if self.wg == 1:
            return np.int64(0)
        return self._per_shape("flat", lambda: np.tile(np.arange(self.wg, dtype=np.int64), self.ng))

    def async_queue(self) -> Any:
        """The chunk's committed asynchronous transfer groups."""
        q = self.coords.get("async")
        if q is None:
            q = self.coords["async"] = transfers.AsyncQueue()
        return q

    def async_replace(self, queue: Any, state: tuple) -> None:
        """Replace a queue's state (the stepper logs it for undo)."""
        queue.state = state

    def in_flight(self, step: Any, buf: Buf, addrs: list, size: int) -> None:
        """Mark the destination bytes of a started transfer as not yet defined."""
        if not self.sanitize or buf.shadow is None or not addrs:
            return
        lanes = (
            np.arange(self.n, dtype=np.int64) if self.mask is None else np.flatnonzero(self.mask)
        )
        pos = [
            np.broadcast_to(self._physical(buf, a[lanes] if np.ndim(a) else a, lanes), lanes.shape)
            for a in addrs
        ]
        flat = (np.stack(pos, axis=1)[:, :, None] + np.arange(size)).reshape(-1)
        transfers.mark_in_flight(buf.shadow, flat)
        self.findings.in_flight.setdefault(buf.uid, set()).update(flat.tolist())

    def atomic(
        self, step: Any, buf: Buf, addr: Any, dtype: np.dtype, update: Any, fold: Any = None
    ) -> Any:
        """Atomic read-modify-write of one element per active lane, in ascending lane order
        where lanes share an element; ``update(old, lanes) -> new`` works on memory values.
        Returns every lane's old value. Atomics never race with each other (sanitizer).
        ``fold = (ufunc, values)`` instead: an update whose order does not matter and whose
        old values nobody reads (``ufunc.at`` applies every lane's value at once; returns
        None)."""
        size = dtype.itemsize
        lanes, a = self._lanes_and_addr(step, buf, addr, size)
        pos = np.broadcast_to(self._physical(buf, a, lanes), lanes.shape)
        pos = pos.astype(np.int64, copy=False)
        checked = self.sanitize and buf.shadow is not None and lanes.size
        if checked:
            # the sanitizer needs only each access's first byte (one index for both checks)
            byte_pos = san.FancyIndex(np.broadcast_to(pos[:, None], (pos.size, size)))
            self._check(step, buf, byte_pos, lanes, None, atomic=True)
        if fold is not None and FAST_PATHS and _aligned(pos, size):
            ufunc, values = fold
            data = buf.data
            elems = data[: data.size - data.size % size].view(dtype)
            if np.ndim(values) and lanes.size < self.n:
                values = values[lanes]  # else every lane in order, or one value for all
            at = pos >> (size.bit_length() - 1) if size & (size - 1) == 0 else pos // size
            ufunc.at(elems, at, values)
            if checked:
                raw = elems[at].view(np.uint8).reshape(-1, size)
                self._check(step, buf, byte_pos, lanes, raw, atomic=True)
            return None
        if fold is not None:
            ufunc, values = fold

            def update(old: Any, sel: Any) -> Any:
                v = values[sel] if np.ndim(values) else values
                return ufunc(old, np.asarray(v, dtype))

        old_all = np.zeros(lanes.size, dtype=dtype)
        order = np.argsort(pos, kind="stable")
        sp = pos[order]
        first = np.ones(sp.size, dtype=bool)
        first[1:] = sp[1:] != sp[:-1]
        rank = np.arange(sp.size) - np.maximum.accumulate(np.where(first, np.arange(sp.size), 0))
        for r in range(int(rank.max()) + 1 if rank.size else 0):
            sel = order[rank == r]
            p = pos[sel]
            whole = buf.data[p[:, None] + np.arange(size)].reshape(-1).view(dtype)
            new = np.asarray(update(whole, lanes[sel]), dtype=dtype)
            buf.data[p[:, None] + np.arange(size)] = new.view(np.uint8).reshape(-1, size)
            old_all[sel] = whole
        if self.sanitize and buf.shadow is not None and lanes.size:
            raw = buf.data[pos[:, None] + np.arange(size)]
            self._check(step, buf, pos[:, None] + np.arange(size), lanes, raw, atomic=True)
        out = np.zeros(self.n, dtype=dtype)
        out[lanes] = old_all
        return out

    # -------------------------------------------------------------- synchronisation

    def barrier(self, step: Any) -> None:
        """Lockstep makes the barrier itself a no-op; check arrival and advance epochs."""
        if not self.sanitize:
            return
        groups = self.lane_group()
        if self.mask is None:
            self.epochs += 1
            self._epoch_version += 1
            return
        arrived = np.bincount(groups[self.mask], minlength=self.ng)
        live = self.live if self.live is not None else np.ones(self.n, dtype=bool)
        alive = np.bincount(groups[live], minlength=self.ng)
        self.epochs[arrived > 0] += 1
        self._epoch_version += 1
        bad = (arrived > 0) & (arrived < alive)
        if bad.any():
            g = int(np.flatnonzero(bad)[0])
            in_group = groups == g
            here = int(np.flatnonzero(in_group & self.mask)[0])
            missing = int(np.flatnonzero(in_group & live & ~self.mask)[0])
            base = self.g0 * self.wg
            san.barrier_divergence(
                self.findings, step, base + here, base + missing, count=int(bad.sum())
            )

    # -------------------------------------------------------------- memory

    def alloca(self, step: Any, nbytes: Any, space: str) -> Buf:
        """Fresh scratch memory: per workgroup for workgroup space, per workitem otherwise."""
        if np.ndim(nbytes):
            act = nbytes if self.mask is None else nbytes[self.mask]
            if act.size and (act != act.flat[0]).any():
                raise self.error(
                    step, "RUNTIME/006", "buffer.alloca size differs between workitems", None
                )
            nbytes = act.flat[0] if act.size else 0
        per = self.ng if space == "workgroup" else self.n
        size = scratch_bytes(self, step, nbytes, per, MAX_SCRATCH_BYTES)
        # one owner's worth of slack past the end: a strided read over a box of lanes may
        # reach into it for masked-off lanes of the last owner (never for active ones)
        data = self.zeroed_bytes(size * (per + 1))[: size * per]
        buf = Buf(data, f"%{step.op.results[0].display_name}", space, size)
        buf.slack = size
        buf.group_bytes = size
        buf.space = space if space == "workgroup" else "private"
        if self.sanitize:
            buf.shadow = san.Shadow(data.size, False, self.workitems, len(self.plan.program.steps))
        if self.tracer is not None:
            owners = self.workitems // (self.wg if space == "workgroup" else 1)
            first = self.g0 * (1 if space == "workgroup" else self.wg)
            self.tracer.add(buf, size * owners, owners, first * size)
        return buf

    def _physical(self, buf: Buf, addr: Any, lanes: np.ndarray) -> Any:
        """Absolute byte positions for ``lanes`` (workgroup/private scratch is per owner)."""
        if buf.space == "global" or not buf.group_bytes:
            return addr
        lanes = self.chunk_lanes(lanes)
        if buf.space == "workgroup":
            return addr + (lanes // self.wg) * buf.group_bytes
        return addr + lanes * buf.group_bytes

    def load(self, step: Any, buf: Buf, addr: Any, dtype: np.dtype, contig: Any) -> Any:
        """Read one element per active lane."""
        size = dtype.itemsize
        if type(contig) is tuple:
            contig, addr, vals = self._affine_access(step, buf, contig, dtype, None)
            if vals is not None:
                return vals
        if contig is not None:
            contig = int(contig)  # exact: bounds arithmetic must not wrap around
        if contig is not None and self.mask is None and buf.space == "global":
            # all lanes active, consecutive elements: one slice (bounds = its two ends)
            a1 = contig + self.n * size
            if contig >= 0 and a1 <= buf.length:
                src = buf.data[contig:a1].view(dtype)
                vals = self.out_array(step, dtype)
                if vals is None:
                    vals = self.produced(step, src.copy())
                else:
                    np.copyto(vals, src)
                if self.sanitize:
                    self._check_slice(step, buf, contig, 0, self.n, size, None)
                return vals
        rng = self.active_range() if contig is not None else None
        single = buf.space == "global" or (buf.space == "workgroup" and self.ng == 1)
        if rng is not None and single:
            lo, hi = rng
            a0, a1 = contig + lo * size, contig + hi * size
            if a0 >= 0 and a1 <= buf.length:
                vals = buf.data[a0:a1].view(dtype).copy()
                if self.sanitize:
                    self._check_slice(step, buf, a0, lo, hi, size, None)
                if lo == 0 and hi == self.n:
                    return vals
                out = np.zeros(self.n, dtype=dtype)
                out[lo:hi] = vals
                return out
        lanes, a = self._lanes_and_addr(step, buf, addr, size, contig)
        pos = self._physical(buf, a, lanes) if buf.space != "global" else a
        if np.ndim(pos) == 0 and np.ndim(a) == 0:
            p = int(pos)
            val = buf.data[p : p + size].view(dtype)[0]
            if self.sanitize and lanes.size:
                bytes_ = np.arange(p, p + size)[None, :]
                self._check(step, buf, np.broadcast_to(bytes_, (lanes.size, size)), lanes, None)
            return val
        pos = np.broadcast_to(pos, lanes.shape)
        vals = self._gather(buf.data, pos, dtype)
        if self.sanitize:
            self._check(step, buf, pos[:, None] + np.arange(size), lanes, None)
        if lanes.size == self.n:
            return vals
        out = np.zeros(self.n, dtype=dtype)
        out[lanes] = vals
        return out

    def store(
        self, step: Any, buf: Buf, addr: Any, values: Any, dtype: np.dtype, contig: Any
    ) -> None:
        """Write one element per active lane."""
        size = dtype.itemsize
        if type(contig) is tuple:
            contig, addr, done = self._affine_access(step, buf, contig, dtype, values)
            if done is not None:
                return
        if contig is not None:
            contig = int(contig)  # exact: bounds arithmetic must not wrap around
        if (
            contig is not None
            and self.mask is None
            and buf.space == "global"
            and type(values) is np.ndarray
            and values.dtype == dtype
            and values.flags.c_contiguous
        ):
            a1 = contig + self.n * size
            if contig >= 0 and a1 <= buf.length:
                raw = values.view(np.uint8)
                if self.sanitize:
                    self._check_slice(step, buf, contig, 0, self.n, size, raw)
                buf.data[contig:a1] = raw
                return
        rng = self.active_range() if contig is not None else None
        single = buf.space == "global" or (buf.space == "workgroup" and self.ng == 1)
        if rng is not None and single:
            lo, hi = rng
            a0, a1 = contig + lo * size, contig + hi * size
            if a0 >= 0 and a1 <= buf.length:
                vals = values[lo:hi] if np.ndim(values) else np.full(hi - lo, values, dtype)
                vals = np.ascontiguousarray(vals, dtype=dtype)
                if self.sanitize:
                    self._check_slice(step, buf, a0, lo, hi, size, vals.view(np.uint8))
                buf.data[a0:a1] = vals.view(np.uint8)
                return
        lanes, a = self._lanes_and_addr(step, buf, addr, size, contig)
        if not lanes.size:
            return
        pos = np.broadcast_to(self._physical(buf, a, lanes), lanes.shape)
        vals = values[lanes] if np.ndim(values) else np.full(lanes.size, values, dtype)
        vals = np.ascontiguousarray(vals, dtype=dtype)
        raw = vals.view(np.uint8).reshape(-1, size)
        if self.sanitize:
            self._check(step, buf, pos[:, None] + np.arange(size), lanes, raw)
        if size > 1 and not (pos % size).any():
            # aligned elements: one element-wide scatter instead of one per byte
            data = buf.data
            data[: data.size - data.size % size].view(dtype)[pos // size] = vals
        else:
            buf.data[pos[:, None] + np.arange(size)] = raw

    def observe(
        self, step: Any, buf: Buf, addr: Any, dtype: np.dtype, write: bool, atomic: bool = False
    ) -> None:
        """Record a read or write of one element per active lane for the sanitizer without
        touching memory (a race observation). An observed write's value is unknown, so it never
        counts as a write of the same value."""
        size = dtype.itemsize
        lanes, a = self._lanes_and_addr(step, buf, addr, size)
        if not lanes.size or not self.sanitize:
            return
        pos = np.broadcast_to(self._physical(buf, a, lanes), lanes.shape)
        byte_pos = pos[:, None] + np.arange(size)
        self._check(
            step, buf, byte_pos, lanes, buf.data[byte_pos] if write else None, atomic, False
        )

    def _affine_access(
        self, step: Any, buf: Buf, fact: tuple, dtype: np.dtype, values: Any
    ) -> tuple:
        """An access whose byte address has an affine fact: as a strided view of the buffer
        over all lanes when it fits; returns ``(contig, addr, result)`` where ``result`` is the
        loaded lanes (or True for a store) and otherwise ``contig``/``addr`` for the other
        paths (the lane-0 address of consecutive elements, or every lane's address)."""
        ext, size = self.extents, dtype.itemsize
        if A.flat_stride(fact[1], ext) == size:
            return fact[0], None, None
        f = self._owned_fact(buf, fact[:2])
        lo, hi = A.span(f, ext)
        view = None
        room = buf.data.size + buf.slack  # masked-off lanes neither read nor write there
        distinct = values is None or fact[2] or A.injective(f[1], ext, size)
        if lo >= 0 and distinct and (hi + size <= room or self._boxes_fit(f, room - size)):
            # (past the end only when every active lane is in range: lanes outside the
            # guard's boxes are never read or written)
            view = A.strided(buf.data, f, ext, dtype)
        if view is None:
            return None, A.positions(fact, ext), None
        check = self.sanitize and buf.shadow is not None
        if check:
            shadow_ix, lanes, pos = self._shadow_index(buf, f, fact, hi, size, values is None)
        if values is None:
            vals = self._load_view(step, view, dtype)
            if check:
                if shadow_ix is not None and lanes is None:
                    self._check_facts(step, buf, shadow_ix, None)
                else:
                    self._check(step, buf, shadow_ix or san.FancyIndex(pos), lanes, None)
            return None, None, vals
        src = np.asarray(values, dtype=dtype)
        if check and shadow_ix is not None and lanes is None:
            self._check_facts(step, buf, shadow_ix, src)
        elif check:
            raw = np.ascontiguousarray(np.broadcast_to(src, (self.n,))[lanes])
            # injective (checked above): the same-step write race search has nothing to find
            ix = shadow_ix or san.FancyIndex(pos, distinct=True)
            self._check(step, buf, ix, lanes, raw.view(np.uint8).reshape(-1, size))
        self._store_view(view, src.reshape(ext) if src.ndim else src)
        return None, None, True

    def _owned_fact(self, buf: Buf, f: tuple) -> tuple:
        """The address fact ``f`` in ``buf``'s bytes: workgroup and private scratch give each
        owner (workgroup, lane) its own ``group_bytes`` (counted from the compacted box's
        corner inside a compacted region)."""
        if buf.space == "global" or not buf.group_bytes:
            return f
        gb, cx = buf.group_bytes, self.chunk_extents
        if buf.space == "workgroup":
            own = (gb * cx[1] * cx[2], gb * cx[2], gb, 0, 0, 0)
        else:
            own = tuple(gb * c for c in A.lane_strides(cx))
        at = f[0] + sum(a * c for a, c in zip(self.corner or (), own))
        return at, tuple(a + b for a, b in zip(f[1], own))

    def _shadow_index(
        self, buf: Buf, f: tuple, fact: tuple, hi: int, size: int, load: bool
    ) -> tuple[Any, Any, Any]:
        """How the sanitizer indexes a strided access: ``(index, lanes, pos)``: a strided
        index following the view (``lanes`` None: workitems from the lane fact), one over the
        guard's box or boxes, or (index None) every active lane's first byte ``pos``."""
        ext, mask = self.extents, self.mask
        shadow_ix: Any = None
        lanes: Any = None
        if (
            mask is None
            and hi + size <= buf.data.size
            and A.injective(f[1], ext if not load else A.distinct_extents(f[1], ext), size)
        ):
            # every lane, no two overlapping: the shadow follows the same strided view
            shadow_ix = san.AffineIndex(f, ext, size)
            shadow_ix.lane_fact = (0, A.lane_strides(ext))
            return shadow_ix, None, None
        if mask is not None and (boxes := self.guard_boxes()) is not None:
            # the active lanes are a box: the same over the box (when it fits); a few boxes
            # with no two active lanes at one position (``fact[2]``: in-bounds lanes of a
            # separable access never share one): the same per box
            if len(boxes) == 1:
                shadow_ix, lanes = self._box_index(f, boxes[0], buf, size, load)
            elif boxes and (fact[2] or A.injective(f[1], ext, size)):
                shadow_ix, lanes = self._boxes_index(f, boxes, buf, size)
        if shadow_ix is not None:
            return shadow_ix, lanes, None
        at = A.positions(f, ext)
        if mask is None:
            lanes = san.lane_range(self.n)
        else:
            lanes = np.flatnonzero(mask)
            at = at[lanes]
        # the sanitizer needs only each access's first byte
        return None, lanes, np.broadcast_to(at[:, None], (at.size, size))

    def _load_view(self, step: Any, view: np.ndarray, dtype: np.dtype) -> np.ndarray:
        """The active lanes' elements of the strided ``view`` as a lane array (zero
        elsewhere), or, for a load of ``plan.view_loads`` over every lane, ``view`` itself
        (read-only, shaped like the lane extents: only ``VIEW_OPERANDS`` ops read it)."""
        ext, mask = self.extents, self.mask
        if mask is None and self.views and step.index in self.plan.view_loads:
            # every use reads it before any write to memory (see compact.view_loads): the
            # memory itself, read-only, shaped like the lanes; never recycled (not produced)
            view.flags.writeable = False
            return view
        if mask is None:
            vals = self.out_array(step, dtype)
            if vals is None:
                vals = self.fresh(step, dtype)
            np.copyto(vals.reshape(ext), view)
        elif (boxes := self.guard_boxes()) is not None:
            # the active lanes are a few boxes: plain strided copies, no mask
            vals = self.out_array(step, dtype)
            if vals is None:
                vals = self.scratch(dtype)
            vals.fill(0)
            shaped = vals.reshape(ext)
            for b in boxes:
                shaped[b] = view[b]
        else:
            vals = np.zeros(self.n, dtype)
            sub = self.guard_box() or ()
            np.copyto(vals.reshape(ext)[sub], view[sub], where=mask.reshape(ext)[sub])
        return vals

    def _store_view(self, view: np.ndarray, src: Any) -> None:
        """Write ``src`` (lanes shaped like the view, or one value) into the strided ``view``
        for the active lanes."""
        mask = self.mask
        if mask is None:
            view[...] = src
        elif (boxes := self.guard_boxes()) is not None:
            for b in boxes:
                view[b] = src[b] if src.ndim else src
        else:
            sub = self.guard_box() or ()
            m = mask.reshape(self.extents)
            np.copyto(view[sub], src[sub] if src.ndim else src, where=m[sub])

    def _boxes_fit(self, f: tuple, top: int) -> bool:
        """True when the active lanes are a few boxes of the mask's guards over each of which
        ``f`` stays at most ``top``."""
        boxes = self._guard_entry(self.mask)[2] if self.mask is not None else None
        if not boxes:
            return False
        for box in boxes:
            first = f[0] + sum(c * (a if c > 0 else b) for c, (a, b) in zip(f[1], box))
            last = first + sum(abs(c) * (b - a) for c, (a, b) in zip(f[1], box))
            if last > top:
                return False
        return True

    def _box_index(self, f: tuple, box: tuple, buf: Buf, size: int, read: bool) -> tuple:
        """(sanitizer index, lanes) of an access at fact ``f`` by exactly the lanes of
        ``box`` (slices per lane axis), or (None, None) when it does not fit."""
        sub = tuple(b.stop - b.start for b in box)
        if not all(sub):
            return None, None
        first = tuple(b.start for b in box)
        fsub = (f[0] + sum(c * a for c, a in zip(f[1], first)), f[1])
        lo, hi = A.span(fsub, sub)
        spread = A.distinct_extents(f[1], sub) if read else sub
        if lo < 0 or hi + size > buf.data.size or not A.injective(f[1], spread, size):
            return None, None
        strides = A.lane_strides(self.extents)
        ix = san.AffineIndex(fsub, sub, size)
        ix.lane_fact = (sum(a * s for a, s in zip(first, strides)), strides)
        return ix, None  # lanes: from the lane fact (see _check_facts)

    def _boxes_index(self, f: tuple, boxes: list, buf: Buf, size: int) -> tuple:
        """(sanitizer index, lanes) of an injective access at fact ``f`` by the lanes of
        several boxes, box after box, or (None, None) when one does not fit."""
        parts = []
        for box in boxes:
            ix, _ = self._box_index(f, box, buf, size, False)
            if ix is None:
                return None, None
            parts.append(ix)
        return san.BoxesIndex(parts), None

    def _lanes_and_addr(
        self, step: Any, buf: Buf, addr: Any, size: int, contig: Any = None
    ) -> tuple:
        if type(addr) is Gathered and addr.mask is not self.mask:
            addr = addr.expand(self.n)
        if type(addr) is Gathered:
            lanes, a = addr.lanes, addr.values
        else:
            if addr is None:
                addr = contig + np.arange(self.n, dtype=np.int64) * size
            if self.mask is None and FAST_PATHS:
                lanes = san.lane_range(self.n)  # every lane, in order: no gather
                a = addr
            else:
                lanes = self.mask_lanes()
                a = addr[lanes] if np.ndim(addr) else addr
        # ``a + size > length`` would wrap around for addresses near 2^63
        if _within(a, 0, buf.length - size):
            return lanes, a
        bad = (a < 0) | (a > buf.length - size)
        if np.any(bad):
            if np.ndim(bad):
                k = int(np.argmax(bad))
                lane, where = int(lanes[k]), int(a[k])
            else:
                lane, where = int(lanes[0]) if lanes.size else None, int(a)
            if self.tracer is not None:
                self.tracer.out_of_bounds(buf, self.g0 * self.wg + (lane or 0), where, size)
            raise self.error(
                step,
                "RUNTIME/001",
                f"accesses bytes {where}..{where + size - 1} "
                f"outside buffer {buf.name} of {buf.length} bytes",
                lane,
            )
        return lanes, a

    @staticmethod
    def _gather(data: np.ndarray, pos: np.ndarray, dtype: np.dtype) -> np.ndarray:
        size = dtype.itemsize
        if size == 1:
            return data[pos].view(dtype)
        if not (pos % size).any():
            whole = data[: data.size - data.size % size].view(dtype)
            return whole[pos // size]
        return data[pos[:, None] + np.arange(size)].reshape(-1).view(dtype)

    def _epochs_of(self, lanes: Any) -> np.ndarray | None:
        """Barrier epochs of ``lanes``' workgroups (None while no barrier ran in this chunk)."""
        if not self._epoch_version:
            return None
        if type(lanes) is np.ndarray and lanes.size * 4 < self.ng * self.wg:
            return self.epochs[lanes // self.wg]  # a few lanes: no lane-sized table
        le = self.coords.get("epochs")
        if le is None or le[0] != self._epoch_version:
            le = self.coords["epochs"] = (self._epoch_version, np.repeat(self.epochs, self.wg))
        return le[1][lanes]

    def _check_slice(
        self, step: Any, buf: Buf, a0: int, lo: int, hi: int, size: int, raw: Any
    ) -> None:
        if self.corner is not None:  # the box's lanes are not consecutive workitems
            if raw is not None:
                raw = raw.reshape(-1, size)
            ix = san.SliceIndex(a0, hi - lo, size)
            self._check(step, buf, ix, np.arange(lo, hi, dtype=np.int64), raw)
            return
        if self.tracer is not None:
            self.tracer.access(buf, (a0, hi - lo, size), self.g0 * self.wg + lo, raw is not None)
        if buf.shadow is None:
            return
        ix = san.SliceIndex(a0, hi - lo, size)
        items = self.g0 * self.wg + lo  # consecutive workitems
        epochs = self._epochs_of(slice(lo, hi))
        if raw is None:
            san.check_read(self.findings, step, buf, ix, items, epochs, self.wg)
        else:
            san.check_write(
                self.findings,
                step,
                buf,
                ix,
                items,
                epochs,
                self.wg,
                raw.reshape(-1, size),
                buf.data,
            )

    def _check_facts(self, step: Any, buf: Buf, ix: Any, src: Any) -> None:
        """:meth:`_check` of a read (``src`` None) or a write of ``src`` (a scalar or a value
        per chunk lane) at an index whose parts know their lanes (``lane_fact``): lane ids
        and written bytes are built only when the sanitizer needs them."""
        items = san.Items(ix, self.g0 * self.wg)

        def raw() -> np.ndarray:
            got = np.ascontiguousarray(np.broadcast_to(src, (self.n,))[items.lanes()])
            return got.view(np.uint8).reshape(-1, src.dtype.itemsize)

        if self.tracer is not None or self.corner is not None:
            lanes = items.lanes()
            self._check(step, buf, ix, lanes, None if src is None else raw())
            return
        if buf.shadow is None:
            return
        epochs = self._epochs_of(items.lanes()) if self._epoch_version else None
        if src is None:
            san.check_read(self.findings, step, buf, ix, items, epochs, self.wg)
        else:
            san.check_write(self.findings, step, buf, ix, items, epochs, self.wg, raw, buf.data)

    def _check(
        self,
        step: Any,
        buf: Buf,
        byte_pos: np.ndarray,
        lanes: np.ndarray,
        raw: Any,
        atomic: bool = False,
        known: bool = True,
    ) -> None:
        lanes = self.chunk_lanes(lanes)
        if self.tracer is not None:
            self.tracer.access(buf, byte_pos, lanes + self.g0 * self.wg, raw is not None)
        if buf.shadow is None:
            return
        items = lanes + self.g0 * self.wg
        epochs = self._epochs_of(lanes)
        if raw is None:
            san.check_read(
                self.findings, step, buf, byte_pos, items, epochs, self.wg, atomic=atomic
            )
        else:
            san.check_write(
                self.findings,
                step,
                buf,
                byte_pos,
                items,
                epochs,
                self.wg,
                raw,
                buf.data,
                atomic=atomic,
                known=known,
            )

    def load_bytes(self, step: Any, buf: Buf, lane: int, start: int, count: int) -> np.ndarray:
        """Bytes ``start .. start+count-1`` of ``buf`` as seen by ``lane``."""
        self._range_check(step, buf, lane, start, count)
        p = start + self._owner_base(buf, lane)
        if self.sanitize and buf.shadow is not None:
            self._check(
                step, buf, np.arange(p, p + count)[None, :], np.array([lane], dtype=np.int64), None
            )
        return buf.data[p : p + count].copy()

    def store_bytes(self, step: Any, buf: Buf, lane: int, start: int, data: np.ndarray) -> None:
        """Write ``data`` at byte ``start`` of ``buf`` as ``lane``."""
        self._range_check(step, buf, lane, start, data.size)
        p = start + self._owner_base(buf, lane)
        if self.sanitize and buf.shadow is not None:
            self._check(
                step,
                buf,
                np.arange(p, p + data.size)[None, :],
                np.array([lane], dtype=np.int64),
                data[None, :],
            )
        buf.data[p : p + data.size] = data

    def _owner_base(self, buf: Buf, lane: int) -> int:
        if buf.space == "workgroup":
            return (lane // self.wg) * buf.group_bytes
        if buf.space == "private":
            return lane * buf.group_bytes
        return 0

    def _range_check(self, step: Any, buf: Buf, lane: int, start: int, count: int) -> None:
        if start < 0 or start + count > buf.length:
            if self.tracer is not None:
                self.tracer.out_of_bounds(buf, self.g0 * self.wg + lane, start, count)
            raise self.error(
                step,
                "RUNTIME/001",
                f"accesses bytes {start}..{start + count - 1}"
                f" outside buffer {buf.name} of {buf.length} bytes",
                lane,
            )


def _rewrite_one_box(shaped: np.ndarray, old: list, new: list) -> bool:
    """Turn a bool array true exactly on the one box ``old`` into one true exactly on the one
    box ``new`` when they differ along a single axis, by writing only the lanes between their
    ranges there (a guard tightening or loosening by steps); False when they do not."""
    if len(old) != 1 or len(new) != 1:
        return False
    (o,), (b,) = old, new
    axes = [d for d, (p, q) in enumerate(zip(o, b)) if p != q]
    if len(axes) != 1:
        return len(axes) == 0
    d = axes[0]
    (o0, o1), (n0, n1) = o[d], b[d]
    if n0 > o1 or o0 > n1:
        return False  # disjoint ranges: no cheaper than clearing and setting

    def write(lo: int, hi: int, value: bool) -> None:
        if lo <= hi:
            box = [slice(p, q + 1) for p, q in b]
            box[d] = slice(lo, hi + 1)
            shaped[tuple(box)] = value

    write(o0, n0 - 1, False)  # at most one of each pair is nonempty
    write(n0, o0 - 1, True)
    write(n1 + 1, o1, False)
    write(o1 + 1, n1, True)
    return True


def _within(a: Any, lo: int, hi: int) -> bool:
    """True when every value of ``a`` is in ``lo..hi`` (two reductions, no lane temporaries;
    False also when unsure: the caller then checks lane by lane)."""
    if type(a) is not np.ndarray or a.dtype.kind != "i" or not a.size:
        return False
    return int(a.min()) >= lo and int(a.max()) <= hi


def _aligned(pos: np.ndarray, size: int) -> bool:
    """True when every position is a multiple of ``size``."""
    if size & (size - 1) or not pos.size:
        return not (pos % size).any()
    return not int(np.bitwise_or.reduce(pos)) & (size - 1)


def depth_message(step: Any) -> str:
    """Why an op cannot enter one more region or call."""
    if step.callee is not None:
        return (
            f"calls nested more than {MAX_DEPTH} deep (a func.call cycle through "
            f"@{step.callee.name}?)"
        )
    return f"regions nested more than {MAX_DEPTH} deep"


def _plan(module: Module, kernel: str) -> KernelPlan:
    """The compiled plan of ``kernel``, cached on the module until the module is edited."""
    name = kernel[1:] if kernel.startswith("@") else kernel
    return module.derived(("loom.interp.plan", name), lambda m: KernelPlan(m, name))


def launch(
    module: Module,
    kernel: str,
    *,
    workload: tuple | list = (),
    args: tuple | list = (),
    sanitize: bool = True,
    max_steps: int | None = None,
    progress: Any = None,
    trace: bool = False,
    functions: dict | None = None,
    globals: dict | None = None,
    config: dict | None = None,
) -> LaunchResult:
    """Run ``kernel`` over its whole grid on NumPy data; buffers are modified in place.

    ``workload`` feeds the config region; ``args`` are the launch arguments in order (NumPy
    arrays or bytearrays for buffers, numbers for scalars). ``max_steps`` bounds the ops one
    workitem may execute (default :data:`DEFAULT_MAX_STEPS`, one million).
    ``progress(done, total)`` is called after each chunk of workgroups. Grids past
    :data:`MAX_WORKGROUP_ITEMS` or :data:`MAX_WORKITEMS` are refused before running.
    Raises :class:`~loom.errors.LoomRuntimeError` on runtime errors.
    ``trace`` records per-byte access traces (``LaunchResult.accesses``; on a runtime error the
    exception's ``accesses``), for pictures; it needs the sanitizer.
    ``functions`` binds Python functions to ``func.decl`` declarations by name (see
    :func:`loom.interp.semantics.func.host_call` for the calling convention); calling a
    declaration nothing is bound to is a runtime error.
    ``globals`` supplies values of the module's globals by name (NumPy arrays are used in
    place) and receives every scalar global's final value; ``config`` overrides configs by name
    (see :mod:`loom.interp.semantics._records`).
    """
    if trace and not sanitize:
        raise LoomUsageError("launch(trace=True) needs the sanitizer (sanitize=True)")
    t0 = time.perf_counter()
    plan = _plan(module, kernel)
    counts, sizes = plan.grid(tuple(workload))
    values, bufs = bind_args(plan.params, tuple(args), plan.name, plan.program)
    records = ModuleRecords(module, globals, config)
    bufs = bufs + records.bufs
    ngroups = counts[0] * counts[1] * counts[2]
    wg = sizes[0] * sizes[1] * sizes[2]
    findings = san.Findings(plan.program, None)
    ctx = GridContext(plan, counts, sizes, sanitize, max_steps, findings)
    ctx.functions = bind_functions(plan.program, functions)
    ctx.records = records
    findings.coords_of = ctx.coords_of_item
    if sanitize:
        for b in bufs:
            b.shadow = san.Shadow(
                b.data.size, records.initialised(b), ngroups * wg, len(plan.program.steps)
            )
    tracer = None
    if trace:
        from loom.interp.trace import Tracer

        tracer = ctx.tracer = findings.tracer = Tracer(counts, sizes)
        for b in bufs:
            tracer.add(b, b.data.size)
    try:
        with np.errstate(all="ignore"):
            total_ops = _run_grid(ctx, ngroups, wg, values, progress)
    except LoomRuntimeError as exc:
        if tracer is not None:
            exc.accesses = tracer.traces  # type: ignore[attr-defined]
        raise
    ctx.hand_back()
    records.hand_back(globals)
    for b in bufs:
        b.shadow = None
    return LaunchResult(
        plan.name,
        counts,
        sizes,
        ngroups * wg,
        total_ops,
        time.perf_counter() - t0,
        findings.diagnostics(),
        tracer.traces if tracer is not None else None,
    )


def _next_box(start: int, most: int, counts: tuple) -> tuple:
    """The largest box of at most ``most`` workgroups starting at flat group ``start`` whose
    groups are consecutive: whole planes, whole rows of one plane, or part of one row."""
    gx, gy, gz = counts
    x, y, z = start % gx, (start // gx) % gy, start // (gx * gy)
    if x == 0 and y == 0 and gx * gy <= most:
        k = min(most // (gx * gy), gz - z)
        return (z, y, x), (k, gy, gx)
    if x == 0 and gx <= most:
        return (z, y, x), (1, min(most // gx, gy - y), gx)
    return (z, y, x), (1, 1, min(most, gx - x))


def _box_of(start: int, count: int, counts: tuple) -> tuple:
    """(origin, extents) of ``count`` groups from ``start`` when they form a box, else ()."""
    box = _next_box(start, count, counts)
    return box if box[1][0] * box[1][1] * box[1][2] == count else ()


def _run_grid(ctx: GridContext, ngroups: int, wg: int, values: list, progress: Any) -> int:
    total_ops = 0
    if ngroups and wg:
        base = max(1, CHUNK_LANES // wg)
        grid = (ctx.counts, ctx.sizes)
        sparse = ctx.plan.sparse_grids
        # a grid whose last launch ran sparse starts with the larger chunks (fewer chunks, and
        # chunks of one size whose dead arrays the next launch reuses)
        grown = grid in sparse and not ctx.sanitize and FAST_PATHS
        per_chunk = base * SPARSE_GROWTH if grown else base
        start = 0
        while start < ngroups:
            box = _next_box(start, per_chunk, ctx.counts)
            count = box[1][0] * box[1][1] * box[1][2]
            ctx.width, steps = 0, ctx.steps
            ctx.run_chunk(start, count, values, box)
            if start == 0 and count == per_chunk and not ctx.sanitize:
                steps = ctx.steps - steps
                if steps and ctx.width < SPARSE_DENSITY * steps * count * wg:
                    if per_chunk == base:
                        per_chunk *= SPARSE_GROWTH
                    sparse[grid] = None
                    if len(sparse) > MAX_SPARSE_GRIDS:
                        del sparse[next(iter(sparse))]
                else:
                    sparse.pop(grid, None)
            total_ops += ctx.ops
            ctx.ops = 0
            start += count
            if progress is not None:
                progress(start, ngroups)
    return total_ops
