"""Source locations. A module keeps a deduplicated table of them; id 0 means unknown."""

from __future__ import annotations

from dataclasses import dataclass

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
