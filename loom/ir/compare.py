"""Structural equality of modules (for round-trip tests of text and bytecode).

Two modules are equal when their ops, operands (by definition, not by value id), results,
attributes, regions, blocks, names, types, trivia and locations (by content) agree. Value ids are
ignored: values are matched up at their definitions, and a digit-only name (``%17`` read from
text) counts as no name.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from loom.ir.attributes import Predicate
from loom.ir.locations import FileLocation, FusedLocation, OpaqueLocation, TaggedLocation
from loom.ir.module import Module
from loom.ir.operations import Block, Operation, Region
from loom.ir.types import DynamicDim, FuncRefType, FunctionType, ShapedType, Type
from loom.ir.values import Value


class _Different(Exception):
    """Raised internally at the first difference."""


def modules_equal(a: Module, b: Module, *, locations: bool = True) -> bool:
    """True when ``a`` and ``b`` are structurally equal (see the module docstring)."""
    return module_diff(a, b, locations=locations) is None


def module_diff(a: Module, b: Module, *, locations: bool = True) -> str | None:
    """None when the modules are structurally equal, else a sentence on the first difference.

    ``locations=False`` skips op locations (e.g. comparing a parsed module with the built one).
    """
    cmp = _Comparer(a, b, locations)
    try:
        cmp.same(a.file_header, b.file_header, "file header comments")
        cmp.block(a.body, b.body, "module")
        cmp.same(list(a.symbols), list(b.symbols), "symbol table order")
        for name, op in a.symbols.items():
            if cmp.ops.get(id(op)) is not b.symbols.get(name):
                raise _Different(f"symbol '@{name}' names different ops")
    except _Different as e:
        return str(e)
    return None


class _Comparer:
    def __init__(self, a: Module, b: Module, locations: bool) -> None:
        self.a, self.b = a, b
        self.locations = locations
        self.values: dict[int, Value] = {}
        self.ops: dict[int, Operation] = {}

    def same(self, x: Any, y: Any, what: str) -> None:
        if x != y:
            raise _Different(f"{what} differ: {x!r} != {y!r}")

    def define(self, x: Value, y: Value, where: str) -> None:
        self.same(_name(x), _name(y), f"{where} names")
        self.type(x.type, y.type, f"{where} (%{x.display_name}) type")
        self.values[id(x)] = y

    def use(self, x: Value, y: Value, where: str) -> None:
        mapped = self.values.get(id(x))
        if mapped is None:
            # Defined outside what we walked so far (or not at all): fall back to names.
            if _name(x) != _name(y) or _name(x) is None:
                raise _Different(
                    f"{where}: %{x.display_name} and %{y.display_name} are different values"
                )
            return
        if mapped is not y:
            raise _Different(
                f"{where}: %{x.display_name} corresponds to "
                f"%{mapped.display_name}, not %{y.display_name}"
            )

    def type(self, x: Type, y: Type, where: str) -> None:
        if type(x) is not type(y):
            raise _Different(f"{where} differ: {x} != {y}")
        if isinstance(x, ShapedType):
            assert isinstance(y, ShapedType)
            if (x.kind, x.element_type, len(x.dims)) != (y.kind, y.element_type, len(y.dims)):
                raise _Different(f"{where} differ: {x} != {y}")
            for dx, dy in zip(x.dims, y.dims):
                if isinstance(dx, DynamicDim) and isinstance(dy, DynamicDim):
                    if dx.value is None or dy.value is None:
                        self.same(dx.value is None, dy.value is None, f"{where} dims")
                    else:
                        self.use(dx.value, dy.value, f"{where} dimension")
                elif dx != dy:
                    raise _Different(f"{where} differ: {x} != {y}")
            ex, ey = x.encoding, y.encoding
            if isinstance(ex, Value) and isinstance(ey, Value):
                self.use(ex, ey, f"{where} layout")
            elif ex != ey:
                raise _Different(f"{where} layouts differ: {x} != {y}")
        elif isinstance(x, FunctionType):
            assert isinstance(y, FunctionType)
            self.same(len(x.inputs), len(y.inputs), f"{where} input counts")
            self.same(len(x.results), len(y.results), f"{where} result counts")
            for tx, ty in zip(x.inputs + x.results, y.inputs + y.results):
                self.type(tx, ty, where)
        elif isinstance(x, FuncRefType):
            assert isinstance(y, FuncRefType)
            self.same(x.yieldable, y.yieldable, f"{where} yieldability")
            self.type(x.signature, y.signature, where)
        elif x != y:
            raise _Different(f"{where} differ: {x} != {y}")

    def block(self, x: Block, y: Block, where: str) -> None:
        self.same(x.label, y.label, f"{where} block labels")
        self.same(tuple(x.comments), tuple(y.comments), f"{where} block comments")
        self.same(x.leading_blank_line, y.leading_blank_line, f"{where} block blank line")
        self.same(
            tuple(x.trailing_comments), tuple(y.trailing_comments), f"{where} trailing comments"
        )
        self.same(
            bool(x.trailing_blank_line and x.trailing_comments),
            bool(y.trailing_blank_line and y.trailing_comments),
            f"{where} blank line before the trailing comments",
        )
        self.same(len(x.args), len(y.args), f"{where} block argument counts")
        for k, (ax, ay) in enumerate(zip(x.args, y.args)):
            self.define(ax, ay, f"{where} block argument {k}")
        if len(x.ops) != len(y.ops):
            names_x = [o.name for o in x.ops]
            names_y = [o.name for o in y.ops]
            raise _Different(
                f"{where} has {len(x.ops)} ops vs {len(y.ops)}: {names_x} vs {names_y}"
            )
        for k, (ox, oy) in enumerate(zip(x.ops, y.ops)):
            self.op(ox, oy, f"{where} op {k}")

    def op(self, x: Operation, y: Operation, where: str) -> None:
        where = f"{where} ({x.name})"
        self.same(x.name, y.name, f"{where} names")
        self.ops[id(x)] = y
        self.same(len(x.operands), len(y.operands), f"{where} operand counts")
        for k, (vx, vy) in enumerate(zip(x.operands, y.operands)):
            self.use(vx, vy, f"{where} operand {k}")
        self.attrs(x.attributes, y.attributes, where)
        self.same(tuple(x.comments), tuple(y.comments), f"{where} comments")
        self.same(
            bool(x.leading_blank_line), bool(y.leading_blank_line), f"{where} leading blank line"
        )
        if self.locations:
            self.same(
                _location(self.a, x.location_id),
                _location(self.b, y.location_id),
                f"{where} locations",
            )
        self.same(len(x.regions), len(y.regions), f"{where} region counts")
        for k, (rx, ry) in enumerate(zip(x.regions, y.regions)):
            self.region(rx, ry, f"{where} region {k}")
        self.same(len(x.results), len(y.results), f"{where} result counts")
        for k, (vx, vy) in enumerate(zip(x.results, y.results)):
            self.define(vx, vy, f"{where} result {k}")

    def region(self, x: Region, y: Region, where: str) -> None:
        self.same(len(x.blocks), len(y.blocks), f"{where} block counts")
        # Block arguments of later blocks may be used before their block is walked.
        for k, (bx, by) in enumerate(zip(x.blocks, y.blocks)):
            self.block(bx, by, f"{where} block {k}")

    def attrs(self, x: Mapping[str, Any], y: Mapping[str, Any], where: str) -> None:
        self.same(sorted(x), sorted(y), f"{where} attribute names")
        for key in x:
            self.attr(x[key], y[key], f"{where} attribute '{key}'")

    def attr(self, x: Any, y: Any, where: str) -> None:
        if isinstance(x, Predicate) and isinstance(y, Predicate):
            self.same(x.kind, y.kind, where)
            self.same(len(x.args), len(y.args), where)
            for ax, ay in zip(x.args, y.args):
                self.attr(ax, ay, where)
        elif isinstance(x, Value) and isinstance(y, Value):
            self.use(x, y, where)
        elif isinstance(x, Type) and isinstance(y, Type):
            self.type(x, y, where)
        elif isinstance(x, tuple) and isinstance(y, tuple):
            self.same(len(x), len(y), f"{where} lengths")
            for ex, ey in zip(x, y):
                self.attr(ex, ey, where)
        else:
            if type(x) is bool or type(y) is bool:
                self.same(type(x) is bool, type(y) is bool, f"{where} kinds")
            if isinstance(x, float) and isinstance(y, float) and x != x and y != y:
                return  # both NaN
            self.same(x, y, where)


def _name(v: Value) -> str | None:
    name = v.name
    return None if name is None or name.isdigit() else name


def _location(module: Module, location_id: int) -> Any:
    """A location's content with source names resolved (ids of children too)."""
    loc = module.location(location_id)
    if loc is None:
        return None
    if isinstance(loc, FileLocation):
        return (
            "file",
            _source(module, loc.source_id),
            loc.start_line,
            loc.start_col,
            loc.end_line,
            loc.end_col,
            loc.flags,
        )
    if isinstance(loc, FusedLocation):
        return ("fused", tuple(_location(module, c) for c in loc.children))
    if isinstance(loc, OpaqueLocation):
        return ("opaque", _source(module, loc.source_id), loc.data)
    if isinstance(loc, TaggedLocation):
        return ("tagged", loc.tag, _location(module, loc.child) if loc.child else None, loc.data)
    return ("other", loc)


def _source(module: Module, source_id: int) -> str | None:
    return module.sources[source_id] if 0 <= source_id < len(module.sources) else None
