"""Semantics of the view dialect: typed element access with bounds checks, and atomics (run
by the engines' ``atomic`` hook: indivisible, serialised in lane order, never racing with each
other)."""

from __future__ import annotations

from typing import Any

import numpy as np

from loom.interp import affine as A
from loom.interp.memory import Gathered, View
from loom.interp.numerics import from_memory, to_memory, value_dtype
from loom.interp.semantics import lane_local, lazy_operands, semantics, view_results
from loom.interp.semantics._combine import COMBINE
from loom.interp.semantics._util import rtype
from loom.interp.semantics.buffer import type_dims
from loom.ir import DYNAMIC_INDEX


def _indices(step: Any, dynamic: tuple, static_attr: str) -> list:
    static = step.attrs.get(static_attr)
    if static is None:
        return list(dynamic)
    out, it = [], iter(dynamic)
    for s in static:
        out.append(next(it) if s == DYNAMIC_INDEX else np.int64(s))
    return out


def _address(ctx: Any, step: Any, view: View, idx: list, affs: tuple) -> tuple[Any, Any]:
    """Byte addresses of the element for every lane (None when only the contiguous form is
    needed), and the lane-0 address when lanes access consecutive elements."""
    contig = _contiguous(ctx, view, idx, affs) if affs else None
    if contig is not None:
        return None, contig
    idx = [A.values(i) for i in idx]
    static = view.static
    if static is not None and not any(type(i) is np.ndarray for i in idx):
        # every index lane-uniform (always so in the stepper): exact Python-int arithmetic
        base, dims, strides = static
        elem = 0
        for i, d, s in zip(idx, dims, strides):
            i = int(i)
            if i < 0 or i >= d:
                _out_of_bounds(ctx, step, view, idx, True)
            elem += i * s
        return base + elem * view.size, None
    lanes = ctx.masked_lanes() if any(type(i) is np.ndarray for i in idx) else None
    if lanes is not None:
        addr = _gathered_address(view, idx, lanes)
        if addr is not None:
            return Gathered(ctx.mask, lanes, addr), None
    if not _in_bounds(idx, view.dims):
        bad: Any = False
        for i, d in zip(idx, view.dims):
            bad = bad | (i < 0) | (i >= d)
        if bad if isinstance(bad, bool | np.bool_) else bad.any():
            _out_of_bounds(ctx, step, view, idx, bad)
    elem: Any = _ZERO
    for i, s in zip(idx, view.strides):
        if type(i) is np.ndarray and i.dtype == _ZERO.dtype:
            # int64 lanes: times 1 and 0 plus them are the lanes themselves (no pass)
            t = i if type(s) is not np.ndarray and s == 1 else i * s
            elem = t if elem is _ZERO else elem + t
        else:
            elem = elem + i * s
    base = view.base
    addr = elem * view.size
    return (addr if type(base) is not np.ndarray and base == 0 else base + addr), None


_ZERO = np.int64(0)


def _in_bounds(idx: list, dims: tuple) -> bool:
    """True when every lane's index is inside its dimension, from each lane array's smallest
    and largest value (no lane temporaries); False also when unsure (lane-varying dims)."""
    for i, d in zip(idx, dims):
        if type(d) is np.ndarray:
            return False
        if type(i) is np.ndarray:
            if i.dtype.kind != "i" or not i.size or int(i.min()) < 0 or int(i.max()) >= d:
                return False
        elif not 0 <= int(i) < d:
            return False
    return True


def _gathered_address(view: View, idx: list, lanes: np.ndarray) -> Any:
    """The byte addresses of the active ``lanes`` only (a mask: the other lanes' addresses are
    never used), or None when one is out of bounds (the full computation then reports it)."""

    def pick(v: Any) -> Any:
        return v[lanes] if type(v) is np.ndarray else v

    bad: Any = False
    elem: Any = np.int64(0)
    for i, d, s in zip(idx, view.dims, view.strides):
        i = pick(i)
        bad = bad | (i < 0) | (i >= pick(d))
        elem = elem + i * pick(s)
    if np.any(bad):
        return None
    return pick(view.base) + elem * view.size


def _out_of_bounds(ctx: Any, step: Any, view: View, idx: list, bad: Any) -> None:
    tracer = getattr(ctx, "tracer", None)
    if tracer is not None:
        tracer.view_out_of_bounds(ctx, view, idx, bad)
    parts = ", ".join("{}" for _ in idx)
    dims = "x".join(str(d) if np.ndim(d) == 0 else "?" for d in view.dims)
    ctx.check(
        step,
        bad,
        "RUNTIME/001",
        f"index [{parts}] is out of bounds for a view of shape {dims}",
        *idx,
    )


