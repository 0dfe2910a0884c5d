"""The generic printer: walks each op's declared format to produce canonical text.

Spacing follows one rule: tokens are separated by one space, except no space before a token
starting with ``,`` ``)`` ``]`` ``}``, none after a token ending with ``(`` ``[`` ``{``, and none
where the format glues. Regions open with `` {`` at the end of the line and later tokens
continue after the closing ``}``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from loom.dsl import AttrKind, OpDef
from loom.errors import LoomPrintError
from loom.format.elements import walk
from loom.format.text.literals import format_scalar_literal, quote_string
from loom.format.text.print_plan import GLUE, Fallback, PrintPlan
from loom.ir import (
    DYNAMIC_INDEX,
    Block,
    DictAttr,
    FileLocation,
    FusedLocation,
    Module,
    OpaqueLocation,
    Operation,
    Predicate,
    Region,
    TaggedLocation,
    Type,
    TypedInt,
    Value,
    type_to_text,
)
from loom.opview import SEGMENTS_ATTR, operand_groups, region_groups, result_groups
from loom.registry import OpRegistry, as_registry
from loom.switches import gc_paused

INDENT = "  "
_NO_SPACE_BEFORE = (",", ")", "]", "}")
_NO_SPACE_AFTER = ("(", "[", "{")
_GLUE = GLUE
_PLAN_MISFIT = (
    Fallback,
    IndexError,
    KeyError,
    ValueError,
    TypeError,
    AttributeError,
    StopIteration,
)
"""What a print plan raises for an op that does not fit its declaration."""


def value_name(v: Value) -> str:
    """``%name`` or ``%id``."""
    n = v.name
    return "%" + (n if n is not None else str(v.id))


def _bare(v: Value) -> str:
    n = v.name
    return n if n is not None else str(v.id)


def type_text(t: Type) -> str:
    """A type spelled canonically, naming the values bound to dynamic dims."""
    return type_to_text(t, _bare)


def join_tokens(tokens: list[Any]) -> str:
    """Join tokens with the spacing rule (``_GLUE`` markers suppress the next space)."""
    out: list[str] = []
    glue = True
    prev = ""
    for tok in tokens:
        if tok is _GLUE:
            glue = True
            continue
        if (
            out
            and not glue
            and not tok.startswith(_NO_SPACE_BEFORE)
            and not prev.endswith(_NO_SPACE_AFTER)
        ):
            out.append(" ")
        out.append(tok)
        prev = tok
        glue = False
    return "".join(out)


def consumed_attrs(decl: OpDef) -> frozenset[str]:
    """Attributes the format prints outside the attribute dictionary."""
    names: set[str] = {SEGMENTS_ATTR}
    for e in walk(decl.format):
        names.update(e.attrs_written())
        anchor = getattr(e, "anchor", None)  # an optional group's attribute anchor
        if anchor is not None:
            names.add(anchor)
    return frozenset(n for n in names if decl.attr(n) is not None or n == SEGMENTS_ATTR)


class _OpContext:
    """What a format element's ``print_text`` sees: the op's fields, the tokens of its current
    line, and the printer's primitives."""

    __slots__ = ("op", "decl", "operands", "results", "regions", "printer", "tokens", "indent")

    GLUE = _GLUE
    name = staticmethod(value_name)
    type = staticmethod(type_text)

    def __init__(self, op: Operation, decl: OpDef, printer: Printer, indent: str) -> None:
        self.op = op
        self.decl = decl
        try:
            self.operands = operand_groups(op, decl)
            self.results = result_groups(op, decl)
        except ValueError as e:
            raise LoomPrintError(f"cannot print '{op.name}': {e}") from None
        self.regions = region_groups(op, decl)
        self.printer = printer
        self.tokens: list[Any] = []
        self.indent = indent

    def error(self, message: str) -> LoomPrintError:
        """The error for an op that does not fit its declaration."""
        return LoomPrintError(message)

    def values(self, field: str) -> tuple[Value, ...]:
        """The values of operand or result field ``field``."""
        if field in self.operands:
            return self.operands[field]
        if field in self.results:
            return self.results[field]
        raise LoomPrintError(f"'{self.decl.name}' format names unknown value field '{field}'")

    def one(self, field: str) -> Value:
        """The single value of ``field``."""
        vals = self.values(field)
        if len(vals) != 1:
            raise LoomPrintError(f"'{self.decl.name}' needs one '{field}', has {len(vals)}")
        return vals[0]

    def present(self, field: str) -> bool:
        """Whether field ``field`` (value, region or attribute) is present and non-empty."""
        if field in self.operands:
            return bool(self.operands[field])
        if field in self.results:
            return bool(self.results[field])
        if field in self.regions:
            return self.regions[field] is not None
        value = self.op.attributes.get(field)
        a = self.decl.attr(field)
        if a is not None and a.kind in (AttrKind.NUMBER, AttrKind.LITERAL):
            return value is not None  # a literal false or 0 is a value
        if isinstance(value, DictAttr):
            return len(value) > 0
        return value is not None and value != () and value is not False

    def region_args(self, field: str) -> tuple[Value, ...]:
        """The entry arguments of region ``field`` (empty when it has none)."""
        region = self.regions.get(field)
        return region.blocks[0].args if region is not None and region.blocks else ()

    def comma(self, items: list[str]) -> None:
        """Append ``items`` separated by commas."""
        t = self.tokens
        for i, item in enumerate(items):
            if i:
                t.append(",")
            t.append(item)

    def attr(self, name: str) -> Any:
        """The value of required attribute ``name``."""
        value = self.op.attributes.get(name)
        if value is None:
            raise LoomPrintError(f"'{self.decl.name}' is missing attribute '{name}'")
        return value

    def attr_text(self, name: str) -> str:
        """The text of required attribute ``name`` (spelled by its kind)."""
        a = self.decl.attr(name)
        return attr_value_text(a.kind if a else None, self.attr(name))

    def attr_dict(self) -> None:
        """Append ``{k = v, ...}`` of the attributes no other element prints."""
        text = _attr_dict_text(self.decl, self.printer.consumed(self.decl), self.op.attributes)
        if text:
            self.tokens.append(text)

    def index_entries(self, dynamic: tuple[Value, ...], static: Any) -> list[str]:
        """Entries of an index list mixing static ints and dynamic values."""
        return _index_entries(dynamic, static)

    def predicate_text(self, p: Predicate) -> str:
        """``kind(args)`` of one predicate."""
        return _predicate_text(p)

    def emit(self, elems: Iterable[Any]) -> None:
        """Print nested elements."""
        for e in elems:
            e.print_text(self)

    def break_line(self) -> None:
        """End the current line here (the op continues on later lines)."""
        self.printer._lines.append(self.indent + join_tokens(self.tokens))
        self.tokens.clear()

    def nested_line(self, text: str) -> None:
        """A line of ``text`` one level deeper than the op (a table row)."""
        self.printer._lines.append(self.indent + INDENT + text)

    def nested_region(self, head: str, region: Region, field: str) -> None:
        """``head {``, region ``region`` of field ``field`` and ``}``, one level deeper."""
        rd = self.decl.region(field)
        elide = rd.terminator if rd is not None and rd.implicit_terminator else None
        inner = self.indent + INDENT
        self.printer._lines.append(f"{inner}{head} {{")
        self.printer._print_region(region, inner, elide)
        self.printer._lines.append(inner + "}")

    def print_region(self, field: str) -> None:
        """End the line with `` {``, print region ``field`` and continue after its ``}``."""
        region = self.regions.get(field)
        if region is None:
            raise LoomPrintError(f"'{self.decl.name}' is missing region '{field}'")
        rd = self.decl.region(field)
        elide = rd.terminator if rd.implicit_terminator else None
        t = self.tokens
        t.append("{")
        printer = self.printer
        printer._lines.append(self.indent + join_tokens(t))
        printer._print_region(region, self.indent, elide)
        t.clear()
        t.append("}")


