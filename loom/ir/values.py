"""SSA values. Every value lives in its module's value table; its id is its index there."""

from __future__ import annotations

from array import array

from loom.ir.types import Type


class NamePool:
    """The names of many values packed into one string, found by value id.

    A name string costs ~56 bytes as its own object; here it costs its characters, one ``%``
    before each, and a 4-byte start offset in an array indexed by value id: a name runs from
    its start to the next ``%`` (:attr:`text` always ends with one). The parser keeps the
    names it reads in one pool per module; a value whose name slot holds the pool reads its
    name there by its id (ids never change). Names are added in bulk and read later:
    :meth:`add` queues them and the first read joins the queue into :attr:`text`. Renaming a
    value stores the new name in the value itself.
    """

    __slots__ = ("text", "starts", "pending", "size")

    def __init__(self) -> None:
        self.text = "%"
        self.starts = array("I")
        self.pending: list[str] = []
        self.size = 0  # length of the pooled tokens, queued ones included

    def add(self, vid: int, token: str) -> bool:
        """Queue ``token``, ``%`` and a name without ``%``, as the name of value ``vid``.
        False when the name cannot be pooled (the caller then keeps it as its own string)."""
        start = self.size + 1
        if start > 0xFFFFFFFF or token[:1] != "%" or token.count("%") != 1:
            return False
        starts = self.starts
        n = len(starts)
        if vid < n:
            starts[vid] = start
        else:  # the array grows by the amortized append (values mostly come in id order)
            if vid > n:
                starts.frombytes(bytes(4 * (vid - n)))
            starts.append(start)
        self.size += len(token)
        self.pending.append(token)
        return True

    def add_name(self, vid: int, token: str) -> bool:
        """:meth:`add` for a token the caller's syntax already holds to ``%`` and a name
        without ``%`` (the parser's line path): the next value in id order takes the short
        way."""
        starts = self.starts
        start = self.size + 1
        if vid != len(starts) or start > 0xFFFFFFFF:
            return self.add(vid, token)
        starts.append(start)
        self.size = start - 1 + len(token)
        self.pending.append(token)
        return True

    def get(self, vid: int) -> str:
        """The name of value ``vid``."""
        text = self.text
        start = self.starts[vid]
        if start >= len(text):
            text = self.flush()
        return text[start : text.find("%", start)]

    def flush(self) -> str:
        """Join the queued names into :attr:`text` and return it (the parser calls it when
        done)."""
        if self.pending:
            self.text = self.text[:-1] + "".join(self.pending) + "%"
            self.pending = []
        return self.text


class Value:
    """An SSA value: an op result or a block argument.

    ``id`` is the index in the module-wide value table (also the printed name of an unnamed
    value), ``name`` the optional bare name printed as ``%name``. The name is kept in the value
    or, for parsed modules, in a :class:`NamePool` shared by the module's values.
    """

    __slots__ = ("id", "type", "_name")

    @staticmethod
    def _loom_module() -> None:
        """The tracking module (None until a module tracks this value: loom.ir.versioning)."""
        return None

    def __init__(self, id: int, type: Type, name: str | NamePool | None = None) -> None:
        self.id = id
        self.type = type
        self._name = name

    @property
    def name(self) -> str | None:
        """The bare name (without ``%``), or None for an unnamed value."""
        n = self._name
        if n is None or n.__class__ is str:
            return n  # type: ignore[return-value]
        text = n.text  # NamePool.get, inlined: printers read names often
        start = n.starts[self.id]
        if start >= len(text):
            text = n.flush()
        return text[start : text.find("%", start)]

    @name.setter
    def name(self, name: str | None) -> None:
        self._name = name

    @property
    def display_name(self) -> str:
        """The name without ``%``: the bare name, or the value id for unnamed values."""
        n = self.name
        return n if n is not None else str(self.id)

    def __repr__(self) -> str:
        return f"<loom value %{self.display_name}: {self.type}>"


def name_expr(v: str) -> str:
    """Python source reading the bare name or id of the value in variable ``v``, as generated
    printers inline it: ``Value.name`` without the property call for an unnamed value or one
    holding its own string (the common cases; a pooled name costs one :meth:`NamePool.get`)."""
    return (
        f"({v}.id if (_nm := {v}._name) is None "
        f"else _nm if _nm.__class__ is str else _nm.get({v}.id))"
    )


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
