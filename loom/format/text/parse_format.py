"""Parse plans: each declaration's format compiled once into a list of small step closures.

A step reads tokens through the :class:`~loom.format.text.parser.Parser` and records what it
found in an :class:`OpState` (operands by field, attributes, result types, regions). The plan
then builds the op exactly as the generated builder would: operands packed in declaration
order (with ``SEGMENTS_ATTR`` when needed), ``static_indices``-style lists with
``DYNAMIC_INDEX``, implicit terminators re-inserted and derived region arguments created.
Each element's steps come from its own ``parse_steps`` (:mod:`loom.format.elements`); this
module holds the primitives they use (attribute values by kind, value and type lists, binding
lists, region closing) and builds the op. No op is named here: everything comes from the
declarations.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from loom.dsl import (
    ArgSource,
    AttrDef,
    AttrKind,
    FormatElement,
    IsolatedFromAbove,
    OpDef,
    RegionDef,
)
from loom.errors import LoomParseError
from loom.format.text.parse_fast import LinePath, compile_line
from loom.format.text.scopes import Scope
from loom.format.text.tokenizer import (
    describe,
    is_digit,
    is_float_spelling,
    parse_float,
    parse_int,
)
from loom.ir import (
    PREDICATE_ARITY,
    Block,
    DictAttr,
    FloatLiteral,
    Operation,
    Predicate,
    Region,
    Type,
    TypedInt,
    Value,
)
from loom.ir.attributes import TYPED_INT_RANGES
from loom.opview import SEGMENTS_ATTR, needs_segments
from loom.registry import OpRegistry

if TYPE_CHECKING:
    from loom.format.text.parser import Parser

Step = Callable[["Parser", "OpState"], None]
Probe = Callable[["Parser"], bool]


class OpState:
    """What the steps of one op found so far."""

    __slots__ = (
        "groups",
        "attrs",
        "rtypes",
        "regions",
        "rscopes",
        "rargs",
        "last_scope",
        "checks",
        "made",
    )

    def __init__(self) -> None:
        self.groups: dict[str, tuple[Value, ...]] = {}
        self.attrs: dict[str, Any] = {}
        self.rtypes: dict[str, tuple[Type, ...]] = {}
        self.regions: dict[str, Region] = {}
        self.rscopes: dict[str, Scope] | None = None
        self.rargs: dict[str, list[Value]] | None = None
        self.last_scope: Scope | None = None
        self.checks: list[tuple[str, tuple[Type, ...], int]] | None = None
        self.made: tuple[Value, ...] | None = None
        """Results a format element already made (types that name their own op's results)."""

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


def _literal(p: Parser) -> Any:
    """A number, bool, static encoding spec (canonical text) or a ``[...]`` list of those."""
    if p.peek() == "[":
        return _bracketed(p, _literal_item)
    return _literal_item(p)


def _literal_item(p: Parser) -> Any:
    tok = p.peek()
    if tok is None or tok[0] != "#":
        return _number(p, AttrKind.NUMBER)
    from loom.ir.encoding_spec import SpecError, canonical_spec

    i = p.i
    p.i = i + 1
    try:
        return canonical_spec(tok)
    except SpecError as e:
        raise p.error(e.code, str(e), i) from None


def _bool(p: Parser) -> bool:
    tok = p.peek()
    if tok not in ("true", "false"):
        raise p.expected("true or false")
    p.i += 1
    return tok == "true"


def _sigil_name(p: Parser, sigil: str, what: str) -> str:
    """Consume a ``<sigil>name`` token and return the name."""
    tok = p.peek()
    if tok is None or tok[0] != sigil:
        raise p.expected(what)
    p.i += 1
    return tok[1:]


def _symbol(p: Parser) -> str:
    return _sigil_name(p, "@", "a symbol ('@name')")


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


def _label(p: Parser) -> str:
    return _sigil_name(p, "^", "a block label ('^name')")


def attr_value(p: Parser, a: AttrDef) -> Any:
    """Parse the value of attribute ``a`` (by its kind)."""
    k = a.kind
    if k == AttrKind.ENUM:
        return _enum_value(p, a)
    if k == AttrKind.STRING:
        return p.string()
    if k in (AttrKind.INT, AttrKind.NUMBER, AttrKind.FLOAT):
        return _number(p, k)
    if k == AttrKind.LITERAL:
        return _literal(p)
    if k in (AttrKind.BOOL, AttrKind.UNIT):
        return _bool(p)
    if k == AttrKind.SYMBOL:
        return _symbol(p)
    if k == AttrKind.BLOCK:
        return _label(p)
    if k == AttrKind.BLOCK_LIST:
        return _bracketed(p, _label)
    if k == AttrKind.FLAGS:
        return _flags_value(p, a)
    if k == AttrKind.I64_ARRAY:
        return _bracketed(p, lambda q: q.integer())
    if k == AttrKind.TYPE_ARRAY:
        return _bracketed(p, lambda q: q.parse_type())
    if k == AttrKind.PREDICATES:
        return _bracketed(p, _predicate)
    if k == AttrKind.NAME:
        return _name(p)
    if k == AttrKind.DICT:
        return dict_value(p)
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
    if k == AttrKind.BLOCK:
        return lambda p: (p.peek() or " ")[0] == "^"
    if k in (AttrKind.BOOL, AttrKind.UNIT):
        return lambda p: p.peek() in ("true", "false")
    if k in (AttrKind.I64_ARRAY, AttrKind.TYPE_ARRAY, AttrKind.PREDICATES, AttrKind.BLOCK_LIST):
        return lambda p: p.peek() == "["
    if k == AttrKind.NAME:
        return lambda p: _is_ident(p.peek()) or (p.peek() or " ")[0] == '"'
    if k == AttrKind.DICT:
        return lambda p: p.peek() == "{"
    if k == AttrKind.LITERAL:
        return lambda p: (
            _is_number(p.peek()) or p.peek() in ("true", "false", "[") or _is_spec(p.peek())
        )
    return lambda p: (
        _is_number(p.peek()) or (k == AttrKind.NUMBER and p.peek() in ("true", "false"))
    )


def _is_spec(tok: str | None) -> bool:
    return tok is not None and tok[0] == "#"


def _is_ident(tok: str | None) -> bool:
    return tok is not None and (tok[0].isalpha() or tok[0] == "_")


def _is_number(tok: str | None) -> bool:
    if tok is None:
        return False
    c = tok[0]
    return is_digit(c) or (c == "-" and tok != "->") or tok in ("inf", "nan")


def _name(p: Parser) -> str:
    """A dotted name written bare (``reference.matmul``) or, as an older spelling, quoted."""
    tok = p.peek()
    if tok is not None and tok[0] == '"':
        return p.string()
    return _ident(p, "a dotted name such as 'reference.matmul'")


MAX_DICT_NESTING = 16
"""Deepest nesting of dictionary attribute values."""


def dict_value(p: Parser, depth: int = 0) -> DictAttr:
    """``{key = value, ...}``: keys are identifiers or strings, values strings, numbers,
    ``true``/``false``, ``[int, ...]`` or nested dictionaries."""
    if depth >= MAX_DICT_NESTING:
        raise p.error("PARSE/015", f"dictionaries nested more than {MAX_DICT_NESTING} deep", p.i)
    p.expect("{")
    items: dict[str, Any] = {}
    while p.peek() != "}":
        if items:
            p.expect(",")
        ki = p.i
        tok = p.peek()
        key = p.string() if tok is not None and tok[0] == '"' else _ident(p, "a dictionary key")
        if key in items:
            raise p.error("PARSE/020", f"duplicate key '{key}' in the dictionary", ki)
        p.expect("=")
        tok = p.peek()
        if tok == "{":
            items[key] = dict_value(p, depth + 1)
        elif tok is not None and tok[0] == '"':
            items[key] = p.string()
        elif tok in ("true", "false"):
            items[key] = _bool(p)
        elif tok == "[":
            items[key] = _bracketed(p, lambda q: q.integer())
        elif (tok == "bytes" or tok in TYPED_INT_RANGES) and p.toks[p.i + 1 : p.i + 2] == ["("]:
            items[key] = _typed_dict_value(p)
        else:
            items[key] = _number(p, AttrKind.NUMBER)
    p.i += 1
    return DictAttr(items)


def _typed_dict_value(p: Parser) -> TypedInt | bytes:
    """``u64(3)`` (an integer of a named width) or ``bytes("00feff")`` (hex digits)."""
    head = p.peek()
    p.i += 2
    vi = p.i
    if head == "bytes":
        text = p.string()
        try:
            value: TypedInt | bytes = bytes.fromhex(text)
        except ValueError:
            raise p.error(
                "PARSE/003", f"bytes(...) takes pairs of hex digits, got {text!r}", vi
            ) from None
    else:
        n = p.integer()
        lo, hi = TYPED_INT_RANGES[head]
        if not lo <= n <= hi:
            raise p.error("PARSE/003", f"{n} does not fit in {head} ({lo}..{hi})", vi)
        value = TypedInt(head, n)
    p.expect(")")
    return value


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


def _bare_name(v: Value) -> str:
    """A value's spelling without ``%`` (its id when unnamed)."""
    return v.name if v.name is not None else str(v.id)


def _derive_args(
    p: Parser,
    c: OpState,
    derived: tuple[str, ...],
    args: list[Value],
    at: int,
    scope: Scope | None = None,
) -> None:
    """Give placeholder region args their derived types; create missing ones (unnamed, or
    named like the args of the region they project when ``scope`` is given)."""
    types: list[Type] = []
    names: list[str] = []
    for src in derived:
        name = src.lstrip("~")
        vals = c.groups.get(name)
        if vals is None and c.rargs and name in c.rargs:
            vals = c.rargs[name]  # a region's args: projected with their names
            names.extend(_bare_name(v) for v in vals)
        ts = [v.type for v in vals] if vals is not None else list(c.rtypes.get(name, ()))
        types.extend(ts[:1] if src.startswith("~") else ts)
    if names and not args and scope is not None:
        for t, n in zip(types, names, strict=True):
            args.append(p.new_value(scope, "%" + n, t, at, True))
        return
    for k, v in enumerate(args):
        if v.type is None:
            if k >= len(types):
                raise p.error("PARSE/012", "cannot tell the type of a region argument", at)
            v.type = types[k]
    if not args and types:
        for t in types:
            args.append(p.new_value(None, None, t, at, True))


def _adopt(p: Parser, scope: Scope, ph: Value | None, v: Value, tok: str) -> Value:
    """The result ``v`` as the placeholder ``ph`` that a type of its own op already names."""
    if ph is None:
        return v
    ph.id, ph.type, ph._name = v.id, v.type, v._name  # the same name, even if pooled
    p.values[v.id] = ph
    if scope.names.get(tok) is v:
        scope.names[tok] = ph
    return ph


def _mismatch(p: Parser, field: str, v: Value, t: Type, index: int) -> LoomParseError:
    from loom.format.text.printer import type_text, value_name

    return p.error(
        "PARSE/005",
        f"type mismatch for '{field}': {value_name(v)} has type "
        f"{type_text(v.type)}, but {type_text(t)} is written here",
        index,
    )


# ---------------------------------------------------------------------- step factories


class _Compiler:
    """What a format element's ``parse_steps`` sees: the declaration and the parser's
    primitives for attribute values, value and type lists and regions."""

    attr_value = staticmethod(attr_value)
    attr_probe = staticmethod(_attr_probe)
    flags_value = staticmethod(_flags_value)
    value_list = staticmethod(_value_list)
    type_list = staticmethod(_type_list)
    symbol = staticmethod(_symbol)
    mismatch = staticmethod(_mismatch)
    derive_args = staticmethod(_derive_args)

    def __init__(self, decl: OpDef) -> None:
        self.decl = decl
        self.isolated = decl.trait(IsolatedFromAbove) is not None

    def steps(self, elems: tuple[FormatElement, ...]) -> list[Step]:
        """The steps of a list of elements."""
        return [s for e in elems for s in e.parse_steps(self)]

    def distributor(self, fields: tuple[str, ...]) -> Callable[[Parser, OpState, list, int], None]:
        """Assigns a parsed value list to operand ``fields``."""
        return _distributor(self.decl, fields)

    @staticmethod
    def predicates(p: Parser) -> tuple[Predicate, ...]:
        """``[kind(args), ...]``."""
        return _bracketed(p, _predicate)

    def is_unit(self, name: str) -> bool:
        """Whether ``name`` is a unit attribute (set by its optional group's presence)."""
        a = self.decl.attr(name)
        return a is not None and a.kind == AttrKind.UNIT

    def derived_from(self, rd: RegionDef) -> tuple[str, ...] | None:
        """The fields a region's entry arguments take their types from (None: written)."""
        return rd.derived_from if rd.arg_source == ArgSource.DERIVED else None

    # ------------------------------------------------------------------ probes

    @staticmethod
    def is_token(text: str) -> Probe:
        """A probe: the current token is ``text``."""

        def is_text(p: Parser) -> bool:
            i, toks = p.i, p.toks
            return i < len(toks) and toks[i] == text

        return is_text

    @staticmethod
    def starts_with(c: str) -> Probe:
        """A probe: the current token starts with ``c``."""

        def starts(p: Parser) -> bool:
            i, toks = p.i, p.toks
            return i < len(toks) and toks[i][0] == c

        return starts

    @staticmethod
    def type_start() -> Probe:
        """A probe: the current token can begin a type."""
        return lambda p: p.is_type_start()

    def probe(self, elems: tuple[FormatElement, ...]) -> Probe:
        """Whether an optional group of ``elems`` is present, from its first token."""
        for e in elems:
            if e.transparent:
                continue
            got = e.probe(self)
            if got is not None:
                return got
            break
        raise ValueError(
            f"'{self.decl.name}': cannot tell from its first token whether an optional "
            f"group {elems!r} is present"
        )

    def attr_dict_step(self) -> Step:
        """The step reading ``{k = v, ...}`` (when the next tokens start one)."""
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

    def bindings(self, p: Parser, scope: Scope, args: list[Value]) -> tuple[Value, ...]:
        """``(%arg = %init : T, ...)``: defines ``args`` in ``scope``, returns the inits."""
        decl = self.decl
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
        return tuple(inits)

    def region_closer(self, rd: RegionDef) -> Callable[[Parser, Region], None]:
        """Checks (or completes, with an implicit terminator) each block of a parsed region."""
        decl = self.decl
        terminator = rd.terminator
        implicit = rd.implicit_terminator
        region_name = rd.name

        def close(p: Parser, region: Region) -> None:
            if terminator is not None:
                plans = p.plans
                for block in region.blocks:
                    last = block.ops[-1] if block.ops else None
                    lp = plans.get(last.name) if last is not None else None
                    if lp is not None and lp.is_terminator:
                        continue
                    if implicit and (plans.get(terminator) or plans.find(terminator)):
                        # Located at the closing brace, so diagnostics about it have a place.
                        at = p.brace_location()
                        block.ops.append(Operation(terminator, (), (), None, (), at))
                    else:
                        raise p.error(
                            "PARSE/014",
                            f"missing terminator: region "
                            f"'{region_name}' of '{decl.name}' must end with "
                            f"'{terminator}', found "
                            f"{repr(last.name) if last else 'an empty region'}",
                        )

        return close


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
        self.required_regions = tuple(not (r.optional or r.variadic) for r in decl.regions)
        self.line: LinePath | None = compile_line(decl)
        """The compiled path for the canonical line (see parse_fast), or None."""
        line = self.line
        self.line_re = line.regex if line is not None else None
        """The canonical spelling of the line after the op name (None: general plan only)."""
        self.line_fn = line.fn if line is not None else None
        self.line_source = line.source if line is not None else ""
        self.line_nres = line.nres if line is not None else 0
        tail = line.tail_start if line is not None else None
        self.head_region: tuple[str, Any] | None = None
        """For a region op whose first line the line path reads, up to its region's ``{``:
        that region's field and reader (see :meth:`begin_rest`)."""
        self.tail: list[Step] = []
        """The steps of the format after that region."""
        if tail is not None:
            element = decl.format[tail]
            self.head_region = (element.field, element.reader(compiler))
            self.tail = compiler.steps(decl.format[tail + 1 :])

    def parse(self, p: Parser, lhs: list[str] | None, name_index: int) -> Operation:
        """Parse the rest of the op line (after the name) and build the op."""
        start = p.i
        line = p.line_no
        nvalues = len(p.values)
        formats = self.formats
        saved = p.siblings
        if saved is None and not lhs:  # nothing to set, nothing to restore
            return self._parse(p, lhs, name_index, start, line, nvalues, formats, None)
        p.siblings = (p.line_no, dict.fromkeys(lhs)) if lhs else None
        try:
            return self._parse(p, lhs, name_index, start, line, nvalues, formats, None)
        finally:
            p.siblings = saved

    def _parse(
        self,
        p: Parser,
        lhs: list[str] | None,
        name_index: int,
        start: int,
        line: int,
        nvalues: int,
        formats: Any,
        first_error: LoomParseError | None,
    ) -> Operation:
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

    def begin_rest(self, got: tuple) -> OpState:
        """What the line path read from a region op's first line (``got``: operands by
        field, the result types written, attribute values), as the steps would record it.
        The caller reads the region (``head_region``), then calls :meth:`finish_rest`."""
        line = self.line
        groups, rtypes, attrs = got
        c = OpState()
        c.groups = dict(zip(self.operand_fields, groups))
        if rtypes:
            c.rtypes = {f: (t,) for f, t in zip(line.rtype_fields, rtypes)}  # type: ignore[union-attr]
        if attrs is not None:
            names = line.attr_names  # type: ignore[union-attr]
            c.attrs = {k: v for k, v in zip(names, attrs) if v is not None}
        return c

    def finish_rest(self, p: Parser, c: OpState, name: str | None) -> Operation:
        """Read what follows the region (the current token is after its ``}``) and build the
        op as :meth:`parse` would; ``name`` is the result name its first line gives."""
        for step in self.tail:
            step(p, c)
        return self.build(p, c, None if name is None else [name], 0 if name is None else 2)

    def result_types(self, p: Parser, c: OpState, name_index: int) -> tuple[Type, ...] | list[Type]:
        """The result types the steps read, with declared fixed types filled in."""
        rtypes = c.rtypes
        if len(self.results) == 1:
            name, variadic, fixed = self.results[0]
            types = rtypes.get(name) or (() if variadic or fixed is None else (fixed,))
            if not types and not variadic:
                raise p.error("PARSE/012", f"'{self.name}' needs a result type", name_index)
            return types
        out: list[Type] = []
        for name, variadic, fixed in self.results:
            ts = rtypes.get(name)
            if ts is None:
                ts = () if variadic or fixed is None else (fixed,)
            out.extend(ts)
        return out

    def regions_of(self, p: Parser, c: OpState) -> tuple[Region, ...]:
        """The op's regions in declaration order, up to the first absent optional one."""
        got = c.regions
        out = []
        for f, required in zip(self.region_fields, self.required_regions):
            r = got.get(f)
            if type(r) is tuple:  # the regions of a variadic field
                out.extend(r)
                continue
            if r is None and c.rargs and f in c.rargs:
                # a signature without a body (declarations): the arguments' block alone
                r = Region([Block(tuple(c.rargs[f]))])
            if r is None:
                if required:
                    raise p.error("PARSE/003", f"'{self.name}' is missing its region '{f}'")
                break
            out.append(r)
        return tuple(out)

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
        types = self.result_types(p, c, name_index)
        nres = len(types)
        if c.made is not None:
            results_t = c.made
        elif lhs is not None:
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
            sib = p.siblings
            if sib is not None and any(ph is not None for ph in sib[1].values()):
                results_t = tuple(
                    _adopt(p, scope, sib[1].get(tok), v, tok) for tok, v in zip(lhs, results_t)
                )
        elif nres:
            results_t = tuple(p.new_value(None, None, t, 0, False) for t in types)
        else:
            results_t = ()
        regions = self.regions_of(p, c) if self.region_fields else ()
        return Operation(self.name, operands, results_t, attrs, regions, location_id)


def plan_for(decl: OpDef) -> OpPlan:
    """The parse plan of one declaration (compiled once, kept by the declaration)."""
    return decl.plan(OpPlan)


class ParsePlans(dict):
    """Parse plans by op name for one registry, each compiled when its op is first read.

    A dict (the parser's hot loop reads it with ``get``); :meth:`find` compiles a missing
    plan. A text then compiles only the ops it uses.
    """

    __slots__ = ("registry",)

    def __init__(self, registry: OpRegistry) -> None:
        super().__init__()
        self.registry = registry

    def find(self, name: str) -> OpPlan | None:
        """The plan of op ``name`` (compiled now if needed), or None when it is not declared."""
        plan = self.get(name)
        if plan is None:
            decl = self.registry.get(name)
            if decl is None:
                return None
            plan = self[name] = plan_for(decl)
        return plan

    def __missing__(self, name: str) -> OpPlan:
        plan = self.find(name)
        if plan is None:
            raise KeyError(name)
        return plan


def plans_for(registry: OpRegistry) -> ParsePlans:
    """The parse plans of a registry (one table per registry, kept by the registry)."""
    return registry.plan(ParsePlans)
