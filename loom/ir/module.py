"""The module: top-level ops, the value table, the symbol table and the location table."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from loom.ir.locations import Location, LocationTable
from loom.ir.operations import Block, Operation
from loom.ir.types import Type
from loom.ir.values import Value


class Module:
    """A Loom module.

    ``body`` holds the top-level ops in order; ``values`` is the module-wide value table (a
    value's id is its index); ``symbols`` maps symbol names to their defining top-level op, in
    definition order; ``sources`` and ``locations`` form the location table (a compact
    :class:`~loom.ir.locations.LocationTable`; ``locations[0]`` is the unknown location,
    represented by ``None``).
    """

    __slots__ = (
        "name",
        "body",
        "values",
        "symbols",
        "sources",
        "_locations",
        "file_header",
        "source_texts",
        "__weakref__",
    )

    def __init__(self, name: str = "") -> None:
        self.name = name
        self.body = Block()
        self.values: list[Value] = []
        self.symbols: dict[str, Operation] = {}
        self.sources: list[str] = []
        self._locations = LocationTable()
        self.file_header: tuple[str, ...] = ()
        self.source_texts: dict[str, str] = {}
        """Text of parsed sources by source name (lets diagnostics show the source line)."""

    @property
    def trailing_comments(self) -> tuple[str, ...]:
        """Comment lines after the last top-level op (the body block's trailing comments)."""
        return self.body.trailing_comments

    @trailing_comments.setter
    def trailing_comments(self, comments: tuple[str, ...]) -> None:
        self.body.trailing_comments = tuple(comments)

    @property
    def ops(self) -> list[Operation]:
        """The top-level ops."""
        return self.body.ops

    def add_value(self, type: Type, name: str | None = None) -> Value:
        """Create a value in the module-wide table."""
        value = Value(len(self.values), type, name)
        self.values.append(value)
        return value

    def add_source(self, name: str) -> int:
        """Return the id of source ``name`` in ``sources``, adding it if new."""
        try:
            return self.sources.index(name)
        except ValueError:
            self.sources.append(name)
            return len(self.sources) - 1

    @property
    def locations(self) -> LocationTable:
        """The location table (list-like; entry 0 is None, the unknown location)."""
        return self._locations

    @locations.setter
    def locations(self, entries: Iterable[Location | None]) -> None:
        self._locations = entries if isinstance(entries, LocationTable) else LocationTable(entries)

    def add_location(self, location: Location) -> int:
        """Add a location (deduplicated) and return its id."""
        return self._locations.add(location)

    def location(self, location_id: int) -> Location | None:
        """The location with this id, or ``None`` for unknown / out-of-range ids."""
        locations = self._locations
        if 0 < location_id < len(locations):
            return locations[location_id]
        return None

    def walk(self) -> Iterator[Operation]:
        """Every op of the module, pre-order."""
        return self.body.walk()

    def __repr__(self) -> str:
        return f"<loom module with {len(self.ops)} top-level ops, {len(self.values)} values>"
