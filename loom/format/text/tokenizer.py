"""The Loom text tokenizer (reference 1.1): one compiled regex, scanned one line at a time.

No Loom token spans a line, so the parser asks for the tokens of one line at a time with
:func:`line_tokens` (a C-level ``findall`` without copying the line); token positions are only
recomputed with :func:`token_spans` when a diagnostic needs a column. Tokens are plain strings
whose first character tells their class (``%`` value, ``@`` symbol, ``"`` string, ``^`` label,
``#`` hash attribute, digit or ``-`` number, ``/`` comment, letter identifier, else punctuation).
Shaped types (``view<...>``, ``vector<...>``, ``tensor<...>``, ``tile<...>``) are single tokens
so that ``4x8xf32`` never reads as hex or as identifiers; so is a role-qualified
``encoding<layout>``, which every type position then reads as one name.
"""

from __future__ import annotations

import json
import re
from itertools import islice

_IDENT = r"[A-Za-z_$][A-Za-z0-9_$]*"
# Alternatives whose first characters overlap keep their relative order (shaped types before
# identifiers, hex before decimal, everything before the catch-all); the most frequent come
# first because the regex tries them in order at each position.
_PATTERNS = (
    r"%(?:[A-Za-z_$][A-Za-z0-9_$-]*|[0-9]+)",  # SSA value
    r"(?:view|vector|tensor|tile)<(?:[^<>\n]|<[^<>\n]*>)*>",  # shaped type, one token
    rf"(?:encoding<[a-z_]+>|{_IDENT}(?:\.{_IDENT})*)",  # identifier, op name, encoding<role>
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
_finditer = TOKEN_RE.finditer
MAX_INT_DIGITS = 4300
"""Longest integer literal accepted (digits after any sign and ``0x``): Python's default limit
for decimal conversion, applied to hex too so no literal costs more than the text it came from."""
MAX_HEX_DIGITS = 3571
"""Longest hex literal accepted: its value still prints in at most :data:`MAX_INT_DIGITS`
decimal digits (3571 * 4 bits < 4300 * log2(10))."""
MAX_LINE_TOKENS = 1 << 20
"""Most tokens one line may hold: a longer line is reported before its tokens are all made, so
memory stays a small multiple of the input (see :func:`line_tokens`)."""
_CONTROL = re.compile(r"[\x00-\x1f]")
_SPECIAL_FLOATS = {
    "inf": float("inf"),
    "-inf": float("-inf"),
    "nan": float("nan"),
    "-nan": -float("nan"),
}


def line_tokens(text: str, start: int, end: int) -> list[str]:
    """Tokens of ``text[start:end]`` (one line, without its newline).

    A line that could hold more than :data:`MAX_LINE_TOKENS` tokens is read token by token and
    cut after one more than that, so the caller sees it is too long without building them all.
    """
    if end - start <= MAX_LINE_TOKENS:
        return _findall(text, start, end)
    return [m.group() for m in islice(_finditer(text, start, end), MAX_LINE_TOKENS + 1)]


def token_spans(text: str, start: int, end: int, upto: int | None = None) -> list[tuple[int, int]]:
    """``(start, end)`` offsets of each token of the line, in the same order as line_tokens;
    with ``upto``, only those of tokens ``0..upto`` (a diagnostic needs no more)."""
    found = _finditer(text, start, end)
    if upto is not None:
        found = islice(found, upto + 1)
    return [m.span() for m in found]


def is_number_token(tok: str) -> bool:
    """True for integer and float tokens (``-inf``/``-nan`` included)."""
    c = tok[0]
    return "0" <= c <= "9" or (c == "-" and len(tok) > 1 and tok[1] != ">")


def describe(tok: str | None) -> str:
    """How a token is named in messages."""
    return "end of line" if tok is None else repr(clip(tok))


def clip(text: str, limit: int = 200) -> str:
    """``text`` shortened for a message (a hostile token may be megabytes long)."""
    return text if len(text) <= limit else f"{text[: limit // 2]}...{text[-8:]}"


def is_digit(c: str) -> bool:
    """True for an ASCII digit (``str.isdigit`` also accepts ``'٣'`` and ``'²'``)."""
    return "0" <= c <= "9"


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
    """An integer token (decimal or ``0x`` hex) as int; ValueError when it is not one.

    Only ASCII digits count (``int()`` alone also reads ``'٣'``), and a literal longer than
    :data:`MAX_INT_DIGITS` digits is refused with a reason.
    """
    if not tok.isascii():
        raise ValueError("only ASCII digits 0-9 may spell a number")
    digits = len(tok) - (tok[0] in ("+", "-"))
    if "x" in tok or "X" in tok:
        digits -= 2
        if digits > MAX_HEX_DIGITS:
            raise ValueError(f"it has {digits} hex digits; at most {MAX_HEX_DIGITS} are accepted")
        return int(tok, 16)
    if "." in tok or "e" in tok or "E" in tok:
        raise ValueError("expected an integer, found a float literal")
    if digits > MAX_INT_DIGITS:
        raise ValueError(f"it has {digits} digits; at most {MAX_INT_DIGITS} are accepted")
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