class Printer:
    """Prints modules and ops canonically for one declaration set."""

    def __init__(
        self,
        ops: OpRegistry | Iterable[Any] | None = None,
        *,
        print_locations: bool = False,
        record_lines: bool = True,
    ) -> None:
        self.registry = as_registry(ops)
        self.print_locations = print_locations
        self.record_lines = record_lines
        """Fill :attr:`op_lines` while printing (``print_module()`` needs no line map)."""
        self._fns: dict[str, Any] = {}
        self._consumed: dict[str, frozenset[str]] = {}
        self._plans: dict[str, PrintPlan] = {}
        self._module: Module | None = None
        self._lines: list[str] = []
        self.op_lines: dict[int, int] = {}
        """After printing: ``id(op)`` -> 1-based line of the op's first line."""
        self._reset_type_cache()

    # ------------------------------------------------------------------ entry points

    def _reset_type_cache(self) -> None:
        # Keyed by identity: types with dynamic dims are per-value objects, and nothing is
        # renamed while one print runs.
        cache: dict[int, str] = {}
        get = cache.get

        def tt(t: Type) -> str:
            s = get(id(t))
            if s is None:
                s = cache[id(t)] = type_to_text(t, _bare)
            return s

        self._tt = tt
        self._tg = get

    def print_module(self, module: Module) -> str:
        """The module's canonical text, ending in one newline."""
        self._reset_type_cache()
        self._module = module
        self._lines = lines = []
        self.op_lines = {}
        for c in module.file_header:
            lines.append("//" + c)
        if module.file_header and module.ops:
            lines.append("")
        # The printer allocates no cycles; pausing the cyclic GC keeps big modules linear.
        try:
            with gc_paused():
                self._print_block_ops(module.body, "", None, top=True)
        finally:
            self._reset_type_cache()  # its keys are ids: drop them with the module
        self._module = None
        return "\n".join(lines) + "\n" if lines else ""

    def print_operation(self, op: Operation, module: Module | None = None) -> str:
        """One op (with its regions) as text, without a trailing newline."""
        self._reset_type_cache()
        self._module = module
        self._lines = []
        try:
            self._print_op(op, "")
        finally:
            self._reset_type_cache()
        self._module = None
        return "\n".join(self._lines)

    # ------------------------------------------------------------------ structure

    def _plan(self, op: Operation) -> PrintPlan | None:
        decl = self.registry.get(op.name)
        if decl is None:
            return None
        plan = decl.plan(print_plan)
        self._plans[op.name] = plan
        self._fns[op.name] = plan.fn
        return plan

    def _decl(self, op: Operation) -> OpDef:
        d = self.registry.get(op.name)
        if d is None:
            raise LoomPrintError(f"cannot print: {self.registry.unknown_message(op.name)}")
        return d

    def _print_block_ops(
        self, block: Block, indent: str, elide: str | None, top: bool = False
    ) -> None:
        ops = block.ops
        stop = len(ops)
        if elide is not None and stop and ops[-1].name == elide and _is_bare(ops[-1]):
            stop -= 1  # the implicit terminator is not printed
        lines = self._lines
        append = lines.append
        fns = self._fns
        op_lines = self.op_lines if self.record_lines else None
        tt = self._tt
        tg = self._tg
        if self.print_locations:
            fns = {}  # every op takes _print_op, which adds the location
        for i, op in enumerate(ops if stop == len(ops) else ops[:stop]):
            trivia = op.trivia
            if trivia is not None:
                if trivia.leading_blank_line and i > 0:
                    append("")
                for c in trivia.comments:
                    append(f"{indent}//{c}")
            # The common case inlined: a compiled plan, no location suffix.
            fn = fns.get(op.name)
            if fn is None:
                self._print_op(op, indent)
                continue
            n = len(lines)
            if op_lines is not None:
                op_lines[id(op)] = n + 1
            try:
                append(fn(op, tg, tt, self, indent, None))
            except _PLAN_MISFIT:
                del lines[n:]
                self._generic_op(op, indent, None)
        printed = stop > 0
        trivia = block.trivia
        if trivia is not None and trivia.trailing_comments:
            # At top level the file header also counts as something the blank line follows.
            if trivia.trailing_blank_line and (printed or (top and lines)):
                lines.append("")
            for c in trivia.trailing_comments:
                lines.append(f"{indent}//{c}")

    def _print_region(self, region: Region, indent: str, elide: str | None) -> None:
        inner = indent + INDENT
        for bi, block in enumerate(region.blocks):
            if bi > 0 and block.leading_blank_line:
                self._lines.append("")
            for c in block.comments:
                self._lines.append(f"{indent}//{c}")
            if block.label is not None:
                args = ", ".join(f"{value_name(a)}: {type_text(a.type)}" for a in block.args)
                self._lines.append(f"{indent}^{block.label}{'(' + args + ')' if args else ''}:")
            self._print_block_ops(block, inner, elide)

    def _print_op(self, op: Operation, indent: str) -> None:
        plan = self._plans.get(op.name)
        if plan is None:
            plan = self._plan(op)
        lines = self._lines
        tail = None
        if self.print_locations and op.location_id:
            tail = self.location_text(op.location_id)
        if plan is not None and plan.fn is not None:
            n = len(lines)
            if self.record_lines:
                self.op_lines[id(op)] = n + 1
            try:
                text = plan.fn(op, self._tg, self._tt, self, indent, tail)
            except _PLAN_MISFIT:
                del lines[n:]  # malformed op: the generic walk below reports it properly
            else:
                lines.append(text)
                return
        self._generic_op(op, indent, tail)

    def _generic_op(self, op: Operation, indent: str, tail: str | None) -> None:
        """Print ``op`` by walking its declaration's format (also reports malformed ops)."""
        decl = self._decl(op)
        ctx = _OpContext(op, decl, self, indent)
        tokens = ctx.tokens
        if op.results and decl.symbol_trait is None:
            tokens.append(", ".join(value_name(r) for r in op.results))
            tokens.append("=")
        tokens.append(op.name)
        if self.record_lines:
            self.op_lines[id(op)] = len(self._lines) + 1
        ctx.emit(decl.format)
        if tail is not None:
            tokens.append(tail)
        self._lines.append(indent + join_tokens(tokens))

    def consumed(self, decl: OpDef) -> frozenset[str]:
        """Attributes ``decl``'s format prints outside the dictionary (cached per op name)."""
        consumed = self._consumed.get(decl.name)
        if consumed is None:
            consumed = self._consumed[decl.name] = consumed_attrs(decl)
        return consumed

    # ------------------------------------------------------------------ locations

    def location_text(self, location_id: int) -> str:
        """``loc(...)`` for a location id of the current module."""
        module = self._module
        loc = module.location(location_id) if module is not None else None
        if loc is None:
            return "loc(unknown)"
        return f"loc({self._loc_body(loc, top=True)})"

    def _loc_body(self, loc: Any, top: bool) -> str:
        module = self._module
        if isinstance(loc, FileLocation):
            name = quote_string(_source(module, loc.source_id))
            text = f"{name}:{loc.start_line}:{loc.start_col}"
            if top or (loc.end_line, loc.end_col) != (loc.start_line, loc.start_col):
                text += f" to {loc.end_line}:{loc.end_col}"
            return text
        if isinstance(loc, FusedLocation):
            parts = [
                self._loc_body(module.location(c), top=False)
                for c in loc.children
                if module.location(c) is not None
            ]
            return f"fused<{', '.join(parts)}>"
        if isinstance(loc, OpaqueLocation):
            return (
                f"opaque<{quote_string(_source(module, loc.source_id))}, "
                f"{quote_string(loc.data.decode('utf-8', 'replace'))}>"
            )
        if isinstance(loc, TaggedLocation):
            child = module.location(loc.child) if loc.child else None
            tail = f", {self._loc_body(child, top=False)}" if child is not None else ""
            return f'tagged<{loc.tag}, "{loc.data.hex()}"{tail}>'
        return "unknown"


