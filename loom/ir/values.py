"""SSA values. Every value lives in its module's value table; its id is its index there."""

from __future__ import annotations

from loom.ir.types import Type


class Value:
    """An SSA value: an op result or a block argument.

    ``id`` is the index in the module-wide value table (also the printed name of an unnamed
    value), ``name`` the optional bare name printed as ``%name``.
    """

    __slots__ = ("id", "type", "name")

    @staticmethod
    def _loom_module() -> None:
        """The tracking module (None until a module tracks this value: loom.ir.versioning)."""
        return None

    def __init__(self, id: int, type: Type, name: str | None = None) -> None:
        self.id = id
        self.type = type
        self.name = name

    @property
    def display_name(self) -> str:
        """The name without ``%``: the bare name, or the value id for unnamed values."""
        return self.name if self.name is not None else str(self.id)

    def __repr__(self) -> str:
        return f"<loom value %{self.display_name}: {self.type}>"


MAX_ID_DIGITS = 18
"""Longer digit names never spell a value id (and ``int()`` of them stays cheap)."""


def spelled_id(name: str) -> int | None:
    """The value id a digit name spells in text (``"12"`` and ``"012"`` -> 12), else None.

    Text writes an unnamed value as ``%<id>``, so the parser reads such a name as that id and
    the verifier keeps a value *named* by digits from colliding with it.
    """
    if name.isdigit() and name.isascii() and len(name) <= MAX_ID_DIGITS:
        return int(name)
    return None


ValueRef = Value
"""The builder hands out values directly; ``ValueRef`` is the name upstream's API uses."""
