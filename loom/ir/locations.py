"""Source locations. A module keeps a deduplicated table of them; id 0 means unknown."""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from itertools import islice
from typing import Any

LOCATION_UNKNOWN = 0


@dataclass(frozen=True, slots=True)
class FileLocation:
    """A span in a source file; ``source_id`` indexes ``module.sources``. Lines/columns 1-based."""

    source_id: int
    start_line: int
    start_col: int
    end_line: int
    end_col: int
    flags: int = 0


@dataclass(frozen=True, slots=True)
class FusedLocation:
    """Several locations that together produced one op (ids into the same table)."""

    children: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class OpaqueLocation:
    """A frontend-specific tag (``module.sources[source_id]``, e.g. ``"torch"``) and payload."""

    source_id: int
    data: bytes


@dataclass(frozen=True, slots=True)
class TaggedLocation:
    """A numeric tag with payload bytes and an optional child location id (0 = none)."""

    tag: int
    child: int
    data: bytes


Location = FileLocation | FusedLocation | OpaqueLocation | TaggedLocation


_I32_MAX = 2**31 - 1
_OTHER = -1  # source column marker: the entry is kept as an object in ``_other``
_STRIDE = 3
_MAX_COL = 0x7FFF
_MAX_END_COL = 0xFFFF


def _packable(loc: FileLocation) -> bool:
    return (
        loc.flags == 0
        and loc.end_line == loc.start_line
        and 0 <= loc.source_id <= _I32_MAX
        and 0 <= loc.start_line <= _I32_MAX
        and 0 <= loc.start_col <= _MAX_COL
        and 0 <= loc.end_col <= _MAX_END_COL
    )


class LocationTable:
    """A module's location table: a list-like sequence whose entry 0 is None (unknown).

    Single-line file spans (almost every entry: one per parsed op) are stored in one flat
    ``array('i')`` as source id, line and both columns packed in one int (12 bytes each instead
    of a ~140-byte ``FileLocation`` object) and materialised on access; other locations (spans
    over several lines, flags, very long lines, non-file locations) are kept as objects.
    Entries are never removed or replaced. :meth:`add` deduplicates (its index is built on
    first use).
    """

    __slots__ = ("_cols", "_other", "_index")

    def __init__(self, entries: Iterable[Location | None] = ()) -> None:
        self._cols = array("i", (_OTHER, 0, 0))
        self._other: dict[int, Location | None] = {0: None}
        self._index: dict[Location, int] | None = None
        it = iter(entries)
        first = next(it, None)
        if first is not None:
            raise ValueError("location table entry 0 must be None (the unknown location)")
        for loc in it:
            self.append(loc)

    def __len__(self) -> int:
        return len(self._cols) // _STRIDE

    def __getitem__(self, i: int | slice) -> Any:
        if isinstance(i, slice):
            start, stop, step = i.indices(len(self))
            if step == 1:
                return list(islice(self._items(start), max(stop - start, 0)))
            return [self[k] for k in range(start, stop, step)]
        n = len(self)
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError("location id out of range")
        k = i * _STRIDE
        cols = self._cols
        src = cols[k]
        if src == _OTHER:
            return self._other[i]
        line = cols[k + 1]
        packed = cols[k + 2]
        return FileLocation(src, line, packed >> 16, line, packed & 0xFFFF)

    def __iter__(self) -> Iterator[Location | None]:
        return self._items(0)

    def _items(self, start: int) -> Iterator[Location | None]:
        cols = self._cols
        other = self._other
        for k in range(start * _STRIDE, len(cols), _STRIDE):
            src = cols[k]
            if src == _OTHER:
                yield other[k // _STRIDE]
            else:
                line = cols[k + 1]
                packed = cols[k + 2]
                yield FileLocation(src, line, packed >> 16, line, packed & 0xFFFF)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (LocationTable, list, tuple)):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"LocationTable({list(self)!r})"

    def file_rows(self, start: int = 1) -> Iterator[tuple[int, ...] | Location | None]:
        """Entries from ``start`` on, packed file spans as plain tuples (no objects built).

        A packed span is ``(flags, source_id, start_line, start_col, end_line, end_col)``
        (non-negative ints below 2**31); other entries are the location objects.
        """
        cols = self._cols
        other = self._other
        for k in range(start * _STRIDE, len(cols), _STRIDE):
            src = cols[k]
            if src == _OTHER:
                yield other[k // _STRIDE]
            else:
                line = cols[k + 1]
                packed = cols[k + 2]
                yield (0, src, line, packed >> 16, line, packed & 0xFFFF)

    def append(self, loc: Location | None) -> int:
        """Add an entry (no deduplication) and return its id."""
        if loc is None:
            raise ValueError("only entry 0 of a location table is the unknown location")
        i = len(self)
        if type(loc) is FileLocation and _packable(loc):
            self._cols.extend((loc.source_id, loc.start_line, loc.start_col << 16 | loc.end_col))
        else:
            self._cols.extend((_OTHER, 0, 0))
            self._other[i] = loc
        if self._index is not None:
            self._index.setdefault(loc, i)
        return i

    def append_span(self, source_id: int, line: int, col: int, end_line: int, end_col: int) -> int:
        """Add a file span (flags 0) without deduplication and return its id; fast path."""
        if (
            end_line != line
            or not 0 <= col <= _MAX_COL
            or not 0 <= end_col <= _MAX_END_COL
            or not 0 <= line <= _I32_MAX
            or not 0 <= source_id <= _I32_MAX
        ):
            return self.append(FileLocation(source_id, line, col, end_line, end_col))
        cols = self._cols
        i = len(cols) // _STRIDE
        cols.extend((source_id, line, col << 16 | end_col))
        if self._index is not None:
            self._index.setdefault(FileLocation(source_id, line, col, end_line, end_col), i)
        return i

    def append_line_span(self, source_id: int, line: int, col: int, end_col: int) -> int:
        """Like :meth:`append_span` for a span within one line, with positive fields."""
        if col > _MAX_COL or end_col > _MAX_END_COL or line > _I32_MAX or self._index is not None:
            return self.append_span(source_id, line, col, line, end_col)
        cols = self._cols
        cols.extend((source_id, line, col << 16 | end_col))
        return len(cols) // _STRIDE - 1

    def add(self, loc: Location) -> int:
        """The id of an entry equal to ``loc``, appending it when there is none."""
        index = self._index
        if index is None:
            # Built on first use: a parsed module that never asks pays nothing for it.
            index = self._index = {}
            for i in range(len(self) - 1, 0, -1):
                index[self[i]] = i  # type: ignore[index]
        i = index.get(loc)
        return self.append(loc) if i is None else i
