"""Semantics of the buffer dialect: views, raw byte access, copies and scratch memory."""

from __future__ import annotations

from typing import Any

import numpy as np

from loom.interp.memory import View, dense_strides
from loom.interp.numerics import to_memory
from loom.interp.semantics import semantics
from loom.interp.semantics._util import itype, rtype
from loom.ir import DynamicDim

_U8 = np.dtype(np.uint8)


def type_dims(ctx: Any, t: Any) -> tuple:
    """The runtime extents of a shaped type (dynamic dims read from their SSA values)."""
    dims = []
    for d in t.dims:
        if isinstance(d, DynamicDim):
            dims.append(ctx.value_of(d.value))
        else:
            dims.append(np.int64(d.size))
    return tuple(dims)


@semantics("buffer.view")
def _view(ctx: Any, step: Any, buf: Any, off: Any) -> View:
    t = rtype(step)
    dims = type_dims(ctx, t)
    if dims:
        bad = _neg(dims)
        if bad if isinstance(bad, bool | np.bool_) else bad.any():
            ctx.check(step, bad, "RUNTIME/001", "a view extent is negative")
    strides = dense_strides(dims) if t.encoding is None else _layout_strides(ctx, step, t, dims)
    return View(buf, off, dims, strides, t.element_type)


def _layout_strides(ctx: Any, step: Any, t: Any, dims: tuple) -> tuple:
    """Element strides of view type ``t`` under its attached layout (a value or a spec)."""
    from loom.interp.semantics.encoding import layout_value

    enc = t.encoding
    try:
        layout = layout_value(enc if isinstance(enc, str) else ctx.value_of(enc))
        return layout.strides_for(dims)
    except ValueError as e:
        raise ctx.error(step, "RUNTIME/012", f"{e} ({t})", None) from None


def _neg(dims: tuple) -> Any:
    bad = False
    for d in dims:
        bad = bad | (d < 0)
    return bad


@semantics("buffer.load.i8.u")
def _load_i8(ctx: Any, step: Any, buf: Any, off: Any) -> Any:
    aff = ctx.affs[1] if ctx.affs else None
    contig = off_contig(off, aff, 1)
    raw = ctx.load(step, buf, off, _U8, contig)
    return raw.astype(np.int32)


@semantics("buffer.store.i8")
def _store_i8(ctx: Any, step: Any, value: Any, buf: Any, off: Any) -> None:
    aff = ctx.affs[2] if ctx.affs else None
    ctx.store(step, buf, off, (value & 0xFF).astype(np.uint8), _U8, off_contig(off, aff, 1))


def off_contig(addr: Any, aff: Any, size: int) -> Any:
    """Byte address of lane 0 when lanes access consecutive ``size``-byte elements."""
    if aff is not None and aff[1] == size:
        return aff[0]
    return None


@semantics("buffer.assume.noalias", "buffer.assume.alignment")
def _identity_many(ctx: Any, step: Any, *bufs: Any) -> Any:
    return bufs[0] if len(bufs) == 1 else bufs


@semantics("buffer.assume.memory_space")
def _identity(ctx: Any, step: Any, buf: Any) -> Any:
    return buf


@semantics("buffer.length")
def _length(ctx: Any, step: Any, buf: Any) -> Any:
    return np.int64(buf.length)


@semantics("buffer.alloca")
def _alloca(ctx: Any, step: Any, nbytes: Any) -> Any:
    return ctx.alloca(step, nbytes, step.attrs["memory_space"])


@semantics("buffer.copy")
def _copy(ctx: Any, step: Any, src: Any, so: Any, dst: Any, do: Any, n: Any) -> None:
    for lane in ctx.active_lanes():
        count = int(_at(n, lane))
        if count:
            data = ctx.load_bytes(step, src, lane, int(_at(so, lane)), count)
            ctx.store_bytes(step, dst, lane, int(_at(do, lane)), data)


@semantics("buffer.fill")
def _fill(ctx: Any, step: Any, pattern: Any, dst: Any, do: Any, n: Any) -> None:
    t = itype(step)
    for lane in ctx.active_lanes():
        count = int(_at(n, lane))
        if count:
            pat = to_memory(t, _at(pattern, lane)).view(np.uint8)
            reps = -(-count // pat.size)
            ctx.store_bytes(step, dst, lane, int(_at(do, lane)), np.tile(pat, reps)[:count])


@semantics("buffer.compare")
def _compare(ctx: Any, step: Any, lhs: Any, lo: Any, rhs: Any, ro: Any, n: Any) -> Any:
    out = np.zeros(ctx.n, dtype=np.int32) if ctx.n > 1 else None
    result = np.int32(0)
    for lane in ctx.active_lanes():
        count = int(_at(n, lane))
        r = 0
        if count:
            a = ctx.load_bytes(step, lhs, lane, int(_at(lo, lane)), count)
            b = ctx.load_bytes(step, rhs, lane, int(_at(ro, lane)), count)
            diff = np.flatnonzero(a != b)
            if diff.size:
                r = -1 if a[diff[0]] < b[diff[0]] else 1
        if out is not None:
            out[lane] = r
        else:
            result = np.int32(r)
    return out if out is not None else result


def _at(v: Any, lane: int) -> Any:
    return v[lane] if np.ndim(v) else v


@semantics("buffer.assume.same_root")
def _same_root(ctx: Any, step: Any, buf: Any, root: Any) -> Any:
    return buf


@semantics("buffer.fence")
def _fence(ctx: Any, step: Any) -> None:
    return None  # every workitem sees one memory in both engines: ordering is already given


@semantics("buffer.pack")
def _pack(ctx: Any, step: Any, *lengths: Any) -> tuple:
    aligns = step.attrs.get("minimum_alignments") or ()
    end: Any = np.int64(0)
    offsets = []
    for n, a in zip(lengths, aligns):
        start = -(-end // a) * a
        offsets.append(start)
        end = start + n
    biggest = max(aligns, default=1)
    return (-(-end // biggest) * biggest, *offsets)
