"""Assembly-format elements: each class owns its text syntax in every direction.

An op's ``format`` is a short list of these (``Ref("lhs")``, ``Kw(":")``, ``TypeOf("result")``,
...). Each element knows, side by side:

* :meth:`~FormatElement.print_text`: how the generic printer writes it;
* :meth:`~FormatElement.parse_steps`: the steps the generic parser runs for it;
* :meth:`~FormatElement.probe`: how an optional group tells from one token that it is present;
* :meth:`~FormatElement.print_code` and :meth:`~FormatElement.line_code`: the fragments it
  contributes to the generated print path and to the generated (whole-line) parse path, or a
  refusal (the declaration then takes the generic path);
* :meth:`~FormatElement.attrs_written`: the attributes it writes outside the dictionary;
* :meth:`~FormatElement.keywords`: the words it adds to the highlighter's keyword class.

The methods receive the consumer's context object (the generic printer's per-op context, the
parse-plan compiler, or a code generator) and use only its primitives, so this module imports
nothing from the text layer and :mod:`loom.dsl` re-exports the classes unchanged: declarations
keep writing ``from loom.dsl import Ref``. Attribute *kinds* (how an enum or an integer value is
spelled) stay with the contexts; elements decide structure. Adding syntax means one class here
and its tests.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, ClassVar

from loom.ir import DYNAMIC_INDEX, INDEX, Block, Region, Value
from loom.ir.types import is_encoding_type
from loom.ir.values import name_expr

Ctx = Any
"""A consumer's context (see the module docstring); typed loosely to keep this module a leaf."""


@dataclass(frozen=True)
class FormatElement:
    """Base of assembly-format elements."""

    role: ClassVar[str] = "punctuation"
    """Highlighting role of the element's text (``keyword``, ``value``, ``type``, ...)."""
    transparent: ClassVar[bool] = False
    """Optional-group probes look past this element to the next one."""

    @property
    def children(self) -> tuple[FormatElement, ...]:
        """Nested elements (groups and clauses)."""
        return ()

    def print_text(self, c: Ctx) -> None:
        """Append this element's tokens for the op of printer context ``c``."""
        raise c.error(f"unsupported format element {self!r}")

    def parse_steps(self, pc: Ctx) -> list[Callable[..., None]]:
        """The generic parser's steps ``step(parser, state)`` for this element."""
        raise ValueError(f"'{pc.decl.name}': the parser does not know format element {self!r}")

    def probe(self, pc: Ctx) -> Callable[..., bool] | None:
        """A test of the current token telling whether this element starts here (or None)."""
        return None

    def print_code(self, g: Ctx) -> None:
        """Emit this element's part of the generated print function (or refuse)."""
        g.unsupported()

    def line_code(self, g: Ctx) -> None:
        """Emit this element's regex piece and code for the whole-line path (or refuse)."""
        g.unsupported()

    def build_problem(
        self, groups: dict[str, Any], attrs: dict[str, Any], regions: dict[str, Any]
    ) -> str | None:
        """Why fields given to the builder cannot be spelled by this element (None: they can):
        operands by field in ``groups``, attributes by name, regions by field."""
        return None

    def attrs_written(self) -> Iterator[str]:
        """Attribute fields this element writes outside the attribute dictionary."""
        for e in self.children:
            yield from e.attrs_written()

    def keywords(self) -> Iterator[str]:
        """Words this element spells (the highlighter's keywords)."""
        for e in self.children:
            yield from e.keywords()


def _first(fields: tuple[str, ...]) -> str:
    return fields[0] if fields else ""


# --------------------------------------------------------------------------- values


@dataclass(frozen=True)
class Ref(FormatElement):
    """One SSA operand ``%x``."""

    field: str
    role: ClassVar[str] = "value"

    def print_text(self, c: Ctx) -> None:
        c.tokens.append(c.name(c.one(self.field)))

    def parse_steps(self, pc: Ctx) -> list[Callable[..., None]]:
        f = self.field
        if pc.decl.operand(f) is None:
            raise ValueError(f"'{pc.decl.name}' Ref names unknown operand '{f}'")

        def ref(p: Any, s: Any) -> None:
            s.groups[f] = (p.use(),)

        return [ref]

    def probe(self, pc: Ctx) -> Callable[..., bool]:
        return pc.starts_with("%")

    def print_code(self, g: Ctx) -> None:
        v = g.one(self.field)
        g.token(lit="%", expr=name_expr(v))

    def line_code(self, g: Ctx) -> None:
        var, variadic = g.operand(self.field)
        if variadic:
            g.unsupported()
        g.ref(var)


@dataclass(frozen=True)
class Refs(FormatElement):
    """Comma-separated operands of one or more fields (variadic allowed)."""

    fields: tuple[str, ...]
    role: ClassVar[str] = "value"

    def __init__(self, *fields: str) -> None:
        object.__setattr__(self, "fields", fields)

    bracket: ClassVar[bool] = False

    def print_text(self, c: Ctx) -> None:
        if self.bracket:
            c.tokens += (c.GLUE, "[")
        c.comma([c.name(v) for f in self.fields for v in c.values(f)])
        if self.bracket:
            c.tokens.append("]")

    def parse_steps(self, pc: Ctx) -> list[Callable[..., None]]:
        dist = pc.distributor(self.fields)
        value_list = pc.value_list
        bracket = self.bracket

        def refs(p: Any, s: Any) -> None:
            if bracket:
                p.expect("[")
            start = p.i
            vals = value_list(p)
            if bracket:
                p.expect("]")
            dist(p, s, vals, start)

        return [refs]

    def probe(self, pc: Ctx) -> Callable[..., bool]:
        return pc.is_token("[") if self.bracket else pc.starts_with("%")

    def print_code(self, g: Ctx) -> None:
        if self.bracket:
            g.glue()
        g.name_list(self.fields, bracket=self.bracket)

    def line_code(self, g: Ctx) -> None:
        if self.bracket:
            g.state = "n"
            g.piece(r"\[", nsa=True)
        for n, f in enumerate(self.fields):
            var, variadic = g.operand(f)
            if variadic:
                g.unsupported()
            if n:
                g.piece(",", nsb=True)
            g.ref(var)
        if self.bracket:
            g.piece(r"\]", nsb=True)


@dataclass(frozen=True)
class TypedRefs(FormatElement):
    """``%a: T, %b: U``: the operands of field ``field``, each followed by its type. The
    grouped spelling ``%a, %b : T, U`` is read too (a type list after a run of values types
    that run)."""

    field: str
    role: ClassVar[str] = "value"

    def print_text(self, c: Ctx) -> None:
        c.comma([f"{c.name(v)}: {c.type(v.type)}" for v in c.values(self.field)])

    def parse_steps(self, pc: Ctx) -> list[Callable[..., None]]:
        field, decl = self.field, pc.decl
        if decl.operand(field) is None:
            raise ValueError(f"'{decl.name}' TypedRefs names unknown operand '{field}'")
        type_list, mismatch = pc.type_list, pc.mismatch

        def typed_refs(p: Any, s: Any) -> None:
            vals: list[Value] = []
            untyped: list[tuple[Value, int]] = []
            while True:
                i = p.i
                untyped.append((p.use(), i))
                vals.append(untyped[-1][0])
                if p.peek() == ":":
                    p.i += 1
                    ti = p.i
                    types = type_list(p)
                    if len(types) != len(untyped):
                        raise p.error(
                            "PARSE/012",
                            f"'{decl.name}' has {len(types)} types for {len(untyped)} values",
                            ti,
                        )
                    for (v, vi), t in zip(untyped, types):
                        if v.type is not t and v.type != t:
                            raise mismatch(p, field, v, t, vi)
                    untyped = []
                if p.peek() != ",":
                    break
                p.i += 1
            if untyped:
                raise p.expected("':' and the type of each value")
            s.groups[field] = tuple(vals)

        return [typed_refs]

    def probe(self, pc: Ctx) -> Callable[..., bool]:
        return pc.starts_with("%")

    def print_code(self, g: Ctx) -> None:
        g.token(expr=f"', '.join([_name(x) + ': ' + tt(x.type) for x in {g.seq((self.field,))}])")


@dataclass(frozen=True, init=False)
class Subscript(Refs):
    """``[%a, %b]`` glued to the previous token."""

    bracket: ClassVar[bool] = True