def _contiguous(ctx: Any, view: View, idx: list, affs: tuple) -> Any:
    """The byte address's affine fact over the chunk's lanes (see :mod:`loom.interp.affine`)
    when every lane-varying index has one and every active lane is in bounds (checked from the
    facts, without touching lanes); else None."""
    static = view.static
    if static is None:
        return None
    base, dims, strides = static
    ext = ctx.extents
    c0, co, varying = 0, [0] * len(ext), False
    facts = []
    for i, f, d, s in zip(idx, affs, dims, strides):
        if A.lanes(i):
            if f is None:
                return None
            facts.append(f[1])
            lo, hi = A.span(f, ext)
            if lo < 0 or hi >= d:
                lo, hi = _active_span(ctx, f, i)
                if lo < 0 or hi >= d:
                    return None
            c0 += f[0] * s
            for k, c in enumerate(f[1]):
                co[k] += c * s
            varying = True
        else:
            i = int(i)
            if not 0 <= i < d:
                return None
            c0 += i * s
    if not varying:
        return None
    size = view.size
    distinct = A.injective(strides, dims, 1) and A.separable(facts, ext)
    return (base + c0 * size, tuple(c * size for c in co), distinct)


def _active_span(ctx: Any, f: tuple, lanes: np.ndarray) -> tuple:
    """Bounds of a fact over the active lanes: from the active range when the fact is linear in
    the flat lane index (a bounds guard's last partial workgroup), else from the lane values
    under the mask (a guard at a tile's edge)."""
    mask = ctx.mask
    if type(mask) is np.ndarray:
        known = ctx.guard_bounds(f)
        if known is not None:
            return known
    k = A.flat_stride(f[1], ctx.extents)
    if k is None and type(mask) is np.ndarray:
        if not mask.any():
            return (-1, -1)
        lanes = A.values(lanes)
        big = np.iinfo(np.int64)
        lo = np.min(lanes, where=mask, initial=big.max)
        return int(lo), int(np.max(lanes, where=mask, initial=big.min))
    rng = ctx.active_range() if k is not None else None
    if rng is None or rng[0] >= rng[1]:
        return (-1, -1)
    first, last = f[0] + k * rng[0], f[0] + k * (rng[1] - 1)
    return min(first, last), max(first, last)


_UNSET = object()


def _static_indices(step: Any) -> Any:
    """The op's ``static_indices`` attribute (cached on the step)."""
    static = step.cache.get("static", _UNSET)
    if static is _UNSET:
        static = step.cache["static"] = step.attrs.get("static_indices")
    return static


@semantics("view.load")
def _load(ctx: Any, step: Any, view: View, *dyn: Any) -> Any:
    static = _static_indices(step)
    idx = dyn if static is None else _indices(step, dyn, "static_indices")
    affs = _index_affs(ctx, static, idx, 1)
    addr, contig = _address(ctx, step, view, idx, affs)
    raw = ctx.load(step, view.buf, addr, view.mdtype, contig)
    return from_memory(view.etype, raw) if view.coded else raw


@semantics("view.store")
def _store(ctx: Any, step: Any, value: Any, view: View, *dyn: Any) -> None:
    static = _static_indices(step)
    idx = dyn if static is None else _indices(step, dyn, "static_indices")
    affs = _index_affs(ctx, static, idx, 2)
    addr, contig = _address(ctx, step, view, idx, affs)
    if view.coded:
        raw = to_memory(view.etype, value)
        raw = raw[0] if np.ndim(value) == 0 else raw
    else:
        raw = value
    ctx.store(step, view.buf, addr, raw, view.mdtype, contig)


# one element per lane, at that lane's own address (the engine maps lanes to workitems)
lane_local("view.load", "view.store")
lazy_operands(1, "view.load")
lazy_operands(2, "view.store")
# one element per lane, handed to the engine's load as is (no decoding when not coded)
view_results("view.load")


def _index_affs(ctx: Any, static: Any, idx: Any, first: int) -> tuple:
    """Affine facts of the index values, aligned with ``idx`` (static entries are uniform)."""
    affs = ctx.affs
    if not affs:
        return ()
    dyn_affs = affs[first:]
    if static is None:
        return dyn_affs
    out, it = [], iter(dyn_affs)
    for s in static:
        out.append(next(it) if s == DYNAMIC_INDEX else None)
    return tuple(out)


@semantics("view.subview")
def _subview(ctx: Any, step: Any, view: View, *dyn: Any) -> View:
    offs = _indices(step, dyn, "static_offsets")
    dims = type_dims(ctx, rtype(step))
    bad = False
    for o, nd, d in zip(offs, dims, view.dims):
        bad = bad | (o < 0) | (o + nd > d)
    if np.any(bad):
        parts = ", ".join("{}" for _ in offs)
        ctx.check(
            step, bad, "RUNTIME/001", f"subview at [{parts}] does not fit in the source view", *offs
        )
    elem: Any = np.int64(0)
    for o, s in zip(offs, view.strides):
        elem = elem + o * s
    return View(view.buf, view.base + elem * view.size, dims, view.strides, view.etype)


