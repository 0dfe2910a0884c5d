"""The sanitizer: per-byte shadow state of every buffer, checked on each access.

For each byte it records whether it was initialised and the last writer and reader (global flat
workitem id, the barrier epoch of that workitem's workgroup, the op). Two accesses conflict when
different workitems touch the same byte, at least one writes, and either they belong to different
workgroups (global memory: always concurrent) or to the same workgroup in the same barrier
interval. A conflicting write of the very same bytes is a warning; anything else is an error.

Streaming kernels never pay for per-byte state: while a launch buffer is only accessed by slices
of consecutive workitems that never overlap an earlier slice except the very same one, its
shadow is a sorted list of ranges (``Shadow.range_access``); the first other access builds the
per-granule arrays from them and continues there, with identical findings.
"""

from __future__ import annotations

import bisect
import math
import sys
from functools import lru_cache
from typing import Any

import numpy as np

from loom.diagnostics import Diagnostic, DiagnosticSeverity
from loom.interp.report import coords_text, op_diagnostic

SHORTCUTS = True
"""Off: every access updates and checks per-granule state (tests compare both ways)."""
NONE = 0
"""Shadow stamp of a granule nobody accessed (stamps are workitem id + 1)."""
MAX_SHADOW_BYTES = 4 << 30
"""Largest shadow state per buffer; larger launches must run with ``sanitize=False``."""
DEDUP = 4
"""Arbitrary accesses averaging at least this many per granule of their span record each
granule's last access only (see :meth:`FancyIndex.winners`)."""


