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
    """Byte addresses of the element for every lane, and the lane-0 address when contiguous."""
    bad = False
    for i, d in zip(idx, view.dims):
        bad = bad | (i < 0) | (i >= d)
    if np.any(bad):
        parts = ", ".join("{}" for _ in idx)
        dims = "x".join(str(d) if np.ndim(d) == 0 else "?" for d in view.dims)
        ctx.check(
            step,
            bad,
            "RUNTIME/001",
            f"index [{parts}] is out of bounds for a view of shape {dims}",
            *idx,
        )
    elem: Any = np.int64(0)
    contig = None
    varying = [k for k, i in enumerate(idx) if np.ndim(i)]
    if len(varying) == 1 and np.ndim(view.base) == 0 and all(np.ndim(s) == 0 for s in view.strides):
        k = varying[0]
        aff = affs[k] if affs else None
        if aff is not None and aff[1] * int(view.strides[k]) == 1:
            uniform = sum(
                int(i) * int(s) for j, (i, s) in enumerate(zip(idx, view.strides)) if j != k
            )
            contig = int(view.base) + (uniform + aff[0] * int(view.strides[k])) * view.size
    for i, s in zip(idx, view.strides):
        elem = elem + i * s
    return view.base + elem * view.size, contig


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
