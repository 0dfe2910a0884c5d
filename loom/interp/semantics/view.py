"""Semantics of the view dialect: typed element access with bounds checks."""

from __future__ import annotations

from typing import Any

import numpy as np

from loom.interp.memory import View
from loom.interp.numerics import from_memory, to_memory
from loom.interp.semantics import semantics
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
    contig = _contiguous(ctx, view, idx, affs)
    if contig is not None:
        return None, contig
    bad: Any = False
    for i, d in zip(idx, view.dims):
        bad = bad | (i < 0) | (i >= d)
    if bad if isinstance(bad, bool | np.bool_) else bad.any():
        _out_of_bounds(ctx, step, view, idx, bad)
    elem: Any = np.int64(0)
    for i, s in zip(idx, view.strides):
        elem = elem + i * s
    return view.base + elem * view.size, None


def _out_of_bounds(ctx: Any, step: Any, view: View, idx: list, bad: Any) -> None:
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
    """Lane-0 byte address when exactly one index is lane-affine with unit element stride and
    every active lane is in bounds (checked from the affine form, without touching lanes)."""
    if (
        not affs
        or np.ndim(view.base)
        or any(np.ndim(s) or np.ndim(d) for s, d in zip(view.strides, view.dims))
    ):
        return None
    varying = [k for k, i in enumerate(idx) if np.ndim(i)]
    if len(varying) != 1:
        return None
    k = varying[0]
    aff = affs[k]
    if aff is None or aff[1] * int(view.strides[k]) != 1:
        return None
    rng = ctx.active_range()
    if rng is None or rng[0] >= rng[1]:
        return None
    lo, hi = rng
    first, last = aff[0] + aff[1] * lo, aff[0] + aff[1] * (hi - 1)
    if min(first, last) < 0 or max(first, last) >= int(view.dims[k]):
        return None
    uniform = 0
    for j, (i, s, d) in enumerate(zip(idx, view.strides, view.dims)):
        if j != k:
            if not 0 <= int(i) < int(d):
                return None
            uniform += int(i) * int(s)
    return int(view.base) + (uniform + aff[0] * int(view.strides[k])) * view.size


@semantics("view.load")
def _load(ctx: Any, step: Any, view: View, *dyn: Any) -> Any:
    idx = _indices(step, dyn, "static_indices")
    affs = _index_affs(ctx, step, idx, 1)
    addr, contig = _address(ctx, step, view, idx, affs)
    raw = ctx.load(step, view.buf, addr, view.mdtype, contig)
    return from_memory(view.etype, raw) if view.etype.spelling in ("bf16", "i1") else raw


@semantics("view.store")
def _store(ctx: Any, step: Any, value: Any, view: View, *dyn: Any) -> None:
    idx = _indices(step, dyn, "static_indices")
    affs = _index_affs(ctx, step, idx, 2)
    addr, contig = _address(ctx, step, view, idx, affs)
    if view.etype.spelling in ("bf16", "i1"):
        raw = to_memory(view.etype, value)
        raw = raw[0] if np.ndim(value) == 0 else raw
    else:
        raw = value
    ctx.store(step, view.buf, addr, raw, view.mdtype, contig)


def _index_affs(ctx: Any, step: Any, idx: list, first: int) -> tuple:
    """Affine facts of the index values, aligned with ``idx`` (static entries are uniform)."""
    if not ctx.affs:
        return ()
    static = step.attrs.get("static_indices")
    dyn_affs = ctx.affs[first:]
    if static is None:
        return tuple(dyn_affs)
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
