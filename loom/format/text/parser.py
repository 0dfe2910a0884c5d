"""The generic Loom text parser: one driver for every op, steered by the declarations.

``parse_module(text)`` reads lines and blocks here; each op line is handed to the op's parse
plan (compiled once per declaration from its ``format`` and ``legacy_formats`` by
:mod:`loom.format.text.parse_format`). Errors raise :class:`~loom.errors.LoomParseError` with a
``PARSE/NNN`` diagnostic pointing at the offending token.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Iterable
from typing import Any

from loom.diagnostics import Diagnostic, DiagnosticSeverity, SourceRange
from loom.dsl import OpDef
from loom.errors import LoomParseError
from loom.format.text import parse_format as pf
from loom.format.text.parse_fast import LINE_HEAD, NAMED_TYPES
from loom.format.text.scopes import Scope
from loom.format.text.tokenizer import (
    MAX_LINE_TOKENS,
    clip,
    decode_string,
    describe,
    is_digit,
    line_tokens,
    parse_int,
    token_spans,
)
from loom.ir import (
    EMPTY_ATTRS,
    SCALAR_TYPES,
    Block,
    DynamicDim,
    FileLocation,
    FuncRefType,
    FunctionType,
    FusedLocation,
    Module,
    OpaqueLocation,
    Operation,
    Region,
    ShapedType,
    TaggedLocation,
    Type,
    TypeKind,
    Value,
    opaque_families,
    opaque_type,
)
from loom.ir.encoding_spec import SpecError, canonical_spec
from loom.ir.locations import LINE_SHIFT, MAX_COL, MAX_LINE
from loom.ir.types import YIELDABLE
from loom.ir.values import MAX_ID_DIGITS, NamePool, spelled_id
from loom.registry import OpRegistry, as_registry
from loom.switches import gc_paused, recursion_limit_at_least

MAX_DEPTH = 256
"""Deepest region nesting accepted (deeper input is reported, never a RecursionError)."""

_WS = re.compile(r"[ \t\r\f\v]*")
_DIM = re.compile(r"\s*(?:([0-9]+)|\[\s*%([A-Za-z_$][A-Za-z0-9_$-]*|[0-9]+)\s*\])\s*x")
_ELEM = re.compile(r"\s*([A-Za-z_$][A-Za-z0-9_$]*)\s*(?:,\s*(\S.*?))?\s*\Z", re.S)
_PUNCTUATION = frozenset("(){}[]<>=:,|*?")
_REFS = re.compile(r"%[A-Za-z0-9_$-]+").findall
_SHAPED_PREFIXES = ("view<", "vector<", "tensor<", "tile<")
_SHAPED_KINDS = {
    "vi": TypeKind.VIEW,
    "ve": TypeKind.VECTOR,
    "te": TypeKind.TENSOR,
    "ti": TypeKind.TILE,
}
_ATTACHING_KINDS = (TypeKind.VIEW, TypeKind.TILE)
"""Shaped kinds that take an attachment after the element type (a layout, an encoding)."""
_NAMED_TYPES: dict[str, Type] = NAMED_TYPES
_NO_TABLE = 1 << 62
"""A floor id above every value id: the line paths then look every name up in the scopes."""
_NOWHERE: dict[str, Value] = {}
"""Never holds a name: its ``get`` is the outer lookup when no outer scope is visible."""


_ZEROS = memoryview(bytes(1 << 16))


def _ascii_alnum(c: str) -> bool:
    return c.isascii() and c.isalnum()


class _OpenRegion:
    """A region op a canonical run opened (see ``Parser._open_region``): its plan and what its
    first line gave, its region, what leaving the region's scope restores, where its ``{``
    is, and the ops list the op joins when the region closes."""

    __slots__ = ("plan", "state", "name", "span", "region", "floor", "open_at", "ops")

    def __init__(
        self,
        plan: pf.OpPlan,
        state: pf.OpState,
        name: str | None,
        span: tuple[int, int, int],
        region: Region,
        floor: tuple[int, int],
        open_at: tuple[int, int],
        ops: list[Operation],
    ) -> None:
        self.plan, self.state, self.name, self.span = plan, state, name, span
        self.region, self.floor, self.open_at, self.ops = region, floor, open_at, ops


class Parser:
    """Parses one text into a module (use :func:`parse_module`)."""

    __slots__ = (
        "text",
        "siblings",
        "refused_at",
        "filename",
        "registry",
        "plans",
        "module",
        "values",
        "locations",
        "source_id",
        "n",
        "pos",
        "line_no",
        "line_start",
        "line_end",
        "toks",
        "i",
        "comment_tok",
        "pending_comments",
        "pending_blank",
        "header",
        "seen_op",
        "scopes",
        "floor",
        "floor_id",
        "live",
        "mixed",
        "resolve",
        "depth",
        "max_depth",
        "shaped_cache",
        "dynamic_cache",
        "dynamic_refs",
        "type_epoch",
        "spare_ids",
        "names",
        "run_env",
    )

    def __init__(self, text: str, filename: str, registry: OpRegistry) -> None:
        self.text = text
        self.filename = filename
        self.registry = registry
        self.plans = pf.plans_for(registry)
        self.module = module = Module()
        self.values = module.values
        self.locations = module.locations
        self.source_id = module.add_source(filename)
        self.n = len(text)
        self.pos = 0  # offset of the next line to load
        self.line_no = 0
        self.line_start = 0
        self.line_end = 0
        self.toks: list[str] = []
        self.i = 0
        self.comment_tok: str | None = None
        self.pending_comments: list[str] = []
        self.pending_blank = False
        self.header: list[str] = []
        self.seen_op = False
        self.scopes: list[Scope] = [Scope(0)]
        self.floor = 0
        self.floor_id = 0
        self.live = bytearray()
        """``live[k]`` is 1 while value ``k``, spelled ``%k``, is visible (not kept in a dict)."""
        self.siblings: tuple[int, dict[str, Value]] | None = None
        self.refused_at = -1
        """Start of the line the latest canonical run stopped at (see :meth:`canonical_run`)."""
        """While an op with result names is parsed: the number of its first line and the
        placeholders the types on that line made for those names (a type may name a result
        of its own op, ``-> (encoding<layout>, view<4xf32, %layout>)``); the results adopt
        them."""
        self.names = NamePool()
        """The names of the parsed values (joined into one string when the parse ends)."""
        self.mixed = False
        """True once some scope holds a digit name that is not its value's id (``%3`` naming
        value 7): lookups then compare the dicts with the id table."""
        self.resolve = self._make_resolve()
        self.depth = 0
        self.max_depth = MAX_DEPTH
        self.shaped_cache: dict[str, Type] = {}
        self.dynamic_cache: dict[str, tuple[Type, tuple[tuple[str, Value], ...], int]] = {}
        """Shaped types that name values, by text: the type, the values its names meant, and
        the :attr:`type_epoch` they were last known to mean them in."""
        self.dynamic_refs: set[str] = set()
        """The names those types use (defining one of them may shadow what a type meant)."""
        self.type_epoch = 0
        """Counts the changes that can change what a name means: leaving a scope, entering an
        isolated one, defining a name of :attr:`dynamic_refs`, digit names that are not ids."""
        self.spare_ids: deque[int] = deque()
        """Op location ids not yet reached by the value ids, in order: a new value whose id
        equals the first takes that int object (an int costs 32 bytes and a big module has
        about as many values as ops); op location ids below the value count reuse the values'
        ints instead."""
        self.run_env = (
            text,
            self.n,
            text.find,
            LINE_HEAD.match,
            self.plans,
            self.plans.get,
            self.locations,
            self.values,
            self.spare_ids,
            self.live,
            self.type_of_token,
        )
        """What every canonical run reads, none of it reassigned during a parse (one load)."""

    # ------------------------------------------------------------------ errors

    def error(
        self, code: str, message: str, index: int | None = None, width_to: int | None = None
    ) -> LoomParseError:
        """A LoomParseError at token ``index`` of the current line (default: current)."""
        col, end_col = self.token_columns(self.i if index is None else index, width_to)
        return self.error_at(code, message, self.line_no, col, end_col)

    def token_columns(self, index: int, width_to: int | None = None) -> tuple[int, int]:
        """1-based start and end columns of token ``index`` (through ``width_to``) of the line."""
        spans = token_spans(
            self.text, self.line_start, self.line_end, max(index, width_to or 0) + 1
        )
        if self.comment_tok is not None and len(spans) > len(self.toks):
            spans.pop()
        if index < len(spans):
            start, end = spans[index]
            if width_to is not None and width_to < len(spans):
                end = spans[width_to][1]
        elif spans:
            start = end = spans[-1][1]
            end += 1
        else:
            start = _WS.match(self.text, self.line_start, self.line_end).end()
            end = start + 1
        return start - self.line_start + 1, end - self.line_start + 1

    def error_at(
        self, code: str, message: str, line: int, col: int, end_col: int
    ) -> LoomParseError:
        """A LoomParseError at an explicit position."""
        rng = SourceRange(self.filename, max(line, 1), col, max(line, 1), end_col, text=self.text)
        diag = Diagnostic(DiagnosticSeverity.ERROR, code, message, rng)
        return LoomParseError(diag.render(), [diag])

    def expected(self, what: str, code: str = "PARSE/003") -> LoomParseError:
        """``expected X, found Y`` at the current token."""
        tok = self.peek()
        if tok is not None and len(tok) == 1 and tok not in _PUNCTUATION and not _ascii_alnum(tok):
            return self.error("PARSE/016", f"invalid character {tok!r}; expected {what}")
        if tok is not None and tok[0] == '"' and (len(tok) < 2 or tok[-1] != '"'):
            return self.error("PARSE/010", "unterminated string (missing closing '\"')")
        return self.error(code, f"expected {what}, found {describe(tok)}")

    # ------------------------------------------------------------------ lines and tokens

    def next_line(self) -> bool:
        """Load the next line with tokens, collecting comments and blank lines; False at EOF."""
        text = self.text
        while self.pos <= self.n:
            if self.pos == self.n:
                self.pos += 1
                break
            start = self.pos
            end = text.find("\n", start)
            if end < 0:
                end = self.n
            self.pos = end + 1
            self.line_no += 1
            toks = line_tokens(text, start, end)
            self.line_start, self.line_end = start, end
            if len(toks) > MAX_LINE_TOKENS:
                col = _WS.match(text, start, end).end() - start + 1
                raise self.error_at(
                    "PARSE/021",
                    f"line has more than {MAX_LINE_TOKENS} tokens; split it",
                    self.line_no,
                    col,
                    col + 1,
                )
            if not toks:
                if self.pending_comments and not self.seen_op:
                    self.header.extend(self.pending_comments)
                    self.pending_comments = []
                self.pending_blank = True
                continue
            last = toks[-1]
            if last[:2] == "//":
                toks.pop()
                self.comment_tok = last
                comment = last[2:]
                if comment[-1:] == "\r":
                    comment = comment.rstrip("\r")
                if not toks:
                    self.pending_comments.append(comment)
                    continue
                self.pending_comments.append(comment)
            else:
                self.comment_tok = None
            self.toks = toks
            self.i = 0
            return True
        self.toks = []
        self.i = 0
        self.comment_tok = None
        return False

    def peek(self) -> str | None:
        """The current token, or None at the end of the line."""
        i = self.i
        toks = self.toks
        return toks[i] if i < len(toks) else None

    def expect(self, tok: str) -> None:
        """Consume ``tok`` or report what was found instead."""
        i = self.i
        toks = self.toks
        if i < len(toks) and toks[i] == tok:
            self.i = i + 1
            return
        raise self.expected(repr(tok))

    def take(self) -> str:
        """Consume and return the current token (error at end of line)."""
        i = self.i
        toks = self.toks
        if i >= len(toks):
            raise self.error("PARSE/003", "unexpected end of line")
        self.i = i + 1
        return toks[i]

    # ------------------------------------------------------------------ values and scopes

    def _make_resolve(self):  # noqa: ANN202
        values = self.values
        live = self.live
        scopes = self.scopes

        def resolve(tok: str) -> Value | None:
            """The value ``tok`` names, looking everywhere but the innermost scope's dict."""
            best = None
            s = tok[1:]
            if s.isdigit() and len(s) <= MAX_ID_DIGITS and s.isascii():  # spelled_id inlined
                k = int(s)
                if k < len(live) and live[k] and k >= self.floor_id:
                    best = values[k]
                if not self.mixed:
                    return best
            for j in range(len(scopes) - 2, self.floor - 1, -1):
                v = scopes[j].names.get(tok)
                if v is not None:
                    # A scope deeper in the stack defined its value later: larger id wins.
                    return v if best is None or v.id > best.id else best
            return best

        return resolve

    def lookup(self, tok: str, index: int | None = None) -> Value:
        """The value named by token ``%x`` in the visible scopes."""
        v = self.scopes[-1].names.get(tok) or self.resolve(tok)
        if v is not None:
            return v
        raise self.error(
            "PARSE/001",
            f"use of undefined SSA value '{tok}'",
            self.i - 1 if index is None else index,
        )

    def type_ref(self, tok: str, index: int) -> Value:
        """The value a type names (a dynamic dim, a layout): a visible value, or a result of
        the op whose line is being read (a placeholder its result adopts)."""
        v = self.scopes[-1].names.get(tok) or self.resolve(tok)
        if v is not None:
            return v
        sib = self.siblings
        if sib is not None and sib[0] == self.line_no and tok in sib[1]:
            ph = sib[1][tok]
            if ph is None:
                ph = sib[1][tok] = Value(-1, None)  # type: ignore[arg-type]
            return ph
        return self.lookup(tok, index)

    def use(self) -> Value:
        """Consume a ``%x`` token and return its value."""
        i = self.i
        toks = self.toks
        if i < len(toks):
            tok = toks[i]
            if tok[0] == "%":
                self.i = i + 1
                v = self.scopes[-1].names.get(tok)
                if v is not None:
                    return v
                return self.lookup(tok, i)
        raise self.expected("an SSA value ('%name')")

    def new_id(self) -> int:
        """The id of the next value (sharing an equal location id's int object)."""
        vid = len(self.values)
        spare = self.spare_ids
        if spare and spare[0] == vid:
            return spare.popleft()
        return vid

    def location_id(self, lid: int) -> int:
        """Op location id ``lid`` as an int object shared with the value of that id."""
        values = self.values
        if lid < len(values):
            return values[lid].id
        self.spare_ids.append(lid)
        return lid

    def mark(self, vid: int) -> None:
        """Make value ``vid`` (spelled ``%vid``) visible."""
        live = self.live
        if vid >= len(live):
            live.extend(bytes(max(vid + 1 - len(live), len(live) >> 3, 256)))
        live[vid] = 1

    def defined_here(self, scope: Scope, k: int) -> bool:
        """True when value ``k``, spelled ``%k``, belongs to ``scope``."""
        if scope is self.scopes[-1]:
            live = self.live
            return scope.start <= k < len(live) and live[k] == 1
        return scope.args is not None and k in scope.args

    def new_value(
        self, scope: Scope | None, tok: str | None, type: Type | None, index: int, arg: bool
    ) -> Value:
        """Create a value spelled ``tok`` in ``scope`` (unnamed and invisible when None).

        ``arg`` marks region arguments, which become visible when their scope is entered.
        """
        values = self.values
        vid = self.new_id()
        if scope is None or tok is None:
            v = Value(vid, type)  # type: ignore[arg-type]
            values.append(v)
            return v
        names = scope.names
        if tok in names:
            raise self.error(
                "PARSE/002", f"SSA value '{tok}' is already defined in this scope", index
            )
        name = tok[1:]
        k = spelled_id(name)
        if k is not None and k == vid:
            # An auto-name equal to the new id stays unnamed (prints the same, saves memory).
            v = Value(vid, type)  # type: ignore[arg-type]
            if arg:
                if scope.args is None:
                    scope.args = []
                scope.args.append(vid)
            if scope is self.scopes[-1]:
                self.mark(vid)
        else:
            if k is not None:
                if self.defined_here(scope, k):
                    raise self.error(
                        "PARSE/002", f"SSA value '{tok}' is already defined in this scope", index
                    )
                self.mixed = True
                self.type_epoch += 1
            elif tok in self.dynamic_refs:
                self.type_epoch += 1
            pooled = self.names.add(vid, tok)
            v = Value(vid, type, self.names if pooled else name)  # type: ignore[arg-type]
            names[tok] = v
        values.append(v)
        return v

    def define(self, scope: Scope, tok: str, type: Type | None, index: int) -> Value:
        """Create a region argument named by token ``%x`` in ``scope`` (error if already there)."""
        return self.new_value(scope, tok, type, index, True)

    def push_scope(self, scope: Scope, isolated: bool) -> tuple[int, int]:
        """Enter ``scope``; returns what :meth:`pop_scope` restores."""
        saved = self.floor, self.floor_id
        self.scopes.append(scope)
        if isolated:
            self.type_epoch += 1
            self.floor = len(self.scopes) - 1
            self.floor_id = scope.start
        if scope.args:
            for vid in scope.args:
                self.mark(vid)
        return saved

    def pop_scope(self, saved: tuple[int, int]) -> None:
        """Leave the innermost scope: its values (and its inner scopes') stop being visible."""
        scope = self.scopes.pop()
        self.type_epoch += 1
        self.floor, self.floor_id = saved
        live = self.live
        k = scope.start
        end = min(len(self.values), len(live))
        while k < end:
            n = min(end - k, len(_ZEROS))
            live[k : k + n] = _ZEROS[:n]
            k += n

    # ------------------------------------------------------------------ types

    def is_type_start(self) -> bool:
        """True when the current token can begin a type."""
        tok = self.peek()
        return tok is not None and (tok[0].isalpha() or tok[0] == "(")

    def parse_type(self) -> Type:
        """Consume one type."""
        i = self.i
        toks = self.toks
        if i >= len(toks):
            raise self.expected("a type")
        tok = toks[i]
        t = _NAMED_TYPES.get(tok)
        if t is not None:
            self.i = i + 1
            return t
        if tok.startswith(_SHAPED_PREFIXES):
            t = self.shaped_cache.get(tok)
            if t is None:
                t = self._dynamic_shaped(tok, i)
            self.i = i + 1
            return t
        t = opaque_type(tok)
        if t is not None:
            self.i = i + 1
            return t
        if tok == FuncRefType.spelling:
            return self._func_ref()
        if tok in opaque_families():
            return self._family_type(tok)
        if tok[0].isalpha() or tok[0] == "_":
            raise self.error(
                "PARSE/007",
                f"unknown type '{tok}'; expected index, offset, i1, "
                "i8, i16, i32, i64, f16, bf16, f32, f64, buffer, view<...>, "
                "vector<...>, tensor<...> or tile<...>",
            )
        raise self.expected("a type")

    def _family_type(self, word: str) -> Type:
        """``word<N>``: a member of a declared opaque family."""
        self.i += 1
        self.expect("<")
        at = self.i
        n = self.peek()
        t = opaque_type(f"{word}<{n}>") if n is not None and n.isdigit() else None
        if t is None:
            raise self.error("PARSE/004", f"invalid type: {word}<N> takes a positive integer", at)
        self.i += 1
        self.expect(">")
        return t

    def _func_ref(self) -> Type:
        """``func.ref<[yieldable] signature>``; the signature is ``(A, ...) -> (R, ...)`` or
        (for the verifier to refuse) any other type."""
        start = self.i
        self.i += 1
        self.expect("<")
        yieldable = self.peek() == YIELDABLE
        if yieldable:
            self.i += 1
        try:
            if self.peek() == "(":
                ins = self._paren_types()
                self.expect("->")
                signature: Type = FunctionType(tuple(ins), tuple(self._paren_types()))
            else:
                signature = self.parse_type()
            self.expect(">")
            return FuncRefType(signature, yieldable)
        except ValueError as e:
            raise self.error("PARSE/004", f"invalid type: {e}", start) from None

    def _paren_types(self) -> list[Type]:
        self.expect("(")
        types: list[Type] = []
        while self.peek() != ")":
            if types:
                self.expect(",")
            types.append(self.parse_type())
        self.i += 1
        return types

    def type_of_token(self, tok: str) -> Type | None:
        """The type spelled by one token, or None when it is not a valid type (fast paths)."""
        t = _NAMED_TYPES.get(tok)
        if t is not None:
            return t
        if tok.startswith(_SHAPED_PREFIXES):
            t = self.shaped_cache.get(tok)
            if t is None:
                hit = self.dynamic_cache.get(tok)
                if hit is not None and hit[2] == self.type_epoch:
                    return hit[0]
                try:
                    t = self._dynamic_shaped(tok, self.i)
                except LoomParseError:
                    return None
            return t
        return opaque_type(tok)

    def _dynamic_shaped(self, tok: str, index: int) -> Type:
        """A shaped type naming values; reused while its names still mean the same values."""
        hit = self.dynamic_cache.get(tok)
        if hit is not None:
            t, refs, epoch = hit
            if epoch == self.type_epoch:
                return t
            scope = self.scopes[-1].names
            for name, v in refs:
                if (scope.get(name) or self.resolve(name)) is not v:
                    break
            else:
                self.dynamic_cache[tok] = (t, refs, self.type_epoch)
                return t
        t = self._shaped(tok, index)
        if tok not in self.shaped_cache:
            scope = self.scopes[-1].names
            found = tuple((name, scope.get(name) or self.resolve(name)) for name in _REFS(tok))
            if all(v is not None for _, v in found):  # not when it names its op's results
                self.dynamic_cache[tok] = (t, found, self.type_epoch)  # type: ignore[assignment]
                self.dynamic_refs.update(name for name, _ in found)
        return t

    def _shaped(self, tok: str, index: int) -> Type:
        kind = _SHAPED_KINDS[tok[:2]]
        body = tok[tok.index("<") + 1 : -1]
        dims: list[Any] = []
        pos = 0
        dynamic = False
        while True:
            m = _DIM.match(body, pos)
            if m is None:
                break
            digits = m.group(1)
            if digits is not None:
                if len(digits) > 19 or int(digits) >= 1 << 63:
                    raise self.error(
                        "PARSE/004",
                        f"invalid type '{clip(tok)}': dimension {clip(digits)} does not fit "
                        "in 64 bits (a static dimension is at most 2^63-1)",
                        index,
                    )
                dims.append(int(digits))
            else:
                dynamic = True
                dims.append(DynamicDim(self.type_ref("%" + m.group(2), index)))
            pos = m.end()
        m = _ELEM.match(body, pos)
        if m is None:
            raise self.error(
                "PARSE/004",
                f"invalid type '{tok}': expected dimensions "
                "('4x', '[%n]x') followed by an element type",
                index,
            )
        elem = SCALAR_TYPES.get(m.group(1))
        if elem is None:
            raise self.error(
                "PARSE/004", f"invalid type '{tok}': unknown element type '{m.group(1)}'", index
            )
        layout: Any = None
        if m.group(2) is not None:
            text = m.group(2)
            if kind not in _ATTACHING_KINDS:
                raise self.error(
                    "PARSE/004", f"invalid type '{tok}': a {kind.value} has no layout", index
                )
            if text[0] == "#":
                try:
                    layout = canonical_spec(text)
                except SpecError as e:
                    raise self.error(e.code, f"invalid type '{clip(tok)}': {e}", index) from None
            elif text[0] == "%" and re.fullmatch(r"%[A-Za-z0-9_$-]+", text):
                dynamic = True
                layout = self.type_ref(text, index)
            else:
                raise self.error(
                    "PARSE/004",
                    f"invalid type '{tok}': a layout is '#name' or an SSA value, found '{text}'",
                    index,
                )
        try:
            t = ShapedType(kind, elem, dims, layout)
        except (ValueError, TypeError) as e:
            raise self.error("PARSE/004", f"invalid type '{tok}': {e}", index) from None
        if not dynamic:
            self.shaped_cache[tok] = t
        return t

    # ------------------------------------------------------------------ literals

    def string(self) -> str:
        """Consume a string token and return its decoded value."""
        i = self.i
        toks = self.toks
        if i >= len(toks) or toks[i][0] != '"':
            raise self.expected("a string")
        self.i = i + 1
        try:
            return decode_string(toks[i])
        except ValueError as e:
            code = "PARSE/010" if "unterminated" in str(e) else "PARSE/009"
            raise self.error(code, f"{e}", i) from None

    def integer(self) -> int:
        """Consume an integer token."""
        i = self.i
        toks = self.toks
        tok = toks[i] if i < len(toks) else None
        if tok is None or not (is_digit(tok[0]) or (tok[0] == "-" and is_digit(tok[1:2] or " "))):
            raise self.expected("an integer")
        try:
            value = parse_int(tok)
        except ValueError as e:
            raise self.error("PARSE/009", f"bad integer literal {tok!r}: {e}", i) from None
        self.i = i + 1
        return value

    # ------------------------------------------------------------------ blocks and ops

    def parse_top_level(self) -> Module:
        """Parse the whole text."""
        module = self.module
        self.parse_block(module.body, None, top=True)
        module.file_header = tuple(self.header)
        return module

    def parse_block(
        self,
        block: Block,
        region: Region | None,
        top: bool = False,
        labels: dict[str, Block] | None = None,
        open_at: tuple[int, int] | None = None,
    ) -> Block:
        """Parse ops into ``block`` until ``}`` (left unconsumed) or, at top level, EOF.

        Labelled blocks (``^bb1(%a: T):``) start new blocks of ``region``; the last block is
        returned.
        """
        plans = self.plans
        ops = block.ops
        first = not ops  # a canonical run may have read the block's first ops
        while True:
            toks = self.toks
            i = self.i
            if i >= len(toks):
                if (
                    not top  # top-level ops are few: the general plans read them
                    and not self.pending_comments
                    and not self.pending_blank
                    and self.canonical_run(ops)
                ):
                    first = False
                    continue
                if not self.next_line():
                    if top:
                        self.trailing_trivia(block, bool(block.ops or self.header))
                        return block
                    raise self.unclosed(open_at)
                continue
            tok = toks[i]
            if tok == "}":
                if top:
                    raise self.error("PARSE/013", "unbalanced braces: '}' closes no region")
                self.trailing_trivia(block, bool(block.ops))
                self.pending_blank = False
                return block
            if tok[0] == "^":
                if region is None:
                    raise self.error("PARSE/003", f"block label {tok!r} outside a region")
                if labels is None:
                    labels = {}  # one label table for the region's blocks (filled on the first)
                block = self.parse_label(region, labels)
                ops = block.ops
                first = True
                continue
            op = self.parse_op(plans, first, top)
            if top:
                self.top_level_symbol(op)
            ops.append(op)
            first = False

    def canonical_run(self, ops: list[Operation]) -> bool:
        """Parse the run of canonical op lines starting at the next line into ``ops``
        (:meth:`_canonical_run`; types there never name an enclosing op's results). False at
        once on the line the last run stopped at (nothing has changed since: the caller
        reads that line next)."""
        if self.pos == self.refused_at:
            return False
        sib = self.siblings
        if sib is None:
            return self._canonical_run(ops)
        self.siblings = None
        try:
            return self._canonical_run(ops)
        finally:
            self.siblings = sib

    def _canonical_run(self, ops: list[Operation]) -> bool:
        """Parse canonical op lines from the next line on into ``ops`` (read by :data:`LINE_HEAD`
        and their ops' line paths, untokenized) until one they refuse; a region op's line opens
        its region here (:class:`_OpenRegion`). Returns whether any line was taken."""
        text, n, find, head, plans, get, locations, values, spare, live, type_of = self.run_env
        pool, dynamic_refs, line_results = self.names, self.dynamic_refs, self._line_results
        pos, line_no, scope, words, base, floor, outer = self._run_state()
        last, opened = -1, []
        while not self.pending_comments:
            while pos < n:
                end = find("\n", pos)
                if end < 0:
                    end = n
                m = head(text, pos, end)
                if m is None:
                    if not self._brace_line(last, pos, end, line_no):
                        break
                    if not opened:
                        return True
                    ops = self._close_region(opened)
                else:
                    _, digits, lhs, name = m.groups()
                    plan = get(name) or plans.find(name)
                    if plan is None or plan.line_re is None:
                        break
                    b = plan.line_re.fullmatch(text, m.end(), end)
                    if b is None:
                        break
                    got = plan.line_fn(self, b.groups(), scope, outer, type_of, values, live, floor)
                    if got is None:
                        break
                    if plan.head_region is None:
                        operands, rtypes, attrs = got
                        if lhs is None:
                            results = line_results(plan.line_nres, digits, rtypes, floor)
                            if results is None:
                                break
                        elif plan.line_nres != 1 or lhs in scope:
                            break  # the general plan reads (or reports) it
                        else:  # one named result, the common case
                            vid = len(values)
                            vid = spare.popleft() if spare and spare[0] == vid else vid
                            r = Value(vid, rtypes, pool if pool.add_name(vid, lhs) else lhs[1:])
                            scope[lhs] = r
                            values.append(r)
                            results = (r,)
                            if lhs in dynamic_refs:
                                self.type_epoch += 1
                        line_no += 1
                        col, end_col = m.end(1) - pos + 1, end - pos + 1
                        if words is not None and end_col <= MAX_COL and line_no <= MAX_LINE:
                            lid = len(words)
                            words.append(base | line_no << LINE_SHIFT | col << 16 | end_col)
                        else:
                            lid = locations.append_line_span(self.source_id, line_no, col, end_col)
                        if lid < len(values):
                            lid = values[lid].id  # one int object for equal ids
                        else:
                            spare.append(lid)
                        attrs = attrs and (plan.line.memo.get(attrs) or plan.line.attributes(attrs))
                        ops.append(
                            Operation(plan.name, operands, results, attrs or EMPTY_ATTRS, (), lid)
                        )
                        last = pos
                        pos = end + 1
                        continue
                    if self.depth >= self.max_depth:
                        break  # the general plan reports it
                    line_no += 1
                    ops = self._open_region(opened, plan, got, m, pos, end, line_no, ops)
                # A region was opened or closed: the scopes changed.
                last = self.line_start
                pos, line_no, scope, words, base, floor, outer = self._run_state()
            if not opened:
                break
            ops = self._close_region(opened, (pos, line_no))  # the general parser reads on
            last = self.line_start
            pos, line_no, scope, words, base, floor, outer = self._run_state()
        return self._run_end(last, pos, line_no)

    def _run_end(self, last: int, pos: int, line_no: int) -> bool:
        """End a canonical run before the line at ``pos`` (``line_no`` lines read so far;
        ``last``: where the last line it took starts, -1 if none). Whether it took any."""
        self.refused_at = pos
        if last < 0:
            return False
        self.line_start, self.line_end = last, pos - 1
        self.pos, self.line_no = pos, line_no
        self.seen_op = True
        return True

    def _run_state(self) -> tuple[int, int, dict[str, Value], Any, int, int, Any]:
        """What a canonical run reads at its start and again after each region it opens or
        closes: the next line's offset and the line count, the innermost scope's names, the
        location words and their base (see ``line_span_words``), the lowest id found in the
        value table (past every id while the scopes hold digit names), and the lookup of names
        outside the innermost scope (the one visible outer scope's ``dict.get`` where that
        finds the same values as :attr:`resolve`)."""
        words, base = self.locations.line_span_words(self.source_id) or (None, 0)
        state = (self.pos, self.line_no, self.scopes[-1].names, words, base)
        if self.mixed:
            return (*state, _NO_TABLE, self.resolve)
        outer = len(self.scopes) - 1 - self.floor  # visible scopes around the innermost
        if outer == 0:
            return (*state, self.floor_id, _NOWHERE.get)
        if outer == 1:
            return (*state, self.floor_id, self.scopes[-2].names.get)
        return (*state, self.floor_id, self.resolve)

    def _brace_line(self, last: int, pos: int, end: int, line_no: int) -> bool:
        """If the line at ``pos``..``end`` (number ``line_no + 1``) holds only ``}``, make it
        the current line (without tokenizing) and return True; ``last`` is where the run's
        last op line starts (-1: none)."""
        text = self.text
        if text[end - 1 : end] != "}" or text[pos : end - 1].strip(" \t"):
            return False
        if last >= 0:
            self.seen_op = True
        self.line_start, self.line_end = pos, end
        self.pos, self.line_no = end + 1, line_no + 1
        self.toks, self.i, self.comment_tok = ["}"], 0, None
        self.refused_at = pos
        return True

    def _open_region(
        self,
        opened: list[_OpenRegion],
        plan: pf.OpPlan,
        got: tuple,
        head: re.Match,
        pos: int,
        end: int,
        line_no: int,
        ops: list[Operation],
    ) -> list[Operation]:
        """Open the region op whose first line (``pos``..``end``, number ``line_no``, read by
        ``head``) the line path read into ``got``: its region is entered and pushed on
        ``opened``; returns the ops list of the region's first block."""
        self.pos, self.line_no = end + 1, line_no
        self.line_start, self.line_end = pos, end
        self.toks, self.i, self.comment_tok = ["{"], 0, None  # the line's last token
        self.seen_op = True
        _, digits, lhs, _ = head.groups()
        state = plan.begin_rest(got)
        field, reader = plan.head_region  # type: ignore[misc]
        region, floor, open_at = reader.open(self, state, field)
        name = "%" + digits if digits is not None else lhs
        span = (line_no, head.end(1) - pos + 1, end - pos + 1)
        opened.append(_OpenRegion(plan, state, name, span, region, floor, open_at, ops))
        return region.blocks[0].ops

    def _close_region(
        self, opened: list[_OpenRegion], read_from: tuple[int, int] | None = None
    ) -> list[Operation]:
        """Close the innermost region :meth:`_open_region` opened, its ``}`` being the current
        token, or first have the general parser read the rest of the region from the line at
        ``read_from`` (offset, number of the line before), and finish its op; returns the ops
        list the op joined."""
        o = opened.pop()
        plan, region = o.plan, o.region
        field, reader = plan.head_region  # type: ignore[misc]
        if read_from is not None:
            self.pos, self.line_no = read_from
            self.refused_at = self.pos  # the run just refused that line
            reader.read(self, region, o.floor, o.open_at)
        else:
            reader.leave(self, o.floor)
        reader.finish(self, region)
        o.state.regions[field] = region
        op = plan.finish_rest(self, o.state, o.name)
        if not op.location_id:
            line_no, col, end_col = o.span
            lid = self.locations.append_line_span(self.source_id, line_no, col, end_col)
            op.location_id = self.location_id(lid)
        o.ops.append(op)
        if read_from is not None and opened and self.pending_comments:
            # The comments after its '}' go to the next op: the general parser reads on.
            return self._close_region(opened, (self.pos, self.line_no))
        return o.ops

    def _line_results(
        self, count: int, digits: str | None, rtypes: Any, floor_id: int
    ) -> tuple[Value, ...] | None:
        """The results of a canonical op line that names none by a spelled name: one spelled
        by id (``digits``), or ``count`` unnamed ones. None when the line's spelling needs the
        general path (nothing is defined then)."""
        values, spare = self.values, self.spare_ids
        vid = len(values)
        if count != 1:
            if digits is not None:
                return None  # a line names at most one result; several take the general plan
            return tuple(self.new_value(None, None, t, 0, False) for t in rtypes)
        # floor_id > vid only while the scopes hold digit names (see mixed).
        if digits is not None and (floor_id > vid or int(digits) != vid):
            return None
        vid = spare.popleft() if spare and spare[0] == vid else vid
        r = Value(vid, rtypes)
        if digits is not None:  # the new id's own spelling: found by id
            live = self.live
            if vid < len(live):
                live[vid] = 1
            else:
                self.mark(vid)
        values.append(r)
        return (r,)

    def trailing_trivia(self, block: Block, after_something: bool) -> None:
        """Give ``block`` the comments pending before its closing ``}`` (or the end of file).

        A comment on the ``}`` line itself follows the brace, so it stays pending for whatever
        comes next. One blank line before the group is kept when something precedes it.
        """
        pending = self.pending_comments
        if not pending:
            return
        keep: list[str] = []
        if self.comment_tok is not None and self.toks:
            keep = pending[-1:]
            pending = pending[:-1]
        if pending:
            block.trailing_comments = tuple(pending)
            block.trailing_blank_line = self.pending_blank and after_something
        self.pending_comments = keep

    def unclosed(self, open_at: tuple[int, int] | None) -> LoomParseError:
        """The error for a region still open at the end of the file. ``open_at`` is the line
        and token index of its ``{`` (a negative index counts from the line's last token
        before any comment)."""
        line, index = open_at if open_at is not None else (self.line_no, 0)
        start = self._line_offset(line)
        end = self.text.find("\n", start)
        spans = token_spans(self.text, start, len(self.text) if end < 0 else end)
        if index < 0 and spans and self.text.startswith("//", spans[-1][0]):
            spans.pop()
        col = spans[index][0] - start + 1 if -len(spans) <= index < len(spans) else 1
        return self.error_at(
            "PARSE/013",
            "unbalanced braces: this '{' is never closed (found end of file)",
            line,
            col,
            col + 1,
        )

    def _line_offset(self, line: int) -> int:
        pos = 0
        for _ in range(line - 1):
            pos = self.text.find("\n", pos) + 1
        return pos

    def parse_label(self, region: Region, labels: dict[str, Block]) -> Block:
        """``^name(%a: T, ...):`` starts a new block of ``region``."""
        tok = self.take()
        label = tok[1:]
        if not labels:
            labels.update({b.label: b for b in region.blocks if b.label is not None})
        if label in labels:
            raise self.error(
                "PARSE/033", f"block label '{tok}' is already defined in this region", self.i - 1
            )
        scope = self.scopes[-1]
        args: list[Value] = []
        if self.peek() == "(":
            self.i += 1
            while self.peek() != ")":
                if args:
                    self.expect(",")
                name_i = self.i
                name = self.take()
                if name[0] != "%":
                    raise self.error(
                        "PARSE/003", f"expected a block argument ('%name'), found {name!r}", name_i
                    )
                self.expect(":")
                args.append(self.define(scope, name, self.parse_type(), name_i))
            self.i += 1
        self.expect(":")
        self.end_of_line()
        block = Block(tuple(args), label)
        block.comments = tuple(self.pending_comments)
        block.leading_blank_line = self.pending_blank
        self.pending_comments = []
        self.pending_blank = False
        labels[label] = block
        region.blocks.append(block)
        return block

    def end_of_line(self) -> None:
        """Report tokens left on the line."""
        if self.i < len(self.toks):
            raise self.expected("end of line")

    def parse_op(self, plans: pf.ParsePlans, first: bool, top: bool) -> Operation:
        """Parse one op starting at the current token (first on its line)."""
        toks = self.toks
        i = self.i
        line = self.line_no
        lhs: list[str] | None = None
        if toks[i][0] == "%" and i + 2 < len(toks) and toks[i + 1] == "=":
            lhs = [toks[i]]  # the common single result
            i += 2
        elif toks[i][0] == "%":
            lhs = []
            while True:
                tok = toks[i] if i < len(toks) else None
                if tok is None or tok[0] != "%":
                    self.i = i
                    raise self.expected("a result name ('%name')")
                lhs.append(tok)
                i += 1
                sep = toks[i] if i < len(toks) else None
                if sep == ",":
                    i += 1
                elif sep == "=":
                    i += 1
                    break
                else:
                    self.i = i
                    raise self.expected("'=' or ',' after the result names")
        name = toks[i] if i < len(toks) else None
        plan = plans.find(name) if name is not None else None
        if plan is None:
            self.i = i
            if name is None or not (name[0].isalpha() or name[0] == "_"):
                raise self.expected("an op name")
            raise self.error("PARSE/006", self.registry.unknown_message(name))
        # The op's span: its line's tokens (ops always start a line), without the comment.
        text = self.text
        ls = self.line_start
        start = text.find(toks[0], ls, self.line_end)
        if start != ls and text[ls:start].strip(" \t\r\f\v"):
            start = _WS.match(text, ls, self.line_end).end()  # pragma: no cover - odd spaces
        end = self.line_end
        if self.comment_tok is not None:
            end -= len(self.comment_tok)
        while end > start and text[end - 1] in " \t\r":
            end -= 1
        # Take the comments now: the op's regions collect comments of their own.
        comments: list[str] | None = self.pending_comments
        if comments:
            self.pending_comments = []
        else:
            comments = None
        blank = self.pending_blank and not first and self.seen_op
        self.seen_op = True
        self.pending_blank = False
        self.i = i + 1
        op = plan.parse(self, lhs, i)
        if comments:
            op.comments = tuple(comments)
        if blank:
            op.leading_blank_line = True
        if not op.location_id:
            # Op spans start on distinct lines, so they need no deduplication lookup.
            op.location_id = self.location_id(
                self.locations.append_span(self.source_id, line, start - ls + 1, line, end - ls + 1)
            )
        return op

    def brace_location(self) -> int:
        """A location id for the current token (the ``}`` closing a region)."""
        if self.i == 0:  # the usual case: the brace starts its line
            start = self.text.find("}", self.line_start, self.line_end) - self.line_start
            col = (start + 1, start + 2)
        else:
            col = self.token_columns(self.i)
        lid = self.locations.append_line_span(self.source_id, self.line_no, col[0], col[1])
        return self.location_id(lid)

    def line_span(self) -> tuple[int, int]:
        """1-based start and end (exclusive) columns of the current line's tokens."""
        text = self.text
        start = _WS.match(text, self.line_start, self.line_end).end()
        end = self.line_end
        if self.comment_tok is not None:
            end -= len(self.comment_tok)
        while end > start and text[end - 1] in " \t\r":
            end -= 1
        ls = self.line_start
        return start - ls + 1, end - ls + 1

    def top_level_symbol(self, op: Operation) -> None:
        """Register a top-level symbol-defining op in ``module.symbols``."""
        attr = self.plans[op.name].symbol_attr
        if attr is None:
            return
        name = op.attributes.get(attr)
        if name is None:
            return
        symbols = self.module.symbols
        if name not in symbols:  # a second definition is the verifier's SYMBOL/005
            symbols[name] = op

    # ------------------------------------------------------------------ locations

    def parse_loc(self) -> int:
        """``loc(...)`` after an op; returns the location id."""
        self.expect("loc")
        self.expect("(")
        loc_id = self._loc_body()
        self.expect(")")
        return loc_id

    def _loc_body(self, depth: int = 0) -> int:
        if depth > 16:
            raise self.error("PARSE/011", "bad location: nested too deeply")
        tok = self.peek()
        module = self.module
        try:
            if tok == "unknown":
                self.i += 1
                return 0
            if tok is not None and tok[0] == '"':
                source = module.add_source(self.string())
                self.expect(":")
                line = self.integer()
                self.expect(":")
                col = self.integer()
                end_line, end_col = line, col
                if self.peek() == "to":
                    self.i += 1
                    end_line = self.integer()
                    self.expect(":")
                    end_col = self.integer()
                return module.add_location(FileLocation(source, line, col, end_line, end_col))
            if tok == "fused":
                self.i += 1
                self.expect("<")
                children = [self._loc_body(depth + 1)]
                while self.peek() == ",":
                    self.i += 1
                    children.append(self._loc_body(depth + 1))
                self.expect(">")
                return module.add_location(FusedLocation(tuple(children)))
            if tok == "opaque":
                self.i += 1
                self.expect("<")
                source = module.add_source(self.string())
                self.expect(",")
                data = self.string().encode("utf-8")
                self.expect(">")
                return module.add_location(OpaqueLocation(source, data))
            if tok == "tagged":
                self.i += 1
                self.expect("<")
                tag = self.integer()
                self.expect(",")
                hex_i = self.i
                try:
                    data = bytes.fromhex(self.string())
                except ValueError:
                    raise self.error(
                        "PARSE/011", "bad location: tagged data must be hex digits", hex_i
                    ) from None
                child = 0
                if self.peek() == ",":
                    self.i += 1
                    child = self._loc_body(depth + 1)
                self.expect(">")
                if not 0 <= tag <= 0xFFFF:
                    raise self.error(
                        "PARSE/011", f"bad location: tag {tag} is not in 0..65535", hex_i - 2
                    )
                return module.add_location(TaggedLocation(tag, child, data))
        except LoomParseError as e:
            d = e.diagnostics[0]
            if d.code == "PARSE/011":
                raise
            d.code = "PARSE/011"
            d.message = f"bad location: {d.message}"
            raise LoomParseError(d.render(), [d]) from None
        raise self.error(
            "PARSE/011",
            "bad location: expected a file location "
            '("file":line:col), fused<...>, opaque<...>, tagged<...> or '
            f"unknown, found {describe(tok)}",
        )


def parse_module(
    text: str, *, filename: str = "<input>", ops: OpRegistry | Iterable[OpDef] | None = None
) -> Module:
    """Parse Loom text into a module; raises :class:`LoomParseError` on any malformed input."""
    if not isinstance(text, str):
        raise TypeError(f"parse_module() takes text (str), got {type(text).__name__}")
    registry = as_registry(ops)
    parser = Parser(text, filename, registry)
    # Regions nest by recursion (MAX_DEPTH bounds it) and parsing forms no garbage cycles:
    # both process-wide switches are held for the parse only and restored on every exit.
    try:
        with gc_paused(), recursion_limit_at_least(20 * MAX_DEPTH):
            module = parser.parse_top_level()
    except RecursionError:  # pragma: no cover - depth is bounded before this can happen
        raise parser.error("PARSE/015", "input nested too deeply") from None
    parser.names.flush()
    module.source_texts[filename] = text
    return module
