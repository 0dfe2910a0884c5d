"""Fast parse paths: a declaration's format compiled once into generated Python source.

The general parse plan (:mod:`loom.format.text.parse_format`) runs one closure per format
element and records what it finds in an ``OpState``; for the common ops of a large module
(fixed operands, one result, a few keywords, enums, integers and types) that bookkeeping is
most of the cost. Two generated paths skip it:

* the *line path* (:func:`compile_line`): :data:`LINE_HEAD` reads the indentation, the result
  name and the op name, then one regex per declaration matches the canonical spelling of the
  rest of the line (exactly what the printer writes) and a generated function builds the op
  from the captured groups, without tokenizing the line;
* the *token fast path* (:func:`compile_fast`): for lines the tokenizer did split (other
  spacing, a trailing comment...), a generated function reads the tokens by position.

A fast path only ever *accepts*: on anything unusual (a missing token, an unknown name, a
static index, an attribute dictionary, a ``loc(...)``, a type mismatch...) it returns None
before touching the parser's state, and the general plan parses the line and reports the
problem with its usual diagnostic. So every path builds the same op from the same text; the
tests check that on the corpus, on random modules and on randomly mutated lines. No op is
named here. Each element contributes its own fragment (``fast_code`` and ``line_code`` in
:mod:`loom.format.elements`); the generators here hold the shared primitives. The code is
compiled by :mod:`loom.format.text.codegen`, so tracebacks and ``pdb`` show it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from loom.dsl import AttrKind, OpDef
from loom.format.text.codegen import compile_generated
from loom.ir import BUFFER_TYPE, SCALAR_TYPES, Operation, Value, freeze_attributes
from loom.ir.values import MAX_ID_DIGITS
from loom.opview import needs_segments

if TYPE_CHECKING:
    from loom.format.text.parser import Parser

FastFn = Callable[["Parser", list, int, "list[str] | None"], "Operation | None"]
"""``fast(parser, tokens, index_after_the_op_name, lhs_tokens) -> op or None``."""


_MEMO_LIMIT = 1024
"""Entries kept per declaration by the attribute and flag memos (they live as long as the plan)."""
NAMED_TYPES = {**SCALAR_TYPES, "buffer": BUFFER_TYPE}
"""Types spelled by one identifier (the parser's table)."""
_MISSING = object()


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


def compile_fast(decl: OpDef) -> tuple[FastFn | None, str]:
    """The fast path of ``decl`` and its source (None and "" when the format is not covered)."""
    try:
        gen = _Gen(decl)
        source = gen.generate()
    except _Unsupported:
        return None, ""
    env: dict[str, Any] = {"Operation": Operation, "Value": Value, **gen.env}
    compile_generated(source, "parse_fast", decl.name, env)
    return env["_fast"], source


class _Gen:
    """Generates ``_fast(p, toks, i, lhs)`` for one declaration."""

    def __init__(self, decl: OpDef) -> None:
        if decl.regions or needs_segments(decl) or decl.symbol_trait is not None:
            raise _Unsupported
        self.decl = decl
        self.code: list[str] = []
        self.env: dict[str, Any] = {}
        self.k = 0
        self.operands: dict[str, str] = {}  # field -> local (a Value, or a list for variadic)
        self.rtypes: dict[str, str] = {}  # result field -> local holding its type
        self.attrs: list[tuple[str, str]] = []  # (attribute name, local)

    def emit(self, line: str, depth: int = 1) -> None:
        self.code.append("    " * depth + line)

    def tmp(self, base: str) -> str:
        self.k += 1
        return f"{base}{self.k}"

    def const(self, value: Any, base: str = "C") -> str:
        name = self.tmp(base)
        self.env[name] = value
        return name

    # ------------------------------------------------------------------ elements

    def expect(self, text: str) -> None:
        self.emit(f"if toks[i] != {text!r}:")
        self.emit("    return None")
        self.emit("i += 1")

    def value(self, target: str) -> None:
        """``target`` = the value named by the current token (return None when unknown)."""
        self.emit("t = toks[i]")
        self.emit(f"{target} = S.get(t) or R(t)")
        self.emit(f"if {target} is None:")
        self.emit("    return None")
        self.emit("i += 1")

    def operand(self, field: str) -> tuple[str, bool]:
        o = self.decl.operand(field)
        if o is None or o.optional:
            raise _Unsupported
        if field in self.operands:
            raise _Unsupported  # a field written twice: leave it to the general plan
        var = self.tmp("o")
        self.operands[field] = var
        return var, o.variadic

    def ptype(self, target: str) -> None:
        self.emit(f"{target} = TY(toks[i])")
        self.emit(f"if {target} is None:")
        self.emit("    return None")
        self.emit("i += 1")

    flags_canonical = staticmethod(_flags_canonical)

    def unsupported(self) -> None:
        """Leave this declaration to the general plan."""
        raise _Unsupported

    @staticmethod
    def is_ident(tok: str) -> bool:
        """True when ``tok`` is an identifier (a flag name)."""
        return _is_ident(tok)

    def type_of(self, field: str) -> None:
        decl = self.decl
        if decl.result(field) is not None:
            r = decl.result(field)
            if r.variadic or field in self.rtypes:
                raise _Unsupported
            var = self.tmp("rt")
            self.rtypes[field] = var
            self.ptype(var)
            return
        var = self.operands.get(field)
        if var is None or decl.operand(field).variadic:  # type: ignore[union-attr]
            raise _Unsupported  # the type comes before the value: general plan
        t = self.tmp("t")
        self.ptype(t)
        self.emit(f"if {var}.type is not {t} and {var}.type != {t}:")
        self.emit("    return None")

    def attr_value(self, a: Any) -> None:
        var = self.tmp("a")
        self.attrs.append((a.name, var))
        self.emit(f"{var} = toks[i]")
        if a.kind == AttrKind.ENUM:
            if a.enum is None:
                raise _Unsupported
            cases = self.const(frozenset(a.enum.cases), "CASES")
            self.emit(f"if {var} not in {cases}:")
            self.emit("    return None")
        elif a.kind in (AttrKind.INT, AttrKind.NUMBER):
            # Plain ASCII decimal integers of up to 18 digits only (``isdigit`` alone also takes
            # '٣'); hex, signs, floats and long literals take the general plan, which reports.
            self.emit(f"if not ({var}.isdigit() and {var}.isascii() and len({var}) <= 18):")
            self.emit("    return None")
            self.emit(f"{var} = int({var})")
        else:
            raise _Unsupported
        self.emit("i += 1")

    # ------------------------------------------------------------------ generation

    def generate(self) -> str:
        for e in self.decl.format:
            e.fast_code(self)
        self.emit("if i != n:")
        self.emit("    return None")
        self.build_op()
        head = [
            "def _fast(p, toks, i, lhs):",
            "    n = len(toks)",
            "    S = p.scopes[-1].names",
            "    R = p.resolve",
            "    TY = p.type_of_token",
            "    try:",
        ]
        body = ["    " + line for line in self.code]
        tail = ["    except IndexError:", "        return None"]
        return "\n".join(head + body + tail) + "\n"

    def build_op(self) -> None:
        """Create the result values and return the op (as the general plan's build does)."""
        decl = self.decl
        for o in decl.operands:
            if o.name not in self.operands:
                raise _Unsupported
        parts = []
        for o in decl.operands:
            var = self.operands[o.name]
            parts.append(f"*{var}" if o.variadic else var)
        operands = "(" + "".join(p + ", " for p in parts) + ")" if parts else "()"
        types = []
        for r in decl.results:
            if r.variadic:
                raise _Unsupported
            var = self.rtypes.get(r.name)
            if var is None:
                if r.constraint.fixed is None:
                    raise _Unsupported
                var = self.const(r.constraint.fixed, "FIXED")
            types.append(var)
        self.results(types)
        self.attributes()
        self.emit(f"return Operation({decl.name!r}, {operands}, results, attrs)")

    def attributes(self) -> None:
        """``attrs``: the frozen attribute mapping (None when there is none)."""
        if not self.attrs:
            self.emit("attrs = None")
            return
        # Ops spelled alike share one frozen attribute mapping (bounded memo).
        key = "(" + "".join(f"{var}, " for _, var in self.attrs) + ")"
        self.env["MEMO"] = {}
        self.env["FREEZE"] = freeze_attributes
        entries = ", ".join(f"{name!r}: {var}" for name, var in self.attrs)
        self.emit(f"key = {key}")
        self.emit("attrs = MEMO.get(key)")
        self.emit("if attrs is None:")
        self.emit(f"    d = {{{entries}}}")
        for name, var in self.attrs:
            self.emit(f"    if {var} is None:")
            self.emit(f"        del d[{name!r}]")
        self.emit("    attrs = FREEZE(d)")
        self.emit(f"    if len(MEMO) < {_MEMO_LIMIT}:")
        self.emit("        MEMO[key] = attrs")

    def results(self, types: list[str]) -> None:
        """Create the results as the parser's ``new_value`` does (see there), or return None
        before creating any when a name needs the general plan (a duplicate, or a digit name
        that is not the new value's id)."""
        n = len(types)
        self.emit("values = p.values")
        if n == 0:
            self.emit("if lhs is not None:")
            self.emit("    return None")
            self.emit("results = ()")
            return
        self.emit("W = p.spare_ids")
        self.emit("if lhs is None:")
        for k, t in enumerate(types):
            self.emit("    vid = len(values)")
            self.emit("    if W and W[0] == vid:")
            self.emit("        vid = W.popleft()")
            self.emit(f"    r{k} = Value(vid, {t})")
            self.emit(f"    values.append(r{k})")
        self.emit("else:")
        self.emit(f"    if len(lhs) != {n}{' or len(set(lhs)) != len(lhs)' if n > 1 else ''}:")
        self.emit("        return None")
        self.emit("    vid = len(values)")
        for k in range(n):
            self.emit(f"    t = lhs[{k}]")
            self.emit("    if t in S:")
            self.emit("        return None")
            self.emit("    name = t[1:]")
            self.emit(
                f"    if name.isdigit() and (len(name) > {MAX_ID_DIGITS} or int(name) != vid+{k}):"
            )
            self.emit("        return None")
        self.emit("    L = p.live")
        for k, t in enumerate(types):
            self.emit(f"    t = lhs[{k}]")
            self.emit("    vid = len(values)")
            self.emit("    if W and W[0] == vid:")
            self.emit("        vid = W.popleft()")
            self.emit("    name = t[1:]")
            self.emit("    if name.isdigit():")  # the new id's own spelling: found by id
            self.emit(f"        r{k} = Value(vid, {t})")
            self.emit("        if vid < len(L):")
            self.emit("            L[vid] = 1")
            self.emit("        else:")
            self.emit("            p.mark(vid)")
            self.emit("    else:")
            self.emit(f"        r{k} = Value(vid, {t}, name)")
            self.emit(f"        S[t] = r{k}")
            self.emit(f"    values.append(r{k})")
        self.emit("results = (" + "".join(f"r{k}, " for k in range(n)) + ")")


def _is_ident(tok: str) -> bool:
    return tok[0].isalpha() or tok[0] == "_"


# ---------------------------------------------------------------------- whole-line fast paths

_NAME = r"%(?:[A-Za-z_$][A-Za-z0-9_$-]*|[0-9]+)"
_IDENT = r"[A-Za-z_$][A-Za-z0-9_$]*(?:\.[A-Za-z_$][A-Za-z0-9_$]*)*"
_TYPE = r"(?:view|vector)<[^<>\n]*(?:<[^<>\n]*>[^<>\n]*)*>|encoding<[a-z_]+>|" + _IDENT
"""A type token (the loop is unrolled: the regex engine then keeps no state per character)."""
_FLAG = r"[A-Za-z_$][A-Za-z0-9_$]*(?:\.[A-Za-z_$][A-Za-z0-9_$]*)*"

_ID_NAME = rf"%([0-9]{{1,{MAX_ID_DIGITS}}})|(%[A-Za-z_$][A-Za-z0-9_$-]*)"
"""A value name, captured as (the digits of ``%<digits>``, or a spelled ``%name``)."""

LINE_HEAD = re.compile(rf"[ \t]*(?:(?:{_ID_NAME}) = )?({_IDENT})")
"""Indentation, an optional single result name (as in :data:`_ID_NAME`, groups 1 and 2) and
the op name (group 3) of a canonical op line."""

LineFn = Callable[..., "Operation | None"]
"""``build(parser, groups, result_digits, result_name, scope, resolve, type_of_token, values,
live, floor_id, spare_ids) -> op or None``: the result name comes from :data:`LINE_HEAD`,
``scope`` is the innermost scope's dict, ``resolve`` looks names up everywhere else,
``type_of_token`` reads a type (None when invalid); ``values``, ``live`` and ``floor_id`` find
visible ``%<id>`` values by id (``floor_id`` is past every id while the scopes hold digit names,
see ``Parser.mixed``) and ``spare_ids`` is ``Parser.spare_ids``."""


def compile_line(decl: OpDef) -> tuple[re.Pattern | None, LineFn | None, str]:
    """A regex for the canonical spelling of the rest of ``decl``'s line and its builder.

    The regex matches exactly what the printer writes after the op name (one space between
    tokens, none where the format glues); anything else (comments, attribute dictionaries,
    extra spaces, static indices, ``loc(...)``) does not match and the line is tokenized.
    """
    try:
        gen = _LineGen(decl)
        pattern, source = gen.generate()
    except _Unsupported:
        return None, None, ""
    env: dict[str, Any] = {"Operation": Operation, "Value": Value, **gen.env}
    compile_generated(f"# line regex: {pattern!r}\n{source}", "parse_line", decl.name, env)
    return re.compile(pattern), env["_line"], source


_NSB = (",", ")", "]", "}")
_NSA = ("(", "[", "{")


class _LineGen(_Gen):
    """Generates a body regex and ``_line(p, g, lhs)`` for one declaration."""

    def __init__(self, decl: OpDef) -> None:
        super().__init__(decl)
        self.pattern: list[str] = []
        self.state = "s"
        self.group = 0

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

    def ref(self, target: str) -> None:
        """Match one value name; ``target`` = its value (see :meth:`lookup`)."""
        self.piece(f"(?:{_ID_NAME})")
        digits, name = f"g[{self.group}]", f"g[{self.group + 1}]"
        self.group += 2
        self.emit(f"k = {digits}")
        self.emit("if k is not None:")
        self.emit("    k = int(k)")
        self.emit("    if k >= FL and k < len(L) and L[k]:")
        self.emit(f"        {target} = V[k]")
        self.emit("    else:")
        self.emit(f"        t = '%' + {digits}")
        self.emit(f"        {target} = S.get(t) or R(t)")
        self.emit("else:")
        self.emit(f"    t = {name}")
        self.emit(f"    {target} = S.get(t) or R(t)")
        self.emit(f"if {target} is None:")
        self.emit("    return None")

    def lookup(self, target: str, tok: str, depth: int = 1) -> None:
        """``target`` = the value ``tok`` names: a visible ``%<id>`` is read from the value
        table directly (``FL`` is the lowest visible id, past every id while the scopes hold
        digit names), other names from the scopes."""
        self.emit(f"t = {tok}", depth)
        self.emit(f"if '0' <= t[1] <= '9' and len(t) <= {MAX_ID_DIGITS + 1}:", depth)
        self.emit("    k = int(t[1:])", depth)
        self.emit(
            f"    {target} = V[k] if k >= FL and k < len(L) and L[k] else S.get(t) or R(t)", depth
        )
        self.emit("else:", depth)
        self.emit(f"    {target} = S.get(t) or R(t)", depth)
        self.emit(f"if {target} is None:", depth)
        self.emit("    return None", depth)

    def results(self, types: list[str]) -> None:
        """Create the results as ``Parser.new_value`` does from :data:`LINE_HEAD`'s name, or
        return None first when it needs the general plan (a duplicate, a digit name that is not
        the new value's id, or any digit name while the scopes hold digit names)."""
        n = len(types)
        if n != 1:  # a line names at most one result; several take the general plan
            self.emit("if D is not None or N is not None:")
            self.emit("    return None")
            self.unnamed_results(types, 1)
            return
        t = types[0]
        self.emit("vid = len(V)")
        self.emit("if D is not None:")
        # FL > vid only while the scopes hold digit names (FL is past every id then).
        self.emit("    if FL > vid or int(D) != vid:")
        self.emit("        return None")
        self.emit("    if W and W[0] == vid:")
        self.emit("        vid = W.popleft()")
        self.emit(f"    r0 = Value(vid, {t})")
        self.emit("    if vid < len(L):")
        self.emit("        L[vid] = 1")
        self.emit("    else:")
        self.emit("        p.mark(vid)")
        self.emit("    V.append(r0)")
        self.emit("    results = (r0,)")
        self.emit("elif N is not None:")
        self.emit("    if N in S:")
        self.emit("        return None")
        self.emit("    if W and W[0] == vid:")
        self.emit("        vid = W.popleft()")
        self.emit(f"    r0 = Value(vid, {t}, N[1:])")
        self.emit("    S[N] = r0")
        self.emit("    V.append(r0)")
        self.emit("    results = (r0,)")
        self.emit("else:")
        self.unnamed_results(types, 2)

    def unnamed_results(self, types: list[str], depth: int) -> None:
        """``results`` = new unnamed values of these types (not visible by any name)."""
        for k, t in enumerate(types):
            self.emit("vid = len(V)", depth)
            self.emit("if W and W[0] == vid:", depth)
            self.emit("    vid = W.popleft()", depth)
            self.emit(f"r{k} = Value(vid, {t})", depth)
            self.emit(f"V.append(r{k})", depth)
        self.emit("results = (" + "".join(f"r{k}, " for k in range(len(types))) + ")", depth)

    def ptype_of(self, target: str, tok: str) -> None:
        self.env["NAMED"] = NAMED_TYPES
        self.emit(f"{target} = NAMED.get({tok}) or TY({tok})")
        self.emit(f"if {target} is None:")
        self.emit("    return None")

    NAME = _NAME
    FLAG = _FLAG
    NO_SPACE_BEFORE = _NSB
    NO_SPACE_AFTER = _NSA
    escape = staticmethod(re.escape)

    def line_attr_value(self, a: Any) -> None:
        """Capture an attribute value spelled as the printer writes it (enum or integer)."""
        var = self.tmp("a")
        self.attrs.append((a.name, var))
        if a.kind == AttrKind.ENUM:
            if a.enum is None:
                raise _Unsupported
            tok = self.capture(_IDENT)
            cases = self.const(frozenset(a.enum.cases), "CASES")
            self.emit(f"{var} = {tok}")
            self.emit(f"if {var} not in {cases}:")
            self.emit("    return None")
        elif a.kind in (AttrKind.INT, AttrKind.NUMBER):
            tok = self.capture("[0-9]{1,18}")  # longer literals: the general plan
            self.emit(f"{var} = int({tok})")
        else:
            raise _Unsupported

    def line_type_of(self, field: str) -> None:
        decl = self.decl
        tok = self.capture(_TYPE)
        if decl.result(field) is not None:
            if decl.result(field).variadic or field in self.rtypes:  # type: ignore[union-attr]
                raise _Unsupported
            var = self.tmp("rt")
            self.rtypes[field] = var
            self.ptype_of(var, tok)
            return
        var = self.operands.get(field)
        if var is None or decl.operand(field).variadic:  # type: ignore[union-attr]
            raise _Unsupported
        t = self.tmp("t")
        self.ptype_of(t, tok)
        self.emit(f"if {var}.type is not {t} and {var}.type != {t}:")
        self.emit("    return None")

    def generate(self) -> tuple[str, str]:  # type: ignore[override]
        for e in self.decl.format:
            e.line_code(self)
        self.build_op()
        head = ["def _line(p, g, D, N, S, R, TY, V, L, FL, W):"]
        return "".join(self.pattern), "\n".join(head + self.code) + "\n"
