"""Source locations. A module keeps a deduplicated table of them; id 0 means unknown."""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
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
_STRIDE = 6


def _packable(loc: FileLocation) -> bool:
    return all(
        0 <= x <= _I32_MAX
        for x in (
            loc.source_id,
            loc.start_line,
            loc.start_col,
            loc.end_line,
            loc.end_col,
            loc.flags,
        )
    )


class LocationTable:
    """A module's location table: a list-like sequence whose entry 0 is None (unknown).

    File spans (almost every entry: one per parsed op) are stored as six int32 columns in one
    flat ``array('i')`` (24 bytes each instead of a ~140-byte ``FileLocation`` object) and
    materialised on access; other locations are kept as objects. Entries are never removed or
    replaced. :meth:`add` deduplicates (its index is built on first use).
    """

    __slots__ = ("_cols", "_other", "_index")

    def __init__(self, entries: Iterable[Location | None] = ()) -> None:
        self._cols = array("i", (_OTHER, 0, 0, 0, 0, 0))
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
            return [self[k] for k in range(*i.indices(len(self)))]
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
        return FileLocation(src, cols[k + 1], cols[k + 2], cols[k + 3], cols[k + 4], cols[k + 5])

    def __iter__(self) -> Iterator[Location | None]:
        for i in range(len(self)):
            yield self[i]

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (LocationTable, list, tuple)):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"LocationTable({list(self)!r})"

    def append(self, loc: Location | None) -> int:
        """Add an entry (no deduplication) and return its id."""
        if loc is None:
            raise ValueError("only entry 0 of a location table is the unknown location")
        i = len(self)
        if type(loc) is FileLocation and _packable(loc):
            self._cols.extend(
                (loc.source_id, loc.start_line, loc.start_col, loc.end_line, loc.end_col, loc.flags)
            )
        else:
            self._cols.extend((_OTHER, 0, 0, 0, 0, 0))
            self._other[i] = loc
        if self._index is not None:
            self._index.setdefault(loc, i)
        return i

    def append_span(self, source_id: int, line: int, col: int, end_line: int, end_col: int) -> int:
        """Add a file span (non-negative int32 fields, flags 0) and return its id; fast path."""
        cols = self._cols
        i = len(cols) // _STRIDE
        cols.extend((source_id, line, col, end_line, end_col, 0))
        if self._index is not None:
            self._index.setdefault(FileLocation(source_id, line, col, end_line, end_col), i)
        return i

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