class Shadow:
    """Shadow state of one buffer (``initialised`` says whether it starts defined).

    State is kept per *granule* of ``g`` bytes, chosen from the first access (4 for f32 data)
    and refined (split) when a smaller or misaligned access arrives, so element-sized accesses
    cost one shadow entry each. Arrays are allocated at the first access, zero-filled by the
    system (untouched pages cost nothing): writer/reader *stamps* are workitem id + 1 (0: none)
    in int32 when the launch's ids fit; ``init`` is None while every byte is initialised; epoch
    arrays are None while every recorded access happened in epoch 0 (before any barrier).

    ``w_lo..w_hi`` / ``r_lo..r_hi`` bound the granules ever written / read, so accesses outside
    them skip the race checks; ``last_w`` / ``last_r`` remember the most recent slice write /
    read ``(first granule, count, per-access granules, first item)``: a later slice access by
    the same workitems to the same granules cannot race with it.
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
        "stamp",
        "opdt",
        "w_lo",
        "w_hi",
        "r_lo",
        "r_hi",
        "last_w",
        "last_r",
        "ranges",
        "g_track",
    )
    _FIELDS = ("init", "w_item", "w_epoch", "w_op", "r_item", "r_epoch", "r_op")

    def __init__(
        self,
        nbytes: int,
        initialised: bool,
        workitems: int = 1 << 62,
        ops: int = 1 << 30,
        granule: int = 0,
    ) -> None:
        self.nbytes = nbytes
        self.initialised = initialised
        self.g = 0
        self.stamp = np.dtype(np.int32 if workitems < (1 << 31) - 2 else np.int64)
        self.opdt = np.dtype(np.int16 if ops < (1 << 15) else np.int32)
        self.w_lo = self.r_lo = 1 << 62
        self.w_hi = self.r_hi = -1
        self.last_w: tuple | None = None
        self.last_r: tuple | None = None
        # range mode (initialised buffers): no per-granule arrays while every access is a slice
        # of consecutive workitems that overlaps no earlier slice except the very same one
        self.ranges: dict[str, tuple[list, list]] | None = (
            {"r": ([], []), "w": ([], [])} if initialised and SHORTCUTS and not granule else None
        )
        self.g_track = 0
        if granule:
            # a fixed granule from the start (the stepper: state it can save and restore)
            self._allocate(granule)

    _SAVED = {"r": ("r_item", "r_epoch", "r_op"), "w": ("w_item", "w_epoch", "w_op", "init")}

    def save(self, kind: str, lo: int, hi: int) -> tuple:
        """What an access of ``kind`` to granules ``lo..hi-1`` may change (see restore).

        One flat tuple of bytes and ints: an undo log of many steps then holds no arrays and
        few objects for the garbage collector to walk."""
        if kind == "r":
            e = self.r_epoch
            return (
                self,
                "r",
                lo,
                hi,
                self.r_lo,
                self.r_hi,
                self.last_r,
                self.r_item[lo:hi].tobytes(),
                None if e is None else e[lo:hi].tobytes(),
                self.r_op[lo:hi].tobytes(),
            )
        e, init = self.w_epoch, self.init
        return (
            self,
            "w",
            lo,
            hi,
            self.w_lo,
            self.w_hi,
            self.last_w,
            self.w_item[lo:hi].tobytes(),
            None if e is None else e[lo:hi].tobytes(),
            self.w_op[lo:hi].tobytes(),
            None if init is None else init[lo:hi].tobytes(),
        )

    def restore(self, saved: tuple) -> None:
        """Undo the access :meth:`save` was taken for (the granule size must be unchanged)."""
        kind, lo, hi, b_lo, b_hi, last = saved[1:7]
        for name, old in zip(self._SAVED[kind], saved[7:]):
            if old is None:
                # allocated by that access: None means "all epoch 0" / "all initialised"
                setattr(self, name, None)
            else:
                arr = getattr(self, name)
                arr[lo:hi] = np.frombuffer(old, dtype=arr.dtype)
        if kind == "w":
            self.w_lo, self.w_hi, self.last_w = b_lo, b_hi, last
        else:
            self.r_lo, self.r_hi, self.last_r = b_lo, b_hi, last

    def _check_size(self, g: int) -> int:
        """Granules for granule size ``g``; refuses state larger than MAX_SHADOW_BYTES."""
        n = -(-self.nbytes // g)
        per = self.stamp.itemsize * 2 + self.opdt.itemsize * 2 + (0 if self.initialised else 1)
        if n * per > MAX_SHADOW_BYTES:
            from loom.errors import LoomRuntimeError

            raise LoomRuntimeError(
                f"a {self.nbytes}-byte buffer needs {n * per >> 20} MiB of "
                "sanitizer state, more than the interpreter allows; run with sanitize=False "
                "(loom-run --no-sanitize)"
            )
        return n

    def _allocate(self, g: int) -> None:
        n = self._check_size(g)
        self.g = g
        self.init = None if self.initialised else np.zeros(n, dtype=bool)
        self.w_item = np.zeros(n, dtype=self.stamp)
        self.r_item = np.zeros(n, dtype=self.stamp)
        # epoch/op entries are only read where a stamp is recorded, so they need no fill
        self.w_epoch = self.r_epoch = None
        self.w_op = np.empty(n, dtype=self.opdt)
        self.r_op = np.empty(n, dtype=self.opdt)

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
        n = -(-self.nbytes // g)
        for name in self._FIELDS:
            arr = getattr(self, name)
            if arr is not None:
                setattr(self, name, np.repeat(arr, factor)[:n])
        self.w_lo, self.r_lo = self.w_lo * factor, self.r_lo * factor
        self.w_hi, self.r_hi = self.w_hi * factor, self.r_hi * factor
        self.last_w = self.last_r = None
        self.g = g

    # ------------------------------------------------------------------ range mode

    def range_access(self, kind: str, ix: SliceIndex, item0: int, epochs: Any, op: int) -> bool:
        """Record a slice access in range mode; False when it needs the per-granule check.

        An access is recorded as a range when every earlier access it overlaps is the very
        same slice by the same workitems (which cannot race with it, and for its own kind is
        superseded by it): exactly what the per-granule check would conclude.
        """
        start, end = ix.start, ix.start + ix.n * ix.size
        key = (start, ix.n, ix.size, item0)
        want = math.gcd(start % (1 << 30) or (1 << 30), ix.size)
        if not self.g_track:
            # the per-granule state this buffer may need later must be affordable now
            self._check_size(want if self.nbytes % want == 0 else 1)
        replace = None
        for k in ("w", "r") if kind == "w" else ("w",):
            for j in _overlapping(self.ranges[k], start, end):
                if self.ranges[k][1][j][:4] != key:
                    return False
                if k == kind:
                    replace = j
        if kind == "r":
            for j in _overlapping(self.ranges["r"], start, end):
                if self.ranges["r"][1][j][:3] != key[:3]:
                    return False
                replace = j
        starts, recs = self.ranges[kind]
        rec = (*key, epochs, op)
        if replace is not None:
            recs[replace] = rec
        else:
            j = bisect.bisect_right(starts, start)
            starts.insert(j, start)
            recs.insert(j, rec)
        if not self.g_track:
            self.g_track = want if self.nbytes % want == 0 else 1
        else:
            self.g_track = math.gcd(self.g_track, want)
        if kind == "w":
            self.last_w = key
        else:
            self.last_r = key
        return True

    def materialise(self) -> None:
        """Leave range mode: build the per-granule arrays from the recorded slices."""
        ranges, self.ranges = self.ranges, None
        if not self.g_track:
            return
        self._allocate(self.g_track)
        keys = {"w": self.last_w, "r": self.last_r}
        for kind in ("w", "r"):
            items, op_arr = getattr(self, kind + "_item"), getattr(self, kind + "_op")
            for start, n, size, item0, epochs, op in ranges[kind][1]:
                ix = SliceIndex(start, n, size).bind(self)
                ix.put_stamps(items, item0)
                if epochs is not None or getattr(self, kind + "_epoch") is not None:
                    ix.put(self.epochs(kind), _epoch_rows(epochs))
                ix.put(op_arr, op)
                lo, hi = ix.bounds()
                if kind == "w":
                    self.w_lo, self.w_hi = min(self.w_lo, lo), max(self.w_hi, hi)
                else:
                    self.r_lo, self.r_hi = min(self.r_lo, lo), max(self.r_hi, hi)
        # the same-workitems shortcut keys are in granules in dense mode
        for kind, key in keys.items():
            if key is not None:
                start, n, size, item0 = key
                key = (start // self.g, n, size // self.g, item0)
            setattr(self, "last_" + kind, key)

    def epochs(self, kind: str) -> np.ndarray:
        """The epoch array of ``kind`` ("w" or "r"), allocated (all epoch 0) on first need."""
        name = kind + "_epoch"
        arr = getattr(self, name)
        if arr is None:
            arr = np.zeros(self.w_item.size, dtype=np.int32)
            setattr(self, name, arr)
        return arr


class Findings:
    """Collected sanitizer diagnostics, one per (kind, op pair), with occurrence counts."""

    def __init__(self, program: Any, coords_of: Any) -> None:
        self.program = program
        self.coords_of = coords_of
        self.items: dict[tuple, list] = {}
        self.journal: list | None = None
        """When a list: every change is recorded there so :meth:`rewind` can undo it."""
        self.in_flight: dict[int, set[int]] = {}
        """Buffer uid -> bytes an asynchronous transfer writes at a later wait."""
        self.atomic_steps: set[int] = set()
        """Step indices of atomic accesses (they do not race with each other)."""
        self.tracer: Any = None
        """A :class:`~loom.interp.trace.Tracer` told which bytes each finding concerns."""

    def rewind(self, mark: int) -> None:
        """Undo the changes journaled after the journal had ``mark`` entries."""
        journal = self.journal
        while len(journal) > mark:
            key, old = journal.pop()
            if old is None:
                del self.items[key]
            else:
                self.items[key][1] = old

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
            if self.journal is not None:
                self.journal.append((key, entry[1]))
            entry[1] += count
            return
        me = coords_text(self.coords_of(item))
        notes = []
        if other_step is not None:
            who = coords_text(self.coords_of(other_item)) if other_item is not None else ""
            notes.append((f"{other_what} by {who}".strip(), other_step))
        self.items[key] = [(severity, code, step, f"{message} by {me}", notes), count]
        if self.journal is not None:
            self.journal.append((key, None))

    def diagnostics(self) -> list[Diagnostic]:
        """The findings as diagnostics, in the order they were first seen."""
        out = []
        for (sev, code, step, msg, notes), count in self.items.values():
            if count > 1:
                msg += f" ({count} occurrences)"
            out.append(op_diagnostic(step, sev, code, msg, notes))
        return out


def barrier_divergence(f: Findings, step: Any, reached: int, missing: int, count: int = 1) -> None:
    """Report barrier ``step``: workitem ``reached`` got there, live ``missing`` of its
    workgroup did not (both engines report divergent barriers through here)."""
    key = ("barrier", step.index, None)
    new = key not in f.items
    f.add(
        "barrier",
        DiagnosticSeverity.ERROR,
        "SANITIZE/004",
        step,
        reached,
        "barrier divergence: not every live workitem of the workgroup reaches this barrier; "
        "reached",
        count=count,
    )
    if new:
        f.items[key][0][4].append((f"not reached by {coords_text(f.coords_of(missing))}", None))


_ARANGE: dict[np.dtype, np.ndarray] = {}


def _arange(n: int, dtype: np.dtype) -> np.ndarray:
    """``0..n-1`` in ``dtype`` (a view of a cached array)."""
    a = _ARANGE.get(dtype)
    if a is None or a.size < n:
        a = _ARANGE[dtype] = np.arange(max(n, 1 << 16), dtype=dtype)
        a.flags.writeable = False
    return a[:n]


def lane_range(n: int) -> np.ndarray:
    """``0..n-1`` as int64 (a read-only view of a cached array)."""
    return _arange(n, _INT64)


_INT64 = np.dtype(np.int64)


class Items:
    """Workitem ids of the accesses of an :class:`AffineIndex` / :class:`BoxesIndex` whose
    parts know their lanes (``lane_fact``): ``base`` + lane id, in row order. Stamps are written
    from the facts; the id array is built only when a check or report needs it."""

    __slots__ = ("ix", "base", "_lanes", "_ids")

    def __init__(self, ix: Any, base: int) -> None:
        self.ix, self.base = ix, base
        self._lanes: np.ndarray | None = None
        self._ids: np.ndarray | None = None

    def lanes(self) -> np.ndarray:
        """The lane index of every access."""
        if self._lanes is None:
            parts = self.ix.parts if type(self.ix) is BoxesIndex else (self.ix,)
            got = [_lane_ids(p.lane_fact, p.extents, _INT64) for p in parts]
            self._lanes = got[0] if len(got) == 1 else np.concatenate(got)
        return self._lanes

    def stamps(self, dtype: np.dtype) -> np.ndarray:
        """The stamp (id + 1) of every access in ``dtype`` (the shadow's stamp type)."""
        parts = self.ix.parts if type(self.ix) is BoxesIndex else (self.ix,)
        one = dtype.type(self.base + 1)
        got = [np.add(_lane_ids(p.lane_fact, p.extents, dtype), one) for p in parts]
        return got[0] if len(got) == 1 else np.concatenate(got)

    def array(self) -> np.ndarray:
        """The workitem id of every access."""
        if self._ids is None:
            self._ids = self.lanes() + self.base
        return self._ids


@lru_cache(maxsize=32)
def _lane_ids(fact: tuple, extents: tuple, dtype: np.dtype) -> np.ndarray:
    """The lane fact's value for every lane in ``dtype`` (read-only; chunks share it)."""
    from loom.interp.affine import positions

    out = positions(fact, extents).astype(dtype, copy=False)
    out.flags.writeable = False
    return out


def _item_ids(items: Any, n: int) -> np.ndarray:
    """Workitem ids of the accesses (``items`` is an array, an :class:`Items`, or the first of
    consecutive ids)."""
    if isinstance(items, np.ndarray):
        return items
    if type(items) is Items:
        return items.array()
    return np.arange(items, items + n, dtype=np.int64)


class SliceIndex:
    """Accesses ``k = 0..n-1`` of ``size`` bytes at ``start + k*size`` (one row per lane)."""

    __slots__ = ("start", "n", "size", "g", "a", "per")
    contiguous = True

    def __init__(self, start: int, n: int, size: int) -> None:
        self.start, self.n, self.size, self.g = start, n, size, 1
        self.a, self.per = start, size

    def bind(self, sh: Shadow) -> SliceIndex:
        """Fit the shadow's granule to this access."""
        sh.fit(self.start % (1 << 30) or (1 << 30), self.size)
        g = self.g = sh.g
        self.a, self.per = self.start // g, self.size // g
        return self

    def bounds(self) -> tuple[int, int]:
        """First and one-past-last granule touched."""
        return self.a, self.a + self.n * self.per

    def key(self, items: Any) -> tuple | None:
        """Identity of this access for the same-workitems shortcut (None: no shortcut)."""
        return None if isinstance(items, np.ndarray) else (self.a, self.n, self.per, items)

    def get(self, arr: np.ndarray) -> np.ndarray:
        """The shadow rows (a view)."""
        a = self.a
        return arr[a : a + self.n * self.per].reshape(self.n, self.per)

    def put(self, arr: np.ndarray, value: Any) -> None:
        """Assign rows."""
        self.get(arr)[...] = value

    def put_stamps(self, arr: np.ndarray, items: Any) -> None:
        """Record the accesses' workitems (stamp = id + 1) in rows."""
        rows = self.get(arr)
        if isinstance(items, np.ndarray):
            rows[...] = (items + 1)[:, None]
        else:
            np.add(_arange(self.n, arr.dtype)[:, None], items + 1, out=rows)

    def data_rows(self, data: np.ndarray) -> np.ndarray:
        """The buffer bytes of each access."""
        return data[self.start : self.start + self.n * self.size].reshape(self.n, self.size)

    def byte_at(self, r: int, c: int) -> int:
        """Byte position of granule column ``c`` of row ``r``."""
        return self.start + r * self.size + c * self.g


class FancyIndex:
    """Accesses of ``size`` bytes at arbitrary starts (``pos`` is an (n, size) byte array)."""

    __slots__ = ("starts", "size", "g", "gpos", "distinct", "_last")
    contiguous = False

    def __init__(self, pos: np.ndarray, distinct: bool = False) -> None:
        self.distinct = distinct
        """True when the caller knows no two accesses overlap (no same-step race search)."""
        self.starts = np.ascontiguousarray(pos[:, 0])
        self.size = pos.shape[1]
        self.g = 1
        self.gpos: Any = None
        self._last: Any = None

    def bind(self, sh: Shadow) -> FancyIndex:
        """Fit the shadow's granule to these accesses (again: kept while the granule is)."""
        if self.gpos is None or self.g != sh.g:
            align = int(np.bitwise_or.reduce(self.starts)) if self.starts.size else 0
            sh.fit(align & -align if align else 0, self.size)
        if self.gpos is not None and self.g == sh.g:
            return self
        self.g = g = sh.g
        first = self.starts >> (g.bit_length() - 1) if g & (g - 1) == 0 else self.starts // g
        per = self.size // g
        self.gpos = first[:, None] if per == 1 else first[:, None] + np.arange(per)
        self._last = None
        return self

    def winners(self) -> tuple | None:
        """(granules, rows, columns) of the last access to each granule touched, when the
        accesses pile onto few granules (at least DEDUP accesses per granule of their span:
        puts then write each granule once, with the value the last access would leave); else
        None."""
        if self._last is None:
            self._last = False
            lo, hi = self.bounds()
            gpos = self.gpos
            if SHORTCUTS and gpos.size and (hi - lo) * DEDUP <= gpos.size:
                last = np.full(hi - lo, -1, dtype=np.int64)
                # the last of duplicate positions wins, as in ``arr[gpos] = value``
                last[(gpos - lo).reshape(-1)] = _arange(gpos.size, _INT64)
                granules = np.flatnonzero(last >= 0)
                rows, cols = np.divmod(last[granules], gpos.shape[1])
                self._last = (granules + lo, rows, cols)
        return self._last or None

    def bounds(self) -> tuple[int, int]:
        """First and one-past-last granule touched."""
        if not self.starts.size:
            return 0, 0
        g = self.g
        return int(self.starts.min()) // g, -(-(int(self.starts.max()) + self.size) // g)

    def key(self, items: Any) -> None:
        """Arbitrary accesses never take the same-workitems shortcut."""
        return None

    def get(self, arr: np.ndarray) -> np.ndarray:
        """The shadow rows (a copy)."""
        return arr[self.gpos]

    def put(self, arr: np.ndarray, value: Any) -> None:
        """Assign rows (the last of duplicate positions wins)."""
        won = self.winners()
        if won is None:
            arr[self.gpos] = value
        elif np.ndim(value):
            granules, rows, cols = won
            arr[granules] = np.broadcast_to(value, self.gpos.shape)[rows, cols]
        else:
            arr[won[0]] = value

    def put_stamps(self, arr: np.ndarray, items: Any) -> None:
        """Record the accesses' workitems (stamp = id + 1) in rows."""
        won = self.winners()
        if won is None:
            arr[self.gpos] = (_item_ids(items, self.starts.size) + 1)[:, None]
        elif isinstance(items, np.ndarray):
            arr[won[0]] = items[won[1]] + 1
        else:
            arr[won[0]] = won[1] + (items + 1)

    def data_rows(self, data: np.ndarray) -> np.ndarray:
        """The buffer bytes of each access."""
        return data[self.starts[:, None] + np.arange(self.size)]

    def byte_at(self, r: int, c: int) -> int:
        """Byte position of granule column ``c`` of row ``r``."""
        return int(self.starts[r]) + c * self.g


class AffineIndex:
    """Accesses of ``size`` bytes at the byte positions of an affine fact over a box of lanes
    (see :mod:`loom.interp.affine`), one per lane in lane order, overlapping only where lanes
    share the very same position along axes the fact does not depend on (reads): shadow rows
    are strided views of the shadow arrays (no index arrays)."""

    __slots__ = (
        "fact",
        "extents",
        "size",
        "g",
        "n",
        "c0",
        "co",
        "per",
        "_starts",
        "last",
        "lane_fact",
    )
    contiguous = False
    distinct = True

    def __init__(self, fact: tuple, extents: tuple, size: int) -> None:
        self.fact, self.extents, self.size = fact, extents, size
        self.n = math.prod(extents)
        # lane axes the position does not depend on: lanes along them share an access, and
        # (as with an index array) the last of them in lane order is the one recorded
        self.last: tuple = tuple(
            slice(e - 1, e) if e > 1 and not c else slice(None) for c, e in zip(fact[1], extents)
        )
        self.g = 1
        self.c0, self.co, self.per = fact[0], fact[1], size
        self._starts: np.ndarray | None = None
        self.lane_fact: tuple | None = None
        """Affine fact of the lane index over the same box (for :class:`Items`), if known."""

    @property
    def starts(self) -> np.ndarray:
        """First byte of every access (built on demand: reports and traces)."""
        if self._starts is None:
            from loom.interp.affine import positions

            self._starts = positions(self.fact, self.extents)
        return self._starts

    def bind(self, sh: Shadow) -> AffineIndex:
        """Fit the shadow's granule to these accesses."""
        align = math.gcd(self.fact[0], *self.fact[1])
        sh.fit(align % (1 << 30) or (1 << 30), self.size)
        g = self.g = sh.g
        self.c0, self.co, self.per = (
            self.fact[0] // g,
            tuple(c // g for c in self.fact[1]),
            (self.size // g),
        )
        return self

    def bounds(self) -> tuple[int, int]:
        """First and one-past-last granule touched."""
        from loom.interp.affine import span

        lo, hi = span(self.fact, self.extents)
        return lo // self.g, -(-(hi + self.size) // self.g)

    def key(self, items: Any) -> None:
        """Strided accesses never take the same-workitems shortcut."""
        return None

    def _view(self, arr: np.ndarray) -> np.ndarray:
        k = arr.itemsize
        shape = (*self.extents, self.per)
        strides = (*(c * k for c in self.co), k)
        return np.lib.stride_tricks.as_strided(arr[self.c0 :], shape, strides)

    def get(self, arr: np.ndarray) -> np.ndarray:
        """The shadow rows (a copy)."""
        return self._view(arr).reshape(self.n, self.per)

    def put(self, arr: np.ndarray, value: Any) -> None:
        """Assign rows (a scalar, a column per access, or full rows)."""
        view = self._view(arr)[self.last]
        if np.ndim(value) == 0:
            view[...] = value
        else:
            value = np.asarray(value)
            view[...] = value.reshape(*self.extents, value.shape[-1])[self.last]

    def put_stamps(self, arr: np.ndarray, items: Any) -> None:
        """Record the accesses' workitems (stamp = id + 1) in rows."""
        if type(items) is Items and self.lane_fact is not None:
            self.put_fact_stamps(arr, items.base)
        else:
            self.put(arr, (_item_ids(items, self.n) + 1)[:, None])

    def put_fact_stamps(self, arr: np.ndarray, base: int) -> None:
        """Stamps of workitems ``base`` + lane id, from the lane fact (no id arrays)."""
        lanes = _lane_ids(self.lane_fact, self.extents, arr.dtype).reshape(*self.extents, 1)
        np.add(lanes[self.last], arr.dtype.type(base + 1), out=self._view(arr)[self.last])

    def data_rows(self, data: np.ndarray) -> np.ndarray:
        """The buffer bytes of each access."""
        return data[self.starts[:, None] + np.arange(self.size)]

    def byte_at(self, r: int, c: int) -> int:
        """Byte position of granule column ``c`` of row ``r``."""
        return int(self.starts[r]) + c * self.g


class BoxesIndex:
    """Accesses over several disjoint boxes of lanes, one :class:`AffineIndex` each, no two at
    the same position: rows come box after box (the caller's ``items`` in the same order, so
    not ascending; reports name the lowest workitem, see :func:`_first_bad`)."""

    __slots__ = ("parts", "size", "g", "n", "_starts")
    contiguous = False
    distinct = True

    def __init__(self, parts: list[AffineIndex]) -> None:
        self.parts = parts
        self.size = parts[0].size
        self.n = sum(p.n for p in parts)
        self.g = 1
        self._starts: np.ndarray | None = None

    @property
    def starts(self) -> np.ndarray:
        """First byte of every access."""
        if self._starts is None:
            self._starts = np.concatenate([p.starts for p in self.parts])
        return self._starts

    def bind(self, sh: Shadow) -> BoxesIndex:
        """Fit the shadow's granule to every part (then bind them all to the final one)."""
        for p in self.parts:
            p.bind(sh)
        for p in self.parts:
            p.bind(sh)
        self.g = sh.g
        return self

    def bounds(self) -> tuple[int, int]:
        """First and one-past-last granule touched."""
        b = [p.bounds() for p in self.parts]
        return min(x[0] for x in b), max(x[1] for x in b)

    def key(self, items: Any) -> None:
        """Strided accesses never take the same-workitems shortcut."""
        return None

    def get(self, arr: np.ndarray) -> np.ndarray:
        """The shadow rows (a copy)."""
        return np.concatenate([p.get(arr) for p in self.parts])

    def put(self, arr: np.ndarray, value: Any) -> None:
        """Assign rows (a scalar, a column per access, or full rows)."""
        if np.ndim(value) == 0:
            for p in self.parts:
                p.put(arr, value)
            return
        k = 0
        for p in self.parts:
            p.put(arr, value[k : k + p.n])
            k += p.n

    def put_stamps(self, arr: np.ndarray, items: Any) -> None:
        """Record the accesses' workitems (stamp = id + 1) in rows."""
        if type(items) is Items and all(p.lane_fact is not None for p in self.parts):
            for p in self.parts:
                p.put_fact_stamps(arr, items.base)
        else:
            self.put(arr, (_item_ids(items, self.n) + 1)[:, None])

    def data_rows(self, data: np.ndarray) -> np.ndarray:
        """The buffer bytes of each access."""
        return np.concatenate([p.data_rows(data) for p in self.parts])

    def byte_at(self, r: int, c: int) -> int:
        """Byte position of granule column ``c`` of row ``r``."""
        return int(self.starts[r]) + c * self.g


def _first_bad(sel: np.ndarray, items: np.ndarray) -> tuple[int, int]:
    """(row, granule column) of the first selected granule of the lowest workitem among the
    selected rows (with ascending ``items``: the first selected granule)."""
    rows = np.flatnonzero(sel.any(axis=-1))
    r = int(rows[np.argmin(items[rows])])
    return r, int(np.flatnonzero(sel[r])[0])


def _overlapping(ranges: tuple[list, list], start: int, end: int) -> list[int]:
    """Indices of the recorded (disjoint, sorted) slices overlapping bytes ``start..end-1``."""
    starts, recs = ranges
    j = max(bisect.bisect_right(starts, start) - 1, 0)
    out = []
    while j < len(recs) and recs[j][0] < end:
        r = recs[j]
        if r[0] + r[1] * r[2] > start:
            out.append(j)
        j += 1
    return out


def _in_range_mode(kind: str, sh: Shadow, ix: Any, items: Any, epochs: Any, op: int) -> bool:
    """Handle the access in range mode if possible (else leave range mode for good)."""
    if (
        isinstance(ix, SliceIndex)
        and not isinstance(items, np.ndarray | Items)
        and sh.range_access(kind, ix, items, epochs, op)
    ):
        return True
    sh.materialise()
    return False


def _index(ix: Any, sh: Shadow) -> Any:
    ix = (
        ix if isinstance(ix, SliceIndex | FancyIndex | AffineIndex | BoxesIndex) else FancyIndex(ix)
    )
    return ix.bind(sh)


def _n_of(ix: Any) -> int:
    if ix.contiguous or type(ix) is AffineIndex or type(ix) is BoxesIndex:
        return ix.n
    return int(ix.starts.size)


def _conflict(
    prev: np.ndarray,
    prev_epoch_fn: Any,
    stamps: Any,
    epochs: Any,
    wg: int,
    workgroup_memory: bool,
) -> np.ndarray:
    """Granules whose recorded access (stamps ``prev``) races with this one's (``stamps``)."""
    if workgroup_memory:
        # only the same workgroup's accesses in the same barrier interval race: test the
        # epochs first (after a barrier they usually differ everywhere)
        prev_epoch = prev_epoch_fn()
        if np.ndim(prev_epoch) or np.ndim(epochs):
            same_epoch = prev_epoch == epochs
            if not same_epoch.any():
                return np.zeros(prev.shape, bool)
        else:
            same_epoch = None if prev_epoch == epochs else False
            if same_epoch is False:
                return np.zeros(prev.shape, bool)
    cand = (prev != NONE) & (prev != stamps)
    if not cand.any():
        return cand
    wg = int(wg)
    if wg & (wg - 1) == 0:  # a power of two: a shift is the same floor division, faster
        k = wg.bit_length() - 1
        same_group = ((prev - 1) >> k) == ((stamps - 1) >> k)
    else:
        same_group = ((prev - 1) // wg) == ((stamps - 1) // wg)
    if workgroup_memory:
        cand &= same_group
        return cand if same_epoch is None else cand & same_epoch
    prev_epoch = prev_epoch_fn()
    return cand & (~same_group | (prev_epoch == epochs))


def _stamps(items: Any, n: int, dtype: np.dtype) -> np.ndarray:
    """(n, 1) stamps of the accesses (of lane facts: in the shadow's stamp ``dtype``)."""
    if type(items) is Items:
        return items.stamps(dtype)[:, None]
    return (_item_ids(items, n) + 1)[:, None]


def _may_race(lo: int, hi: int, bound_lo: int, bound_hi: int, key: Any, last: Any) -> bool:
    """False when no recorded access of a kind can race with this one: none touched granules
    ``lo..hi-1`` (bounds), or the latest was this very slice by the same workitems."""
    if not SHORTCUTS:
        return True
    return lo < bound_hi and bound_lo < hi and (key is None or key != last)


def _epoch_rows(epochs: Any) -> Any:
    return 0 if epochs is None else epochs[:, None]


def _quiet_item(
    sh: Shadow, kind: str, p: int, q: int, item: int, epoch: int, wg: int, wgm: bool
) -> bool:
    """True when one workitem's access of granules ``p..q-1`` cannot race with the recorded
    accesses of ``kind`` (the rule of :func:`_conflict`, for a single access)."""
    lo, hi = (sh.w_lo, sh.w_hi) if kind == "w" else (sh.r_lo, sh.r_hi)
    if not (p < hi and lo < q):
        return True
    prev = (sh.w_item if kind == "w" else sh.r_item)[p:q]
    stamp = item + 1
    # the common cases, compared as bytes (cheaper than NumPy calls on a few elements):
    # untouched, or last accessed by this very workitem
    raw = prev.tobytes()
    if not raw.strip(b"\0") or raw == stamp.to_bytes(prev.itemsize, sys.byteorder) * (q - p):
        return True
    cand = (prev != NONE) & (prev != stamp)
    if not cand.any():
        return True
    same_group = (prev[cand] - 1) // wg == item // wg
    if not wgm and not same_group.all():
        return False  # another workgroup: always concurrent in global memory
    epochs = sh.w_epoch if kind == "w" else sh.r_epoch
    prev_epoch = epochs[p:q][cand] if epochs is not None else 0
    return not (same_group & (prev_epoch == epoch)).any()


def check_item(
    f: Findings,
    step: Any,
    buf: Any,
    p: int,
    n: int,
    item: int,
    epoch: int,
    wg: int,
    new_bytes: np.ndarray | None = None,
    atomic: bool = False,
    known: bool = True,
) -> None:
    """Check one workitem's read (``new_bytes`` None) or write of bytes ``p..p+n-1``
    (``known`` False: a write of unknown value, never a write of the same value).

    The stepper's accesses (1-byte granules, barrier ``epoch`` of the workitem's workgroup).
    When nothing can be reported the state is recorded here directly; otherwise
    :func:`check_read` / :func:`check_write` report and record (they are the rules; this is
    their quiet case, leaving identical state).
    """
    sh = buf.shadow
    q = p + n
    reading = new_bytes is None
    wgm = buf.space == "workgroup"
    if atomic or not SHORTCUTS or sh.g != 1 or sh.ranges is not None:
        quiet = False
    elif reading:
        quiet = (sh.init is None or b"\0" not in sh.init[p:q].tobytes()) and _quiet_item(
            sh, "w", p, q, item, epoch, wg, wgm
        )
    else:
        quiet = _quiet_item(sh, "w", p, q, item, epoch, wg, wgm) and _quiet_item(
            sh, "r", p, q, item, epoch, wg, wgm
        )
    if not quiet:
        ix = SliceIndex(p, 1, n)
        epochs = None if not epoch else np.array([epoch], dtype=np.int32)
        if reading:
            check_read(f, step, buf, ix, item, epochs, wg, atomic)
        else:
            write = new_bytes.reshape(1, n)
            check_write(f, step, buf, ix, item, epochs, wg, write, buf.data, atomic, known)
        return
    key = (p, 1, n, item)
    if reading:
        sh.r_item[p:q] = item + 1
        if epoch or sh.r_epoch is not None:
            sh.epochs("r")[p:q] = epoch
        sh.r_op[p:q] = step.index
        sh.r_lo, sh.r_hi, sh.last_r = min(sh.r_lo, p), max(sh.r_hi, q), key
    else:
        sh.w_item[p:q] = item + 1
        if epoch or sh.w_epoch is not None:
            sh.epochs("w")[p:q] = epoch
        sh.w_op[p:q] = step.index
        if sh.init is not None:
            sh.init[p:q] = True
        sh.w_lo, sh.w_hi, sh.last_w = min(sh.w_lo, p), max(sh.w_hi, q), key


def _atomic_pairs(f: Findings, step: Any, atomic: bool, prev_op: Any, bad: np.ndarray) -> Any:
    """Atomic accesses never race with each other: drop conflicts whose earlier access was
    atomic too (``f.atomic_steps`` holds the step indices of atomic accesses)."""
    if atomic:
        f.atomic_steps.add(step.index)
        if f.atomic_steps and bad.any():
            ops = prev_op()
            bad = bad & ~np.isin(ops, np.fromiter(f.atomic_steps, dtype=np.int64))
    return bad


def _atomic_only(f: Findings, sh: Shadow, kind: str, lo: int, hi: int, n: int) -> bool:
    """True when every recorded access of ``kind`` to granules ``lo..hi-1`` is atomic (or
    there is none): an atomic access then races with none of them (the rule of
    :func:`_atomic_pairs`), checked over the span when it is at most ``n`` granules."""
    if not SHORTCUTS or hi - lo > max(n, 1 << 12):
        return False
    items = (sh.w_item if kind == "w" else sh.r_item)[lo:hi]
    seen = items != NONE
    if not seen.any():
        return True
    ops = (sh.w_op if kind == "w" else sh.r_op)[lo:hi][seen]
    return bool(np.isin(ops, np.fromiter(f.atomic_steps, dtype=np.int64)).all())


def uninitialised_text(in_flight: dict, buf: Any, byte: int) -> str:
    """The finding text of a read of an undefined byte (in flight or never written)."""
    text = f"reads uninitialised memory (byte {byte} of {buf.name})"
    if byte in in_flight.get(buf.uid, ()):
        text += (
            "; an asynchronous transfer writes it only when a wait completes its group, so "
            "read it after the wait"
        )
    return text


def check_read(
    f: Findings,
    step: Any,
    buf: Any,
    ix: Any,
    items: Any,
    epochs: Any,
    wg: int,
    atomic: bool = False,
) -> None:
    """Check and record reads of the bytes ``ix`` (one row of bytes per access).

    ``items`` holds the workitem id of each access (or the first id when they are consecutive);
    ``epochs`` their workgroups' barrier epochs (None: all still in epoch 0); ``atomic``
    accesses do not race with earlier atomic ones.
    """
    if atomic:
        f.atomic_steps.add(step.index)
    sh = buf.shadow
    if sh.ranges is not None and _in_range_mode("r", sh, ix, items, epochs, step.index):
        return
    ix = _index(ix, sh)
    n = _n_of(ix)
    lo, hi = ix.bounds()
    if sh.init is not None:
        init = ix.get(sh.init)
        if not init.all():
            uninit = ~init
            k = _first_bad(uninit, _item_ids(items, n))
            n_bad = int(uninit.any(axis=-1).sum())
            if f.tracer is not None:
                f.tracer.flag(buf, "uninit", _granule_bytes(ix, uninit), ix.g)
            f.add(
                "uninit",
                DiagnosticSeverity.ERROR,
                "SANITIZE/001",
                step,
                int(_item_ids(items, n)[k[0]]),
                uninitialised_text(f.in_flight, buf, ix.byte_at(int(k[0]), int(k[1]))),
                count=n_bad,
            )
    key = ix.key(items)
    if _may_race(lo, hi, sh.w_lo, sh.w_hi, key, sh.last_w) and not (
        atomic and _atomic_only(f, sh, "w", lo, hi, n)
    ):
        wgm = buf.space == "workgroup"
        prev, bad = _conflicts(f, step, ix, sh, "w", items, n, epochs, wg, wgm, atomic)
        if bad.any():
            _report_pairs(
                f,
                "race-wr",
                DiagnosticSeverity.ERROR,
                "SANITIZE/002",
                step,
                buf,
                ix,
                _item_ids(items, n),
                bad,
                prev,
                ix.get(sh.w_op),
                "data race: reads memory written without a barrier",
                "the conflicting write",
            )
    ix.put_stamps(sh.r_item, items)
    if epochs is not None or sh.r_epoch is not None:
        ix.put(sh.epochs("r"), _epoch_rows(epochs))
    ix.put(sh.r_op, step.index)
    sh.r_lo, sh.r_hi = min(sh.r_lo, lo), max(sh.r_hi, hi)
    sh.last_r = key


def check_write(
    f: Findings,
    step: Any,
    buf: Any,
    ix: Any,
    items: Any,
    epochs: Any,
    wg: int,
    new_bytes: np.ndarray,
    data: np.ndarray,
    atomic: bool = False,
    known: bool = True,
) -> None:
    """Check and record writes of ``new_bytes`` at ``ix`` (rows of bytes per access);
    ``atomic`` writes do not race with earlier atomic accesses nor with each other; ``known``
    False: the value written is unknown (a race observation), never the same value.
    ``new_bytes`` may be a callable returning them (called only when a check needs them)."""
    if atomic:
        f.atomic_steps.add(step.index)
    sh = buf.shadow
    if sh.ranges is not None and _in_range_mode("w", sh, ix, items, epochs, step.index):
        return
    ix = _index(ix, sh)
    n = _n_of(ix)
    lo, hi = ix.bounds()
    wgm = buf.space == "workgroup"
    key = ix.key(items)
    if _may_race(lo, hi, sh.w_lo, sh.w_hi, key, sh.last_w) and not (
        atomic and _atomic_only(f, sh, "w", lo, hi, n)
    ):
        prev, bad = _conflicts(f, step, ix, sh, "w", items, n, epochs, wg, wgm, atomic)
        if bad.any():
            new_bytes = _report_write_races(
                f, step, buf, ix, _item_ids(items, n), bad, prev, data, new_bytes, known
            )
    if _may_race(lo, hi, sh.r_lo, sh.r_hi, key, sh.last_r) and not (
        atomic and _atomic_only(f, sh, "r", lo, hi, n)
    ):
        _check_reads_before_write(f, step, buf, ix, items, epochs, wg, atomic, n)
    if not (ix.contiguous or ix.distinct or atomic):
        if callable(new_bytes):
            new_bytes = new_bytes()
        _same_op_writes(f, step, buf, ix, _item_ids(items, n), new_bytes, known)
    _record_write(sh, step, ix, items, epochs, lo, hi, key)


def _conflicts(
    f: Findings,
    step: Any,
    ix: Any,
    sh: Any,
    kind: str,
    items: Any,
    n: int,
    epochs: Any,
    wg: int,
    wgm: bool,
    atomic: bool,
) -> tuple[Any, np.ndarray]:
    """(the earlier accessors at ``ix``, which of them conflict) for an access at ``ix``
    against the recorded accesses of ``kind`` ("w" writes, "r" reads): other workitems, no
    barrier between, atomic pairs excepted."""
    item, epoch, op = (
        (sh.w_item, sh.w_epoch, sh.w_op) if kind == "w" else (sh.r_item, sh.r_epoch, sh.r_op)
    )
    prev = ix.get(item)
    bad = _conflict(
        prev,
        lambda: ix.get(epoch) if epoch is not None else 0,
        _stamps(items, n, sh.stamp),
        _epoch_rows(epochs),
        wg,
        wgm,
    )
    return prev, _atomic_pairs(f, step, atomic, lambda: ix.get(op), bad)


def _check_reads_before_write(
    f: Findings,
    step: Any,
    buf: Any,
    ix: Any,
    items: Any,
    epochs: Any,
    wg: int,
    atomic: bool,
    n: int,
) -> None:
    """Report SANITIZE/002 for writes at ``ix`` to memory read by another workitem without a
    barrier between (read-write races; atomic pairs excepted)."""
    sh = buf.shadow
    wgm = buf.space == "workgroup"
    prev_r, bad_r = _conflicts(f, step, ix, sh, "r", items, n, epochs, wg, wgm, atomic)
    if bad_r.any():
        _report_pairs(
            f,
            "race-rw",
            DiagnosticSeverity.ERROR,
            "SANITIZE/002",
            step,
            buf,
            ix,
            _item_ids(items, n),
            bad_r,
            prev_r,
            ix.get(sh.r_op),
            "data race: writes memory read without a barrier",
            "the conflicting read",
        )


def _record_write(
    sh: Any, step: Any, ix: Any, items: Any, epochs: Any, lo: int, hi: int, key: Any
) -> None:
    """Record a checked write at ``ix`` in the shadow ``sh``: writer stamps, epochs, the op,
    initialisation, and the written span."""
    ix.put_stamps(sh.w_item, items)
    if epochs is not None or sh.w_epoch is not None:
        ix.put(sh.epochs("w"), _epoch_rows(epochs))
    ix.put(sh.w_op, step.index)
    if sh.init is not None:
        ix.put(sh.init, True)
    sh.w_lo, sh.w_hi = min(sh.w_lo, lo), max(sh.w_hi, hi)
    sh.last_w = key


def _report_write_races(
    f: Findings,
    step: Any,
    buf: Any,
    ix: Any,
    ids: Any,
    bad: np.ndarray,
    prev: Any,
    data: np.ndarray,
    new_bytes: Any,
    known: bool,
) -> np.ndarray:
    """Report the write-write conflicts ``bad`` (rows x earlier writers): SANITIZE/002, or the
    SANITIZE/003 warning where the known value written equals the memory; the written bytes
    (made now when ``new_bytes`` was a callable)."""
    sh = buf.shadow
    rows_bad = bad.any(axis=1)
    if callable(new_bytes):
        new_bytes = new_bytes()
    equal_rows = rows_bad & np.all(ix.data_rows(data) == new_bytes, axis=1)
    if not known:
        equal_rows = np.zeros_like(rows_bad)
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
                ids,
                bad & rows[:, None],
                prev,
                ix.get(sh.w_op),
                f"{what} also written without a barrier",
                "the other write",
            )
    return new_bytes


def _same_op_writes(
    f: Findings,
    step: Any,
    buf: Any,
    ix: Any,
    items: np.ndarray,
    new_bytes: np.ndarray,
    known: bool = True,
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
    if f.tracer is not None:
        f.tracer.flag(buf, "race", fs[1:][dup], 1)
    equal = known and bool(np.all(vs[1:][dup] == vs[:-1][dup]))
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


def _granule_bytes(ix: Any, sel: np.ndarray) -> np.ndarray:
    """First byte of each selected granule (``sel``: rows of accesses x granule columns)."""
    r, c = np.nonzero(sel)
    first = ix.start + r * ix.size if ix.contiguous else ix.starts[r]
    return first + c * ix.g


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
    if f.tracer is not None:
        f.tracer.flag(buf, "race", _granule_bytes(ix, bad), ix.g)
    # one report per distinct earlier op
    for op_index in np.unique(ops):
        sel = bad & (prev_op == op_index)
        r, c = _first_bad(sel, items)
        other = f.program.steps[int(op_index)]
        f.add(
            kind,
            sev,
            code,
            step,
            int(items[r]),
            f"{message} (byte {ix.byte_at(int(r), int(c))} of {buf.name})",
            other,
            int(prev[r, c]) - 1,
            other_what,
            count=int(sel.any(axis=1).sum()),
        )
