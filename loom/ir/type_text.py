"""Canonical spelling of types (shared by the printer, diagnostics and ``repr``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from loom.ir.types import (
    YIELDABLE,
    BufferType,
    DynamicDim,
    FuncRefType,
    FunctionType,
    OpaqueType,
    ScalarType,
    ShapedType,
    Type,
)

if TYPE_CHECKING:
    from loom.ir.values import Value


def _default_name(value: Value) -> str:
    return value.display_name


def type_to_text(t: Type, name_of: Callable[[Value], str] = _default_name) -> str:
    """Spell ``t`` canonically; ``name_of`` names the values bound to dynamic dims."""
    if isinstance(t, ScalarType):
        return t.spelling
    if isinstance(t, BufferType):
        return "buffer"
    if isinstance(t, OpaqueType):
        return t.name
    if isinstance(t, ShapedType):
        parts = []
        for d in t.dims:
            if isinstance(d, DynamicDim):
                parts.append("[?]" if d.value is None else f"[%{name_of(d.value)}]")
            else:
                parts.append(str(d.size))
        parts.append(t.element_type.spelling)
        body = "x".join(parts)
        if t.encoding is not None:
            enc = t.encoding if isinstance(t.encoding, str) else f"%{name_of(t.encoding)}"
            body += f", {enc}"
        return f"{t.kind.value}<{body}>"
    if isinstance(t, FunctionType):
        ins = ", ".join(type_to_text(x, name_of) for x in t.inputs)
        outs = ", ".join(type_to_text(x, name_of) for x in t.results)
        return f"({ins}) -> ({outs})"
    if isinstance(t, FuncRefType):
        head = f"{t.spelling}<{YIELDABLE} " if t.yieldable else f"{t.spelling}<"
        return head + type_to_text(t.signature, name_of) + ">"
    raise TypeError(f"not a Loom type: {t!r}")
