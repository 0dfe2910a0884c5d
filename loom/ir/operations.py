"""Operations, blocks and regions.

Ops are slotted and share empty tuples, attribute mappings and an empty trivia slot so that a
large module stays compact (under 300 bytes per op with its values and locations). An op refers
to its declaration only by name; the declaration set (``ops=``) used to print, verify or
serialize decides what the name means.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from types import MappingProxyType
from typing import Any, NamedTuple

from loom.ir.values import Value

EMPTY_ATTRS: Mapping[str, Any] = MappingProxyType({})
_NO_COMMENTS: tuple[str, ...] = ()
_SHARED: dict[tuple, Mapping[str, Any]] = {}
_SHARED_LIMIT = 1 << 14


def _plain(v: Any) -> bool:
    t = type(v)
    return t is str or t is int or t is bool or (t is tuple and all(type(x) is int for x in v))


def freeze_attributes(attributes: Mapping[str, Any] | None) -> Mapping[str, Any]:
    """An immutable attribute mapping; common small ones are shared between ops.

    Sharing keeps large modules compact (``{predicate = slt}`` exists once, not once per op).
    Only plain values (strings, ints, bools, int tuples) are shared, keyed with their Python
    type so ``true`` and ``1`` never merge.
    """
    if not attributes:
        return EMPTY_ATTRS
    if isinstance(attributes, MappingProxyType):
        return attributes
    items = tuple(sorted(attributes.items()))
    if len(items) <= 4 and all(_plain(v) for _, v in items):
        key = tuple((k, type(v), v) for k, v in items)
        shared = _SHARED.get(key)
        if shared is None:
            shared = MappingProxyType(dict(items))
            if len(_SHARED) < _SHARED_LIMIT:
                _SHARED[key] = shared
        return shared
    return MappingProxyType(dict(items))


class Trivia(NamedTuple):
    """Comments and blank lines kept around an op or a block (most have none: ``None``).

    ``comments`` holds the text after ``//`` of each comment line printed above the op or the
    block's label; ``leading_blank_line`` asks for one empty line before them. Blocks also use
    ``trailing_comments`` (after their last op) and ``trailing_blank_line`` (one empty line
    before those).
    """

    comments: tuple[str, ...] = ()
    leading_blank_line: bool = False
    trailing_comments: tuple[str, ...] = ()
    trailing_blank_line: bool = False


def make_trivia(
    comments: tuple[str, ...] = (),
    leading_blank_line: bool = False,
    trailing_comments: tuple[str, ...] = (),
    trailing_blank_line: bool = False,
) -> Trivia | None:
    """The trivia record for these fields, or None when all are empty (the common case)."""
    if not (comments or leading_blank_line or trailing_comments or trailing_blank_line):
        return None
    return Trivia(
        tuple(comments),
        bool(leading_blank_line),
        tuple(trailing_comments),
        bool(trailing_blank_line),
    )


_NO_TRIVIA = Trivia()


def _untracked() -> None:
    """The module of an object no module tracks yet (see :mod:`loom.ir.versioning`)."""
    return None


class OpList(list):
    """A block's ops: a plain list until its module is tracked (then writes bump its version)."""

    __slots__ = ()
    _loom_module = staticmethod(_untracked)


class BlockList(list):
    """A region's blocks: a plain list until its module is tracked."""

    __slots__ = ()
    _loom_module = staticmethod(_untracked)


class _TriviaField:
    """A property reading and writing one field of an object's ``trivia`` record."""

    def __init__(self, index: int, convert: Any) -> None:
        self.index = index
        self.convert = convert

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, obj: Any, owner: type | None = None) -> Any:
        if obj is None:
            return self
        trivia = obj.trivia
        return (_NO_TRIVIA if trivia is None else trivia)[self.index]

    def __set__(self, obj: Any, value: Any) -> None:
        fields = list(obj.trivia or _NO_TRIVIA)
        fields[self.index] = self.convert(value)
        obj.trivia = make_trivia(*fields)


