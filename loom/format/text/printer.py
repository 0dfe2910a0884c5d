"""The generic printer: walks each op's declared format to produce canonical text.

Spacing follows one rule: tokens are separated by one space, except no space before a token
starting with ``,`` ``)`` ``]`` ``}``, none after a token ending with ``(`` ``[`` ``{``, and none
where the format glues. Regions open with `` {`` at the end of the line and later tokens
continue after the closing ``}``.
"""

from __future__ import annotations

import gc
from collections.abc import Iterable
from typing import Any

from loom.dsl import (
    Attr,
    AttrDict,
    AttrKind,
    BindingList,
    BlockArgs,
    Clause,
    Flags,
    FormatElement,
    Glue,
    IndexList,
    Kw,
    OpDef,
    OptionalGroup,
    PredicateList,
    Ref,
    Refs,
    RegionArg,
    RegionRef,
    ResultTypeList,
    Subscript,
    SymbolRef,
    TemplateParam,
    TypeOf,
    TypesOf,
)
from loom.errors import LoomPrintError
from loom.format.text.literals import format_scalar_literal, quote_string
from loom.format.text.print_plan import GLUE, Fallback, PrintPlan
from loom.ir import (
    DYNAMIC_INDEX,
    Block,
    FileLocation,
    FusedLocation,
    Module,
    OpaqueLocation,
    Operation,
    Predicate,
    Region,
    TaggedLocation,
    Type,
    Value,
    type_to_text,
)
from loom.opview import SEGMENTS_ATTR, operand_groups, region_groups, result_groups
from loom.registry import OpRegistry, as_registry

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
    return "%" + (v.name if v.name is not None else str(v.id))


def _bare(v: Value) -> str:
    return v.name if v.name is not None else str(v.id)


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

    def walk(elems: Iterable[FormatElement]) -> None:
        for e in elems:
            if isinstance(
                e, (Attr, SymbolRef, TemplateParam, Flags, PredicateList, ResultTypeList)
            ):
                names.add(e.field)
            elif isinstance(e, IndexList):
                names.add(e.static)
            elif isinstance(e, OptionalGroup):
                if decl.attr(e.anchor) is not None:
                    names.add(e.anchor)
                walk(e.inner)
            elif isinstance(e, Clause):
                walk(e.inner)

    walk(decl.format)
    return frozenset(n for n in names if decl.attr(n) is not None or n == SEGMENTS_ATTR)