def _source(module: Module | None, source_id: int) -> str:
    if module is not None and 0 <= source_id < len(module.sources):
        return module.sources[source_id]
    return "<unknown>"


def _is_bare(op: Operation) -> bool:
    if op.operands or op.results or op.attributes or op.regions:
        return False
    return op.trivia is None or not op.trivia.comments


def _index_entries(dynamic: tuple[Value, ...], static: tuple[int, ...] | None) -> list[str]:
    if static is None:
        return [value_name(v) for v in dynamic]
    out, it = [], iter(dynamic)
    for s in static:
        if s == DYNAMIC_INDEX:
            v = next(it, None)
            if v is None:
                raise LoomPrintError("index list has more dynamic positions than values")
            out.append(value_name(v))
        else:
            out.append(str(s))
    return out


def _predicate_text(p: Predicate) -> str:
    args = ", ".join(value_name(a) if isinstance(a, Value) else str(a) for a in p.args)
    return f"{p.kind}({args})"


def attr_value_text(kind: str | None, value: Any) -> str:
    """An attribute value as text (enums bare, strings quoted, symbols with ``@``)."""
    if kind in (AttrKind.ENUM, AttrKind.FLAGS):
        return str(value)
    if kind == AttrKind.SYMBOL:
        return "@" + value
    if kind == AttrKind.BLOCK:
        return "^" + value
    if kind == AttrKind.BLOCK_LIST:
        return "[" + ", ".join("^" + x for x in value) + "]"
    if kind == AttrKind.UNIT:
        return "true"
    if kind == AttrKind.NAME:
        return value if _is_dotted(value) else quote_string(value)
    if kind == AttrKind.LITERAL and isinstance(value, str):
        return value  # a static encoding spec, kept canonical
    if kind == AttrKind.LITERAL and isinstance(value, tuple):
        return "[" + ", ".join(attr_value_text(kind, x) for x in value) + "]"
    if isinstance(value, DictAttr):
        return dict_text(value)
    if isinstance(value, TypedInt):
        return str(value)
    if isinstance(value, bytes):
        return f'bytes("{value.hex()}")'
    if isinstance(value, str):
        return quote_string(value)
    if isinstance(value, (bool, int, float)):
        return format_scalar_literal(value)
    if isinstance(value, tuple):
        if value and all(isinstance(x, Type) for x in value):
            return "[" + ", ".join(type_text(x) for x in value) + "]"
        if value and all(isinstance(x, Predicate) for x in value):
            return "[" + ", ".join(_predicate_text(x) for x in value) + "]"
        return "[" + ", ".join(attr_value_text(None, x) for x in value) + "]"
    if isinstance(value, Type):
        return type_text(value)
    raise LoomPrintError(f"cannot print attribute value {value!r}")


