"""Attribute value helpers: predicates, spelled float literals, dynamic index markers."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from loom.ir.values import Value

DYNAMIC_INDEX = -(2**63)
"""Marks an SSA position in a mixed static/dynamic index list (``[0, %i, 4]``)."""


class FloatLiteral(float):
    """A float that remembers how it was written, so parsed constants print as authored."""

    __slots__ = ("spelling",)

    def __new__(cls, value: float, spelling: str) -> FloatLiteral:
        obj = super().__new__(cls, value)
        obj.spelling = spelling
        return obj

    def __reduce__(self):  # noqa: ANN204
        return (FloatLiteral, (float(self), self.spelling))


PredicateArgValue = Value | int


@dataclass(frozen=True, slots=True)
class Predicate:
    """A fact such as ``range(%n, 1, 4)``: ``kind`` and its arguments (values or ints)."""

    kind: str
    args: tuple[PredicateArgValue, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "args", tuple(self.args))


PREDICATE_ARITY = {
    "eq": 2,
    "ne": 2,
    "lt": 2,
    "le": 2,
    "gt": 2,
    "ge": 2,
    "min": 2,
    "max": 2,
    "mul": 2,
    "pow2": 1,
    "not_nan": 1,
    "not_inf": 1,
    "finite": 1,
    "range": 3,
}
"""Number of arguments each predicate kind takes."""


class DictAttr(Mapping):
    """An immutable dictionary attribute value (``{k = 1, name = "x", nested = {...}}``).

    Keys are strings, kept sorted; values are bools, ints, floats, strings, int tuples,
    :class:`TypedInt` (``u64(3)``), ``bytes`` (``bytes("00ff")``) or nested
    :class:`DictAttr`. Hashable and comparable like a tuple of its items."""

    __slots__ = ("_items", "_map")

    def __init__(self, items: Mapping[str, Any] | Iterable[tuple[str, Any]] = ()) -> None:
        pairs = items.items() if isinstance(items, Mapping) else items
        norm = []
        for k, v in pairs:
            if not isinstance(k, str):
                raise TypeError(f"a dictionary attribute key is a string, got {k!r}")
            norm.append((k, DictAttr(v) if isinstance(v, Mapping) else v))
        norm.sort(key=lambda kv: kv[0])
        self._items: tuple[tuple[str, Any], ...] = tuple(norm)
        self._map = dict(norm)
        if len(self._map) != len(norm):
            raise ValueError("duplicate key in a dictionary attribute")

    def __getitem__(self, key: str) -> Any:
        return self._map[key]

    def __iter__(self) -> Iterator[str]:
        return (k for k, _ in self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, DictAttr) and other._items == self._items

    def __hash__(self) -> int:
        return hash(("dict", self._items))

    def __repr__(self) -> str:
        return f"DictAttr({dict(self._items)!r})"

    def __reduce__(self):  # noqa: ANN204
        return (DictAttr, (self._items,))


TYPED_INT_RANGES: dict[str, tuple[int, int]] = {
    **{f"i{w}": (-(2 ** (w - 1)), 2 ** (w - 1) - 1) for w in (8, 16, 32, 64)},
    **{f"u{w}": (0, 2**w - 1) for w in (8, 16, 32, 64)},
}
"""Integer types a dictionary value may name (``u64(3)``), with their value ranges."""


@dataclass(frozen=True)
class TypedInt:
    """A dictionary value integer of an explicit width and signedness (``u64(3)``)."""

    type: str
    value: int

    def __post_init__(self) -> None:
        bounds = TYPED_INT_RANGES.get(self.type)
        if bounds is None:
            raise ValueError(
                f"a typed dictionary integer is one of {', '.join(TYPED_INT_RANGES)}, "
                f"got {self.type!r}"
            )
        if isinstance(self.value, bool) or not isinstance(self.value, int):
            raise TypeError(f"a typed dictionary integer holds an int, got {self.value!r}")
        if not bounds[0] <= self.value <= bounds[1]:
            raise ValueError(f"{self.value} does not fit in {self.type}")

    def __str__(self) -> str:
        return f"{self.type}({self.value})"


EMPTY_DICT = DictAttr()
"""The empty dictionary attribute."""