@dataclass(frozen=True)
class IndexList(FormatElement):
    """``[0, %i, 4]`` glued: static ints from attr ``static`` mixed with operands ``dynamic``.

    ``glued=False`` puts a space before ``[``; ``signed=True`` reads negative static entries
    (the verifier judges them) instead of refusing them."""

    dynamic: str
    static: str
    signed: bool = False
    glued: bool = True
    role: ClassVar[str] = "value"

    def attrs_written(self) -> Iterator[str]:
        yield self.static

    def print_text(self, c: Ctx) -> None:
        if self.glued:
            c.tokens.append(c.GLUE)
        c.tokens.append("[")
        c.comma(c.index_entries(c.values(self.dynamic), c.op.attributes.get(self.static)))
        c.tokens.append("]")

    def parse_steps(self, pc: Ctx) -> list[Callable[..., None]]:
        dyn, static, low = self.dynamic, self.static, -(2**63) if self.signed else 0

        def index_list(p: Any, s: Any) -> None:
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
                    if not low <= v < 2**63 or v == DYNAMIC_INDEX:
                        raise p.error(
                            "PARSE/009",
                            f"static index {v} must be a "
                            + (
                                "64-bit integer above -2^63"
                                if low
                                else "non-negative 64-bit integer"
                            ),
                            i,
                        )
                    entries.append(v)
                    any_static = True
            p.i += 1
            s.groups[dyn] = tuple(vals)
            if any_static:
                s.attrs[static] = tuple(entries)

        return [index_list]

    def probe(self, pc: Ctx) -> Callable[..., bool]:
        return pc.is_token("[")

    def print_code(self, g: Ctx) -> None:
        dyn = g.seq((self.dynamic,))
        if self.glued:
            g.glue()
        g.token(expr=f"_index_text({dyn}, a.get({self.static!r}))")

    def line_code(self, g: Ctx) -> None:
        var, variadic = g.operand(self.dynamic)
        if not variadic or not self.glued:
            g.unsupported()
        g.state = "n"
        text = g.capture(rf"\[(?:{g.NAME}(?:, {g.NAME})*)?\]")
        g.emit(f"{var} = []")
        g.emit(f"if len({text}) > 2:")
        g.emit(f"    for name in {text}[1:-1].split(', '):")
        g.lookup("v", "name", 3)
        g.emit(f"        {var}.append(v)")


@dataclass(frozen=True)
class AlignedRefs(FormatElement):
    """``[align(16) %a, align(256) %b]``: the values of variadic operand ``field``, each with
    its entry of the integer-array attribute ``attr``; with ``results``, a variadic result
    field of one value of its fixed type per entry (those types are not written)."""

    field: str
    attr: str
    results: str | None = None
    role: ClassVar[str] = "value"
    word: ClassVar[str] = "align"

    def attrs_written(self) -> Iterator[str]:
        yield self.attr

    def keywords(self) -> Iterator[str]:
        yield self.word

    def print_text(self, c: Ctx) -> None:
        vals = c.values(self.field)
        aligns = c.op.attributes.get(self.attr) or ()
        if len(aligns) != len(vals):
            raise c.error(
                f"'{c.decl.name}' has {len(aligns)} '{self.attr}' entries for "
                f"{len(vals)} '{self.field}' values"
            )
        entries = ", ".join(f"{self.word}({a}) {c.name(v)}" for a, v in zip(aligns, vals))
        c.tokens.append(f"[{entries}]")

    def parse_steps(self, pc: Ctx) -> list[Callable[..., None]]:
        decl = pc.decl
        o = decl.operand(self.field)
        if o is None or not o.variadic or decl.attr(self.attr) is None:
            raise ValueError(
                f"'{decl.name}' AlignedRefs needs variadic operand '{self.field}' and "
                f"attribute '{self.attr}'"
            )
        fixed = None
        if self.results is not None:
            r = decl.result(self.results)
            if r is None or not r.variadic or r.constraint.fixed is None:
                raise ValueError(
                    f"'{decl.name}' AlignedRefs results '{self.results}' must be a variadic "
                    "result of one fixed type"
                )
            fixed = r.constraint.fixed
        field, attr, results, word = self.field, self.attr, self.results, self.word

        def aligned_refs(p: Any, s: Any) -> None:
            p.expect("[")
            vals: list[Value] = []
            aligns: list[int] = []
            while p.peek() != "]":
                if vals:
                    p.expect(",")
                i, toks = p.i, p.toks
                if not (i + 1 < len(toks) and toks[i] == word and toks[i + 1] == "("):
                    raise p.expected(f"'{word}(' starting an entry ('{word}(N) %value')")
                p.i = i + 2
                at = p.i
                n = p.integer()
                if not -(2**63) <= n < 2**63:
                    raise p.error("PARSE/009", f"alignment {n} does not fit in 64 bits", at)
                p.expect(")")
                aligns.append(n)
                vals.append(p.use())
            p.i += 1
            s.groups[field] = tuple(vals)
            s.attrs[attr] = tuple(aligns)
            if results is not None:
                s.rtypes[results] = (fixed,) * len(vals)

        return [aligned_refs]

    def probe(self, pc: Ctx) -> Callable[..., bool]:
        return pc.is_token("[")

    def print_code(self, g: Ctx) -> None:
        vals, aligns = g.tmp(), g.tmp()
        g.flush()
        g.emit(f"{vals} = {g.seq((self.field,))}")
        g.emit(f"{aligns} = a.get({self.attr!r}) or ()")
        g.emit(f"if len({aligns}) != len({vals}):")
        g.emit("    raise Fallback")
        entry = f"'{self.word}(' + str(x) + ') ' + _name(y)"
        g.token(lit="[", expr=f"', '.join([{entry} for x, y in zip({aligns}, {vals})])")
        g.pending.append("]")
        g.state = "s"


# --------------------------------------------------------------------------- types


@dataclass(frozen=True)
class TypeOf(FormatElement):
    """The type of a single operand or result field."""

    field: str
    role: ClassVar[str] = "type"

    def print_text(self, c: Ctx) -> None:
        c.tokens.append(c.type(c.one(self.field).type))

    def parse_steps(self, pc: Ctx) -> list[Callable[..., None]]:
        field = self.field
        decl = pc.decl
        if decl.result(field) is not None:

            def result_type(p: Any, s: Any) -> None:
                s.rtypes[field] = (p.parse_type(),)

            return [result_type]
        if decl.operand(field) is None:
            raise ValueError(f"'{decl.name}' TypeOf names unknown field '{field}'")
        mismatch = pc.mismatch

        def operand_type(p: Any, s: Any) -> None:
            i = p.i
            t = p.parse_type()
            vals = s.groups.get(field)
            if vals is None:
                if s.checks is None:
                    s.checks = []
                s.checks.append((field, (t,), i))
            elif vals and vals[0].type is not t and vals[0].type != t:
                raise mismatch(p, field, vals[0], t, i)

        return [operand_type]

    def probe(self, pc: Ctx) -> Callable[..., bool]:
        return pc.type_start()

    def print_code(self, g: Ctx) -> None:
        v = g.one(self.field)
        g.token(expr=f"tg(id({v}.type)) or tt({v}.type)")

    def line_code(self, g: Ctx) -> None:
        g.line_type_of(self.field)


@dataclass(frozen=True)
class TypesOf(FormatElement):
    """Comma-separated types of the values of one or more fields."""

    fields: tuple[str, ...]
    role: ClassVar[str] = "type"

    def __init__(self, *fields: str) -> None:
        object.__setattr__(self, "fields", fields)

    def print_text(self, c: Ctx) -> None:
        c.comma([c.type(v.type) for f in self.fields for v in c.values(f)])

    def parse_steps(self, pc: Ctx) -> list[Callable[..., None]]:
        decl = pc.decl
        spec = []
        for f in self.fields:
            if decl.operand(f) is not None:
                spec.append((f, "operand", False))
            elif decl.result(f) is not None:
                spec.append((f, "result", decl.result(f).variadic))
            else:
                raise ValueError(f"'{decl.name}' TypesOf names unknown field '{f}'")
        type_list, mismatch = pc.type_list, pc.mismatch

        def types_of(p: Any, s: Any) -> None:
            start = p.i
            want, known = _types_wanted(spec, s)
            if (known and want == 0) or (not known and not p.is_type_start()):
                types: list[Any] = []
            else:
                types = type_list(p)
            if known and len(types) != want:
                raise p.error(
                    "PARSE/012",
                    f"'{decl.name}' expects {want} types after ':', found {len(types)}",
                    start,
                )
            pos = 0
            for n_spec, (f, kind, variadic) in enumerate(spec):
                if kind == "operand":
                    vals = s.groups.get(f, ())
                    for k, v in enumerate(vals):
                        t = types[pos + k]
                        if v.type is not t and v.type != t:
                            raise mismatch(p, f, v, t, start + 2 * (pos + k))
                    pos += len(vals)
                    continue
                n = 1
                if variadic:
                    later = sum(
                        len(s.groups.get(g, ())) if k2 == "operand" else 1
                        for g, k2, _ in spec[n_spec + 1 :]
                    )
                    n = max(len(types) - pos - later, 0)
                s.rtypes[f] = tuple(types[pos : pos + n])
                pos += n

        return [types_of]

    def probe(self, pc: Ctx) -> Callable[..., bool]:
        return pc.type_start()

    def print_code(self, g: Ctx) -> None:
        if not self.fields:
            return
        if g.static_count(self.fields):
            text = ", ".join(
                "{tg(id(" + v + ".type)) or tt(" + v + ".type)}"
                for v in (g.values(f)[1] for f in self.fields)
            )
            g.sep(False)
            g.pending.append(text)
            g.state = "s"
        else:
            var = g.tmp()
            g.flush()
            g.emit(f"{var} = {g.seq(self.fields)}")
            g.branch(var, lambda: g.token(expr=f"', '.join([tt(x.type) for x in {var}])"))

    def line_code(self, g: Ctx) -> None:
        for n, f in enumerate(self.fields):
            if n:
                g.piece(",", nsb=True)
            g.line_type_of(f)


