"""Pygments lexer for Loom text; its op names, types and keywords come from the op registry.

Registered through the ``pygments.lexers`` entry point, so ``pygmentize -l loom file.loom``,
nbconvert and Sphinx find it. Nothing op-specific is spelled here: the word sets are read from
the declarations (op names, enum cases, flags, format keywords, clause names, attribute names),
the scalar type spellings and the shaped type kinds.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from pygments.lexer import RegexLexer, bygroups
from pygments.token import (
    Comment,
    Keyword,
    Name,
    Number,
    Operator,
    Punctuation,
    String,
    Text,
    _TokenType,
)

from loom.dsl import AttrKind, FormatElement, OpDef
from loom.ir import (
    PREDICATE_ARITY,
    SCALAR_TYPES,
    FuncRefType,
    TypeKind,
    opaque_families,
    opaque_types,
)
from loom.ir.attributes import TYPED_INT_RANGES
from loom.ir.types import YIELDABLE
from loom.registry import OpRegistry, as_registry

__all__ = ["LoomLexer", "LoomWords", "loom_words"]

_IDENT = r"[A-Za-z_$][A-Za-z0-9_$]*"
_LITERAL_WORDS = frozenset({"true", "false"})
"""Boolean literals of the text format (reference 1.1)."""
_SHAPED = "|".join(
    k.value for k in (TypeKind.VIEW, TypeKind.VECTOR, TypeKind.TENSOR, TypeKind.TILE)
)
"""Type keywords followed by a ``<shape x element>`` list."""
_LOCATION_WORDS = frozenset({"loc", "fused", "opaque", "tagged", "unknown"})
"""Words of the ``loc(...)`` source-location syntax (reference 1.8), not of any op."""


@dataclass(frozen=True)
class LoomWords:
    """The word classes the lexer recognises, read from one declaration set."""

    ops: frozenset[str]
    types: frozenset[str]
    keywords: frozenset[str]
    constants: frozenset[str]
    attributes: frozenset[str]


def _format_words(elems: Iterable[FormatElement], out: set[str]) -> None:
    for e in elems:
        out.update(e.keywords())  # each element names the words it spells


def _decl_words(d: OpDef, keywords: set[str], constants: set[str], attributes: set[str]) -> None:
    for fmt in (d.format, *d.legacy_formats):
        _format_words(fmt, keywords)
    for a in d.attrs:
        attributes.add(a.name)
        if a.enum is not None:
            constants.update(a.enum.cases)
        if a.flags is not None:
            constants.update(a.flags.flags)
        if a.kind == AttrKind.PREDICATES:
            constants.update(PREDICATE_ARITY)


def loom_words(ops: OpRegistry | Iterable[OpDef] | None = None) -> LoomWords:
    """Collect op names, type names, keywords, enum cases and attribute names from ``ops``."""
    return as_registry(ops).plan(_words_of)


def _words_of(reg: OpRegistry) -> LoomWords:
    keywords: set[str] = set()
    constants: set[str] = set(_LITERAL_WORDS)
    attributes: set[str] = set()
    for d in reg:
        _decl_words(d, keywords, constants, attributes)
    types = set(SCALAR_TYPES) | {
        k.value
        for k in TypeKind
        if k not in (TypeKind.SCALAR, TypeKind.FUNCTION, TypeKind.OPAQUE, TypeKind.FUNC_REF)
    }
    types.add(FuncRefType.spelling)
    keywords.add(YIELDABLE)
    if any(a.kind == AttrKind.DICT for d in reg for a in d.attrs):
        # dictionary values spell typed integers and byte strings: ``u64(3)``, ``bytes("00")``
        types.update(TYPED_INT_RANGES)
        keywords.add("bytes")
    # dialect types (``kernel.async.token``) are named by the constraints that fix them
    for d in reg:
        for f in (*d.operands, *d.results):
            fixed = f.constraint.fixed
            if fixed is not None and fixed.kind is TypeKind.OPAQUE:
                types.add(str(fixed))
    # a role-qualified type (``encoding<layout>``) lexes as a word, ``<``, a word, ``>``
    for t in opaque_types():
        if "<" in t.name and t.name.split("<", 1)[0] in reg.dialects():
            types.update(t.name[:-1].split("<"))
    # a family member (``pool<16>``) lexes as its word, ``<``, a number, ``>``
    types.update(opaque_families())
    words = {w for w in keywords if w.replace("_", "a").isalnum()}
    return LoomWords(
        ops=frozenset(reg.names),
        types=frozenset(types),
        keywords=frozenset((words | _LOCATION_WORDS) - types),
        constants=frozenset(constants - types),
        attributes=frozenset(attributes),
    )


def _word_token(words: LoomWords, text: str) -> _TokenType:
    if text in words.types:
        return Keyword.Type
    if text in words.constants:
        return Name.Constant
    if text in words.keywords:
        return Keyword
    return Name


def _dotted(lexer: LoomLexer, match: Any) -> Iterator[tuple[int, _TokenType, str]]:
    text = match.group(0)
    words = lexer.words
    token = (
        Name.Builtin if text in words.ops else Keyword.Type if text in words.types else Name.Other
    )
    yield match.start(), token, text


def _bare(lexer: LoomLexer, match: Any) -> Iterator[tuple[int, _TokenType, str]]:
    text = match.group(0)
    yield match.start(), _word_token(lexer.words, text), text


def _shape_type(lexer: LoomLexer, match: Any) -> Iterator[tuple[int, _TokenType, str]]:
    """``view`` or ``vector`` opening a shape list, or any other word before ``<``."""
    text = match.group(1)
    yield match.start(1), _word_token(lexer.words, text), text
    yield match.start(2), Punctuation, match.group(2)


def _template_name(lexer: LoomLexer, match: Any) -> Iterator[tuple[int, _TokenType, str]]:
    """``<name.dotted>`` glued to an op: a provider name (or a single flag / enum word)."""
    yield match.start(1), Punctuation, match.group(1)
    text = match.group(2)
    token = _word_token(lexer.words, text) if "." not in text else Name
    yield match.start(2), Name.Entity if token is Name else token, text
    yield match.start(3), Punctuation, match.group(3)


_NUMBER_RULES = [
    (r"-?(?:\d+\.\d*(?:[eE][+-]?\d+)?|\d+[eE][+-]?\d+)", Number.Float),
    (r"-?(?:inf|nan)\b", Number.Float),
    (r"-?0x[0-9a-fA-F]+", Number.Hex),
    (r"-?\d+", Number.Integer),
]


class LoomLexer(RegexLexer):
    """Lexer for Loom IR text (``.loom`` files and ``.loom-test`` corpora)."""

    name = "Loom"
    aliases = ["loom"]
    filenames = ["*.loom", "*.loom-test"]
    mimetypes = ["text/x-loom"]

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.words = loom_words(options.get("ops"))

    tokens = {
        "root": [
            (r"[ \t\r\n]+", Text),
            (r"//\s*(?:RUN:|ERROR@|WARNING@|NOTE@|REMARK@|====|----).*?$", Comment.Special),
            (r"//.*?$", Comment.Single),
            (r'"', String.Double, "string"),
            (r"%" + _IDENT + r"(?:-[A-Za-z0-9_$]+)*", Name.Variable),
            (r"%\d+", Name.Variable),
            (r"@" + _IDENT + r"(?:\." + _IDENT + r")*", Name.Function),
            (r"\^(?:" + _IDENT + r"|\d+)", Name.Label),
            (r"#" + _IDENT + r"(?:\." + _IDENT + r")*", Name.Decorator),
            (r"(" + _IDENT + r")(\s*)(=)(?![=>])", bygroups(Name.Attribute, Text, Operator)),
            (r"(" + _SHAPED + r")(<)", _shape_type, "shape"),
            (_IDENT + r"(?:\." + _IDENT + r")+", _dotted),
            (r"(?<=[A-Za-z0-9_])(<)(" + _IDENT + r"(?:\." + _IDENT + r")*)(>)", _template_name),
            *_NUMBER_RULES,
            (_IDENT, _bare),
            (r"->", Operator),
            (r"[=|]", Operator),
            (r"[(){}\[\]<>:,?*]", Punctuation),
            (r"-", Operator),
            (r".", Text),
        ],
        "shape": [
            (r"[ \t]+", Text),
            (r"(\d+)(x)", bygroups(Number.Integer, Punctuation)),
            (r"(\])(x)", bygroups(Punctuation, Punctuation)),
            (r"(\?)(x)", bygroups(Punctuation, Punctuation)),
            (r"\[", Punctuation),
            (r"%" + _IDENT, Name.Variable),
            (r"%\d+", Name.Variable),
            (r"\d+", Number.Integer),
            (r"#" + _IDENT + r"(?:\." + _IDENT + r")*", Name.Decorator),
            (r"(" + _IDENT + r")(<)", _shape_type, "#push"),
            (_IDENT, _bare),
            (r"[=,?]", Punctuation),
            (r">", Punctuation, "#pop"),
            (r"[\r\n]", Text, "#pop"),
            (r".", Text),
        ],
        "string": [
            (r'\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4})', String.Escape),
            (r'[^"\\\n]+', String.Double),
            (r'"', String.Double, "#pop"),
            (r"\\", String.Double),
            (r"\n", String.Double, "#pop"),
        ],
    }