def _is_word(text: str) -> bool:
    """An ASCII identifier (``[A-Za-z_][A-Za-z0-9_$]*``)."""
    return (
        text.isascii()
        and text[:1].isalpha() | (text[:1] == "_")
        and text.replace("_", "a").replace("$", "a").isalnum()
    )


def _is_dotted(text: str) -> bool:
    return all(_is_word(part) for part in text.split("."))


def dict_text(value: DictAttr) -> str:
    """``{key = value, ...}`` with sorted keys (keys that are not identifiers quoted)."""
    entries = []
    for key, v in value.items():
        k = key if _is_word(key) and key not in ("true", "false") else quote_string(key)
        entries.append(f"{k} = {attr_value_text(None, v)}")
    return "{" + ", ".join(entries) + "}"


def _attr_dict_text(decl: OpDef, consumed: frozenset[str], attrs: Any) -> str:
    """The ``{key = value, ...}`` token of the attributes the format does not print."""
    entries = []
    for key in sorted(attrs):
        if key in consumed:
            continue
        value = attrs[key]
        a = decl.attr(key)
        if a is not None and a.default is not None and value == a.default:
            continue
        entries.append(f"{key} = {attr_value_text(a.kind if a else None, value)}")
    return "{" + ", ".join(entries) + "}" if entries else ""


def print_plan(decl: OpDef) -> PrintPlan:
    """The print plan of one declaration (kept by the declaration, see ``OpDef.plan``)."""
    return PrintPlan(decl, consumed_attrs(decl), _HELPERS)


_HELPERS = {
    "attr_text": attr_value_text,
    "attr_dict": _attr_dict_text,
    "predicate_text": _predicate_text,
}


def print_module(
    module: Module, *, ops: OpRegistry | Iterable[Any] | None = None, print_locations: bool = False
) -> str:
    """Canonical text of ``module`` for the declaration set ``ops``."""
    return Printer(ops, print_locations=print_locations, record_lines=False).print_module(module)