def _types_wanted(spec: list[tuple[str, str, bool]], s: Any) -> tuple[int, bool]:
    """How many types a ``TypesOf`` list must hold, and whether that count is known."""
    want = 0
    known = True
    for f, kind, variadic in spec:
        if kind == "operand":
            want += len(s.groups.get(f, ()))
        elif variadic:
            known = False
        else:
            want += 1
    return want, known


@dataclass(frozen=True)
class ResultTypeList(FormatElement):
    """``(T, U)`` result types (parenthesised unless ``parens`` is False); never glued."""

    field: str
    parens: bool = True
    role: ClassVar[str] = "type"

    def attrs_written(self) -> Iterator[str]:
        yield self.field

    def print_text(self, c: Ctx) -> None:
        if c.decl.attr(self.field) is not None:
            types = list(c.op.attributes.get(self.field, ()))
        else:
            types = [v.type for v in c.values(self.field)]
        text = ", ".join(c.type(x) for x in types)
        c.tokens.append(f"({text})" if self.parens else text)

    def parse_steps(self, pc: Ctx) -> list[Callable[..., None]]:
        field, parens, isolated = self.field, self.parens, pc.isolated
        is_attr = pc.decl.attr(field) is not None
        type_list = pc.type_list

        def read(p: Any) -> list[Any]:
            if parens:
                p.expect("(")
                types = [] if p.peek() == ")" else type_list(p)
                p.expect(")")
                return types
            # none at all reads as an empty list (the verifier may require some)
            return type_list(p) if p.is_type_start() else []

        def result_types(p: Any, s: Any) -> None:
            # A signature's result types may name its arguments (``-> (tensor<[%n]xf32>)``).
            scope = s.last_scope if is_attr else None
            if scope is None:
                types = read(p)
            else:
                floor = p.push_scope(scope, isolated)
                try:
                    types = read(p)
                finally:
                    p.pop_scope(floor)
            (s.attrs if is_attr else s.rtypes)[field] = tuple(types)

        return [result_types]

    def probe(self, pc: Ctx) -> Callable[..., bool]:
        return pc.is_token("(") if self.parens else pc.type_start()

    def print_code(self, g: Ctx) -> None:
        if g.decl.attr(self.field) is not None:
            g.unsupported()
        text = f"', '.join([tt(x.type) for x in {g.seq((self.field,))}])"
        if self.parens:
            g.token(lit="(", expr=text)
            g.pending.append(")")
            g.state = "s"
        else:
            g.token(expr=text)


def named_values(t: Any) -> list[Value]:
    """The values a type names (dynamic extents, then an SSA layout), first use first, each
    once: a declaration's local names, or the co-results that ``CoResultType`` spells."""
    out: list[Value] = []
    for d in getattr(t, "dims", ()):
        v = getattr(d, "value", None)
        if v is not None and all(v is not w for w in out):
            out.append(v)
    enc = getattr(t, "encoding", None)
    if isinstance(enc, Value) and all(enc is not w for w in out):
        out.append(enc)
    return out


_LOCAL_NAME = r"%[A-Za-z0-9_$-]+"


def _layout_name(tok: str) -> str:
    """The SSA layout (encoding) name a shaped type token spells after its comma, or ''."""
    if "," not in tok or not tok.endswith(">"):
        return ""
    name = tok[:-1].rsplit(",", 1)[1].strip()
    return name if name.startswith("%") else ""


def _layout_type(p: Any, tok: str, name: str, at: int) -> Any:
    """The type of a name in a type's layout position: ``encoding<layout>`` for a view (the
    encoding types, when declared), else a clear error."""
    spelled = "encoding<layout>" if tok.startswith("view<") else "encoding"
    t = p.type_of_token(spelled)
    if t is None:
        raise p.error(
            "PARSE/004",
            f"the layout name '{name}' needs the {spelled} type, which is not declared here",
            at,
        )
    return t


@dataclass(frozen=True)
class LocalType(FormatElement):
    """A declared type (the one entry of type-array attribute ``field``) whose ``%names`` are
    local to the declaration: ``tile<[%m]x[%m]xf32>``. Each name is an entry argument of region
    ``region`` (an ``index`` for an extent), created when the type is read; ``%value: T`` names
    the declared value itself (the region's last argument) for the predicates that follow."""

    field: str
    region: str
    role: ClassVar[str] = "type"

    def attrs_written(self) -> Iterator[str]:
        yield self.field

    def print_text(self, c: Ctx) -> None:
        types = c.op.attributes.get(self.field) or ()
        if len(types) != 1:
            raise c.error(f"'{c.decl.name}' needs exactly one type in '{self.field}'")
        t = types[0]
        args = c.region_args(self.region)
        named = named_values(t)
        if args and all(args[-1] is not v for v in named):
            c.tokens.append(c.name(args[-1]) + ":")
        c.tokens.append(c.type(t))

    def parse_steps(self, pc: Ctx) -> list[Callable[..., None]]:
        import re

        field, region = self.field, self.region
        names_in = re.compile(_LOCAL_NAME).findall
        index_type = INDEX

        def local_type(p: Any, s: Any) -> None:
            toks = p.toks
            i = p.i
            own = None
            if i + 1 < len(toks) and toks[i][0] == "%" and toks[i + 1] == ":":
                own = (toks[i], i)
                p.i = i + 2
            i = p.i
            tok = p.peek() or ""
            if own is None and "%" not in tok:
                s.attrs[field] = (p.parse_type(),)  # no local names: no region either
                return
            scope = s.scope(region, p)
            args = s.rargs[region]
            layout = _layout_name(tok)
            for name in names_in(tok):
                if name in scope.names:
                    continue
                t = index_type if name != layout else _layout_type(p, tok, name, i)
                args.append(p.define(scope, name, t, i))
            floor = p.push_scope(scope, False)
            try:
                t = p.parse_type()
                if own is not None:
                    args.append(p.define(scope, own[0], t, own[1]))
            finally:
                p.pop_scope(floor)
            s.attrs[field] = (t,)

        return [local_type]

    def probe(self, pc: Ctx) -> Callable[..., bool]:
        return pc.type_start()

    def print_code(self, g: Ctx) -> None:
        args = g.region_args(self.region)
        t, own = g.tmp(), g.tmp()
        g.flush()
        g.emit(f"{t} = a.get({self.field!r}) or ()")
        g.emit(f"if len({t}) != 1:")
        g.emit("    raise Fallback")
        g.emit(f"{t} = {t}[0]")
        g.emit(f"{own} = {args}[-1] if {args} else None")
        g.emit(
            f"if {own} is not None and (getattr({t}, 'encoding', None) is {own} or any("
            f"getattr(d, 'value', None) is {own} for d in getattr({t}, 'dims', ()))):"
        )
        g.emit(f"    {own} = None")
        g.branch(f"{own} is not None", lambda: g.token(expr=f"_name({own}) + ':'"))
        g.token(expr=f"tt({t})")