class Operation:
    """One op: name, operand and result values, attributes, regions, location and trivia.

    ``attributes`` is an immutable mapping sorted by key (see :func:`freeze_attributes`; assign
    a new mapping to change it). ``trivia`` is None or a :class:`Trivia` record: ``comments``
    (the text after ``//`` of each comment line printed above the op) and
    ``leading_blank_line`` (one empty line before the op) read and write it. One slot for both
    keeps every op 8 bytes smaller.
    """

    __slots__ = ("name", "operands", "results", "attributes", "regions", "location_id", "trivia")

    comments = _TriviaField(0, tuple)
    leading_blank_line = _TriviaField(1, bool)
    _loom_module = staticmethod(_untracked)

    def __init__(
        self,
        name: str,
        operands: tuple[Value, ...] = (),
        results: tuple[Value, ...] = (),
        attributes: Mapping[str, Any] | None = None,
        regions: tuple[Region, ...] = (),
        location_id: int = 0,
        comments: tuple[str, ...] = _NO_COMMENTS,
        leading_blank_line: bool = False,
    ) -> None:
        self.name = name
        self.operands = operands
        self.results = results
        self.attributes = freeze_attributes(attributes)
        self.regions = regions
        self.location_id = location_id
        self.trivia = (
            make_trivia(comments, leading_blank_line) if comments or leading_blank_line else None
        )

    @property
    def result(self) -> Value:
        """The single result (raises if the op does not have exactly one)."""
        if len(self.results) != 1:
            raise ValueError(f"'{self.name}' has {len(self.results)} results, not one")
        return self.results[0]

    def walk(self) -> Iterator[Operation]:
        """This op and every op nested in its regions, in pre-order."""
        yield self
        for region in self.regions:
            yield from region.walk()

    def __repr__(self) -> str:
        return f"<loom op {self.name} at 0x{id(self):x}>"


class Block:
    """A sequence of ops with entry arguments, an optional label and trivia.

    ``trivia`` is None or a :class:`Trivia` record, read and written through four properties:
    ``comments``/``leading_blank_line`` are printed above the block's label;
    ``trailing_comments`` holds the comment lines after the block's last op (before the closing
    ``}``, or at the end of the file for the module body), and ``trailing_blank_line`` asks for
    one empty line before them (blank lines between the last op and the group collapse to one;
    blank lines inside the group move above it, as they do for an op's comments).
    """

    __slots__ = ("args", "ops", "label", "trivia")

    comments = _TriviaField(0, tuple)
    leading_blank_line = _TriviaField(1, bool)
    trailing_comments = _TriviaField(2, tuple)
    trailing_blank_line = _TriviaField(3, bool)
    _loom_module = staticmethod(_untracked)

    def __init__(self, args: tuple[Value, ...] = (), label: str | None = None) -> None:
        self.args = args
        self.ops: list[Operation] = OpList()
        self.label = label
        self.trivia: Trivia | None = None

    def walk(self) -> Iterator[Operation]:
        """Every op of the block and their nested ops, pre-order."""
        for op in self.ops:
            yield from op.walk()

    def __repr__(self) -> str:
        return f"<loom block with {len(self.args)} args, {len(self.ops)} ops>"


class Region:
    """A list of blocks (most regions have exactly one)."""

    __slots__ = ("blocks",)
    _loom_module = staticmethod(_untracked)

    def __init__(self, blocks: list[Block] | None = None) -> None:
        self.blocks: list[Block] = BlockList(blocks if blocks is not None else (Block(),))

    @property
    def entry(self) -> Block:
        """The first block."""
        return self.blocks[0]

    def walk(self) -> Iterator[Operation]:
        """Every op in the region, pre-order."""
        for block in self.blocks:
            yield from block.walk()

    def __repr__(self) -> str:
        return f"<loom region with {len(self.blocks)} blocks>"