class _OpContext:
    """Field lookups for the op being printed."""

    __slots__ = ("op", "decl", "operands", "results", "regions")

    def __init__(self, op: Operation, decl: OpDef) -> None:
        self.op = op
        self.decl = decl
        try:
            self.operands = operand_groups(op, decl)
            self.results = result_groups(op, decl)
        except ValueError as e:
            raise LoomPrintError(f"cannot print '{op.name}': {e}") from None
        self.regions = region_groups(op, decl)

    def values(self, field: str) -> tuple[Value, ...]:
        if field in self.operands:
            return self.operands[field]
        if field in self.results:
            return self.results[field]
        raise LoomPrintError(f"'{self.decl.name}' format names unknown value field '{field}'")

    def present(self, field: str) -> bool:
        if field in self.operands:
            return bool(self.operands[field])
        if field in self.results:
            return bool(self.results[field])
        if field in self.regions:
            return self.regions[field] is not None
        value = self.op.attributes.get(field)
        return value is not None and value != () and value is not False


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
        gc_was_enabled = gc.isenabled()
        gc.disable()
        try:
            self._print_block_ops(module.body, "", None, top=True)
        finally:
            if gc_was_enabled:
                gc.enable()
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
        plan = decl.plan(_print_plan)
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
        ctx = _OpContext(op, decl)
        tokens: list[Any] = []
        if op.results and decl.symbol_trait is None:
            tokens.append(", ".join(value_name(r) for r in op.results))
            tokens.append("=")
        tokens.append(op.name)
        self._tokens = tokens
        self._indent = indent
        if self.record_lines:
            self.op_lines[id(op)] = len(self._lines) + 1
        self._emit(decl.format, ctx)
        if tail is not None:
            tokens.append(tail)
        self._lines.append(indent + join_tokens(self._tokens))

    # ------------------------------------------------------------------ format elements

    def _emit(self, elems: Iterable[FormatElement], ctx: _OpContext) -> None:
        for e in elems:
            self._emit_one(e, ctx)

    def _emit_one(self, e: FormatElement, ctx: _OpContext) -> None:  # noqa: C901
        t = self._tokens
        if isinstance(e, Kw):
            t.append(e.text)
        elif isinstance(e, Ref):
            vals = ctx.values(e.field)
            if len(vals) != 1:
                raise LoomPrintError(f"'{ctx.decl.name}' needs one '{e.field}', has {len(vals)}")
            t.append(value_name(vals[0]))
        elif isinstance(e, Refs):
            self._comma_list([value_name(v) for f in e.fields for v in ctx.values(f)])
        elif isinstance(e, Subscript):
            t.append(_GLUE)
            t.append("[")
            self._comma_list([value_name(v) for f in e.fields for v in ctx.values(f)])
            t.append("]")
        elif isinstance(e, IndexList):
            t.append(_GLUE)
            t.append("[")
            self._comma_list(_index_entries(ctx.values(e.dynamic), ctx.op.attributes.get(e.static)))
            t.append("]")
        elif isinstance(e, TypeOf):
            vals = ctx.values(e.field)
            if len(vals) != 1:
                raise LoomPrintError(f"'{ctx.decl.name}' needs one '{e.field}', has {len(vals)}")
            t.append(type_text(vals[0].type))
        elif isinstance(e, TypesOf):
            self._comma_list([type_text(v.type) for f in e.fields for v in ctx.values(f)])
        elif isinstance(e, ResultTypeList):
            if ctx.decl.attr(e.field) is not None:
                types = list(ctx.op.attributes.get(e.field, ()))
            else:
                types = [v.type for v in ctx.values(e.field)]
            text = ", ".join(type_text(x) for x in types)
            t.append(f"({text})" if e.parens else text)
        elif isinstance(e, Attr):
            t.append(self._attr_text(ctx, e.field))
        elif isinstance(e, SymbolRef):
            t.append("@" + str(self._attr(ctx, e.field)))
        elif isinstance(e, TemplateParam):
            t.append(_GLUE)
            t.append(f"<{self._attr_text(ctx, e.field)}>")
        elif isinstance(e, Flags):
            value = ctx.op.attributes.get(e.field)
            if value:
                t.append(_GLUE)
                t.append(f"<{value}>")
        elif isinstance(e, Glue):
            t.append(_GLUE)
        elif isinstance(e, Clause):
            t.append(e.name + "(")
            self._emit(e.inner, ctx)
            t.append(")")
        elif isinstance(e, AttrDict):
            self._attr_dict(ctx)
        elif isinstance(e, OptionalGroup):
            if ctx.present(e.anchor):
                self._emit(e.inner, ctx)
        elif isinstance(e, BlockArgs):
            region = ctx.regions.get(e.region)
            args = region.blocks[0].args if region is not None and region.blocks else ()
            if args or not e.omit_empty:
                t.append(_GLUE)
                t.append("(")
                self._comma_list([f"{value_name(a)}: {type_text(a.type)}" for a in args])
                t.append(")")
        elif isinstance(e, RegionArg):
            region = ctx.regions.get(e.region)
            args = region.blocks[0].args if region is not None and region.blocks else ()
            if len(args) <= e.index:
                raise LoomPrintError(
                    f"'{ctx.decl.name}' region '{e.region}' lacks argument {e.index}"
                )
            t.append(value_name(args[e.index]))
        elif isinstance(e, BindingList):
            inits = ctx.values(e.field)
            if inits:
                region = ctx.regions.get(e.region)
                args = region.blocks[0].args[e.skip :] if region is not None else ()
                if len(args) != len(inits):
                    raise LoomPrintError(
                        f"'{ctx.decl.name}' binds {len(inits)} values to "
                        f"{len(args)} region arguments"
                    )
                t.append(_GLUE)
                t.append("(")
                self._comma_list(
                    [
                        f"{value_name(a)} = {value_name(v)} : {type_text(a.type)}"
                        for a, v in zip(args, inits)
                    ]
                )
                t.append(")")
        elif isinstance(e, PredicateList):
            preds = ctx.op.attributes.get(e.field, ())
            t.append("[" + ", ".join(_predicate_text(p) for p in preds) + "]")
        elif isinstance(e, RegionRef):
            region = ctx.regions.get(e.field)
            if region is None:
                raise LoomPrintError(f"'{ctx.decl.name}' is missing region '{e.field}'")
            rd = ctx.decl.region(e.field)
            elide = rd.terminator if rd.implicit_terminator else None
            t.append("{")
            indent = self._indent
            self._lines.append(indent + join_tokens(t))
            self._print_region(region, indent, elide)
            self._tokens, self._indent = t, indent
            t.clear()
            t.append("}")
        else:  # pragma: no cover - new element kinds must be taught to the printer
            raise LoomPrintError(f"unsupported format element {e!r}")

    def _comma_list(self, items: list[str]) -> None:
        for i, item in enumerate(items):
            if i:
                self._tokens.append(",")
            self._tokens.append(item)

    def _attr(self, ctx: _OpContext, name: str) -> Any:
        value = ctx.op.attributes.get(name)
        if value is None:
            raise LoomPrintError(f"'{ctx.decl.name}' is missing attribute '{name}'")
        return value

    def _attr_text(self, ctx: _OpContext, name: str) -> str:
        a = ctx.decl.attr(name)
        return attr_value_text(a.kind if a else None, self._attr(ctx, name))

    def _attr_dict(self, ctx: _OpContext) -> None:
        consumed = self._consumed.get(ctx.decl.name)
        if consumed is None:
            consumed = self._consumed[ctx.decl.name] = consumed_attrs(ctx.decl)
        entries = []
        for key in sorted(ctx.op.attributes):
            if key in consumed:
                continue
            value = ctx.op.attributes[key]
            a = ctx.decl.attr(key)
            if a is not None and a.default is not None and value == a.default:
                continue
            entries.append(f"{key} = {attr_value_text(a.kind if a else None, value)}")
        if entries:
            self._tokens.append("{" + ", ".join(entries) + "}")

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
    if kind == AttrKind.UNIT:
        return "true"
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


def _print_plan(decl: OpDef) -> PrintPlan:
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