@dataclass(frozen=True)
class CoResultType(FormatElement):
    """The type of the first value of variadic result field ``field``, which names the other
    results (its *co-results*): ``%t, %m = global.load @w : view<[%m]xf32>``. The results are
    made while the type is read, so the type can refer to them."""

    field: str
    role: ClassVar[str] = "type"

    def print_text(self, c: Ctx) -> None:
        vals = c.values(self.field)
        if not vals:
            raise c.error(f"'{c.decl.name}' needs at least one result")
        c.tokens.append(c.type(vals[0].type))

    def parse_steps(self, pc: Ctx) -> list[Callable[..., None]]:
        field, index_type = self.field, INDEX

        def co_result_type(p: Any, s: Any) -> None:
            toks = p.toks
            eq = toks.index("=") if "=" in toks[: p.i] else -1
            lhs = [t for t in toks[:eq] if t[0] == "%"] if eq > 0 else []
            scope = p.scopes[-1]
            i = p.i
            if not lhs:
                raise p.expected("result names ('%value, %dims = ...')")
            first = p.new_value(scope, lhs[0], None, 0, False)
            tok = p.peek() or ""
            layout = _layout_name(tok)
            rest = [
                p.new_value(
                    scope,
                    n,
                    index_type if n != layout else _layout_type(p, tok, n, i),
                    2 * (k + 1),
                    False,
                )
                for k, n in enumerate(lhs[1:])
            ]
            p.i = i
            t = p.parse_type()
            first.type = t
            s.rtypes[field] = (t, *(v.type for v in rest))
            s.made = (first, *rest)

        return [co_result_type]

    def probe(self, pc: Ctx) -> Callable[..., bool]:
        return pc.type_start()

    def print_code(self, g: Ctx) -> None:
        seq = g.seq((self.field,))
        var = g.tmp()
        g.flush()
        g.emit(f"{var} = {seq}")
        g.emit(f"if not {var}:")
        g.emit("    raise Fallback")
        g.token(expr=f"tt({var}[0].type)")

    def result_problem(self, types: list[Any]) -> str | None:
        """Builders: why result types ``types`` cannot be spelled (None when they can): the
        first type names each further result once, in order; extents are ``index``."""
        if not types:
            return "needs at least one result (the loaded value)"
        named = named_values(types[0])
        if len(types) != 1 + len(named):
            return (
                f"takes {1 + len(named)} results: the value and one per name its type "
                f"{types[0]} uses, got {len(types)}"
            )
        for k, (v, t) in enumerate(zip(named, types[1:]), 1):
            if v is getattr(types[0], "encoding", None):
                if not is_encoding_type(t):
                    return (
                        f"result {k} is the loaded type's encoding and must be an encoding, not {t}"
                    )
            elif t != INDEX:
                return f"result {k} is an extent of the loaded type and must be index, not {t}"
        return None

    def rebind(self, results: tuple[Value, ...]) -> None:
        """Builders: the names in the first result's type (any stand-in values, in order of
        first use) become the op's further results."""
        if not results:
            return
        t = results[0].type
        named = named_values(t)
        if not named:
            return
        swap = {id(a): b for a, b in zip(named, results[1:])}
        dims = getattr(t, "dims", ())
        new_dims = [
            type(d)(swap.get(id(d.value), d.value)) if getattr(d, "value", None) is not None else d
            for d in dims
        ]
        enc = t.encoding
        if isinstance(enc, Value):
            enc = swap.get(id(enc), enc)
        results[0].type = type(t)(t.kind, t.element_type, new_dims, enc)


# --------------------------------------------------------------------------- attributes


@dataclass(frozen=True)
class Attr(FormatElement):
    """An attribute value: enum keyword, string, number, bool."""

    field: str
    role: ClassVar[str] = "attribute"
    template: ClassVar[bool] = False

    def attrs_written(self) -> Iterator[str]:
        yield self.field

    def print_text(self, c: Ctx) -> None:
        text = c.attr_text(self.field)
        if self.template:
            c.tokens += (c.GLUE, f"<{text}>")
        else:
            c.tokens.append(text)

    def parse_steps(self, pc: Ctx) -> list[Callable[..., None]]:
        a = pc.decl.attr(self.field)
        if a is None:
            kind = type(self).__name__
            raise ValueError(f"'{pc.decl.name}' {kind} names unknown attribute '{self.field}'")
        name, value, template = a.name, pc.attr_value, self.template

        def attr(p: Any, s: Any) -> None:
            if template:
                p.expect("<")
            s.attrs[name] = value(p, a)
            if template:
                p.expect(">")

        return [attr]

    def probe(self, pc: Ctx) -> Callable[..., bool]:
        return pc.is_token("<") if self.template else pc.attr_probe(pc.decl.attr(self.field))

    def print_code(self, g: Ctx) -> None:
        text = g.attr_text_expr(self.field)
        if self.template:
            g.glue()
            g.token(lit="<", expr=text)
            g.pending.append(">")
            g.state = "s"
        else:
            g.token(expr=f"_checked({text})")

    def line_code(self, g: Ctx) -> None:
        a = g.decl.attr(self.field)
        if a is None:
            g.unsupported()
        if self.template:
            g.state = "n"
            g.piece("<", nsa=False)
            g.state = "n"
        g.line_attr_value(a)
        if self.template:
            g.piece(">", nsb=True)


@dataclass(frozen=True)
class TemplateParam(Attr):
    """``<value>`` of an attribute, glued to the op name."""

    template: ClassVar[bool] = True


@dataclass(frozen=True)
class SymbolRef(FormatElement):
    """``@name`` from a symbol attribute."""

    field: str
    role: ClassVar[str] = "symbol"

    def attrs_written(self) -> Iterator[str]:
        yield self.field

    def print_text(self, c: Ctx) -> None:
        c.tokens.append("@" + str(c.attr(self.field)))

    def parse_steps(self, pc: Ctx) -> list[Callable[..., None]]:
        name, symbol = self.field, pc.symbol

        def symbol_ref(p: Any, s: Any) -> None:
            s.attrs[name] = symbol(p)

        return [symbol_ref]

    def probe(self, pc: Ctx) -> Callable[..., bool]:
        return pc.starts_with("@")

    def print_code(self, g: Ctx) -> None:
        g.token(lit="@", expr=f"_checked(str(a[{self.field!r}]))")


@dataclass(frozen=True)
class Flags(FormatElement):
    """``<a|b>`` of a flags attribute, glued to the op name; omitted when absent."""

    field: str
    role: ClassVar[str] = "attribute"

    def attrs_written(self) -> Iterator[str]:
        yield self.field

    def print_text(self, c: Ctx) -> None:
        value = c.op.attributes.get(self.field)
        if value:
            c.tokens += (c.GLUE, f"<{value}>")

    def parse_steps(self, pc: Ctx) -> list[Callable[..., None]]:
        a = pc.decl.attr(self.field)
        name, flags_value = self.field, pc.flags_value

        def flags(p: Any, s: Any) -> None:
            if p.peek() == "<":
                p.i += 1
                s.attrs[name] = flags_value(p, a)
                p.expect(">")

        return [flags]

    def probe(self, pc: Ctx) -> Callable[..., bool]:
        return pc.is_token("<")

    def print_code(self, g: Ctx) -> None:
        var = g.tmp()
        g.flush()
        g.emit(f"{var} = a.get({self.field!r})")

        def flags() -> None:
            g.glue()
            g.token(lit="<", expr=var)
            g.pending.append(">")
            g.state = "s"

        g.branch(var, flags)

    def line_code(self, g: Ctx) -> None:
        a = g.decl.attr(self.field)
        if a is None or g.state != "s":
            g.unsupported()
        var = g.tmp("a")
        canon = g.const(g.flags_canonical(a), "FC")
        g.attrs.append((a.name, var))
        g.pattern.append(rf"(?:<({g.FLAG}(?:\|{g.FLAG})*)>)?")  # glued, ends like before
        tok = f"g[{g.group}]"
        g.group += 1
        g.emit(f"{var} = {tok}")
        g.emit(f"if {var} is not None:")
        g.emit(f"    {var} = {canon}({var})")
        g.emit(f"    if {var} is None:")
        g.emit("        return None")


@dataclass(frozen=True)
class TemplateFlags(FormatElement):
    """``<kind>`` or ``<kind, a|b>`` glued to the op name: an attribute (an enum, a symbol
    ``@t``...) and, after a comma inside the same brackets, an optional flags attribute
    (``<addf, noftz>``, ``<@t, debug|trace>``)."""

    field: str
    flags: str
    role: ClassVar[str] = "attribute"

    def attrs_written(self) -> Iterator[str]:
        yield self.field
        yield self.flags

    def print_text(self, c: Ctx) -> None:
        text = c.attr_text(self.field)
        value = c.op.attributes.get(self.flags)
        c.tokens += (c.GLUE, f"<{text}, {value}>" if value else f"<{text}>")

    def parse_steps(self, pc: Ctx) -> list[Callable[..., None]]:
        a, f = pc.decl.attr(self.field), pc.decl.attr(self.flags)
        if a is None or f is None or f.flags is None:
            raise ValueError(
                f"'{pc.decl.name}' TemplateFlags needs attribute '{self.field}' and flags "
                f"attribute '{self.flags}'"
            )
        value, flags_value = pc.attr_value, pc.flags_value

        def template_flags(p: Any, s: Any) -> None:
            p.expect("<")
            s.attrs[a.name] = value(p, a)
            if p.peek() == ",":
                p.i += 1
                s.attrs[f.name] = flags_value(p, f)
            p.expect(">")

        return [template_flags]

    def probe(self, pc: Ctx) -> Callable[..., bool]:
        return pc.is_token("<")

    def print_code(self, g: Ctx) -> None:
        text = g.attr_text_expr(self.field)
        var = g.tmp()
        g.flush()
        g.emit(f"{var} = a.get({self.flags!r})")
        g.glue()
        g.token(lit="<", expr=f"{text} + (', ' + {var} if {var} else '')")
        g.pending.append(">")
        g.state = "s"

    def line_code(self, g: Ctx) -> None:
        g.unsupported()  # rare spelling: such lines take the token path


