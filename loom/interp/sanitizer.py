"""The sanitizer: per-byte shadow state of every buffer, checked on each access.

For each byte it records whether it was initialised and the last writer and reader (global flat
workitem id, the barrier epoch of that workitem's workgroup, the op). Two accesses conflict when
different workitems touch the same byte, at least one writes, and either they belong to different
workgroups (global memory: always concurrent) or to the same workgroup in the same barrier
interval. A conflicting write of the very same bytes is a warning; anything else is an error.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from loom.diagnostics import Diagnostic, DiagnosticSeverity
from loom.interp.report import coords_text, op_diagnostic

NONE = -1
MAX_SHADOW_BYTES = 4 << 30
"""Largest shadow state per buffer; larger launches must run with ``sanitize=False``."""
_BYTES_PER_GRANULE = 29


class Shadow:
    """Shadow state of one buffer (``initialised`` says whether it starts defined).

    State is kept per *granule* of ``g`` bytes, chosen from the first access (4 for f32 data)
    and refined (split) when a smaller or misaligned access arrives, so element-sized accesses
    cost one shadow entry each. Arrays are allocated at the first access.
    """

    __slots__ = (
        "nbytes",
        "initialised",
        "g",
        "init",
        "w_item",
        "w_epoch",
        "w_op",
        "r_item",
        "r_epoch",
        "r_op",
    )
    _FIELDS = ("init", "w_item", "w_epoch", "w_op", "r_item", "r_epoch", "r_op")

    def __init__(self, nbytes: int, initialised: bool) -> None:
        self.nbytes = nbytes
        self.initialised = initialised
        self.g = 0

    def _allocate(self, g: int) -> None:
        n = -(-self.nbytes // g)
        if n * _BYTES_PER_GRANULE > MAX_SHADOW_BYTES:
            from loom.errors import LoomRuntimeError

            raise LoomRuntimeError(
                f"a {self.nbytes}-byte buffer needs {n * _BYTES_PER_GRANULE >> 20} MiB of "
                "sanitizer state, more than the interpreter allows; run with sanitize=False "
                "(loom-run --no-sanitize)"
            )
        self.g = g
        self.init = np.full(n, self.initialised, dtype=bool)
        self.w_item = np.full(n, NONE, dtype=np.int64)
        # epoch/op entries are only read where an item is recorded, so they need no fill
        self.w_epoch = np.empty(n, dtype=np.int32)
        self.w_op = np.empty(n, dtype=np.int32)
        self.r_item = np.full(n, NONE, dtype=np.int64)
        self.r_epoch = np.empty(n, dtype=np.int32)
        self.r_op = np.empty(n, dtype=np.int32)

    def fit(self, align: int, size: int) -> None:
        """Make the granule divide the access alignment and size."""
        want = math.gcd(align, size) if align else size
        if not self.g:
            self._allocate(want if self.nbytes % want == 0 else 1)
            return
        if want % self.g == 0:
            return
        g = math.gcd(self.g, want)
        factor = self.g // g
        for name in self._FIELDS:
            setattr(self, name, np.repeat(getattr(self, name), factor)[: -(-self.nbytes // g)])
        self.g = g


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
    """Accesses ``k = 0..n-1`` of ``size`` bytes at ``start + k*size`` (one row per lane)."""

    __slots__ = ("start", "n", "size", "g")
    contiguous = True

    def __init__(self, start: int, n: int, size: int) -> None:
        self.start, self.n, self.size, self.g = start, n, size, 1

    def bind(self, sh: Shadow) -> SliceIndex:
        """Fit the shadow's granule to this access."""
        sh.fit(self.start % (1 << 30) or (1 << 30), self.size)
        self.g = sh.g
        return self

    def get(self, arr: np.ndarray) -> np.ndarray:
        """The shadow rows (a view)."""
        g = self.g
        a = self.start // g
        per = self.size // g
        return arr[a : a + self.n * per].reshape(self.n, per)

    def put(self, arr: np.ndarray, value: Any) -> None:
        """Assign rows."""
        self.get(arr)[...] = value

    def data_rows(self, data: np.ndarray) -> np.ndarray:
        """The buffer bytes of each access."""
        return data[self.start : self.start + self.n * self.size].reshape(self.n, self.size)

    def byte_at(self, r: int, c: int) -> int:
        """Byte position of granule column ``c`` of row ``r``."""
        return self.start + r * self.size + c * self.g


class FancyIndex:
    """Accesses of ``size`` bytes at arbitrary starts (``pos`` is an (n, size) byte array)."""

    __slots__ = ("starts", "size", "g", "gpos")
    contiguous = False

    def __init__(self, pos: np.ndarray) -> None:
        self.starts = np.ascontiguousarray(pos[:, 0])
        self.size = pos.shape[1]
        self.g = 1
        self.gpos: Any = None

    def bind(self, sh: Shadow) -> FancyIndex:
        """Fit the shadow's granule to these accesses."""
        align = int(np.bitwise_or.reduce(self.starts)) if self.starts.size else 0
        sh.fit(align & -align if align else 0, self.size)
        self.g = g = sh.g
        self.gpos = self.starts[:, None] // g + np.arange(self.size // g)
        return self

    def get(self, arr: np.ndarray) -> np.ndarray:
        """The shadow rows (a copy)."""
        return arr[self.gpos]

    def put(self, arr: np.ndarray, value: Any) -> None:
        """Assign rows (the last of duplicate positions wins)."""
        arr[self.gpos] = value

    def data_rows(self, data: np.ndarray) -> np.ndarray:
        """The buffer bytes of each access."""
        return data[self.starts[:, None] + np.arange(self.size)]

    def byte_at(self, r: int, c: int) -> int:
        """Byte position of granule column ``c`` of row ``r``."""
        return int(self.starts[r]) + c * self.g


