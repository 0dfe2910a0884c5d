"""The sanitizer: per-byte shadow state of every buffer, checked on each access.

For each byte it records whether it was initialised and the last writer and reader (global flat
workitem id, the barrier epoch of that workitem's workgroup, the op). Two accesses conflict when
different workitems touch the same byte, at least one writes, and either they belong to different
workgroups (global memory: always concurrent) or to the same workgroup in the same barrier
interval. A conflicting write of the very same bytes is a warning; anything else is an error.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from loom.diagnostics import Diagnostic, DiagnosticSeverity
from loom.interp.report import coords_text, op_diagnostic

NONE = -1


class Shadow:
    """Shadow state of one buffer (``initialised`` says whether it starts defined)."""

    __slots__ = ("init", "w_item", "w_epoch", "w_op", "r_item", "r_epoch", "r_op")

    def __init__(self, nbytes: int, initialised: bool) -> None:
        self.init = np.full(nbytes, initialised, dtype=bool)
        self.w_item = np.full(nbytes, NONE, dtype=np.int64)
        self.w_epoch = np.zeros(nbytes, dtype=np.int32)
        self.w_op = np.zeros(nbytes, dtype=np.int32)
        self.r_item = np.full(nbytes, NONE, dtype=np.int64)
        self.r_epoch = np.zeros(nbytes, dtype=np.int32)
        self.r_op = np.zeros(nbytes, dtype=np.int32)


class Findings:
    """Collected sanitizer diagnostics, one per (kind, op pair), with occurrence counts."""

    def __init__(self, program: Any, coords_of: Any) -> None:
        self.program = program
        self.coords_of = coords_of
        self.items: dict[tuple, list] = {}

    def add(
        self,
        kind: str,
        severity: DiagnosticSeverity,
        code: str,
        step: Any,
        item: int,
        message: str,
        other_step: Any = None,
        other_item: int | None = None,
        other_what: str = "",
        count: int = 1,
    ) -> None:
        """Record a finding (only the first of each kind and op pair is kept in detail)."""
        key = (kind, step.index, other_step.index if other_step is not None else None)
        entry = self.items.get(key)
        if entry is not None:
            entry[1] += count
            return
        me = coords_text(self.coords_of(item))
        notes = []
        if other_step is not None:
            who = coords_text(self.coords_of(other_item)) if other_item is not None else ""
            notes.append((f"{other_what} by {who}".strip(), other_step))
        self.items[key] = [(severity, code, step, f"{message} by {me}", notes), count]

    def diagnostics(self) -> list[Diagnostic]:
        """The findings as diagnostics, in the order they were first seen."""
        out = []
        for (sev, code, step, msg, notes), count in self.items.values():
            if count > 1:
                msg += f" ({count} occurrences)"
            out.append(op_diagnostic(step, sev, code, msg, notes))
        return out


class SliceIndex:
    """Bytes ``start .. start + n*size - 1`` as ``n`` rows of ``size`` (one row per lane)."""

    __slots__ = ("start", "n", "size")
    contiguous = True

    def __init__(self, start: int, n: int, size: int) -> None:
        self.start, self.n, self.size = start, n, size

    def get(self, arr: np.ndarray) -> np.ndarray:
        """The shadow rows (a view)."""
        return arr[self.start:self.start + self.n * self.size].reshape(self.n, self.size)

    def put(self, arr: np.ndarray, value: Any) -> None:
        """Assign rows."""
        self.get(arr)[...] = value

    @property
    def pos(self) -> np.ndarray:
        """Byte positions as an (n, size) array."""
        return np.arange(self.start, self.start + self.n * self.size).reshape(self.n, self.size)


class FancyIndex:
    """Arbitrary byte positions, an (n, size) array."""

    __slots__ = ("pos",)
    contiguous = False

    def __init__(self, pos: np.ndarray) -> None:
        self.pos = pos

    def get(self, arr: np.ndarray) -> np.ndarray:
        """The shadow rows (a copy)."""
        return arr[self.pos]

    def put(self, arr: np.ndarray, value: Any) -> None:
        """Assign rows (the last of duplicate positions wins)."""
        arr[self.pos] = value


def _index(ix: Any) -> Any:
    return ix if isinstance(ix, SliceIndex | FancyIndex) else FancyIndex(ix)


def _conflict(prev: np.ndarray, prev_epoch_fn: Any, items: np.ndarray, epochs: np.ndarray,
              wg: int, workgroup_memory: bool) -> np.ndarray:
    cand = (prev != NONE) & (prev != items)
    if not cand.any():
        return cand
    prev_epoch = prev_epoch_fn()
    same_group = (prev // wg) == (items // wg)
    concurrent = (~same_group) if not workgroup_memory else np.zeros_like(same_group)
    return cand & (concurrent | (same_group & (prev_epoch == epochs)))


def check_read(f: Findings, step: Any, buf: Any, ix: Any, items: np.ndarray,
               epochs: np.ndarray, wg: int) -> None:
    """Check and record reads of the bytes ``ix`` (one row of bytes per access)."""
    sh = buf.shadow
    ix = _index(ix)
    uninit = ~ix.get(sh.init)
    if uninit.any():
        k = np.argwhere(uninit)[0]
        n_bad = int(uninit.any(axis=-1).sum())
        f.add("uninit", DiagnosticSeverity.ERROR, "SANITIZE/001", step, int(items[k[0]]),
              f"reads uninitialised memory (byte {int(ix.pos[tuple(k)])} of "
              f"{buf.name})", count=n_bad)
    prev = ix.get(sh.w_item)
    bad = _conflict(prev, lambda: ix.get(sh.w_epoch), items[:, None], epochs[:, None], wg,
                    buf.space == "workgroup")
    if bad.any():
        _report_pairs(f, "race-wr", DiagnosticSeverity.ERROR, "SANITIZE/002", step, buf,
                      ix.pos, items, bad, prev, ix.get(sh.w_op),
                      "data race: reads memory written without a barrier",
                      "the conflicting write")
    ix.put(sh.r_item, items[:, None])
    ix.put(sh.r_epoch, epochs[:, None])
    ix.put(sh.r_op, step.index)


def check_write(f: Findings, step: Any, buf: Any, ix: Any, items: np.ndarray,
                epochs: np.ndarray, wg: int, new_bytes: np.ndarray, data: np.ndarray) -> None:
    """Check and record writes of ``new_bytes`` at ``ix`` (rows of bytes per access)."""
    sh = buf.shadow
    ix = _index(ix)
    wgm = buf.space == "workgroup"
    it, ep = items[:, None], epochs[:, None]
    prev = ix.get(sh.w_item)
    bad = _conflict(prev, lambda: ix.get(sh.w_epoch), it, ep, wg, wgm)
    if bad.any():
        same = ix.get(data) == new_bytes
        rows_bad = bad.any(axis=1)
        equal_rows = rows_bad & np.all(same | ~bad, axis=1)
        for rows, sev, code, what in ((rows_bad & ~equal_rows, DiagnosticSeverity.ERROR,
                                       "SANITIZE/002", "data race: writes memory"),
                                      (equal_rows, DiagnosticSeverity.WARNING, "SANITIZE/003",
                                       "data race (same value): writes memory")):
            if rows.any():
                _report_pairs(f, "race-ww" + code, sev, code, step, buf, ix.pos, items,
                              bad & rows[:, None], prev, ix.get(sh.w_op),
                              f"{what} also written without a barrier", "the other write")
    prev_r = ix.get(sh.r_item)
    bad_r = _conflict(prev_r, lambda: ix.get(sh.r_epoch), it, ep, wg, wgm)
    if bad_r.any():
        _report_pairs(f, "race-rw", DiagnosticSeverity.ERROR, "SANITIZE/002", step, buf,
                      ix.pos, items, bad_r, prev_r, ix.get(sh.r_op),
                      "data race: writes memory read without a barrier", "the conflicting read")
    if not ix.contiguous:
        _same_op_writes(f, step, buf, ix.pos, items, new_bytes)
    ix.put(sh.w_item, it)
    ix.put(sh.w_epoch, ep)
    ix.put(sh.w_op, step.index)
    ix.put(sh.init, True)


def _same_op_writes(
    f: Findings, step: Any, buf: Any, byte_pos: np.ndarray, items: np.ndarray, new_bytes: np.ndarray
) -> None:
    flat = byte_pos.reshape(-1)
    if flat.size < 2:
        return
    who = np.broadcast_to(items[:, None], byte_pos.shape).reshape(-1)
    val = np.broadcast_to(new_bytes, byte_pos.shape).reshape(-1)
    order = np.argsort(flat, kind="stable")
    fs, ws, vs = flat[order], who[order], val[order]
    dup = (fs[1:] == fs[:-1]) & (ws[1:] != ws[:-1])
    if not dup.any():
        return
    k = int(np.flatnonzero(dup)[0])
    equal = bool(np.all(vs[1:][dup] == vs[:-1][dup]))
    sev = DiagnosticSeverity.WARNING if equal else DiagnosticSeverity.ERROR
    code = "SANITIZE/003" if equal else "SANITIZE/002"
    what = "data race (same value)" if equal else "data race"
    f.add(
        "race-same" + code,
        sev,
        code,
        step,
        int(ws[k + 1]),
        f"{what}: writes byte {int(fs[k])} of {buf.name} that another workitem writes in "
        "the same step",
        step,
        int(ws[k]),
        "the other write",
        count=int(dup.sum()),
    )


def _report_pairs(
    f: Findings,
    kind: str,
    sev: DiagnosticSeverity,
    code: str,
    step: Any,
    buf: Any,
    byte_pos: np.ndarray,
    items: np.ndarray,
    bad: np.ndarray,
    prev: np.ndarray,
    prev_op: np.ndarray,
    message: str,
    other_what: str,
) -> None:
    rows = np.flatnonzero(bad.any(axis=1))
    ops = prev_op[bad]
    # one report per distinct earlier op
    for op_index in np.unique(ops):
        sel = bad & (prev_op == op_index)
        r, c = np.argwhere(sel)[0]
        other = f.program.steps[int(op_index)]
        f.add(
            kind,
            sev,
            code,
            step,
            int(items[r]),
            f"{message} (byte {int(byte_pos[r, c])} of {buf.name})",
            other,
            int(prev[r, c]),
            other_what,
            count=int(sel.any(axis=1).sum()),
        )
    del rows