@dataclass(frozen=True)
class AttrDict(FormatElement):
    """``{k = v, ...}`` of the attributes not printed by other elements; omitted when empty."""

    role: ClassVar[str] = "attribute"

    def print_text(self, c: Ctx) -> None:
        c.attr_dict()

    def parse_steps(self, pc: Ctx) -> list[Callable[..., None]]:
        return [pc.attr_dict_step()]

    def probe(self, pc: Ctx) -> Callable[..., bool]:
        return pc.is_token("{")

    def print_code(self, g: Ctx) -> None:
        var = g.tmp()
        g.flush()
        g.emit(f"{var} = attr_dict(DECL, CONSUMED, a) if a else ''")
        g.branch(var, lambda: g.token(expr=var))

    def line_code(self, g: Ctx) -> None:
        pass  # a dictionary does not match what follows: such lines are tokenized


@dataclass(frozen=True)
class Dictionary(FormatElement):
    """``{key = value, ...}`` of one dictionary attribute (kind ``dict``); omitted when absent
    or empty, ``{}`` accepted. Keys print sorted; values are strings, numbers, ``true`` /
    ``false``, int lists or nested dictionaries (spelled by the context's dict kind)."""

    field: str
    role: ClassVar[str] = "attribute"

    def attrs_written(self) -> Iterator[str]:
        yield self.field

    def print_text(self, c: Ctx) -> None:
        if c.op.attributes.get(self.field):
            c.tokens.append(c.attr_text(self.field))

    def parse_steps(self, pc: Ctx) -> list[Callable[..., None]]:
        a = pc.decl.attr(self.field)
        if a is None:
            raise ValueError(f"'{pc.decl.name}' Dictionary names unknown attribute '{self.field}'")
        name, value = self.field, pc.attr_value

        def dictionary(p: Any, s: Any) -> None:
            if p.peek() == "{":
                d = value(p, a)
                if d:
                    s.attrs[name] = d

        return [dictionary]

    def probe(self, pc: Ctx) -> Callable[..., bool]:
        return pc.is_token("{")

    def print_code(self, g: Ctx) -> None:
        var = g.tmp()
        g.flush()
        g.emit(f"{var} = a.get({self.field!r})")
        g.emit(f"{var} = attr_text('dict', {var}) if {var} else ''")
        g.branch(var, lambda: g.token(expr=var))

    def line_code(self, g: Ctx) -> None:
        g.unsupported()


@dataclass(frozen=True)
class PredicateList(FormatElement):
    """``[mul(%a, 16), range(%n, 1, 4)]``; never glued; ``[]`` when empty."""

    field: str
    role: ClassVar[str] = "attribute"

    def attrs_written(self) -> Iterator[str]:
        yield self.field

    def print_text(self, c: Ctx) -> None:
        preds = c.op.attributes.get(self.field, ())
        c.tokens.append("[" + ", ".join(c.predicate_text(p) for p in preds) + "]")

    def parse_steps(self, pc: Ctx) -> list[Callable[..., None]]:
        name, isolated, predicates = self.field, pc.isolated, pc.predicates

        def predicate_list(p: Any, s: Any) -> None:
            scope = s.last_scope  # predicates may name the region's arguments
            if scope is None:
                s.attrs[name] = predicates(p)
                return
            floor = p.push_scope(scope, isolated)
            try:
                s.attrs[name] = predicates(p)
            finally:
                p.pop_scope(floor)

        return [predicate_list]

    def probe(self, pc: Ctx) -> Callable[..., bool]:
        return pc.is_token("[")

    def print_code(self, g: Ctx) -> None:
        g.token(lit="[", expr=f"', '.join([predicate_text(x) for x in a.get({self.field!r}, ())])")
        g.pending.append("]")
        g.state = "s"


# --------------------------------------------------------------------------- punctuation


@dataclass(frozen=True)
class Kw(FormatElement):
    """A literal token (``to``, ``->``, ``:``, ``,``...)."""

    text: str
    role: ClassVar[str] = "keyword"

    def keywords(self) -> Iterator[str]:
        yield self.text

    def print_text(self, c: Ctx) -> None:
        c.tokens.append(self.text)

    def parse_steps(self, pc: Ctx) -> list[Callable[..., None]]:
        text = self.text

        def kw(p: Any, s: Any) -> None:
            i = p.i
            toks = p.toks
            if i < len(toks) and toks[i] == text:
                p.i = i + 1
            else:
                raise p.expected(repr(text))

        return [kw]

    def probe(self, pc: Ctx) -> Callable[..., bool]:
        return pc.is_token(self.text)

    def print_code(self, g: Ctx) -> None:
        text = self.text
        g.token(
            lit=text, nsb=text.startswith(g.NO_SPACE_BEFORE), nsa=text.endswith(g.NO_SPACE_AFTER)
        )

    def line_code(self, g: Ctx) -> None:
        text = self.text
        g.piece(
            g.escape(text),
            nsb=text.startswith(g.NO_SPACE_BEFORE),
            nsa=text.endswith(g.NO_SPACE_AFTER),
        )


@dataclass(frozen=True)
class Glue(FormatElement):
    """No space before the next token."""

    transparent: ClassVar[bool] = True

    def print_text(self, c: Ctx) -> None:
        c.tokens.append(c.GLUE)

    def parse_steps(self, pc: Ctx) -> list[Callable[..., None]]:
        return []

    def print_code(self, g: Ctx) -> None:
        g.glue()

    def line_code(self, g: Ctx) -> None:
        g.state = "n"


# --------------------------------------------------------------------------- groups


@dataclass(frozen=True)
class Clause(FormatElement):
    """``name(`` inner ``)``."""

    name: str
    inner: tuple[FormatElement, ...]
    role: ClassVar[str] = "keyword"

    def __init__(self, name: str, *inner: FormatElement) -> None:
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "inner", inner)

    @property
    def children(self) -> tuple[FormatElement, ...]:
        return self.inner

    def keywords(self) -> Iterator[str]:
        yield self.name
        yield from super().keywords()

    def print_text(self, c: Ctx) -> None:
        c.tokens.append(self.name + "(")
        c.emit(self.inner)
        c.tokens.append(")")

    def parse_steps(self, pc: Ctx) -> list[Callable[..., None]]:
        head, inner = self.name, pc.steps(self.inner)

        def clause(p: Any, s: Any) -> None:
            i = p.i
            toks = p.toks
            if i + 1 < len(toks) and toks[i] == head and toks[i + 1] == "(":
                p.i = i + 2
            else:
                raise p.expected(f"'{head}('")
            for step in inner:
                step(p, s)
            p.expect(")")

        return [clause]

    def probe(self, pc: Ctx) -> Callable[..., bool]:
        # A clause holding a value also needs the '%' after '(', so a value clause and an
        # attribute clause may share a head (``residency(%minimum)``, ``residency(preserve)``);
        # other clauses are taken on their head, so a bad value inside is reported as such.
        head = self.name
        inner = self.inner[0].probe(pc) if self.inner and isinstance(self.inner[0], Ref) else None

        def clause_probe(p: Any) -> bool:
            i, toks = p.i, p.toks
            if not (i + 1 < len(toks) and toks[i] == head and toks[i + 1] == "("):
                return False
            if inner is None:
                return True
            p.i = i + 2
            try:
                return inner(p)
            finally:
                p.i = i

        return clause_probe

    def print_code(self, g: Ctx) -> None:
        g.token(lit=self.name + "(", nsa=True)
        for e in self.inner:
            e.print_code(g)
        g.token(lit=")", nsb=True)


@dataclass(frozen=True)
class OptionalGroup(FormatElement):
    """``inner`` is printed only when field ``anchor`` is present (non-empty)."""

    anchor: str
    inner: tuple[FormatElement, ...]
    transparent: ClassVar[bool] = True

    def __init__(self, anchor: str, *inner: FormatElement) -> None:
        object.__setattr__(self, "anchor", anchor)
        object.__setattr__(self, "inner", inner)

    @property
    def children(self) -> tuple[FormatElement, ...]:
        return self.inner

    def print_text(self, c: Ctx) -> None:
        if c.present(self.anchor):
            c.emit(self.inner)

    def parse_steps(self, pc: Ctx) -> list[Callable[..., None]]:
        inner = pc.steps(self.inner)
        probe = pc.probe(self.inner)
        anchor = self.anchor
        written = {n for e in self.inner for n in e.attrs_written()}
        set_unit = pc.is_unit(anchor) and anchor not in written

        def optional(p: Any, s: Any) -> None:
            if probe(p):
                for step in inner:
                    step(p, s)
                if set_unit:
                    s.attrs[anchor] = True

        return [optional]

    def print_code(self, g: Ctx) -> None:
        g.branch(g.present(self.anchor), lambda: [e.print_code(g) for e in self.inner])

    def line_code(self, g: Ctx) -> None:
        g.absent(self.inner)  # a line holding the group takes the token path


