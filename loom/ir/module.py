"""The module: top-level ops, the value table, the symbol table and the location table."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Iterator
from typing import Any, TypeVar

from loom.ir.locations import Location, LocationTable
from loom.ir.operations import Block, Operation
from loom.ir.types import Type
from loom.ir.values import Value
from loom.ir.versioning import SymbolTable, Tracker

_osa = object.__setattr__
_T = TypeVar("_T")


class Module:
    """A Loom module.

    ``body`` holds the top-level ops in order; ``values`` is the module-wide value table (a
    value's id is its index); ``symbols`` maps symbol names to their defining top-level op, in
    definition order; ``sources`` and ``locations`` form the location table (a compact
    :class:`~loom.ir.locations.LocationTable`; ``locations[0]`` is the unknown location,
    represented by ``None``).

    ``version`` changes whenever the module's IR is edited (see :mod:`loom.ir.versioning`);
    :meth:`derived` caches state computed from the module until then.
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
        "_version",
        "_tracker",
        "_derived",
        "__weakref__",
    )

    def __init__(self, name: str = "") -> None:
        _osa(self, "_version", 0)
        _osa(self, "_tracker", None)
        _osa(self, "_derived", None)
        self.name = name
        self.body = Block()
        self.values: list[Value] = []
        self.symbols: dict[str, Operation] = SymbolTable()
        self.sources: list[str] = []
        self._locations = LocationTable()
        self.file_header: tuple[str, ...] = ()
        self.source_texts: dict[str, str] = {}
        """Text of parsed sources by source name (lets diagnostics show the source line)."""

    def __setattr__(self, name: str, value: Any) -> None:
        tracker = self._tracker
        if tracker is not None and not name.startswith("_"):
            if name == "symbols":
                value = tracker.arm_symbols(value)
            elif name == "body":
                tracker.arm_block(value)
        elif name == "symbols" and type(value) is dict:
            value = SymbolTable(value)
        _osa(self, name, value)
        if tracker is not None:
            self._bump()

    @property
    def version(self) -> int:
        """A number that changes whenever the module's IR is edited (tracking starts here)."""
        if self._tracker is None:
            tracker = Tracker(self)
            _osa(self, "_tracker", tracker)
            tracker.arm_module(self)
        return self._version

    def _bump(self) -> None:
        _osa(self, "_version", self._version + 1)

    def derived(self, key: Hashable, build: Callable[[Module], _T]) -> _T:
        """``build(self)``, cached under ``key`` until the module is next edited."""
        version = self.version
        cache = self._derived
        if cache is None or cache[0] != version:
            cache = (version, {})
            _osa(self, "_derived", cache)
        table = cache[1]
        if key in table:
            return table[key]
        value = build(self)
        if self._version == version:  # building must not have edited the module
            table[key] = value
        return value

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
        if self._tracker is not None:
            self._tracker.arm_value(value)
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
