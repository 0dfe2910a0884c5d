"""Canonical spellings of literals shared by the printer and the parser."""

from __future__ import annotations

import math

from loom.errors import LoomPrintError
from loom.ir import FloatLiteral

_ESCAPES = {
    '"': '\\"',
    "\\": "\\\\",
    "\b": "\\b",
    "\f": "\\f",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
}


def quote_string(text: str) -> str:
    """``"..."`` with only quote, backslash and control characters escaped."""
    out = ['"']
    for ch in text:
        esc = _ESCAPES.get(ch)
        if esc is not None:
            out.append(esc)
        elif ord(ch) < 0x20:
            out.append(f"\\u{ord(ch):04X}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def format_float(value: float) -> str:
    """Authored spelling for parsed literals; otherwise the shortest round-trip repr."""
    if isinstance(value, FloatLiteral):
        return value.spelling
    if math.isnan(value):
        return "nan" if math.copysign(1.0, value) > 0 else "-nan"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    text = repr(float(value))
    return text if any(c in text for c in ".eE") else text + ".0"


def format_scalar_literal(value: object) -> str:
    """An int, bool or float attribute value as text."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        try:
            return str(value)
        except ValueError:  # past Python's int-to-text digit limit; no parser would read it
            raise LoomPrintError(
                f"integer of {value.bit_length()} bits is too long to print"
            ) from None
    if isinstance(value, float):
        return format_float(value)
    raise TypeError(f"not a scalar literal: {value!r}")