# --------------------------------------------------------------------------- regions


@dataclass(frozen=True)
class BlockArgs(FormatElement):
    """``(%a: T, ...)`` entry args of a region, glued; ``()`` when empty unless ``omit_empty``."""

    region: str
    omit_empty: bool = False
    role: ClassVar[str] = "value"

    def print_text(self, c: Ctx) -> None:
        args = c.region_args(self.region)
        if args or not self.omit_empty:
            c.tokens += (c.GLUE, "(")
            c.comma([f"{c.name(a)}: {c.type(a.type)}" for a in args])
            c.tokens.append(")")

    def parse_steps(self, pc: Ctx) -> list[Callable[..., None]]:
        region, omit_empty, isolated = self.region, self.omit_empty, pc.isolated

        def block_args(p: Any, s: Any) -> None:
            if p.peek() != "(":
                if omit_empty:
                    return
                raise p.expected("'(' starting the argument list")
            scope = s.scope(region, p)
            args = s.rargs[region]
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

        return [block_args]

    def probe(self, pc: Ctx) -> Callable[..., bool]:
        return pc.is_token("(")

    def print_code(self, g: Ctx) -> None:
        args = g.region_args(self.region)
        text = f"', '.join([_name(x) + ': ' + tt(x.type) for x in {args}])"

        def block_args() -> None:
            g.glue()
            g.token(lit="(", expr=text)
            g.pending.append(")")
            g.state = "s"

        if self.omit_empty:
            g.flush()
            g.branch(args, block_args)
        else:
            block_args()


@dataclass(frozen=True)
class RegionArg(FormatElement):
    """The name of entry argument ``index`` of a region (the loop induction variable)."""

    region: str
    index: int = 0
    role: ClassVar[str] = "value"

    def print_text(self, c: Ctx) -> None:
        args = c.region_args(self.region)
        if len(args) <= self.index:
            raise c.error(f"'{c.decl.name}' region '{self.region}' lacks argument {self.index}")
        c.tokens.append(c.name(args[self.index]))

    def parse_steps(self, pc: Ctx) -> list[Callable[..., None]]:
        region, index = self.region, self.index

        def region_arg(p: Any, s: Any) -> None:
            scope = s.scope(region, p)
            args = s.rargs[region]
            i = p.i
            tok = p.peek()
            if tok is None or tok[0] != "%":
                raise p.expected("a region argument name ('%name')")
            if len(args) != index:
                raise p.error("PARSE/003", "region argument out of order", i)
            p.i = i + 1
            args.append(p.define(scope, tok, None, i))

        return [region_arg]

    def probe(self, pc: Ctx) -> Callable[..., bool]:
        return pc.starts_with("%")

    def print_code(self, g: Ctx) -> None:
        args = g.region_args(self.region)
        g.token(expr=f"_name({args}[{self.index}])")


@dataclass(frozen=True)
class BindingList(FormatElement):
    """``(%arg = %init : T, ...)`` glued: region entry args after the first ``skip``, bound to
    the values of operand field ``field``; omitted when empty."""

    field: str
    region: str
    skip: int = 0
    role: ClassVar[str] = "value"

    def print_text(self, c: Ctx) -> None:
        inits = c.values(self.field)
        if not inits:
            return
        args = c.region_args(self.region)[self.skip :]
        if len(args) != len(inits):
            raise c.error(
                f"'{c.decl.name}' binds {len(inits)} values to {len(args)} region arguments"
            )
        c.tokens += (c.GLUE, "(")
        c.comma([f"{c.name(a)} = {c.name(v)} : {c.type(a.type)}" for a, v in zip(args, inits)])
        c.tokens.append(")")

    def parse_steps(self, pc: Ctx) -> list[Callable[..., None]]:
        field, region = self.field, self.region
        bindings = pc.bindings

        def binding_list(p: Any, s: Any) -> None:
            if p.peek() != "(":
                s.groups[field] = ()
                return
            scope = s.scope(region, p)
            s.groups[field] = bindings(p, scope, s.rargs[region])

        return [binding_list]

    def probe(self, pc: Ctx) -> Callable[..., bool]:
        return pc.is_token("(")

    def print_code(self, g: Ctx) -> None:
        inits = g.seq((self.field,))
        k = g.region_index(self.region)
        var, args = g.tmp(), g.tmp("ra")
        g.flush()
        g.emit(f"{var} = {inits}")

        def body() -> None:
            g.flush()
            g.emit(f"{args} = op.regions[{k}].blocks[0].args[{self.skip}:]")
            g.emit(f"if len({args}) != len({var}):")
            g.emit("    raise Fallback")
            text = (
                f"', '.join([_name(x) + ' = ' + _name(y) + ' : ' + tt(x.type) "
                f"for x, y in zip({args}, {var})])"
            )
            g.glue()
            g.token(lit="(", expr=text)
            g.pending.append(")")
            g.state = "s"

        g.branch(var, body)


@dataclass(frozen=True)
class RegionRef(FormatElement):
    """A region: `` {`` newline, the body indented, ``}``; later tokens continue on that line."""

    field: str
    role: ClassVar[str] = "punctuation"

    def print_text(self, c: Ctx) -> None:
        c.print_region(self.field)

    def parse_steps(self, pc: Ctx) -> list[Callable[..., None]]:
        field = self.field
        parse_region = self.reader(pc)

        def region_step(p: Any, s: Any) -> None:
            s.regions[field] = parse_region(p, s, field)

        return [region_step]

    def reader(self, pc: Ctx) -> _RegionReader:
        """What reads this region (its steps call it; a canonical run uses its two ends)."""
        rd = pc.decl.region(self.field)
        if rd is None:
            raise ValueError(f"'{pc.decl.name}' RegionRef names unknown region '{self.field}'")
        return _RegionReader(pc, rd)

    def probe(self, pc: Ctx) -> Callable[..., bool]:
        return pc.is_token("{")

    def line_code(self, g: Ctx) -> None:
        g.open_region(self.field)

    def print_code(self, g: Ctx) -> None:
        k = g.region_index(self.field)
        rd = g.decl.region(self.field)
        elide = rd.terminator if rd.implicit_terminator else None
        g.token(lit="{", nsa=True)
        g.flush()
        g.emit(f"reg = op.regions[{k}]")
        g.emit('pr._lines.append(indent + "".join(parts))')
        g.emit(f"pr._print_region(reg, indent, {elide!r})")
        g.emit('parts = ["}"]')
        g.emit("P = parts.append")
        g.state = "s"


class _RegionReader:
    """Reads `` {`` newline, a region of field ``rd`` and its ``}`` (left after the brace);
    ``key`` names the region's scope (one per region of a variadic field). Called, it reads
    all of it; :meth:`open` and :meth:`finish` are its two ends, for a caller that reads the
    region's ops itself (the parser's canonical runs)."""

    __slots__ = ("isolated", "derived", "derive_args", "close")

    def __init__(self, pc: Ctx, rd: Any) -> None:
        self.isolated = pc.isolated
        self.derived, self.derive_args = pc.derived_from(rd), pc.derive_args
        self.close = pc.region_closer(rd)

    def __call__(self, p: Any, s: Any, key: str) -> Region:
        region, floor, open_at = self.open(p, s, key)
        self.read(p, region, floor, open_at)
        self.finish(p, region)
        return region

    def read(self, p: Any, region: Region, floor: Any, open_at: tuple[int, int]) -> None:
        """Read the region's ops (into its last block) up to its ``}``, then leave it."""
        try:
            p.parse_block(region.blocks[-1], region, open_at=open_at)
        finally:
            self.leave(p, floor)

    @staticmethod
    def leave(p: Any, floor: Any) -> None:
        """Leave the region's scope (one level up)."""
        p.pop_scope(floor)
        p.depth -= 1

    def open(self, p: Any, s: Any, key: str) -> tuple[Region, Any, tuple[int, int]]:
        """Read the ``{`` ending the line and enter the region's scope (one level deeper):
        the region, what ``p.pop_scope`` restores, and where the brace is (for errors)."""
        i = p.i
        toks = p.toks
        if not (i < len(toks) and toks[i] == "{"):
            raise p.expected("'{' opening a region")
        if p.depth >= p.max_depth:  # before anything is built for the region
            raise p.error("PARSE/015", f"regions nested more than {p.max_depth} levels deep", i)
        p.i = i + 1
        if i + 1 < len(toks):
            raise p.expected("end of line")
        open_at = (p.line_no, i - len(toks))  # counted from the end (see Parser.unclosed)
        scope = s.scope(key, p)
        args = s.rargs[key]
        if self.derived is not None:
            self.derive_args(p, s, self.derived, args, i, scope)
        p.depth += 1
        region = Region([Block(tuple(args))])
        floor = p.push_scope(scope, self.isolated)
        p.pending_blank = False
        return region, floor, open_at

    def finish(self, p: Any, region: Region) -> None:
        """Check (or complete) the region's blocks, its scope left; consume its ``}``."""
        self.close(p, region)
        p.i += 1


