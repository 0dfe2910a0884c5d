"""The compiled parse path: a declaration's canonical line compiled into one regex and one
generated function, built from its format elements' own fragments.

The general parse plan (:mod:`loom.format.text.parse_format`) tokenizes a line and runs one
closure per format element, recording what it finds in an ``OpState``; for the common ops of
a large module (fixed operands, one result, a few keywords, enums, integers and types) the
tokenizing and that bookkeeping are most of the cost. The *line path* skips both:
:data:`LINE_HEAD` reads the indentation, the result name and the op name of a line, then one
regex per declaration matches the canonical spelling of the rest of the line (exactly what the
printer writes) and a generated function reads the op's operands, result types and attributes
from the captured groups. The driver (``Parser.canonical_run``) creates the results and the op.

An op with regions has a *region head* instead: the path reads its first line up to the ``{``
that ends it (``RegionRef`` ends the line; an ``OptionalGroup`` the line does not hold refuses
the word the group starts with). The driver then opens the region itself, so its lines join the
same run, closes it on a line holding only ``}``, and finishes the op with the general steps of
the rest of the format (``else {``, a ``loc(...)``: whatever follows the brace). Measured in one
run on the benchmark module (an ``scf.if`` every 13 ops): 225k/220k -> 251k/245k ops/s,
numbered/named values, against the same parser with region ops on the general plans.

The line path only ever *accepts*: on anything unusual (a comment, other spacing, an unknown
name, a static index, an attribute dictionary, a ``loc(...)``, a type mismatch...) the regex
does not match or the function returns None before touching the parser's state, and the line
is tokenized and parsed by the general plan, which reports problems with its usual diagnostic.
So both paths build the same op from the same text; the tests check that on the corpus, on
random modules and on randomly mutated lines. No op is named here. Each element contributes its
own fragment (``line_code`` in :mod:`loom.format.elements`); the generator here holds the
shared primitives. The code is compiled by :mod:`loom.format.text.codegen`, so tracebacks and
``pdb`` show it.

Why a whole-line path, measured in one run on the 100k-op benchmark module (CPU time, best of
5): with it the parser reads 3.1-3.4x as many ops per second as the general plans alone
(259k/244k against 77k/79k ops/s, numbered/named values); a token fast path over tokenized
lines, an earlier second compiled path, reached only about 1.6x and is gone. The parse goal
(150k ops/s, and 30x xDSL) needs the line path.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from loom.dsl import ArgSource, AttrKind, OpDef
from loom.format.text.codegen import compile_generated
from loom.ir import BUFFER_TYPE, EMPTY_ATTRS, SCALAR_TYPES, Type, freeze_attributes
from loom.ir.values import MAX_ID_DIGITS
from loom.opview import needs_segments

_MEMO_LIMIT = 1024
"""Entries kept per declaration by the attribute and flag memos (they live as long as the plan)."""
NAMED_TYPES = {**SCALAR_TYPES, "buffer": BUFFER_TYPE}
"""Types spelled by one identifier (the parser's table)."""
_MISSING = object()

_NAME = r"%(?:[A-Za-z_$][A-Za-z0-9_$-]*|[0-9]+)"
_IDENT = r"[A-Za-z_$][A-Za-z0-9_$]*(?:\.[A-Za-z_$][A-Za-z0-9_$]*)*"
_TYPE = r"(?:view|vector|tensor|tile)<[^<>\n]*(?:<[^<>\n]*>[^<>\n]*)*>|encoding<[a-z_]+>|" + _IDENT
"""A type token (the loop is unrolled: the regex engine then keeps no state per character)."""
_FLAG = r"[A-Za-z_$][A-Za-z0-9_$]*(?:\.[A-Za-z_$][A-Za-z0-9_$]*)*"

_ID_NAME = rf"%([0-9]{{1,{MAX_ID_DIGITS}}})|(%[A-Za-z_$][A-Za-z0-9_$-]*)"
"""A value name, captured as (the digits of ``%<digits>``, or a spelled ``%name``)."""

LINE_HEAD = re.compile(rf"[ \t]*()(?:(?:{_ID_NAME}) = )?([A-Za-z_$][A-Za-z0-9_$.]*)")
"""Indentation (group 1, empty, marks where the op starts), an optional single result name (as
in :data:`_ID_NAME`, groups 2 and 3) and the op name (group 4) of a canonical op line. The name
is read loosely (any dots): one that names no op leaves the line to the general plan."""

LineFn = Callable[..., "tuple[tuple, Any, tuple | None] | None"]
"""``read(parser, groups, scope, resolve, type_of_token, values, live, floor_id)`` ->
``(operands, result types, attribute values)`` or None: ``scope`` is the innermost scope's
dict, ``resolve`` looks names up everywhere else, ``type_of_token`` reads a type (None when
invalid); ``values``, ``live`` and ``floor_id`` find visible ``%<id>`` values by id
(``floor_id`` is past every id while the scopes hold digit names, see ``Parser.mixed``). The
result types are one type for a single result, else a tuple; the attribute values are None
when no attribute is present, else a tuple in :attr:`LinePath.attr_names` order (None for an
absent one). A region head returns the operands as one tuple per field and the result types it
read (in :attr:`LinePath.rtype_fields` order)."""

_NSB = (",", ")", "]", "}")
_NSA = ("(", "[", "{")


class _Unsupported(Exception):
    """The declaration (or this element) is left to the general plan."""


def _flags_canonical(a: Any) -> Callable[[str], str | None]:
    """Canonical flags text (None when invalid), memoised: few spellings recur."""
    memo: dict[str, str | None] = {}

    def canonical(text: str) -> str | None:
        got = memo.get(text, _MISSING)
        if got is not _MISSING:
            return got  # type: ignore[return-value]
        if a.flags is None:
            got = text
        else:
            try:
                got = a.flags.canonical(text)
            except ValueError:
                got = None
        if len(memo) < _MEMO_LIMIT:
            memo[text] = got
        return got

    return canonical


class LinePath:
    """One declaration's compiled line path: the regex, the generated reader and what the
    driver needs to finish the op (result count, attribute names and their shared mappings).

    For an op with regions the path reads its first line only, up to the ``{`` that ends it
    (a *region head*): ``tail_start`` is then the index of that region's element in the
    format, the reader returns the operands by field and the result types by
    ``rtype_fields``, and the general steps read the rest from the ``{`` on."""

    __slots__ = (
        "regex",
        "fn",
        "source",
        "nres",
        "attr_names",
        "memo",
        "rtype_fields",
        "tail_start",
    )

    def __init__(
        self,
        regex: re.Pattern,
        fn: LineFn,
        source: str,
        nres: int,
        attr_names: tuple[str, ...],
        rtype_fields: tuple[str, ...] = (),
        tail_start: int | None = None,
    ) -> None:
        self.regex = regex
        self.fn = fn
        self.source = source
        self.nres = nres
        self.attr_names = attr_names
        self.memo: dict[tuple, Any] = {}
        self.rtype_fields = rtype_fields
        self.tail_start = tail_start

    def attributes(self, values: tuple | None) -> Any:
        """The frozen attribute mapping of these attribute values (ops spelled alike share
        one; bounded memo)."""
        if values is None:
            return EMPTY_ATTRS
        attrs = self.memo.get(values)
        if attrs is None:
            attrs = freeze_attributes(
                {k: v for k, v in zip(self.attr_names, values) if v is not None}
            )
            if len(self.memo) < _MEMO_LIMIT:
                self.memo[values] = attrs
        return attrs


def compile_line(decl: OpDef) -> LinePath | None:
    """The line path of ``decl`` (None when its format is left to the general plan).

    The regex matches exactly what the printer writes after the op name (one space between
    tokens, none where the format glues); anything else (comments, attribute dictionaries,
    extra spaces, static indices, ``loc(...)``) does not match and the line is tokenized.
    """
    try:
        gen = _LineGen(decl)
        pattern, source = gen.generate()
    except _Unsupported:
        return None
    env: dict[str, Any] = dict(gen.env)
    compile_generated(f"# line regex: {pattern!r}\n{source}", "parse_line", decl.name, env)
    names = tuple(name for name, _ in gen.attrs)
    return LinePath(
        re.compile(pattern),
        env["_line"],
        source,
        len(decl.results),
        names,
        tuple(gen.rtypes) if gen.head else (),
        gen.tail_start,
    )


class _LineGen:
    """Generates a body regex and ``_line(p, g, S, R, TY, V, L, FL)`` for one declaration
    from the ``line_code`` fragments of its format elements."""

    NAME = _NAME
    FLAG = _FLAG
    NO_SPACE_BEFORE = _NSB
    NO_SPACE_AFTER = _NSA
    escape = staticmethod(re.escape)
    flags_canonical = staticmethod(_flags_canonical)

    def __init__(self, decl: OpDef) -> None:
        if needs_segments(decl) or decl.symbol_trait is not None:
            raise _Unsupported
        self.decl = decl
        self.head = bool(decl.regions)
        """True for an op with regions: the path reads its first line, up to a region's ``{``."""
        self.opened = False
        """Set by :meth:`open_region`: the line ends at the element just generated."""
        self.tail_start: int | None = None
        self.code: list[str] = []
        self.env: dict[str, Any] = {"NAMED": NAMED_TYPES}
        self.k = 0
        self.operands: dict[str, str] = {}  # field -> local (a Value, or a list for variadic)
        self.rtypes: dict[str, str] = {}  # result field -> local holding its type
        self.attrs: list[tuple[str, str]] = []  # (attribute name, local)
        self.pattern: list[str] = []
        self.state = "s"
        self.group = 0

    # ------------------------------------------------------------------ primitives

    def emit(self, line: str, depth: int = 1) -> None:
        self.code.append("    " * depth + line)

    def tmp(self, base: str) -> str:
        self.k += 1
        return f"{base}{self.k}"

    def const(self, value: Any, base: str = "C") -> str:
        name = self.tmp(base)
        self.env[name] = value
        return name

    def unsupported(self) -> None:
        """Leave this declaration to the general plan."""
        raise _Unsupported

    def operand(self, field: str) -> tuple[str, bool]:
        o = self.decl.operand(field)
        if o is None or o.optional:
            raise _Unsupported
        if field in self.operands:
            raise _Unsupported  # a field written twice: leave it to the general plan
        var = self.tmp("o")
        self.operands[field] = var
        return var, o.variadic

    def piece(self, regex: str, nsb: bool = False, nsa: bool = False) -> None:
        if self.state == "s" and not nsb:
            self.pattern.append(" ")
        self.pattern.append(regex)
        self.state = "n" if nsa else "s"

    def capture(self, regex: str, **kw: bool) -> str:
        """A capturing piece; returns the local holding its text."""
        self.piece(f"({regex})", **kw)
        var = f"g[{self.group}]"
        self.group += 1
        return var

    def open_region(self, field: str) -> None:
        """End the line at the ``{`` of region ``field`` (the general steps read the region and
        the rest); only a region without entry arguments (reading those may report errors on
        this line, which the general plan places)."""
        rd = self.decl.region(field)
        if not self.head or rd is None or rd.arg_source != ArgSource.NONE:
            raise _Unsupported
        self.piece(r"\{")
        self.opened = True

    def absent(self, inner: tuple[Any, ...]) -> None:
        """An optional group the line does not hold: the line must not go on with the word
        the group starts with (the general plan would take the group then)."""
        first = next((e for e in inner if not e.transparent), None)
        word = next(first.keywords(), None) if first is not None else None
        if word is None:
            raise _Unsupported
        self.pattern.append(f"(?! ?{re.escape(word)}(?![A-Za-z0-9_$.]))")

    # ------------------------------------------------------------------ values and types

    def ref(self, target: str) -> None:
        """Match one value name; ``target`` = its value (see :meth:`lookup`)."""
        self.piece(f"(?:{_ID_NAME})")
        digits, name = f"g[{self.group}]", f"g[{self.group + 1}]"
        self.group += 2
        self.emit(f"k = {digits}")
        self.emit("if k is not None and FL <= (k := int(k)) < len(L) and L[k]:")
        self.emit(f"    {target} = V[k]")
        self.emit("else:")
        self.emit(f"    t = {name} or '%' + {digits}")
        self.emit(f"    if ({target} := S.get(t) or R(t)) is None:")
        self.emit("        return None")

    def lookup(self, target: str, tok: str, depth: int = 1) -> None:
        """``target`` = the value ``tok`` names: a visible ``%<id>`` is read from the value
        table directly (``FL`` is the lowest visible id, past every id while the scopes hold
        digit names), other names from the scopes."""
        self.emit(f"t = {tok}", depth)
        self.emit(
            f"if '0' <= t[1] <= '9' and len(t) <= {MAX_ID_DIGITS + 1}"
            " and FL <= (k := int(t[1:])) < len(L) and L[k]:",
            depth,
        )
        self.emit(f"    {target} = V[k]", depth)
        self.emit(f"elif ({target} := S.get(t) or R(t)) is None:", depth)
        self.emit("    return None", depth)

    def line_attr_value(self, a: Any) -> None:
        """Capture an attribute value spelled as the printer writes it (enum or integer)."""
        var = self.tmp("a")
        self.attrs.append((a.name, var))
        if a.kind == AttrKind.ENUM:
            if a.enum is None:
                raise _Unsupported
            tok = self.capture(_IDENT)
            cases = self.const(frozenset(a.enum.cases), "CASES")
            self.emit(f"if ({var} := {tok}) not in {cases}:")
            self.emit("    return None")
        elif a.kind in (AttrKind.INT, AttrKind.NUMBER):
            tok = self.capture("[0-9]{1,18}")  # longer literals: the general plan
            self.emit(f"{var} = int({tok})")
        else:
            raise _Unsupported

    def ptype_of(self, target: str, tok: str) -> None:
        """``target`` = the type spelled by the text ``tok`` (return None when invalid)."""
        self.emit(f"if ({target} := NAMED.get({tok}) or TY({tok})) is None:")
        self.emit("    return None")

    def line_type_of(self, field: str) -> None:
        """Capture a type: a result's type, or a check that an operand has it."""
        decl = self.decl
        tok = self.capture(_TYPE)
        read = f"NAMED.get({tok}) or TY({tok})"
        r = decl.result(field)
        if r is not None:
            if r.variadic or field in self.rtypes:
                raise _Unsupported
            var = self.tmp("rt")
            self.rtypes[field] = var
            self.ptype_of(var, tok)
            return
        var = self.operands.get(field)
        if var is None or decl.operand(field).variadic:  # type: ignore[union-attr]
            raise _Unsupported  # the type comes before the value: general plan
        t = self.tmp("t")
        self.emit(f"if ({t} := {read}) is None or ({var}.type is not {t} and {var}.type != {t}):")
        self.emit("    return None")

    # ------------------------------------------------------------------ generation

    def generate(self) -> tuple[str, str]:
        for k, e in enumerate(self.decl.format):
            e.line_code(self)
            if self.opened:
                self.tail_start = k
                break
        if not self.head:
            self.emit(f"return {self.operand_tuple()}, {self.result_types()}, {self.attr_values()}")
        elif self.tail_start is None:
            raise _Unsupported  # no region ends the first line
        else:
            rtypes = "(" + "".join(f"{var}, " for var in self.rtypes.values()) + ")"
            self.emit(f"return {self.operand_tuple(True)}, {rtypes}, {self.attr_values()}")
        head = ["def _line(p, g, S, R, TY, V, L, FL):"]
        return "".join(self.pattern), "\n".join(head + self.code) + "\n"

    def operand_tuple(self, grouped: bool = False) -> str:
        """The op's operands in declaration order: packed in one tuple, or (``grouped``, for a
        region head) as one tuple per field."""
        parts = []
        for o in self.decl.operands:
            var = self.operands.get(o.name)
            if var is None:
                raise _Unsupported
            if grouped:
                parts.append(f"tuple({var})" if o.variadic else f"({var},)")
            else:
                parts.append(f"*{var}" if o.variadic else var)
        return "(" + "".join(p + ", " for p in parts) + ")"

    def result_types(self) -> str:
        """The result types: one type for a single result, else a tuple."""
        types = []
        for r in self.decl.results:
            if r.variadic:
                raise _Unsupported
            var = self.rtypes.get(r.name)
            if var is None:
                fixed: Type | None = r.constraint.fixed
                if fixed is None:
                    raise _Unsupported
                var = self.const(fixed, "FIXED")
            types.append(var)
        if len(types) == 1:
            return types[0]
        return "(" + "".join(t + ", " for t in types) + ")"

    def attr_values(self) -> str:
        """The attribute values in :attr:`LinePath.attr_names` order (None when every one is
        absent, so a memo hit is never an empty mapping)."""
        if not self.attrs:
            return "None"
        present = " or ".join(f"{var} is not None" for _, var in self.attrs)
        return "(" + "".join(f"{var}, " for _, var in self.attrs) + f") if {present} else None"
