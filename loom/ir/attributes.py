"""Attribute value helpers: predicates, spelled float literals, dynamic index markers."""

from __future__ import annotations

from dataclasses import dataclass

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