def _table_line(p: Any, open_at: tuple[int, int]) -> str:
    """Move to the next line of a table (error at the end of the file); its first token."""
    if not p.next_line():
        raise p.unclosed(open_at)
    return p.peek()


def _open_table(p: Any, what: str) -> tuple[int, int]:
    """Consume the ``{`` ending the op's first line; returns where it is for errors."""
    i = p.i
    if p.peek() != "{":
        raise p.expected(f"'{{' opening the {what}")
    p.i = i + 1
    p.end_of_line()
    return (p.line_no, i)


@dataclass(frozen=True)
class RegionTable(FormatElement):
    """Keyed regions in braces, one per line: ``case N {`` ... ``}`` for each key of i64-array
    attribute ``keys`` (paired in order with the variadic region field ``cases``), then
    ``default {`` ... ``}`` for region ``default``; the op's line continues after the closing
    ``}``. Keys are kept in written order (the verifier checks that they increase)."""

    keys: str
    cases: str
    default: str
    role: ClassVar[str] = "keyword"

    def attrs_written(self) -> Iterator[str]:
        yield self.keys

    def keywords(self) -> Iterator[str]:
        yield "case"
        yield "default"

    def build_problem(
        self, groups: dict[str, Any], attrs: dict[str, Any], regions: dict[str, Any]
    ) -> str | None:
        given = regions.get(self.cases) or ()
        if not isinstance(given, (list, tuple)):
            return None  # the builder reports a region field of the wrong kind
        keys, cases = len(attrs.get(self.keys, ())), len(given)
        if keys != cases:
            return f"{keys} case keys need as many '{self.cases}', got {cases}"
        return None  # a missing default is made empty, like any required region

    def print_text(self, c: Ctx) -> None:
        keys = tuple(c.op.attributes.get(self.keys, ()))
        cases = c.regions.get(self.cases) or ()
        default = c.regions.get(self.default)
        if len(keys) != len(cases) or default is None:
            raise c.error(
                f"'{c.decl.name}' has {len(keys)} case keys for {len(cases)} case regions"
                + ("" if default is not None else " and no default region")
            )
        c.tokens.append("{")
        c.break_line()
        for key, region in zip(keys, cases):
            c.nested_region(f"case {key}", region, self.cases)
        c.nested_region("default", default, self.default)
        c.tokens.append("}")

    def parse_steps(self, pc: Ctx) -> list[Callable[..., None]]:
        decl = pc.decl
        case_rd, default_rd = decl.region(self.cases), decl.region(self.default)
        if case_rd is None or not case_rd.variadic or default_rd is None:
            raise ValueError(f"'{decl.name}' RegionTable needs a variadic case region field")
        keys_attr, cases, default = self.keys, self.cases, self.default
        case_region, default_region = _RegionReader(pc, case_rd), _RegionReader(pc, default_rd)

        def region_table(p: Any, s: Any) -> None:
            open_at = _open_table(p, "case table")
            keys: list[int] = []
            regions: list[Region] = []
            found = None
            while True:
                tok = _table_line(p, open_at)
                if tok == "}":
                    break
                if found is not None:
                    raise p.expected("'}' closing the case table (default is the last entry)")
                if tok == "case":
                    p.i += 1
                    keys.append(p.integer())
                    regions.append(case_region(p, s, f"{cases}[{len(regions)}]"))
                elif tok == "default":
                    p.i += 1
                    found = default_region(p, s, default)
                else:
                    raise p.expected("'case N {' or 'default {'")
                p.end_of_line()
            if found is None:
                raise p.error("PARSE/003", f"'{decl.name}' needs a 'default {{' region")
            p.i += 1  # the closing '}'
            s.attrs[keys_attr] = tuple(keys)
            s.regions[cases] = tuple(regions)
            s.regions[default] = found

        return [region_table]

    def probe(self, pc: Ctx) -> Callable[..., bool]:
        return pc.is_token("{")

    def print_code(self, g: Ctx) -> None:
        k0, kc = g.region_index(self.default), g.region_index(self.cases)
        rc, rd = g.decl.region(self.cases), g.decl.region(self.default)
        elide_c = rc.terminator if rc.implicit_terminator else None
        elide_d = rd.terminator if rd.implicit_terminator else None
        g.token(lit="{", nsa=True)
        g.flush()
        g.emit(f"keys = a.get({self.keys!r}, ())")
        g.emit(f"if len(op.regions) <= {k0} or len(keys) != len(op.regions) - {kc}:")
        g.emit("    raise Fallback")
        g.emit('pr._lines.append(indent + "".join(parts))')
        g.emit("inner = indent + '  '")
        g.emit(f"for key, reg in zip(keys, op.regions[{kc}:]):")
        g.emit("    pr._lines.append(inner + 'case ' + str(key) + ' {')")
        g.emit(f"    pr._print_region(reg, inner, {elide_c!r})")
        g.emit("    pr._lines.append(inner + '}')")
        g.emit("pr._lines.append(inner + 'default {')")
        g.emit(f"pr._print_region(op.regions[{k0}], inner, {elide_d!r})")
        g.emit("pr._lines.append(inner + '}')")
        g.emit('parts = ["}"]')
        g.emit("P = parts.append")
        g.state = "s"


@dataclass(frozen=True)
class AttrTable(FormatElement):
    """Keyed rows of values in braces, one per line: ``N = (%a, %b),`` for each key of
    i64-array attribute ``keys``, then ``} default(%x, %y)``. The rows (then the default row)
    are stored flattened in the variadic operand field ``values``; every row must have the
    width of the first (PARSE/030)."""

    keys: str
    values: str
    role: ClassVar[str] = "value"

    def attrs_written(self) -> Iterator[str]:
        yield self.keys

    def keywords(self) -> Iterator[str]:
        yield "default"

    def build_problem(
        self, groups: dict[str, Any], attrs: dict[str, Any], regions: dict[str, Any]
    ) -> str | None:
        keys, n = len(attrs.get(self.keys, ())), len(groups.get(self.values, ()))
        if n % (keys + 1):
            return (
                f"'{self.values}' has {n} values, not whole rows for {keys} case keys and the "
                "default row"
            )
        return None

    def print_text(self, c: Ctx) -> None:
        keys = tuple(c.op.attributes.get(self.keys, ()))
        vals = c.values(self.values)
        rows = len(keys) + 1
        if len(vals) % rows:
            raise c.error(
                f"'{c.decl.name}' has {len(vals)} table values, not a whole number of rows "
                f"for {len(keys)} keys and the default row"
            )
        width = len(vals) // rows
        names = [c.name(v) for v in vals]
        c.tokens.append("{")
        c.break_line()
        for k, key in enumerate(keys):
            row = ", ".join(names[k * width : (k + 1) * width])
            c.nested_line(f"{key} = ({row})" + ("," if k + 1 < len(keys) else ""))
        c.tokens += ("}", "default(" + ", ".join(names[len(keys) * width :]) + ")")

    def parse_steps(self, pc: Ctx) -> list[Callable[..., None]]:
        keys_attr, field, value_list = self.keys, self.values, pc.value_list

        def row(p: Any, width: int | None) -> list[Any]:
            p.expect("(")
            start = p.i
            vals = value_list(p)
            p.expect(")")
            if width is not None and len(vals) != width:
                raise p.error(
                    "PARSE/030",
                    f"table row has {len(vals)} values, but the rows before it have {width} "
                    f"(every row is one whole result tuple) (actual={len(vals)}, "
                    f"expected={width})",
                    start,
                )
            return vals

        def attr_table(p: Any, s: Any) -> None:
            open_at = _open_table(p, "lookup table")
            keys: list[int] = []
            flat: list[Any] = []
            width: int | None = None
            while True:
                tok = _table_line(p, open_at)
                if tok == "}":
                    break
                keys.append(p.integer())
                p.expect("=")
                vals = row(p, width)
                width = len(vals)
                flat += vals
                if p.peek() == ",":
                    p.i += 1
                p.end_of_line()
            p.i += 1  # the closing '}'
            i = p.i
            toks = p.toks
            if not (i + 1 < len(toks) and toks[i] == "default" and toks[i + 1] == "("):
                raise p.expected("'default(' giving the default row")
            p.i = i + 1
            flat += row(p, width)
            s.attrs[keys_attr] = tuple(keys)
            s.groups[field] = tuple(flat)

        return [attr_table]

    def probe(self, pc: Ctx) -> Callable[..., bool]:
        return pc.is_token("{")

    def print_code(self, g: Ctx) -> None:
        vals = g.seq((self.values,))
        g.token(lit="{", nsa=True)
        g.flush()
        g.emit(f"keys = a.get({self.keys!r}, ())")
        g.emit(f"vals = {vals}")
        g.emit("if len(vals) % (len(keys) + 1):")
        g.emit("    raise Fallback")
        g.emit("w = len(vals) // (len(keys) + 1)")
        g.emit("names = [_name(x) for x in vals]")
        g.emit('pr._lines.append(indent + "".join(parts))')
        g.emit("for k, key in enumerate(keys):")
        g.emit("    row = ', '.join(names[k * w : (k + 1) * w])")
        g.emit("    comma = ',' if k + 1 < len(keys) else ''")
        g.emit("    pr._lines.append(indent + '  ' + str(key) + ' = (' + row + ')' + comma)")
        g.emit("parts = ['} default(' + ', '.join(names[len(keys) * w :]) + ')']")
        g.emit("P = parts.append")
        g.state = "s"


