"""Static encoding specs: the ``#family<name=value, ...>`` attributes of the encoding dialect.

A spec is kept in attributes as its canonical text (``#q8_0<block=32>``: parameters sorted by
name, ``name=value`` without spaces, ``, `` between parameters), so text, bytecode and
comparison treat it as a plain string. :func:`parse_spec` reads any spelling into an
:class:`EncodingSpec` (family, parameters) and :meth:`EncodingSpec.text` spells it canonically.
Parameter values are ints, strings (:class:`Quoted`), bare words (enum cases, ``str``), bools,
int lists (``tuple``) or nested specs.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any


class Quoted(str):
    """A quoted string parameter (``family="hadamard"``), as opposed to a bare word."""

    __slots__ = ()


@dataclass(frozen=True)
class EncodingSpec:
    """One static encoding: ``family`` (``q8_0``, ``encoding.layout.dense``) and parameters."""

    family: str
    params: tuple[tuple[str, Any], ...] = ()

    def get(self, name: str, default: Any = None) -> Any:
        """The value of parameter ``name``, or ``default``."""
        for k, v in self.params:
            if k == name:
                return v
        return default

    @property
    def names(self) -> tuple[str, ...]:
        """Parameter names, in canonical (sorted) order."""
        return tuple(k for k, _ in self.params)

    def text(self) -> str:
        """The canonical spelling."""
        if not self.params:
            return f"#{self.family}"
        inner = ", ".join(f"{k}={value_text(v)}" for k, v in self.params)
        return f"#{self.family}<{inner}>"


def value_text(v: Any) -> str:
    """Canonical spelling of one parameter value."""
    if isinstance(v, EncodingSpec):
        return v.text()
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, Quoted):
        return json.dumps(str(v))
    if isinstance(v, tuple):
        return "[" + ", ".join(value_text(x) for x in v) + "]"
    return str(v)


class SpecError(ValueError):
    """A malformed spec; ``code`` is the diagnostic code, ``param`` the parameter involved."""

    def __init__(self, message: str, code: str = "PARSE/004", param: str | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.param = param


_TOKEN = re.compile(
    r"\s*(?:(?P<hash>#[A-Za-z_][\w$]*(?:\.[A-Za-z_][\w$]*)*)|(?P<ssa>%[\w$-]+)"
    r'|(?P<str>"(?:[^"\\]|\\.)*")|(?P<num>-?(?:0[xX][0-9a-fA-F]+|[0-9]+))'
    r"|(?P<word>[A-Za-z_][\w$]*(?:\.[A-Za-z_][\w$]*)*)|(?P<p>[<>=,\[\]]))"
)


class _Reader:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def next(self) -> tuple[str, str]:
        m = _TOKEN.match(self.text, self.pos)
        if m is None:
            rest = self.text[self.pos :].strip()
            if not rest:
                return ("end", "")
            raise SpecError(f"unexpected '{rest[:12]}' in encoding spec {self.text!r}")
        self.pos = m.end()
        kind = m.lastgroup or "p"
        return (kind, m.group(kind))

    def peek(self) -> tuple[str, str]:
        pos = self.pos
        try:
            return self.next()
        finally:
            self.pos = pos

    def expect(self, text: str) -> None:
        kind, tok = self.next()
        if tok != text or kind not in ("p",):
            raise SpecError(f"expected '{text}' in encoding spec {self.text!r}, found '{tok}'")

    def spec(self) -> EncodingSpec:
        kind, tok = self.next()
        if kind != "hash":
            raise SpecError(f"expected '#family' in encoding spec, found '{tok}'")
        family = tok[1:]
        params: dict[str, Any] = {}
        if self.peek() == ("p", "<"):
            self.next()
            while True:
                kind, name = self.next()
                if kind != "word":
                    raise SpecError(f"expected a parameter name in #{family}<...>, found '{name}'")
                self.expect("=")
                if name in params:
                    raise SpecError(f"parameter '{name}' of #{family} is given twice", param=name)
                params[name] = self.value(family, name)
                kind, tok = self.next()
                if tok == ">":
                    break
                if tok != ",":
                    raise SpecError(f"expected ',' or '>' in #{family}<...>, found '{tok}'")
        return EncodingSpec(family, tuple(sorted(params.items())))

    def value(self, family: str, name: str) -> Any:
        kind, tok = self.peek()
        if kind == "hash":
            return self.spec()
        self.next()
        if kind == "ssa":
            raise SpecError(
                f"static parameter '{name}' of #{family} names SSA value {tok}; dynamic "
                f"parameters go in the operand dictionary: {{{name} = {tok} : T}}",
                "PARSE/028",
                name,
            )
        if kind == "num":
            return int(tok, 0)
        if kind == "str":
            return Quoted(json.loads(tok))
        if kind == "word":
            return {"true": True, "false": False}.get(tok, tok)
        if tok == "[":
            items: list[int] = []
            while self.peek() != ("p", "]"):
                if items:
                    self.expect(",")
                k, t = self.next()
                if k != "num":
                    raise SpecError(f"expected an integer in '{name}' of #{family}, found '{t}'")
                items.append(int(t, 0))
            self.next()
            return tuple(items)
        raise SpecError(f"expected a value for '{name}' in #{family}<...>, found '{tok}'")


@lru_cache(maxsize=1024)
def parse_spec(text: str) -> EncodingSpec:
    """Read one spec (any spacing and parameter order); raises :class:`SpecError`."""
    r = _Reader(text)
    spec = r.spec()
    kind, tok = r.next()
    if kind != "end":
        raise SpecError(f"unexpected '{tok}' after encoding spec #{spec.family}")
    return spec


def canonical_spec(text: str) -> str:
    """The canonical spelling of ``text``; raises :class:`SpecError`."""
    return parse_spec(text).text()
