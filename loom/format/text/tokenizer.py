"""The Loom text tokenizer (reference 1.1): one compiled regex, scanned one line at a time.

No Loom token spans a line, so the parser asks for the tokens of one line at a time with
:func:`line_tokens` (a C-level ``findall`` without copying the line); token positions are only
recomputed with :func:`token_spans` when a diagnostic needs a column. Tokens are plain strings
whose first character tells their class (``%`` value, ``@`` symbol, ``"`` string, ``^`` label,
``#`` hash attribute, digit or ``-`` number, ``/`` comment, letter identifier, else punctuation).
Shaped types (``view<...>``, ``vector<...>``) are single tokens so that ``4x8xf32`` never reads
as hex or as identifiers.
"""

from __future__ import annotations

import json
import re

_IDENT = r"[A-Za-z_$][A-Za-z0-9_$]*"
# Alternatives whose first characters overlap keep their relative order (shaped types before
# identifiers, hex before decimal, everything before the catch-all); the most frequent come
# first because the regex tries them in order at each position.
_PATTERNS = (
    r"%(?:[A-Za-z_$][A-Za-z0-9_$-]*|[0-9]+)",  # SSA value
    r"(?:view|vector)<(?:[^<>\n]|<[^<>\n]*>)*>",  # shaped type, one token
    rf"{_IDENT}(?:\.{_IDENT})*",  # identifier or op name
    r"[(){}\[\]<>=:,|*?]",  # punctuation
    r"//[^\n]*",  # line comment (kept as trivia)
    r'"(?:[^"\\\n]|\\.)*"?',  # string; no closing quote means unterminated
    rf"@{_IDENT}(?:\.{_IDENT})*",  # symbol (dots allowed)
    r"\^[A-Za-z0-9_$]+",  # block label
    rf"#{_IDENT}(?:\.{_IDENT})*(?:<[^<>\n]*>)?",  # hash attribute / layout
    r"-?0[xX][0-9a-fA-F]+",  # hex integer
    r"-?[0-9]+(?:\.[0-9]*)?(?:[eE][+-]?[0-9]+)?",  # integer or float
    r"-(?:inf|nan)(?![A-Za-z0-9_$.])",  # negative special floats
    r"->",
    r"\S",  # anything else: reported as an invalid character
)
TOKEN_RE = re.compile("|".join(_PATTERNS))
"""The token regex; alternatives are tried in order at each position."""

_findall = TOKEN_RE.findall
_CONTROL = re.compile(r"[\x00-\x1f]")
_SPECIAL_FLOATS = {
    "inf": float("inf"),
    "-inf": float("-inf"),
    "nan": float("nan"),
    "-nan": -float("nan"),
}


def line_tokens(text: str, start: int, end: int) -> list[str]:
    """Tokens of ``text[start:end]`` (one line, without its newline)."""
    return _findall(text, start, end)


def token_spans(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """``(start, end)`` offsets of each token of the line, in the same order as line_tokens."""
    return [m.span() for m in TOKEN_RE.finditer(text, start, end)]


def is_number_token(tok: str) -> bool:
    """True for integer and float tokens (``-inf``/``-nan`` included)."""
    c = tok[0]
    return c.isdigit() or (c == "-" and len(tok) > 1 and tok[1] != ">")


def decode_string(tok: str) -> str:
    """The value of a string token; raises ValueError with a reason when malformed."""
    if len(tok) < 2 or tok[-1] != '"' or (tok[-2] == "\\" and not _even_backslashes(tok)):
        raise ValueError("unterminated string")
    body = tok[1:-1]
    if "\\" not in body:
        if _CONTROL.search(body):
            raise ValueError("raw control character in string (use an escape such as \\n)")
        return body
    try:
        value = json.loads(tok)
    except ValueError as e:
        raise ValueError(f"invalid string escape ({e.msg})") from None
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError("lone UTF-16 surrogate in string escape") from None
    return value


def _even_backslashes(tok: str) -> bool:
    """True when the closing quote of ``tok`` is not escaped."""
    n = 0
    i = len(tok) - 2
    while i > 0 and tok[i] == "\\":
        n += 1
        i -= 1
    return n % 2 == 0


def parse_int(tok: str) -> int:
    """An integer token (decimal or ``0x`` hex) as int; ValueError when it is not one."""
    if "x" in tok or "X" in tok:
        return int(tok, 16)
    if "." in tok or "e" in tok or "E" in tok:
        raise ValueError("expected an integer, found a float literal")
    return int(tok)


def parse_float(tok: str) -> float:
    """A float token (also ``inf``, ``-inf``, ``nan``, ``-nan``) as float."""
    special = _SPECIAL_FLOATS.get(tok)
    if special is not None:
        return special
    return float(tok)


def is_float_spelling(tok: str) -> bool:
    """True when the number token is spelled as a float (``1.5``, ``1e3``, ``inf``)."""
    return tok in _SPECIAL_FLOATS or (
        "x" not in tok and "X" not in tok and ("." in tok or "e" in tok or "E" in tok)
    )
