"""Parse plans: each declaration's format compiled once into a list of small step closures.

A step reads tokens through the :class:`~loom.format.text.parser.Parser` and records what it
found in an :class:`OpState` (operands by field, attributes, result types, regions). The plan
then builds the op exactly as the generated builder would: operands packed in declaration
order (with ``SEGMENTS_ATTR`` when needed), ``static_indices``-style lists with
``DYNAMIC_INDEX``, implicit terminators re-inserted and derived region arguments created.
No op is named here: everything comes from the declarations.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from loom.dsl import (
    ArgSource,
    Attr,
    AttrDef,
    AttrDict,
    AttrKind,
    BindingList,
    BlockArgs,
    Clause,
    Flags,
    FormatElement,
    Glue,
    IndexList,
    IsolatedFromAbove,
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
from loom.errors import LoomParseError
from loom.format.text.parse_fast import compile_fast, compile_line
from loom.format.text.scopes import Scope
from loom.format.text.tokenizer import (
    describe,
    is_digit,
    is_float_spelling,
    parse_float,
    parse_int,
)
from loom.ir import (
    DYNAMIC_INDEX,
    PREDICATE_ARITY,
    Block,
    FloatLiteral,
    Operation,
    Predicate,
    Region,
    Type,
    Value,
)
from loom.opview import SEGMENTS_ATTR, needs_segments
from loom.registry import OpRegistry

if TYPE_CHECKING:
    from loom.format.text.parser import Parser

Step = Callable[["Parser", "OpState"], None]
Probe = Callable[["Parser"], bool]


class OpState:
    """What the steps of one op found so far."""

    __slots__ = ("groups", "attrs", "rtypes", "regions", "rscopes", "rargs", "last_scope", "checks")

    def __init__(self) -> None:
        self.groups: dict[str, tuple[Value, ...]] = {}
        self.attrs: dict[str, Any] = {}
        self.rtypes: dict[str, tuple[Type, ...]] = {}
        self.regions: dict[str, Region] = {}
        self.rscopes: dict[str, Scope] | None = None
        self.rargs: dict[str, list[Value]] | None = None
        self.last_scope: Scope | None = None
        self.checks: list[tuple[str, tuple[Type, ...], int]] | None = None

    def scope(self, region: str, p: Parser) -> Scope:
        """The name scope of region ``region`` (created on first use)."""
        if self.rscopes is None:
            self.rscopes = {}
            self.rargs = {}
        d = self.rscopes.get(region)
        if d is None:
            d = self.rscopes[region] = Scope(len(p.values))
            self.rargs[region] = []  # type: ignore[index]
        self.last_scope = d
        return d


# ---------------------------------------------------------------------- attribute values


def _enum_value(p: Parser, a: AttrDef) -> str:
    i = p.i
    tok = p.peek()
    if tok is None or not (tok[0].isalpha() or tok[0] == "_"):
        raise p.expected(f"a {a.name} value")
    p.i = i + 1
    if a.enum is not None and tok not in a.enum.cases:
        raise p.error(
            "PARSE/017",
            f"unknown {a.enum.name} value '{tok}'; expected one of " + ", ".join(a.enum.cases),
            i,
        )
    return tok


def _flags_value(p: Parser, a: AttrDef) -> str:
    start = p.i
    parts = [_ident(p, f"a {a.name} flag")]
    while p.peek() == "|":
        p.i += 1
        parts.append(_ident(p, f"a {a.name} flag"))
    text = "|".join(parts)
    if a.flags is None:
        return text
    try:
        return a.flags.canonical(text)
    except ValueError as e:
        raise p.error("PARSE/017", str(e), start, p.i - 1) from None


def _ident(p: Parser, what: str) -> str:
    tok = p.peek()
    if tok is None or not (tok[0].isalpha() or tok[0] == "_"):
        raise p.expected(what)
    p.i += 1
    return tok


def _number(p: Parser, kind: str) -> Any:
    i = p.i
    tok = p.peek()
    if tok is None:
        raise p.expected("a number")
    if kind == AttrKind.NUMBER and tok in ("true", "false"):
        p.i = i + 1
        return tok == "true"
    c = tok[0]
    if not (is_digit(c) or c == "-" or tok in ("inf", "nan")) or tok == "->":
        raise p.expected("an integer" if kind == AttrKind.INT else "a number")
    p.i = i + 1
    if is_float_spelling(tok):
        if kind == AttrKind.INT:
            raise p.error("PARSE/009", f"bad literal {tok!r}: expected an integer", i)
        try:
            return FloatLiteral(parse_float(tok), tok)
        except ValueError:
            raise p.error("PARSE/009", f"bad float literal {tok!r}", i) from None
    try:
        value = parse_int(tok)
    except ValueError as e:
        raise p.error("PARSE/009", f"bad integer literal {describe(tok)}: {e}", i) from None
    if kind == AttrKind.FLOAT:
        return FloatLiteral(float(value), tok)
    return value


def _bool(p: Parser) -> bool:
    tok = p.peek()
    if tok not in ("true", "false"):
        raise p.expected("true or false")
    p.i += 1
    return tok == "true"


def _symbol(p: Parser) -> str:
    tok = p.peek()
    if tok is None or tok[0] != "@":
        raise p.expected("a symbol ('@name')")
    p.i += 1
    return tok[1:]


def _bracketed(p: Parser, item: Callable[[Parser], Any]) -> tuple[Any, ...]:
    p.expect("[")
    out = []
    while p.peek() != "]":
        if out:
            p.expect(",")
        out.append(item(p))
    p.i += 1
    return tuple(out)


def _predicate(p: Parser) -> Predicate:
    i = p.i
    kind = _ident(p, "a predicate such as range(...) or mul(...)")
    arity = PREDICATE_ARITY.get(kind)
    if arity is None:
        raise p.error(
            "PARSE/017",
            f"unknown predicate '{kind}'; expected one of " + ", ".join(PREDICATE_ARITY),
            i,
        )
    p.expect("(")
    args: list[Any] = []
    while p.peek() != ")":
        if args:
            p.expect(",")
        tok = p.peek()
        if tok is not None and tok[0] == "%":
            args.append(p.use())
        else:
            args.append(p.integer())
    p.i += 1
    if len(args) != arity:
        raise p.error(
            "PARSE/012", f"predicate '{kind}' takes {arity} arguments, found {len(args)}", i
        )
    return Predicate(kind, tuple(args))


def attr_value(p: Parser, a: AttrDef) -> Any:
    """Parse the value of attribute ``a`` (by its kind)."""
    k = a.kind
    if k == AttrKind.ENUM:
        return _enum_value(p, a)
    if k == AttrKind.STRING:
        return p.string()
    if k in (AttrKind.INT, AttrKind.NUMBER, AttrKind.FLOAT):
        return _number(p, k)
    if k in (AttrKind.BOOL, AttrKind.UNIT):
        return _bool(p)
    if k == AttrKind.SYMBOL:
        return _symbol(p)
    if k == AttrKind.FLAGS:
        return _flags_value(p, a)
    if k == AttrKind.I64_ARRAY:
        return _bracketed(p, lambda q: q.integer())
    if k == AttrKind.TYPE_ARRAY:
        return _bracketed(p, lambda q: q.parse_type())
    if k == AttrKind.PREDICATES:
        return _bracketed(p, _predicate)
    raise p.error("PARSE/003", f"attribute '{a.name}' of kind {k} cannot be written in text")


def _attr_probe(a: AttrDef | None) -> Probe:
    """Whether the current token can start a value of attribute ``a``."""
    if a is None:
        return lambda p: False
    k = a.kind
    if k == AttrKind.ENUM:
        cases = frozenset(a.enum.cases) if a.enum else None
        return lambda p: (p.peek() in cases) if cases is not None else _is_ident(p.peek())
    if k == AttrKind.STRING:
        return lambda p: (p.peek() or " ")[0] == '"'
    if k == AttrKind.SYMBOL:
        return lambda p: (p.peek() or " ")[0] == "@"
    if k in (AttrKind.BOOL, AttrKind.UNIT):
        return lambda p: p.peek() in ("true", "false")
    if k in (AttrKind.I64_ARRAY, AttrKind.TYPE_ARRAY, AttrKind.PREDICATES):
        return lambda p: p.peek() == "["
    return lambda p: (
        _is_number(p.peek()) or (k == AttrKind.NUMBER and p.peek() in ("true", "false"))
    )


def _is_ident(tok: str | None) -> bool:
    return tok is not None and (tok[0].isalpha() or tok[0] == "_")


def _is_number(tok: str | None) -> bool:
    if tok is None:
        return False
    c = tok[0]
    return is_digit(c) or (c == "-" and tok != "->") or tok in ("inf", "nan")


# ---------------------------------------------------------------------- value lists


def _value_list(p: Parser) -> list[Value]:
    """``%a, %b`` (possibly empty); stops before a comma not followed by a value."""
    toks = p.toks
    i = p.i
    if i >= len(toks) or toks[i][0] != "%":
        return []
    out = [p.use()]
    while True:
        i = p.i
        if i + 1 < len(toks) and toks[i] == "," and toks[i + 1][0] == "%":
            p.i = i + 1
            out.append(p.use())
        else:
            return out


def _type_list(p: Parser) -> list[Type]:
    """``T, U`` greedily (a comma followed by ``%`` ends the list)."""
    out = [p.parse_type()]
    toks = p.toks
    while True:
        i = p.i
        if i + 1 < len(toks) and toks[i] == "," and toks[i + 1][0] != "%":
            p.i = i + 1
            out.append(p.parse_type())
        else:
            return out


def _distributor(
    decl: OpDef, fields: tuple[str, ...]
) -> Callable[[Parser, OpState, list, int], None]:
    """Assigns a parsed value list to operand fields (fixed 1, optional 0/1, variadic rest)."""
    kinds = []
    for f in fields:
        o = decl.operand(f)
        if o is None:
            raise ValueError(f"'{decl.name}' format lists unknown operand field '{f}'")
        kinds.append((f, "v" if o.variadic else ("o" if o.optional else "f")))
    fixed = sum(1 for _, k in kinds if k == "f")
    has_variadic = any(k == "v" for _, k in kinds)
    if len(kinds) == 1:
        f, k = kinds[0]

        def one(p: Parser, c: OpState, vals: list, start: int) -> None:
            if k == "f" and len(vals) != 1 or k == "o" and len(vals) > 1:
                want = "one" if k == "f" else "at most one"
                raise p.error(
                    "PARSE/012",
                    f"'{decl.name}' expects {want} value for '{f}', found {len(vals)}",
                    start,
                )
            c.groups[f] = tuple(vals)

        return one
    names = ", ".join(fields)

    def many(p: Parser, c: OpState, vals: list, start: int) -> None:
        n = len(vals)
        if n < fixed or (not has_variadic and n > len(kinds)):
            want = f"{fixed}" if fixed == len(kinds) else f"{fixed} to {len(kinds)}"
            if has_variadic:
                want = f"at least {fixed}"
            raise p.error(
                "PARSE/012", f"'{decl.name}' expects {want} values for {names}, found {n}", start
            )
        extra = n - fixed
        optional_take = {}
        for f, k in kinds:
            if k == "o":
                take = 1 if extra > 0 else 0
                optional_take[f] = take
                extra -= take
        pos = 0
        for f, k in kinds:
            m = 1 if k == "f" else optional_take[f] if k == "o" else extra
            c.groups[f] = tuple(vals[pos : pos + m])
            pos += m

    return many


# ---------------------------------------------------------------------- step factories


class _Compiler:
    """Compiles format elements of one declaration into steps."""

    def __init__(self, decl: OpDef) -> None:
        self.decl = decl
        self.isolated = decl.trait(IsolatedFromAbove) is not None

    def steps(self, elems: tuple[FormatElement, ...]) -> list[Step]:
        return [s for e in elems for s in self.step(e)]

    def step(self, e: FormatElement) -> list[Step]:  # noqa: C901
        decl = self.decl
        if isinstance(e, Glue):
            return []
        if isinstance(e, Kw):
            text = e.text

            def kw(p: Parser, c: OpState) -> None:
                i = p.i
                toks = p.toks
                if i < len(toks) and toks[i] == text:
                    p.i = i + 1
                else:
                    raise p.expected(repr(text))

            return [kw]
        if isinstance(e, Ref):
            f = e.field
            if decl.operand(f) is None:
                raise ValueError(f"'{decl.name}' Ref names unknown operand '{f}'")

            def ref(p: Parser, c: OpState) -> None:
                c.groups[f] = (p.use(),)

            return [ref]
        if isinstance(e, Refs):
            dist = _distributor(decl, e.fields)

            def refs(p: Parser, c: OpState) -> None:
                start = p.i
                dist(p, c, _value_list(p), start)

            return [refs]
        if isinstance(e, Subscript):
            dist = _distributor(decl, e.fields)

            def subscript(p: Parser, c: OpState) -> None:
                p.expect("[")
                start = p.i
                vals = _value_list(p)
                p.expect("]")
                dist(p, c, vals, start)

            return [subscript]
        if isinstance(e, IndexList):
            dyn, static = e.dynamic, e.static

            def index_list(p: Parser, c: OpState) -> None:
                p.expect("[")
                vals: list[Value] = []
                entries: list[int] = []
                any_static = False
                while p.peek() != "]":
                    if entries:
                        p.expect(",")
                    tok = p.peek()
                    if tok is not None and tok[0] == "%":
                        vals.append(p.use())
                        entries.append(DYNAMIC_INDEX)
                    else:
                        i = p.i
                        v = p.integer()
                        if not 0 <= v < 2**63:
                            raise p.error(
                                "PARSE/009",
                                f"static index {v} must be a non-negative 64-bit integer",
                                i,
                            )
                        entries.append(v)
                        any_static = True
                p.i += 1
                c.groups[dyn] = tuple(vals)
                if any_static:
                    c.attrs[static] = tuple(entries)

            return [index_list]
        if isinstance(e, TypeOf):
            return [self._type_of(e.field)]
        if isinstance(e, TypesOf):
            return [self._types_of(e.fields)]
        if isinstance(e, ResultTypeList):
            return [self._result_type_list(e)]
        if isinstance(e, Attr):
            a = decl.attr(e.field)
            if a is None:
                raise ValueError(f"'{decl.name}' Attr names unknown attribute '{e.field}'")
            name = a.name

            def attr(p: Parser, c: OpState) -> None:
                c.attrs[name] = attr_value(p, a)

            return [attr]
        if isinstance(e, SymbolRef):
            name = e.field

            def symbol_ref(p: Parser, c: OpState) -> None:
                c.attrs[name] = _symbol(p)

            return [symbol_ref]
        if isinstance(e, TemplateParam):
            a = decl.attr(e.field)
            if a is None:
                raise ValueError(f"'{decl.name}' TemplateParam names unknown attribute")
            name = a.name

            def template(p: Parser, c: OpState) -> None:
                p.expect("<")
                c.attrs[name] = attr_value(p, a)
                p.expect(">")

            return [template]
        if isinstance(e, Flags):
            a = decl.attr(e.field)
            name = e.field

            def flags(p: Parser, c: OpState) -> None:
                if p.peek() == "<":
                    p.i += 1
                    c.attrs[name] = _flags_value(p, a)
                    p.expect(">")

            return [flags]
        if isinstance(e, Clause):
            head, inner = e.name, self.steps(e.inner)

            def clause(p: Parser, c: OpState) -> None:
                i = p.i
                toks = p.toks
                if i + 1 < len(toks) and toks[i] == head and toks[i + 1] == "(":
                    p.i = i + 2
                else:
                    raise p.expected(f"'{head}('")
                for s in inner:
                    s(p, c)
                p.expect(")")

            return [clause]
        if isinstance(e, AttrDict):
            return [self._attr_dict()]
        if isinstance(e, OptionalGroup):
            return [self._optional(e)]
        if isinstance(e, BlockArgs):
            return [self._block_args(e)]
        if isinstance(e, RegionArg):
            region, index = e.region, e.index

            def region_arg(p: Parser, c: OpState) -> None:
                scope = c.scope(region, p)
                args = c.rargs[region]  # type: ignore[index]
                i = p.i
                tok = p.peek()
                if tok is None or tok[0] != "%":
                    raise p.expected("a region argument name ('%name')")
                if len(args) != index:
                    raise p.error("PARSE/003", "region argument out of order", i)
                p.i = i + 1
                args.append(p.define(scope, tok, None, i))

            return [region_arg]
        if isinstance(e, BindingList):
            return [self._binding_list(e)]
        if isinstance(e, PredicateList):
            name = e.field
            isolated = self.isolated

            def predicates(p: Parser, c: OpState) -> None:
                scope = c.last_scope
                if scope is not None:
                    floor = p.push_scope(scope, isolated)
                try:
                    c.attrs[name] = _bracketed(p, _predicate)
                finally:
                    if scope is not None:
                        p.pop_scope(floor)

            return [predicates]
        if isinstance(e, RegionRef):
            return [self._region(e.field)]
        raise ValueError(f"'{decl.name}': the parser does not know format element {e!r}")

    # ------------------------------------------------------------------ types

    def _type_of(self, field: str) -> Step:
        decl = self.decl
        if decl.result(field) is not None:

            def result_type(p: Parser, c: OpState) -> None:
                c.rtypes[field] = (p.parse_type(),)

            return result_type
        if decl.operand(field) is None:
            raise ValueError(f"'{decl.name}' TypeOf names unknown field '{field}'")

        def operand_type(p: Parser, c: OpState) -> None:
            i = p.i
            t = p.parse_type()
            vals = c.groups.get(field)
            if vals is None:
                if c.checks is None:
                    c.checks = []
                c.checks.append((field, (t,), i))
            elif vals and vals[0].type is not t and vals[0].type != t:
                raise _mismatch(p, field, vals[0], t, i)

        return operand_type

    def _types_of(self, fields: tuple[str, ...]) -> Step:
        decl = self.decl
        spec = []
        for f in fields:
            if decl.operand(f) is not None:
                spec.append((f, "operand", False))
            elif decl.result(f) is not None:
                spec.append((f, "result", decl.result(f).variadic))
            else:
                raise ValueError(f"'{decl.name}' TypesOf names unknown field '{f}'")

        def types_of(p: Parser, c: OpState) -> None:
            start = p.i
            want = 0
            known = True
            for f, kind, variadic in spec:
                if kind == "operand":
                    want += len(c.groups.get(f, ()))
                elif variadic:
                    known = False
                else:
                    want += 1
            if (known and want == 0) or (not known and not p.is_type_start()):
                types: list[Type] = []
            else:
                types = _type_list(p)
            if known and len(types) != want:
                raise p.error(
                    "PARSE/012",
                    f"'{decl.name}' expects {want} types after ':', found {len(types)}",
                    start,
                )
            pos = 0
            for n_spec, (f, kind, variadic) in enumerate(spec):
                if kind == "operand":
                    vals = c.groups.get(f, ())
                    for k, v in enumerate(vals):
                        t = types[pos + k]
                        if v.type is not t and v.type != t:
                            raise _mismatch(p, f, v, t, start + 2 * (pos + k))
                    pos += len(vals)
                    continue
                n = 1
                if variadic:
                    later = sum(
                        len(c.groups.get(g, ())) if k2 == "operand" else 1
                        for g, k2, _ in spec[n_spec + 1 :]
                    )
                    n = max(len(types) - pos - later, 0)
                c.rtypes[f] = tuple(types[pos : pos + n])
                pos += n

        return types_of

    def _result_type_list(self, e: ResultTypeList) -> Step:
        decl = self.decl
        field, parens = e.field, e.parens
        is_attr = decl.attr(field) is not None

        def result_types(p: Parser, c: OpState) -> None:
            if parens:
                p.expect("(")
                types = [] if p.peek() == ")" else _type_list(p)
                p.expect(")")
            else:
                types = _type_list(p)
            if is_attr:
                c.attrs[field] = tuple(types)
            else:
                c.rtypes[field] = tuple(types)

        return result_types

    # ------------------------------------------------------------------ attribute dictionary

    def _attr_dict(self) -> Step:
        decl = self.decl

        def attr_dict(p: Parser, c: OpState) -> None:
            toks = p.toks
            i = p.i
            if not (i < len(toks) and toks[i] == "{"):
                return
            nxt = toks[i + 1] if i + 1 < len(toks) else None
            if not (nxt == "}" or (i + 2 < len(toks) and toks[i + 2] == "=")):
                return
            p.i = i + 1
            seen: set[str] = set()
            while p.peek() != "}":
                if seen:
                    p.expect(",")
                ki = p.i
                key = _ident(p, "an attribute name")
                if key in seen:
                    raise p.error("PARSE/020", f"duplicate attribute '{key}' in the dictionary", ki)
                a = decl.attr(key)
                if a is None or key == SEGMENTS_ATTR:
                    names = ", ".join(x.name for x in decl.attrs) or "none"
                    raise p.error(
                        "PARSE/018",
                        f"'{decl.name}' has no attribute '{key}' (its attributes: {names})",
                        ki,
                    )
                if key in c.attrs:
                    raise p.error(
                        "PARSE/020", f"attribute '{key}' is already given by the op's syntax", ki
                    )
                seen.add(key)
                p.expect("=")
                value = attr_value(p, a)
                if a.kind == AttrKind.UNIT and value is False:
                    continue
                c.attrs[key] = value
            p.i += 1

        return attr_dict

    # ------------------------------------------------------------------ optional groups

    def _optional(self, e: OptionalGroup) -> Step:
        decl = self.decl
        inner = self.steps(e.inner)
        probe = self._probe(e.inner)
        anchor = e.anchor
        a = decl.attr(anchor)
        set_unit = a is not None and a.kind == AttrKind.UNIT and not _sets_attr(e.inner, anchor)

        def optional(p: Parser, c: OpState) -> None:
            if probe(p):
                for s in inner:
                    s(p, c)
                if set_unit:
                    c.attrs[anchor] = True

        return optional

    def _probe(self, elems: tuple[FormatElement, ...]) -> Probe:
        decl = self.decl
        for e in elems:
            if isinstance(e, Glue):
                continue
            if isinstance(e, Kw):
                text = e.text
                return lambda p: p.peek() == text
            if isinstance(e, Clause):
                head = e.name

                def clause_probe(p: Parser, head: str = head) -> bool:
                    i, toks = p.i, p.toks
                    return i + 1 < len(toks) and toks[i] == head and toks[i + 1] == "("

                return clause_probe
            if isinstance(e, Attr):
                return _attr_probe(decl.attr(e.field))
            if isinstance(e, SymbolRef):
                return lambda p: (p.peek() or " ")[0] == "@"
            if isinstance(e, (Ref, Refs, RegionArg)):
                return lambda p: (p.peek() or " ")[0] == "%"
            if isinstance(e, (RegionRef, AttrDict)):
                return lambda p: p.peek() == "{"
            if isinstance(e, (TemplateParam, Flags)):
                return lambda p: p.peek() == "<"
            if isinstance(e, (Subscript, IndexList, PredicateList)):
                return lambda p: p.peek() == "["
            if isinstance(e, (BlockArgs, BindingList)):
                return lambda p: p.peek() == "("
            if isinstance(e, ResultTypeList) and e.parens:
                return lambda p: p.peek() == "("
            if isinstance(e, (TypeOf, TypesOf, ResultTypeList)):
                return lambda p: p.is_type_start()
            if isinstance(e, OptionalGroup):
                continue
            break
        raise ValueError(
            f"'{decl.name}': cannot tell from its first token whether an optional "
            f"group {elems!r} is present"
        )

    # ------------------------------------------------------------------ region arguments

    def _block_args(self, e: BlockArgs) -> Step:
        region, omit_empty = e.region, e.omit_empty
        isolated = self.isolated

        def block_args(p: Parser, c: OpState) -> None:
            if p.peek() != "(":
                if omit_empty:
                    return
                raise p.expected("'(' starting the argument list")
            scope = c.scope(region, p)
            args = c.rargs[region]  # type: ignore[index]
            p.i += 1
            floor = p.push_scope(scope, isolated)
            try:
                first = True
                while p.peek() != ")":
                    if not first:
                        p.expect(",")
                    first = False
                    i = p.i
                    tok = p.peek()
                    if tok is None or tok[0] != "%":
                        raise p.expected("an argument ('%name: type')")
                    p.i = i + 1
                    p.expect(":")
                    args.append(p.define(scope, tok, p.parse_type(), i))
            finally:
                p.pop_scope(floor)
            p.i += 1

        return block_args

    def _binding_list(self, e: BindingList) -> Step:
        decl = self.decl
        field, region = e.field, e.region

        def binding_list(p: Parser, c: OpState) -> None:
            if p.peek() != "(":
                c.groups[field] = ()
                return
            scope = c.scope(region, p)
            args = c.rargs[region]  # type: ignore[index]
            p.i += 1
            inits: list[Value] = []
            pending: list[tuple[str, int]] = []
            start = p.i
            while p.peek() != ")":
                if inits:
                    p.expect(",")
                i = p.i
                tok = p.peek()
                if tok is None or tok[0] != "%":
                    raise p.expected("a binding ('%arg = %init : type')")
                p.i += 1
                p.expect("=")
                inits.append(p.use())
                pending.append((tok, i))
                if p.peek() == ":":
                    p.i += 1
                    ti = p.i
                    types = _type_list(p)
                    if len(types) > len(pending):
                        raise p.error(
                            "PARSE/012",
                            f"'{decl.name}' binding list has "
                            f"{len(types)} types for {len(pending)} bindings",
                            ti,
                        )
                    if len(types) < len(pending) and len(types) != 1:
                        raise p.error(
                            "PARSE/012",
                            f"'{decl.name}' binding list has "
                            f"{len(types)} types for {len(pending)} bindings",
                            ti,
                        )
                    if len(types) == 1 and len(pending) > 1:
                        raise p.error(
                            "PARSE/012",
                            f"'{decl.name}' binding list has 1 type for {len(pending)} bindings",
                            ti,
                        )
                    for (name, ni), t in zip(pending, types):
                        args.append(p.define(scope, name, t, ni))
                    pending = []
            if pending:
                raise p.error("PARSE/003", "expected ': type' after the binding", p.i)
            p.i += 1
            if not inits:
                raise p.error("PARSE/003", "empty binding list '()'", start)
            c.groups[field] = tuple(inits)

        return binding_list

    # ------------------------------------------------------------------ regions

    def _region(self, field: str) -> Step:
        decl = self.decl
        rd = decl.region(field)
        if rd is None:
            raise ValueError(f"'{decl.name}' RegionRef names unknown region '{field}'")
        isolated = self.isolated
        derived = rd.derived_from if rd.arg_source == ArgSource.DERIVED else None
        terminator = rd.terminator
        implicit = rd.implicit_terminator
        region_name = rd.name

        def region_step(p: Parser, c: OpState) -> None:
            i = p.i
            toks = p.toks
            if not (i < len(toks) and toks[i] == "{"):
                raise p.expected("'{' opening a region")
            if p.depth >= p.max_depth:  # before anything is built for the region
                raise p.error("PARSE/015", f"regions nested more than {p.max_depth} levels deep", i)
            p.i = i + 1
            p.end_of_line()
            open_at = (p.line_no, i)
            scope = c.scope(field, p)
            args = c.rargs[field]  # type: ignore[index]
            if derived is not None:
                _derive_args(p, c, derived, args, i)
            p.depth += 1
            region = Region([Block(tuple(args))])
            floor = p.push_scope(scope, isolated)
            p.pending_blank = False
            try:
                p.parse_block(region.blocks[0], region, open_at=open_at)
            finally:
                p.pop_scope(floor)
                p.depth -= 1
            if terminator is not None:
                plans = p.plans
                for block in region.blocks:
                    last = block.ops[-1] if block.ops else None
                    lp = plans.get(last.name) if last is not None else None
                    if lp is not None and lp.is_terminator:
                        continue
                    if implicit and terminator in plans:
                        # Located at the closing brace, so diagnostics about it have a place.
                        block.ops.append(Operation(terminator, location_id=p.brace_location()))
                    else:
                        raise p.error(
                            "PARSE/014",
                            f"missing terminator: region "
                            f"'{region_name}' of '{decl.name}' must end with "
                            f"'{terminator}', found "
                            f"{repr(last.name) if last else 'an empty region'}",
                        )
            p.i += 1  # the closing '}'
            c.regions[field] = region

        return region_step


def _derive_args(
    p: Parser, c: OpState, derived: tuple[str, ...], args: list[Value], at: int
) -> None:
    """Give placeholder region args their derived types; create unnamed missing ones."""
    types: list[Type] = []
    for src in derived:
        name = src.lstrip("~")
        vals = c.groups.get(name)
        ts = [v.type for v in vals] if vals is not None else list(c.rtypes.get(name, ()))
        types.extend(ts[:1] if src.startswith("~") else ts)
    for k, v in enumerate(args):
        if v.type is None:
            if k >= len(types):
                raise p.error("PARSE/012", "cannot tell the type of a region argument", at)
            v.type = types[k]
    if not args and types:
        for t in types:
            args.append(p.new_value(None, None, t, at, True))


def _mismatch(p: Parser, field: str, v: Value, t: Type, index: int) -> LoomParseError:
    from loom.format.text.printer import type_text, value_name

    return p.error(
        "PARSE/005",
        f"type mismatch for '{field}': {value_name(v)} has type "
        f"{type_text(v.type)}, but {type_text(t)} is written here",
        index,
    )


def _sets_attr(elems: tuple[FormatElement, ...], name: str) -> bool:
    for e in elems:
        if isinstance(e, (Attr, SymbolRef, TemplateParam, Flags, PredicateList)) and (
            e.field == name
        ):
            return True
        if isinstance(e, ResultTypeList) and e.field == name:
            return True
        if isinstance(e, (Clause, OptionalGroup)) and _sets_attr(e.inner, name):
            return True
    return False


# ---------------------------------------------------------------------- plans


class OpPlan:
    """The compiled parser of one declaration."""

    def __init__(self, decl: OpDef) -> None:
        self.decl = decl
        self.name = decl.name
        compiler = _Compiler(decl)
        self.formats = [compiler.steps(decl.format)]
        self.formats += [compiler.steps(f) for f in decl.legacy_formats]
        self.is_terminator = decl.is_terminator
        sym = decl.symbol_trait
        self.symbol_attr = sym.attr if sym else None
        self.operand_fields = tuple(o.name for o in decl.operands)
        self.segments = needs_segments(decl)
        self.results = tuple((r.name, r.variadic, r.constraint.fixed) for r in decl.results)
        self.region_fields = tuple(r.name for r in decl.regions)
        self.required_regions = tuple(not r.optional for r in decl.regions)
        self.fast, self.fast_source = compile_fast(decl)
        """A generated path for the common, well-formed spellings (see parse_fast)."""
        self.line_re, self.line_fn, self.line_source = compile_line(decl)
        """The canonical spelling of the line after the op name, read by one regex."""

    def parse(self, p: Parser, lhs: list[str] | None, name_index: int) -> Operation:
        """Parse the rest of the op line (after the name) and build the op."""
        start = p.i
        line = p.line_no
        nvalues = len(p.values)
        formats = self.formats
        first_error: LoomParseError | None = None
        for k, steps in enumerate(formats):
            if k:
                del p.values[nvalues:]
                p.i = start
            c = OpState()
            try:
                for s in steps:
                    s(p, c)
                if len(formats) > 1:
                    toks = p.toks
                    if p.i < len(toks) and toks[p.i] != "loc":
                        raise p.expected("end of line")
                break
            except LoomParseError as e:
                if p.line_no != line:
                    raise
                if first_error is None:
                    first_error = e
                if k == len(formats) - 1:
                    raise first_error from None
        return self.build(p, c, lhs, name_index)

    def build(self, p: Parser, c: OpState, lhs: list[str] | None, name_index: int) -> Operation:
        """Create the op from what the steps found (as the builder would)."""
        groups = c.groups
        if c.checks:
            for field, types, i in c.checks:
                vals = groups.get(field, ())
                for v, t in zip(vals, types):
                    if v.type != t:
                        raise _mismatch(p, field, v, t, i)
        location_id = 0
        toks = p.toks
        i = p.i
        if i < len(toks):
            if toks[i] == "loc":
                location_id = p.parse_loc()
            p.end_of_line()
        attrs = c.attrs
        if len(self.operand_fields) == 1:
            operands = groups.get(self.operand_fields[0], ())
        else:
            flat: list[Value] = []
            for f in self.operand_fields:
                g = groups.get(f)
                if g:
                    flat.extend(g)
            operands = tuple(flat)
            if self.segments:
                attrs[SEGMENTS_ATTR] = tuple(len(groups.get(f, ())) for f in self.operand_fields)
        # result types
        rtypes = c.rtypes
        types: tuple[Type, ...] | list[Type]
        if len(self.results) == 1:
            name, variadic, fixed = self.results[0]
            types = rtypes.get(name) or (() if variadic or fixed is None else (fixed,))
            if not types and not variadic:
                raise p.error("PARSE/012", f"'{self.name}' needs a result type", name_index)
        else:
            types = []
            for name, variadic, fixed in self.results:
                ts = rtypes.get(name)
                if ts is None:
                    ts = () if variadic or fixed is None else (fixed,)
                types.extend(ts)
        nres = len(types)
        if lhs is not None:
            if len(lhs) != nres:
                raise p.error(
                    "PARSE/012",
                    f"'{self.name}' defines {nres} result"
                    f"{'' if nres == 1 else 's'} but {len(lhs)} name"
                    f"{' is' if len(lhs) == 1 else 's are'} given",
                    0,
                    name_index,
                )
            if self.symbol_attr is not None:
                raise p.error(
                    "PARSE/003", f"'{self.name}' defines a symbol and takes no result names", 0
                )
            scope = p.scopes[-1]
            results_t = tuple(
                p.new_value(scope, tok, t, 2 * k, False)
                for k, (tok, t) in enumerate(zip(lhs, types))
            )
        elif nres:
            results_t = tuple(p.new_value(None, None, t, 0, False) for t in types)
        else:
            results_t = ()
        regions: tuple[Region, ...] = ()
        if self.region_fields:
            got = c.regions
            out = []
            for f, required in zip(self.region_fields, self.required_regions):
                r = got.get(f)
                if r is None:
                    if required:
                        raise p.error("PARSE/003", f"'{self.name}' is missing its region '{f}'")
                    break
                out.append(r)
            regions = tuple(out)
        return Operation(self.name, operands, results_t, attrs, regions, location_id)


_PLANS: weakref.WeakKeyDictionary[OpRegistry, dict[str, OpPlan]] = weakref.WeakKeyDictionary()


def plan_for(decl: OpDef) -> OpPlan:
    """The parse plan of one declaration (compiled once, kept by the declaration)."""
    return decl.plan(OpPlan)


def plans_for(registry: OpRegistry) -> dict[str, OpPlan]:
    """Parse plans by op name for a registry (compiled once per registry)."""
    plans = _PLANS.get(registry)
    if plans is None:
        plans = {d.name: plan_for(d) for d in registry}
        _PLANS[registry] = plans
    return plans