@semantics("view.refine")
def _refine(ctx: Any, step: Any, view: View) -> View:
    dims = type_dims(ctx, rtype(step))
    bad = False
    for have, want in zip(view.dims, dims):
        bad = bad | (have != want)
    if np.any(bad):
        ctx.check(step, bad, "RUNTIME/012", "view.refine asserts extents the view does not have")
    return View(view.buf, view.base, dims, view.strides, view.etype)


@semantics("view.prefetch")
def _prefetch(ctx: Any, step: Any, view: View, *dyn: Any) -> None:
    return None  # a hint: no access, never faults


def _element_address(ctx: Any, step: Any, view: View, dyn: tuple) -> Any:
    idx = _indices(step, dyn, "static_indices")
    addr, _ = _address(ctx, step, view, idx, ())
    return addr


@semantics("view.atomic.load")
def _atomic_load(ctx: Any, step: Any, view: View, *dyn: Any) -> Any:
    addr = _element_address(ctx, step, view, dyn)
    raw = ctx.atomic(step, view.buf, addr, view.mdtype, lambda old, lanes: old)
    return from_memory(view.etype, raw) if view.coded else raw


@semantics("view.atomic.store")
def _atomic_store(ctx: Any, step: Any, value: Any, view: View, *dyn: Any) -> None:
    addr = _element_address(ctx, step, view, dyn)
    raw = to_memory(view.etype, value) if view.coded else np.asarray(value, view.mdtype)
    ctx.atomic(step, view.buf, addr, view.mdtype, lambda old, lanes: _lanes(raw, lanes))


def _lanes(v: Any, lanes: Any) -> Any:
    """The values of ``lanes`` (scalars are every lane's value)."""
    v = np.asarray(v)
    return v[lanes] if v.ndim and v.size > 1 else np.broadcast_to(v.reshape(-1)[:1], lanes.shape)


def _rmw(ctx: Any, step: Any, value: Any, view: View, dyn: tuple) -> Any:
    f = COMBINE[step.attrs["kind"]]
    addr = _element_address(ctx, step, view, dyn)

    def update(old: Any, lanes: Any) -> Any:
        cur = from_memory(view.etype, old) if view.coded else old.astype(value_dtype(view.etype))
        new = f(cur, np.asarray(_lanes(value, lanes), dtype=cur.dtype))
        return to_memory(view.etype, new) if view.coded else new

    raw = ctx.atomic(step, view.buf, addr, view.mdtype, update)
    return from_memory(view.etype, raw) if view.coded else raw.astype(value_dtype(view.etype))


@semantics("view.atomic.rmw")
def _atomic_rmw(ctx: Any, step: Any, value: Any, view: View, *dyn: Any) -> Any:
    return _rmw(ctx, step, value, view, dyn)


_FOLDS = {
    "addi": np.add,
    "andi": np.bitwise_and,
    "ori": np.bitwise_or,
    "xori": np.bitwise_xor,
    "minsi": np.minimum,
    "maxsi": np.maximum,
}
"""Reduction kinds whose effect on an integer element is the same in any order (wrapping
add and bitwise ops on the memory integers; signed min/max on signed memory integers)."""


@semantics("view.atomic.reduce")
def _atomic_reduce(ctx: Any, step: Any, value: Any, view: View, *dyn: Any) -> None:
    fold = None if view.coded else _FOLDS.get(step.attrs["kind"])
    kinds = "i" if step.attrs["kind"] in ("minsi", "maxsi") else "iu"
    if fold is not None and view.mdtype.kind in kinds:
        # no old values to hand out: the engine may apply every lane's update at once
        addr = _element_address(ctx, step, view, dyn)
        ctx.atomic(
            step, view.buf, addr, view.mdtype, None, fold=(fold, np.asarray(value, view.mdtype))
        )
        return
    _rmw(ctx, step, value, view, dyn)


@semantics("view.atomic.cmpxchg")
def _cmpxchg(ctx: Any, step: Any, expected: Any, repl: Any, view: View, *dyn: Any) -> Any:
    addr = _element_address(ctx, step, view, dyn)
    exp_raw = to_memory(view.etype, expected) if view.coded else np.asarray(expected, view.mdtype)
    new_raw = to_memory(view.etype, repl) if view.coded else np.asarray(repl, view.mdtype)
    bits = np.dtype(f"u{view.size}")

    def update(old: Any, lanes: Any) -> Any:
        e = np.asarray(_lanes(exp_raw, lanes), dtype=view.mdtype)
        r = np.asarray(_lanes(new_raw, lanes), dtype=view.mdtype)
        # compared bit for bit: -0.0 differs from +0.0, a NaN matches only its own bits
        same = old.view(bits) == e.view(bits)
        return np.where(same, r, old)

    raw = ctx.atomic(step, view.buf, addr, view.mdtype, update)
    return from_memory(view.etype, raw) if view.coded else raw.astype(value_dtype(view.etype))
