"""Asynchronous transfers for both engines: a transfer reads its source when it starts and
writes its destination when a wait completes its group, so the copied bytes become visible at
the wait. Until then the destination bytes are *in flight*: the sanitizer treats them as
uninitialised, so reading them before the wait is a finding (SANITIZE/001).

Each active workitem copies its own views' footprint (views may differ per lane). Values here:
a token is a :class:`Transfer`, a group a :class:`Group`; a context keeps its committed groups in
an :class:`AsyncQueue` (per workitem in the stepper, per chunk in the grid engine), whose
``state`` tuple is replaced, never mutated, so the stepper can undo it like a workitem state.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from loom.interp.memory import View


@dataclass(frozen=True)
class Transfer:
    """A started transfer: chunks of ``dtype`` to write at ``addrs`` (per lane), for the lanes
    of ``mask`` (None: all lanes that ran it)."""

    dest: Any
    writes: tuple
    dtype: np.dtype
    mask: Any


@dataclass(frozen=True)
class Group:
    """Committed transfers, completed together by a wait."""

    seq: int
    transfers: tuple


class AsyncQueue:
    """The committed, not yet completed groups of one context (oldest first)."""

    __slots__ = ("state",)

    def __init__(self) -> None:
        self.state: tuple = ((), 0)
        """(committed groups, next sequence number)."""


def _offsets(view: View) -> np.ndarray:
    """Byte offsets (from the view base) of every element, in logical row-major order."""
    dims = [int(d) for d in view.dims]
    strides = [int(s) for s in view.strides]
    idx = np.indices(dims, dtype=np.int64).reshape(len(dims), -1) if dims else np.zeros((0, 1))
    elem = (idx * np.array(strides, dtype=np.int64)[:, None]).sum(axis=0) if dims else np.zeros(1)
    return elem.astype(np.int64) * view.size


def chunk_plan(
    src: View, dst: View, nbytes: int | None = None
) -> tuple[np.ndarray, np.ndarray, np.dtype]:
    """Source and destination byte offsets of each chunk, and the chunk dtype: the copy moves
    the source's bytes in logical order into the destination's bytes in logical order."""
    g = math.gcd(src.size, dst.size)
    s = (_offsets(src)[:, None] + np.arange(0, src.size, g)).reshape(-1)
    d = (_offsets(dst)[:, None] + np.arange(0, dst.size, g)).reshape(-1)
    n = min(s.size, d.size) if nbytes is None else nbytes // g
    return s[:n], d[:n], np.dtype(f"u{g}") if g > 1 else np.dtype(np.uint8)


def start(
    ctx: Any, step: Any, src: View, dst: View, dst_extra: Any = 0, nbytes: int | None = None
) -> Transfer:
    """Read the source now; remember the destination writes for the wait."""
    s_off, d_off, dtype = chunk_plan(src, dst, nbytes)
    mask = ctx.mask
    writes = []
    for so, do in zip(s_off, d_off):
        vals = ctx.load(step, src.buf, src.base + so, dtype, None)
        writes.append((dst.base + dst_extra + do, vals))
    ctx.in_flight(step, dst.buf, [w[0] for w in writes], dtype.itemsize)
    return Transfer(dst.buf, tuple(writes), dtype, mask)


def queue_of(ctx: Any) -> AsyncQueue:
    """The context's queue of committed groups."""
    return ctx.async_queue()


def commit(ctx: Any, tokens: tuple) -> Group:
    """Commit the tokens as the next group."""
    q = queue_of(ctx)
    groups, seq = q.state
    g = Group(seq, tuple(t for t in tokens if isinstance(t, Transfer)))
    ctx.async_replace(q, ((*groups, g), seq + 1))
    return g


def wait(ctx: Any, step: Any, group: Group) -> None:
    """Complete ``group`` and every older group: their writes happen now."""
    q = queue_of(ctx)
    groups, seq = q.state
    done = [g for g in groups if g.seq <= group.seq]
    if not done:
        return
    ctx.async_replace(q, (tuple(g for g in groups if g.seq > group.seq), seq))
    saved = ctx.mask
    try:
        for g in done:
            for t in g.transfers:
                ctx.mask = t.mask
                for addr, vals in t.writes:
                    ctx.store(step, t.dest, addr, vals, t.dtype, None)
    finally:
        ctx.mask = saved


def mark_in_flight(shadow: Any, positions: np.ndarray) -> None:
    """Sanitizer: the bytes at ``positions`` (absolute) hold no defined value until written."""
    if shadow is None or positions.size == 0:
        return
    if shadow.ranges is not None:
        shadow.materialise()
    if not shadow.g:
        shadow.fit(0, 1)
    if shadow.init is None:
        shadow.init = np.ones(shadow.w_item.size, dtype=bool)
    shadow.init[np.unique(positions // shadow.g)] = False