def _index(ix: Any, sh: Shadow) -> Any:
    ix = ix if isinstance(ix, SliceIndex | FancyIndex) else FancyIndex(ix)
    return ix.bind(sh)


def _conflict(
    prev: np.ndarray,
    prev_epoch_fn: Any,
    items: np.ndarray,
    epochs: np.ndarray,
    wg: int,
    workgroup_memory: bool,
) -> np.ndarray:
    cand = (prev != NONE) & (prev != items)
    if not cand.any():
        return cand
    prev_epoch = prev_epoch_fn()
    same_group = (prev // wg) == (items // wg)
    concurrent = (~same_group) if not workgroup_memory else np.zeros_like(same_group)
    return cand & (concurrent | (same_group & (prev_epoch == epochs)))


def check_read(
    f: Findings, step: Any, buf: Any, ix: Any, items: np.ndarray, epochs: np.ndarray, wg: int
) -> None:
    """Check and record reads of the bytes ``ix`` (one row of bytes per access)."""
    sh = buf.shadow
    ix = _index(ix, sh)
    uninit = ~ix.get(sh.init)
    if uninit.any():
        k = np.argwhere(uninit)[0]
        n_bad = int(uninit.any(axis=-1).sum())
        f.add(
            "uninit",
            DiagnosticSeverity.ERROR,
            "SANITIZE/001",
            step,
            int(items[k[0]]),
            f"reads uninitialised memory (byte {ix.byte_at(int(k[0]), int(k[1]))} of {buf.name})",
            count=n_bad,
        )
    prev = ix.get(sh.w_item)
    bad = _conflict(
        prev,
        lambda: ix.get(sh.w_epoch),
        items[:, None],
        epochs[:, None],
        wg,
        buf.space == "workgroup",
    )
    if bad.any():
        _report_pairs(
            f,
            "race-wr",
            DiagnosticSeverity.ERROR,
            "SANITIZE/002",
            step,
            buf,
            ix,
            items,
            bad,
            prev,
            ix.get(sh.w_op),
            "data race: reads memory written without a barrier",
            "the conflicting write",
        )
    ix.put(sh.r_item, items[:, None])
    ix.put(sh.r_epoch, epochs[:, None])
    ix.put(sh.r_op, step.index)


def check_write(
    f: Findings,
    step: Any,
    buf: Any,
    ix: Any,
    items: np.ndarray,
    epochs: np.ndarray,
    wg: int,
    new_bytes: np.ndarray,
    data: np.ndarray,
) -> None:
    """Check and record writes of ``new_bytes`` at ``ix`` (rows of bytes per access)."""
    sh = buf.shadow
    ix = _index(ix, sh)
    wgm = buf.space == "workgroup"
    it, ep = items[:, None], epochs[:, None]
    prev = ix.get(sh.w_item)
    bad = _conflict(prev, lambda: ix.get(sh.w_epoch), it, ep, wg, wgm)
    if bad.any():
        rows_bad = bad.any(axis=1)
        equal_rows = rows_bad & np.all(ix.data_rows(data) == new_bytes, axis=1)
        for rows, sev, code, what in (
            (
                rows_bad & ~equal_rows,
                DiagnosticSeverity.ERROR,
                "SANITIZE/002",
                "data race: writes memory",
            ),
            (
                equal_rows,
                DiagnosticSeverity.WARNING,
                "SANITIZE/003",
                "data race (same value): writes memory",
            ),
        ):
            if rows.any():
                _report_pairs(
                    f,
                    "race-ww" + code,
                    sev,
                    code,
                    step,
                    buf,
                    ix,
                    items,
                    bad & rows[:, None],
                    prev,
                    ix.get(sh.w_op),
                    f"{what} also written without a barrier",
                    "the other write",
                )
    prev_r = ix.get(sh.r_item)
    bad_r = _conflict(prev_r, lambda: ix.get(sh.r_epoch), it, ep, wg, wgm)
    if bad_r.any():
        _report_pairs(
            f,
            "race-rw",
            DiagnosticSeverity.ERROR,
            "SANITIZE/002",
            step,
            buf,
            ix,
            items,
            bad_r,
            prev_r,
            ix.get(sh.r_op),
            "data race: writes memory read without a barrier",
            "the conflicting read",
        )
    if not ix.contiguous:
        _same_op_writes(f, step, buf, ix, items, new_bytes)
    ix.put(sh.w_item, it)
    ix.put(sh.w_epoch, ep)
    ix.put(sh.w_op, step.index)
    ix.put(sh.init, True)


def _same_op_writes(
    f: Findings, step: Any, buf: Any, ix: Any, items: np.ndarray, new_bytes: np.ndarray
) -> None:
    pos = ix.starts[:, None] + np.arange(ix.size)
    flat = pos.reshape(-1)
    if flat.size < 2:
        return
    who = np.broadcast_to(items[:, None], pos.shape).reshape(-1)
    val = np.broadcast_to(new_bytes, pos.shape).reshape(-1)
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
    ix: Any,
    items: np.ndarray,
    bad: np.ndarray,
    prev: np.ndarray,
    prev_op: np.ndarray,
    message: str,
    other_what: str,
) -> None:
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
            f"{message} (byte {ix.byte_at(int(r), int(c))} of {buf.name})",
            other,
            int(prev[r, c]),
            other_what,
            count=int(sel.any(axis=1).sum()),
        )
