"""Print plans: a declaration's format compiled once into token-emitting closures.

The generic printer walks format elements with ``isinstance`` tests and groups operands by
field for every op; a plan does that work once per declaration. Plans cover region-free ops
(almost every op of a large module); the printer's generic walk handles the rest and every
malformed op, so the output is byte-identical either way.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from loom.dsl import (
    Attr,
    AttrDict,
    AttrKind,
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
    ResultTypeList,
    Subscript,
    SymbolRef,
    TemplateParam,
    TypeOf,
    TypesOf,
)
from loom.ir import DYNAMIC_INDEX, Operation, ScalarType, Value, type_to_text
from loom.opview import operand_groups, result_groups

GLUE = object()
"""Marker token: no space before the next token."""

Emit = Callable[[Operation, Any, list], None]


def _name(v: Value) -> str:
    n = v.name
    return "%" + (n if n is not None else str(v.id))


def _bare(v: Value) -> str:
    n = v.name
    return n if n is not None else str(v.id)


def _type(t: Any) -> str:
    return t.spelling if type(t) is ScalarType else type_to_text(t, _bare)


class PrintPlan:
    """Compiled printer of one region-free declaration (``steps`` is None when unsupported)."""

    def __init__(self, decl: OpDef, consumed: frozenset[str], attr_text: Callable) -> None:
        self.decl = decl
        self.consumed = consumed
        self.attr_text = attr_text
        self.symbol = decl.symbol_trait is not None
        self.fixed = not any(o.variadic or o.optional for o in decl.operands) and not any(
            r.variadic for r in decl.results
        )
        self.steps: list[Emit] | None
        try:
            self.steps = None if decl.regions else self._compile(decl.format)
        except _Unsupported:
            self.steps = None

    def tokens(self, op: Operation) -> list:
        """The op's tokens (LHS, name, format) for :func:`join_tokens`."""
        t: list = []
        if op.results and not self.symbol:
            t.append(", ".join([_name(r) for r in op.results]))
            t.append("=")
        t.append(op.name)
        g = None
        if not self.fixed:
            g = operand_groups(op, self.decl)
            g.update(result_groups(op, self.decl))
        for s in self.steps:  # type: ignore[union-attr]
            s(op, g, t)
        return t

    # ------------------------------------------------------------------ compilation

    def _values(self, field: str) -> Callable[[Operation, Any], tuple[Value, ...]]:
        decl = self.decl
        if self.fixed:
            for k, o in enumerate(decl.operands):
                if o.name == field:
                    return lambda op, g: op.operands[k : k + 1]
            for k, r in enumerate(decl.results):
                if r.name == field:
                    return lambda op, g: op.results[k : k + 1]
            raise _Unsupported
        if decl.operand(field) is None and decl.result(field) is None:
            raise _Unsupported
        return lambda op, g: g[field]

    def _compile(self, elems: tuple[FormatElement, ...]) -> list[Emit]:
        return [self._step(e) for e in elems]

    def _step(self, e: FormatElement) -> Emit:  # noqa: C901
        decl = self.decl
        if isinstance(e, Kw):
            text = e.text
            return lambda op, g, t: t.append(text)
        if isinstance(e, Glue):
            return lambda op, g, t: t.append(GLUE)
        if isinstance(e, Ref):
            get = self._values(e.field)

            def ref(op: Operation, g: Any, t: list) -> None:
                (v,) = get(op, g)
                t.append(_name(v))

            return ref
        if isinstance(e, (Refs, Subscript)):
            gets = [self._values(f) for f in e.fields]
            bracket = isinstance(e, Subscript)

            def refs(op: Operation, g: Any, t: list) -> None:
                if bracket:
                    t.append(GLUE)
                    t.append("[")
                first = True
                for get in gets:
                    for v in get(op, g):
                        if not first:
                            t.append(",")
                        t.append(_name(v))
                        first = False
                if bracket:
                    t.append("]")

            return refs
        if isinstance(e, IndexList):
            get = self._values(e.dynamic)
            static = e.static

            def index_list(op: Operation, g: Any, t: list) -> None:
                dyn = get(op, g)
                st = op.attributes.get(static)
                if st is None:
                    names = [_name(v) for v in dyn]
                else:
                    it = iter(dyn)
                    names = [_name(next(it)) if s == DYNAMIC_INDEX else str(s) for s in st]
                t.append(GLUE)
                t.append("[")
                for k, n in enumerate(names):
                    if k:
                        t.append(",")
                    t.append(n)
                t.append("]")

            return index_list
        if isinstance(e, TypeOf):
            get = self._values(e.field)

            def type_of(op: Operation, g: Any, t: list) -> None:
                (v,) = get(op, g)
                t.append(_type(v.type))

            return type_of
        if isinstance(e, TypesOf):
            gets = [self._values(f) for f in e.fields]

            def types_of(op: Operation, g: Any, t: list) -> None:
                first = True
                for get in gets:
                    for v in get(op, g):
                        if not first:
                            t.append(",")
                        t.append(_type(v.type))
                        first = False

            return types_of
        if isinstance(e, ResultTypeList):
            if decl.attr(e.field) is not None:
                raise _Unsupported
            get = self._values(e.field)
            parens = e.parens

            def result_types(op: Operation, g: Any, t: list) -> None:
                text = ", ".join([_type(v.type) for v in get(op, g)])
                t.append(f"({text})" if parens else text)

            return result_types
        if isinstance(e, (Attr, TemplateParam)):
            a = decl.attr(e.field)
            if a is None:
                raise _Unsupported
            name, kind = a.name, a.kind
            attr_text = self.attr_text
            template = isinstance(e, TemplateParam)
            plain = kind in (AttrKind.ENUM, AttrKind.FLAGS)

            def attr(op: Operation, g: Any, t: list) -> None:
                value = op.attributes[name]
                text = value if plain and type(value) is str else attr_text(kind, value)
                if template:
                    t.append(GLUE)
                    t.append(f"<{text}>")
                else:
                    t.append(text)

            return attr
        if isinstance(e, SymbolRef):
            name = e.field
            return lambda op, g, t: t.append("@" + str(op.attributes[name]))
        if isinstance(e, Flags):
            name = e.field

            def flags(op: Operation, g: Any, t: list) -> None:
                value = op.attributes.get(name)
                if value:
                    t.append(GLUE)
                    t.append(f"<{value}>")

            return flags
        if isinstance(e, Clause):
            head = e.name + "("
            inner = self._compile(e.inner)

            def clause(op: Operation, g: Any, t: list) -> None:
                t.append(head)
                for s in inner:
                    s(op, g, t)
                t.append(")")

            return clause
        if isinstance(e, OptionalGroup):
            inner = self._compile(e.inner)
            anchor = e.anchor
            is_value = decl.operand(anchor) is not None or decl.result(anchor) is not None
            get = self._values(anchor) if is_value else None

            def optional(op: Operation, g: Any, t: list) -> None:
                if get is not None:
                    present = bool(get(op, g))
                else:
                    value = op.attributes.get(anchor)
                    present = value is not None and value != () and value is not False
                if present:
                    for s in inner:
                        s(op, g, t)

            return optional
        if isinstance(e, AttrDict):
            consumed = self.consumed
            attr_text = self.attr_text

            def attr_dict(op: Operation, g: Any, t: list) -> None:
                attrs = op.attributes
                if not attrs:
                    return
                entries = []
                for key in sorted(attrs):
                    if key in consumed:
                        continue
                    value = attrs[key]
                    a = decl.attr(key)
                    if a is not None and a.default is not None and value == a.default:
                        continue
                    entries.append(f"{key} = {attr_text(a.kind if a else None, value)}")
                if entries:
                    t.append("{" + ", ".join(entries) + "}")

            return attr_dict
        if isinstance(e, PredicateList):
            raise _Unsupported
        raise _Unsupported


class _Unsupported(Exception):
    """The element needs the generic printer."""
