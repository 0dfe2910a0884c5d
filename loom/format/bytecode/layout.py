"""Constants of the Loom bytecode layout shared by the writer and the reader."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

from loom.diagnostics import count_of
from loom.dsl import OpDef
from loom.ir import SCALAR_TYPES, ScalarType
from loom.opview import SEGMENTS_ATTR
from loom.typecheck import attr_problem

MAGIC = b"LOOM"
FORMAT_VERSION = 1
"""Our own format version; readers refuse any other."""
HEADER_SIZE = 8
"""Magic (4), version (1), location mode (1), reserved u16 (2)."""

LOCATION_MODE_FULL = 0
LOCATION_MODE_NONE = 1
LOCATION_MODES = (LOCATION_MODE_FULL, LOCATION_MODE_NONE)

NAME_RE = re.compile(r"[A-Za-z_$][A-Za-z0-9_$-]*|[0-9]+")
"""Value names and block labels (identifier or digits) that print back as valid text."""

MAX_NESTING = 100
"""Deepest region nesting written or read (keeps recursion bounded)."""
MAX_ATTR_NESTING = 16
"""Deepest nesting of tuple attribute values."""

# Section kinds, in the order they appear in a file (strictly increasing).
SEC_STRINGS = 1
SEC_SOURCES = 2
SEC_LOCATIONS = 3
SEC_OPNAMES = 4
SEC_TYPES = 5
SEC_VALUES = 6
SEC_ATTRS = 7
SEC_MODULE = 8
SEC_IR = 9
SECTION_NAMES = {
    SEC_STRINGS: "STRINGS",
    SEC_SOURCES: "SOURCES",
    SEC_LOCATIONS: "LOCATIONS",
    SEC_OPNAMES: "OPNAMES",
    SEC_TYPES: "TYPES",
    SEC_VALUES: "VALUES",
    SEC_ATTRS: "ATTRS",
    SEC_MODULE: "MODULE",
    SEC_IR: "IR",
}

# Location kinds.
LOC_FILE = 1
LOC_FUSED = 2
LOC_OPAQUE = 3
LOC_TAGGED = 4

# Type kinds.
TYPE_SCALAR = 0
TYPE_BUFFER = 1
TYPE_VIEW = 2
TYPE_VECTOR = 3
TYPE_FUNCTION = 4
TYPE_OPAQUE = 5
TYPE_FUNC_REF = 6  # [kind, yieldable 0/1, type id of the signature (an earlier entry)]

# Shaped-type dims and layouts.
DIM_STATIC = 0
DIM_UNBOUND = 1
DIM_BOUND = 2
LAYOUT_NONE = 0
LAYOUT_NAMED = 1
LAYOUT_VALUE = 2

TYPE_TENSOR = 7  # a shaped type kind like view and vector (6 is the func.ref type)
TYPE_TILE = 8  # a shaped type kind; its layout slot holds the encoding attachment
TYPE_KIND_COUNT = 9
SHAPED_TYPE_KINDS = {
    TYPE_VIEW: "view",
    TYPE_VECTOR: "vector",
    TYPE_TENSOR: "tensor",
    TYPE_TILE: "tile",
}
"""Shaped type tags by the spelling of their :class:`~loom.ir.TypeKind`."""

SCALAR_ORDER = (
    "index",
    "offset",
    "i1",
    "i8",
    "i16",
    "i32",
    "i64",
    "f8E4M3",
    "f8E5M2",
    "f16",
    "bf16",
    "f32",
    "f64",
)
"""Scalar element ordinals (reference decision); ordinals without a type here are refused."""
SCALAR_BY_ORDINAL: tuple[ScalarType | None, ...] = tuple(SCALAR_TYPES.get(s) for s in SCALAR_ORDER)
ORDINAL_OF_SCALAR: dict[ScalarType, int] = {
    t: i for i, t in enumerate(SCALAR_BY_ORDINAL) if t is not None
}

# Op header: varint ``op_index << OP_SHIFT | flags``.
OP_SHIFT = 3
OPF_ATTRS = 1
OPF_LOCATION = 2
OPF_EXTENDED = 4
# Extended op flags (a second varint, present with OPF_EXTENDED).
OPX_COMMENTS = 1
OPX_BLANK = 2
OPX_COUNTS = 4
"""Operand and result counts are written (the op does not fit its name's fixed counts)."""
OPX_RESULT_IDS = 8
"""Result value ids are written (they are not the next ids in sequence)."""
OPX_REGIONS = 16
OPX_ALL = 31

# Block flags.
BLK_LABEL = 1
BLK_BLANK = 2
BLK_COMMENTS = 4
BLK_ARG_IDS = 8
BLK_TRAILING = 16
"""Comments after the block's last op follow the leading comments."""
BLK_TRAILING_BLANK = 32
BLK_ALL = 63

# Attribute value tags.
ATTR_INT = 0
ATTR_UINT64 = 1
"""An int in [2**63, 2**64) stored unsigned."""
ATTR_NEG64 = 2
"""An int in (-2**64, -2**63) stored as its magnitude."""
ATTR_FLOAT = 3
ATTR_FLOAT_LITERAL = 4
ATTR_STRING = 5
ATTR_FALSE = 6
ATTR_TRUE = 7
ATTR_I64_ARRAY = 8
ATTR_TYPE_ARRAY = 9
ATTR_PREDICATES = 10
ATTR_TUPLE = 11
ATTR_TYPE = 12
ATTR_DICT = 13
"""A dictionary: entry count, then (key string id, tagged value) per entry, keys sorted."""
ATTR_TYPED_INT = 14
"""A dictionary integer of a named width (``u64(3)``): type name string id, then the value
(as is for ``u*`` types, zigzag for ``i*``)."""
ATTR_BYTES = 15
"""A dictionary byte string (``bytes("00ff")``): string id of its hex digits."""
ATTR_TAG_COUNT = 16

PRED_VALUE = 0
PRED_INT = 1


def op_plan(decl: OpDef) -> tuple[int, int]:
    """Fixed operand and result counts implied by the declaration (+1; 0 when variable)."""
    operands = 0 if any(o.variadic or o.optional for o in decl.operands) else len(decl.operands) + 1
    results = 0 if any(r.variadic for r in decl.results) else len(decl.results) + 1
    return operands, results


def attr_dict_problem(decl: OpDef, attrs: Mapping[str, Any], n_operands: int) -> str | None:
    """Why ``attrs`` cannot belong to an op of ``decl`` with ``n_operands`` operands, if so."""
    for key, value in attrs.items():
        a = decl.attr(key)
        if a is not None:
            problem = attr_problem(a, value)
            if problem:
                return problem
    segments = attrs.get(SEGMENTS_ATTR)
    if segments is not None and (
        not isinstance(segments, tuple)
        or len(segments) != len(decl.operands)
        or any(type(x) is not int or x < 0 for x in segments)
        or sum(segments) != n_operands
    ):
        return f"operand segment sizes {segments!r} do not fit {count_of(n_operands, 'operand')}"
    return None


_SPELLING = re.compile(r"-?(?:inf|nan|0[xX][0-9a-fA-F]+|[0-9]+(?:\.[0-9]*)?(?:[eE][+-]?[0-9]+)?)")


def spelling_matches(spelling: str, value: float) -> bool:
    """True when ``spelling`` is a number literal whose value is ``value``."""
    if not _SPELLING.fullmatch(spelling):
        return False
    body = spelling.lstrip("-")
    try:
        parsed = float(int(body, 16)) if body[:2] in ("0x", "0X") else float(body)
    except OverflowError:
        return False
    if spelling.startswith("-"):
        parsed = -parsed
    if math.isnan(parsed):
        return math.isnan(value)
    return parsed == value