# --------------------------------------------------------------------------- encodings


def _spec_or_none(tok: str) -> str | None:
    """The canonical spelling of a one-token spec (fast paths), or None."""
    from loom.ir.encoding_spec import SpecError, canonical_spec

    if tok[:1] != "#":
        return None
    try:
        return canonical_spec(tok)
    except SpecError:
        return None


@dataclass(frozen=True)
class EncodingAttr(FormatElement):
    """A static encoding spec ``#family<name=value, ...>`` kept in string attribute ``field``
    as its canonical text (:mod:`loom.ir.encoding_spec`); nested specs and lists allowed."""

    field: str
    role: ClassVar[str] = "attribute"

    def attrs_written(self) -> Iterator[str]:
        yield self.field

    def print_text(self, c: Ctx) -> None:
        c.tokens.append(c.op.attributes[self.field])

    def parse_steps(self, pc: Ctx) -> list[Callable[..., None]]:
        from loom.ir.encoding_spec import SpecError, canonical_spec

        field = self.field
        if pc.decl.attr(field) is None:
            raise ValueError(f"'{pc.decl.name}' EncodingAttr names unknown attribute '{field}'")

        def encoding_attr(p: Any, s: Any) -> None:
            start = p.i
            tok = p.peek()
            if tok is None or tok[0] != "#":
                raise p.expected("an encoding spec ('#family<...>')")
            parts = [tok]
            p.i += 1
            if "<" not in tok and p.peek() == "<":
                depth = 0
                while True:
                    t = p.peek()
                    if t is None:
                        raise p.expected("'>' closing the encoding spec")
                    parts.append(t)
                    p.i += 1
                    depth += (t == "<") - (t == ">")
                    if depth == 0:
                        break
            try:
                s.attrs[field] = canonical_spec(" ".join(parts))
            except SpecError as e:
                raise p.error(e.code, str(e), start) from None

        return [encoding_attr]

    def probe(self, pc: Ctx) -> Callable[..., bool]:
        return pc.starts_with("#")

    def print_code(self, g: Ctx) -> None:
        g.token(expr=f"a[{self.field!r}]")


@dataclass(frozen=True)
class ParamDict(FormatElement):
    """``{name = %v : T, ...}``: the values of variadic operand ``field`` named by the
    comma-joined names in string attribute ``names`` (sorted by name); omitted when empty."""

    field: str
    names: str
    role: ClassVar[str] = "value"

    def attrs_written(self) -> Iterator[str]:
        yield self.names

    def print_text(self, c: Ctx) -> None:
        vals = c.values(self.field)
        if not vals:
            return
        names = c.op.attributes.get(self.names, "").split(",")
        if len(names) != len(vals):
            raise c.error(f"'{c.decl.name}' names {len(names)} of its {len(vals)} parameters")
        items = [f"{k} = {c.name(v)} : {c.type(v.type)}" for k, v in zip(names, vals)]
        c.tokens.append("{" + ", ".join(items) + "}")

    def parse_steps(self, pc: Ctx) -> list[Callable[..., None]]:
        field, names_attr, mismatch = self.field, self.names, pc.mismatch

        def param_dict(p: Any, s: Any) -> None:
            if p.peek() != "{":
                s.groups[field] = ()
                return
            p.i += 1
            found: dict[str, Any] = {}
            while p.peek() != "}":
                if found:
                    p.expect(",")
                i = p.i
                name = p.peek()
                if name is None or not (name[0].isalpha() or name[0] == "_"):
                    raise p.expected("a parameter ('name = %value : type')")
                if name in found:
                    raise p.error("PARSE/012", f"parameter '{name}' is given twice", i)
                p.i += 1
                p.expect("=")
                v = p.use()
                p.expect(":")
                ti = p.i
                t = p.parse_type()
                if v.type is not t and v.type != t:
                    raise mismatch(p, name, v, t, ti)
                found[name] = v
            p.i += 1
            order = sorted(found)
            s.groups[field] = tuple(found[k] for k in order)
            if order:
                s.attrs[names_attr] = ",".join(order)

        return [param_dict]

    def probe(self, pc: Ctx) -> Callable[..., bool]:
        return pc.is_token("{")

    def print_code(self, g: Ctx) -> None:
        vals, names = g.seq((self.field,)), g.tmp("pn")
        var = g.tmp()
        g.flush()
        g.emit(f"{var} = {vals}")

        def body() -> None:
            g.flush()
            g.emit(f"{names} = a.get({self.names!r}, '').split(',')")
            g.emit(f"if len({names}) != len({var}):")
            g.emit("    raise Fallback")
            text = (
                f"'{{' + ', '.join([k + ' = ' + _name(v) + ' : ' + tt(v.type) "
                f"for k, v in zip({names}, {var})]) + '}}'"
            )
            g.token(expr=text)

        g.branch(var, body)


@dataclass(frozen=True)
class Requirements(FormatElement):
    """``<name = case, ...>`` glued to the op name: optional enum attributes ``names``, each
    at most once, printed in that order (``<>`` when none is present)."""

    names: tuple[str, ...]
    role: ClassVar[str] = "attribute"

    def __init__(self, *names: str) -> None:
        object.__setattr__(self, "names", names)

    def attrs_written(self) -> Iterator[str]:
        yield from self.names

    def keywords(self) -> Iterator[str]:
        yield from self.names

    def print_text(self, c: Ctx) -> None:
        attrs = c.op.attributes
        items = [f"{k} = {attrs[k]}" for k in self.names if k in attrs]
        c.tokens += (c.GLUE, "<" + ", ".join(items) + ">")

    def parse_steps(self, pc: Ctx) -> list[Callable[..., None]]:
        decl = pc.decl
        cases = {}
        for k in self.names:
            a = decl.attr(k)
            if a is None or a.enum is None:
                raise ValueError(f"'{decl.name}' Requirements names '{k}', not an enum attribute")
            cases[k] = frozenset(a.enum.cases)

        def requirements(p: Any, s: Any) -> None:
            p.expect("<")
            seen = 0
            while p.peek() != ">":
                if seen:
                    p.expect(",")
                i = p.i
                name = p.peek()
                if name not in cases:
                    raise p.expected("a requirement (" + ", ".join(cases) + ")")
                if name in s.attrs:
                    raise p.error("PARSE/012", f"requirement '{name}' is given twice", i)
                p.i += 1
                p.expect("=")
                value = p.peek()
                if value not in cases[name]:
                    raise p.error(
                        "PARSE/011",
                        f"unknown {name} '{value}'; expected one of "
                        + ", ".join(sorted(cases[name])),
                        p.i,
                    )
                p.i += 1
                s.attrs[name] = value
                seen += 1
            p.i += 1

        return [requirements]

    def probe(self, pc: Ctx) -> Callable[..., bool]:
        return pc.is_token("<")

    def print_code(self, g: Ctx) -> None:
        g.glue()
        text = f"'<' + ', '.join([k + ' = ' + a[k] for k in {self.names!r} if k in a]) + '>'"
        g.token(expr=text)


def walk(elems: tuple[FormatElement, ...]) -> Iterator[FormatElement]:
    """Every element of a format, nested ones included (depth first)."""
    for e in elems:
        yield e
        yield from walk(e.children)


ELEMENTS: tuple[type[FormatElement], ...] = (
    Ref,
    Refs,
    Subscript,
    IndexList,
    AlignedRefs,
    TypeOf,
    TypesOf,
    ResultTypeList,
    LocalType,
    CoResultType,
    Attr,
    SymbolRef,
    TemplateParam,
    Flags,
    TemplateFlags,
    Kw,
    Glue,
    Clause,
    AttrDict,
    Dictionary,
    OptionalGroup,
    BlockArgs,
    RegionArg,
    BindingList,
    PredicateList,
    RegionRef,
    RegionTable,
    AttrTable,
    TypedRefs,
    EncodingAttr,
    ParamDict,
    Requirements,
)
"""Every element class, in the order the reference lists them."""

__all__ = ["ELEMENTS", "FormatElement", "walk", *(c.__name__ for c in ELEMENTS)]
