"""Access traces: per byte of each buffer, which workitem last wrote it, how often it was read
and written, and which bytes the sanitizer flagged (races, uninitialised reads); plus the
out-of-bounds access that stopped a launch. Recorded only by ``launch(..., trace=True)``; the
pictures in ``loom_jupyter`` draw them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

NO_WRITER = -1
"""``last_writer`` of a byte nobody wrote in this launch."""


@dataclass
class OutOfBounds:
    """An access outside its buffer: who, which bytes (as addressed by the workitem)."""

    workitem: int
    start: int
    count: int


@dataclass
class AccessTrace:
    """What a launch did to one buffer, byte by byte (``owner_bytes`` > 0 for scratch memory:
    owner ``k`` of ``owners`` — a workgroup or a workitem — has bytes ``k * owner_bytes ..``)."""

    name: str
    space: str
    nbytes: int
    owner_bytes: int = 0
    owners: int = 1
    grid: tuple[int, int, int] = (1, 1, 1)
    workgroup: tuple[int, int, int] = (1, 1, 1)
    """Launch shape, to name the workitem behind a flat id."""
    last_writer: np.ndarray = field(init=False)
    reads: np.ndarray = field(init=False)
    writes: np.ndarray = field(init=False)
    race: np.ndarray = field(init=False)
    uninit_read: np.ndarray = field(init=False)
    out_of_bounds: list[OutOfBounds] = field(default_factory=list)

    def __post_init__(self) -> None:
        n = self.nbytes
        self.last_writer = np.full(n, NO_WRITER, dtype=np.int64)
        self.reads = np.zeros(n, dtype=np.int64)
        self.writes = np.zeros(n, dtype=np.int64)
        self.race = np.zeros(n, dtype=bool)
        self.uninit_read = np.zeros(n, dtype=bool)


def item_coords(
    item: int, grid: tuple[int, ...], workgroup: tuple[int, ...]
) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """(workgroup, workitem) coordinates of flat workitem id ``item`` (x fastest)."""
    wg = workgroup[0] * workgroup[1] * workgroup[2]
    g, flat = divmod(int(item), wg)
    gx, gy, _ = grid
    sx, sy, _ = workgroup
    return (
        (g % gx, (g // gx) % gy, g // (gx * gy)),
        (flat % sx, (flat // sx) % sy, flat // (sx * sy)),
    )


class Tracer:
    """Collects an :class:`AccessTrace` per buffer during one launch."""

    def __init__(self, grid: tuple[int, int, int], workgroup: tuple[int, int, int]) -> None:
        self.grid, self.workgroup = grid, workgroup
        self.traces: dict[str, AccessTrace] = {}
        self._by_buf: dict[int, tuple[AccessTrace, int]] = {}

    def add(self, buf: Any, trace_bytes: int, owners: int = 1, offset: int = 0) -> None:
        """Trace ``buf`` into the trace of its name (scratch buffers of later chunks join the
        same trace at byte ``offset``)."""
        t = self.traces.get(buf.name)
        if t is None:
            owner = buf.group_bytes if buf.space != "global" else 0
            t = AccessTrace(
                buf.name, buf.space, trace_bytes, owner, owners, self.grid, self.workgroup
            )
            self.traces[buf.name] = t
        self._by_buf[buf.uid] = (t, offset)

    def _at(self, buf: Any) -> tuple[AccessTrace, int] | None:
        return self._by_buf.get(buf.uid)

    def access(self, buf: Any, pos: Any, items: Any, write: bool) -> None:
        """Record accesses: ``pos`` byte positions (n, size) or a ``(start, n, size)`` slice of
        consecutive workitems starting at ``items``; else ``items`` is an array of ids."""
        at = self._at(buf)
        if at is None:
            return
        t, off = at
        if isinstance(pos, tuple):
            start, n, size = pos
            sl = slice(off + start, off + start + n * size)
            counts = t.writes if write else t.reads
            counts[sl] += 1
            if write:
                t.last_writer[sl] = np.repeat(np.arange(items, items + n, dtype=np.int64), size)
            return
        if hasattr(pos, "starts"):  # an index object of the sanitizer (starts, size)
            pos = pos.starts[:, None] + np.arange(pos.size)
        flat = np.asarray(pos, dtype=np.int64).reshape(len(items), -1) + off
        np.add.at(t.writes if write else t.reads, flat.reshape(-1), 1)
        if write:
            t.last_writer[flat] = np.asarray(items, dtype=np.int64)[:, None]

    def flag(self, buf: Any, kind: str, starts: Any, width: int) -> None:
        """Mark ``width`` bytes from each of ``starts`` as racy (``race``) or read while
        uninitialised (``uninit``)."""
        at = self._at(buf)
        if at is None:
            return
        t, off = at
        arr = t.race if kind == "race" else t.uninit_read
        pos = (np.asarray(starts, dtype=np.int64).reshape(-1, 1) + np.arange(width)) + off
        arr[pos[(pos >= 0) & (pos < t.nbytes)]] = True

    def coords(self, item: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """(workgroup, workitem) coordinates of a flat workitem id."""
        return item_coords(item, self.grid, self.workgroup)

    def out_of_bounds(self, buf: Any, workitem: int, start: int, count: int) -> None:
        """Note the access outside ``buf`` that stops the launch."""
        at = self._at(buf)
        if at is not None:
            at[0].out_of_bounds.append(OutOfBounds(workitem, start, count))

    def view_out_of_bounds(self, ctx: Any, view: Any, idx: list, bad: Any) -> None:
        """Note every active lane's element access outside ``view`` (grid engine lanes)."""
        n = ctx.n
        sel = np.broadcast_to(np.asarray(bad, dtype=bool), (n,))
        if ctx.mask is not None:
            sel = sel & ctx.mask
        lanes = np.flatnonzero(sel)

        def lane_values(v: Any) -> np.ndarray:
            return np.broadcast_to(np.asarray(v, dtype=np.int64), (n,))[lanes]

        elem = np.zeros(lanes.size, dtype=np.int64)
        for i, s in zip(idx, view.strides):
            elem = elem + lane_values(i) * lane_values(s)
        addr = lane_values(view.base) + elem * view.size
        first = ctx.g0 * ctx.wg
        for lane, a in zip(lanes.tolist(), addr.tolist()):
            self.out_of_bounds(view.buf, first + lane, a, view.size)
