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


_OTHER = -1  # the entry is kept as an object in ``_other``
_MAX_SOURCE = 0xFF
_MAX_LINE = MAX_LINE = 0xFFFFFF
_MAX_COL = MAX_COL = 0x7FFF
_MAX_END_COL = MAX_END_COL = 0xFFFF
_LINE_SHIFT = LINE_SHIFT = 31
_SOURCE_SHIFT = 55


def _packable(loc: FileLocation) -> bool:
    return (
        loc.flags == 0
        and loc.end_line == loc.start_line
        and 0 <= loc.source_id <= _MAX_SOURCE
        and 0 <= loc.start_line <= _MAX_LINE
        and 0 <= loc.start_col <= _MAX_COL
        and 0 <= loc.end_col <= _MAX_END_COL
    )


def _pack(source_id: int, line: int, col: int, end_col: int) -> int:
    return source_id << _SOURCE_SHIFT | line << _LINE_SHIFT | col << 16 | end_col


def _unpack(word: int) -> FileLocation:
    line = word >> _LINE_SHIFT & _MAX_LINE
    return FileLocation(word >> _SOURCE_SHIFT, line, word >> 16 & _MAX_COL, line, word & 0xFFFF)


class LocationTable:
    """A module's location table: a list-like sequence whose entry 0 is None (unknown).

    Single-line file spans (almost every entry: one per parsed op) are stored in one flat
    ``array('q')``, source id, line and both columns packed in one 64-bit word (8 bytes each
    instead of a ~140-byte ``FileLocation`` object), and materialised on access; other
    locations (spans over several lines, flags, more than 255 sources, more than 2**24 lines,
    very long lines, non-file locations) are kept as objects. Entries are never removed or
    replaced. :meth:`add` deduplicates (its index is built on first use).
    """

    __slots__ = ("_words", "_other", "_index")

    def __init__(self, entries: Iterable[Location | None] = ()) -> None:
        self._words = array("q", (_OTHER,))
        self._other: dict[int, Location | None] = {0: None}
        self._index: dict[Location, int] | None = None
        it = iter(entries)
        first = next(it, None)
        if first is not None:
            raise ValueError("location table entry 0 must be None (the unknown location)")
        for loc in it:
            self.append(loc)

    def __len__(self) -> int:
        return len(self._words)

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
        word = self._words[i]
        if word == _OTHER:
            return self._other[i]
        return _unpack(word)

    def __iter__(self) -> Iterator[Location | None]:
        return self._items(0)

    def _items(self, start: int) -> Iterator[Location | None]:
        other = self._other
        for i, word in enumerate(islice(self._words, start, None), start):
            yield other[i] if word == _OTHER else _unpack(word)

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
        other = self._other
        for i, word in enumerate(islice(self._words, start, None), start):
            if word == _OTHER:
                yield other[i]
            else:
                line = word >> _LINE_SHIFT & _MAX_LINE
                yield (0, word >> _SOURCE_SHIFT, line, word >> 16 & _MAX_COL, line, word & 0xFFFF)

    def append(self, loc: Location | None) -> int:
        """Add an entry (no deduplication) and return its id."""
        if loc is None:
            raise ValueError("only entry 0 of a location table is the unknown location")
        i = len(self._words)
        if type(loc) is FileLocation and _packable(loc):
            self._words.append(_pack(loc.source_id, loc.start_line, loc.start_col, loc.end_col))
        else:
            self._words.append(_OTHER)
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
            or not 0 <= line <= _MAX_LINE
            or not 0 <= source_id <= _MAX_SOURCE
        ):
            return self.append(FileLocation(source_id, line, col, end_line, end_col))
        words = self._words
        i = len(words)
        words.append(source_id << _SOURCE_SHIFT | line << _LINE_SHIFT | col << 16 | end_col)
        if self._index is not None:
            self._index.setdefault(FileLocation(source_id, line, col, end_line, end_col), i)
        return i

    def append_line_span(self, source_id: int, line: int, col: int, end_col: int) -> int:
        """Like :meth:`append_span` for a span within one line, with non-negative fields."""
        if (
            col > _MAX_COL
            or end_col > _MAX_END_COL
            or line > _MAX_LINE
            or source_id > _MAX_SOURCE
            or self._index is not None
        ):
            return self.append_span(source_id, line, col, line, end_col)
        words = self._words
        words.append(source_id << _SOURCE_SHIFT | line << _LINE_SHIFT | col << 16 | end_col)
        return len(words) - 1

    def line_span_words(self, source_id: int) -> tuple[Any, int] | None:
        """For appending many one-line spans of ``source_id`` in a loop without a call each:
        ``(words, base)``, where ``words.append(base | line << LINE_SHIFT | col << 16 |
        end_col)`` adds the span and ``len(words) - 1`` is its id, valid while ``line <=
        MAX_LINE``, ``col <= MAX_COL`` and ``end_col <= MAX_END_COL`` (else use
        :meth:`append_line_span`). None when every span must go through it (a deduplication
        index is kept, or the source id does not fit)."""
        if self._index is not None or not 0 <= source_id <= _MAX_SOURCE:
            return None
        return self._words, source_id << _SOURCE_SHIFT

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
