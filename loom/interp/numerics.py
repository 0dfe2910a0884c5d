"""Value representation: NumPy dtypes per Loom scalar type, bf16 rounding, memory encoding.

Lane values are NumPy arrays (one element per lane) or NumPy scalars (uniform values). ``i1`` is
``bool``; ``index`` and ``offset`` are ``int64``; ``bf16`` values are ``float32`` numbers that are
always exactly representable in bfloat16 (every bf16 result is rounded with :func:`bf16_round`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from loom.ir import ScalarType

_VALUE_DTYPES = {
    "i1": np.dtype(np.bool_),
    "i8": np.dtype(np.int8),
    "i16": np.dtype(np.int16),
    "i32": np.dtype(np.int32),
    "i64": np.dtype(np.int64),
    "index": np.dtype(np.int64),
    "offset": np.dtype(np.int64),
    "f16": np.dtype(np.float16),
    "bf16": np.dtype(np.float32),
    "f32": np.dtype(np.float32),
    "f64": np.dtype(np.float64),
}
_MEM_DTYPES = {
    "i1": np.dtype(np.uint8),
    "i8": np.dtype("<i1"),
    "i16": np.dtype("<i2"),
    "i32": np.dtype("<i4"),
    "i64": np.dtype("<i8"),
    "index": np.dtype("<i8"),
    "offset": np.dtype("<i8"),
    "f16": np.dtype("<f2"),
    "bf16": np.dtype("<u2"),
    "f32": np.dtype("<f4"),
    "f64": np.dtype("<f8"),
}
_UNSIGNED = {
    1: np.dtype(np.uint8),
    8: np.dtype(np.uint8),
    16: np.dtype(np.uint16),
    32: np.dtype(np.uint32),
    64: np.dtype(np.uint64),
}
_SIGNED = {
    1: np.dtype(np.int8),
    8: np.dtype(np.int8),
    16: np.dtype(np.int16),
    32: np.dtype(np.int32),
    64: np.dtype(np.int64),
}


def value_dtype(t: ScalarType) -> np.dtype:
    """The NumPy dtype that holds lane values of ``t``."""
    return _VALUE_DTYPES[t.spelling]


def memory_dtype(t: ScalarType) -> np.dtype:
    """The little-endian NumPy dtype of ``t`` stored in a buffer."""
    return _MEM_DTYPES[t.spelling]


def unsigned_dtype(bits: int) -> np.dtype:
    """The unsigned integer dtype of that width (i1 uses uint8)."""
    return _UNSIGNED[bits]


def signed_dtype(bits: int) -> np.dtype:
    """The signed integer dtype of that width (i1 uses int8)."""
    return _SIGNED[bits]


def bf16_round(x: Any) -> Any:
    """Round float32 values to the nearest bfloat16 (ties to even), keeping NaN a NaN."""
    a = np.asarray(x, dtype=np.float32)
    bits = a.view(np.uint32)
    lsb = (bits >> np.uint32(16)) & np.uint32(1)
    rounded = (bits + np.uint32(0x7FFF) + lsb) & np.uint32(0xFFFF0000)
    nan = np.isnan(a)
    out = np.where(nan, bits | np.uint32(0x00400000), rounded).astype(np.uint32)
    out = (out & np.uint32(0xFFFF0000)).view(np.float32)
    return out if out.ndim else out[()]


def bf16_to_bits(x: Any) -> Any:
    """The 16-bit patterns of bf16 values held as float32."""
    a = np.asarray(bf16_round(x), dtype=np.float32)
    return (a.view(np.uint32) >> np.uint32(16)).astype(np.uint16)


def bits_to_bf16(bits: Any) -> Any:
    """bf16 values (as float32) from their 16-bit patterns."""
    b = np.asarray(bits, dtype=np.uint16).astype(np.uint32) << np.uint32(16)
    out = b.view(np.float32)
    return out if out.ndim else out[()]


def constant(t: ScalarType, value: Any) -> Any:
    """A uniform lane value of type ``t`` from an attribute value (ints wrap to the width)."""
    if t.is_float:
        v = np.float32(value) if t.spelling == "bf16" else value_dtype(t).type(value)
        return bf16_round(v) if t.spelling == "bf16" else v
    if t.bit_width == 1:
        return np.bool_(int(value) & 1)
    bits = t.bit_width
    raw = int(value) & ((1 << bits) - 1)
    if raw >= 1 << (bits - 1):
        raw -= 1 << bits
    return value_dtype(t).type(raw)


def to_memory(t: ScalarType, v: Any) -> np.ndarray:
    """Lane values of ``t`` as an array of the memory dtype."""
    if t.spelling == "bf16":
        return np.atleast_1d(bf16_to_bits(v))
    return np.atleast_1d(np.asarray(v)).astype(memory_dtype(t), copy=False)


def from_memory(t: ScalarType, raw: np.ndarray) -> Any:
    """Lane values of ``t`` from an array of the memory dtype."""
    if t.spelling == "bf16":
        return bits_to_bf16(raw)
    if t.bit_width == 1 and t.is_integer:
        return (raw & 1).astype(np.bool_)
    return raw.astype(value_dtype(t), copy=False)


def to_python(t: ScalarType, v: Any) -> Any:
    """A lane value as a plain Python number (for display)."""
    if t.is_float:
        return float(v)
    if t.bit_width == 1:
        return bool(v)
    return int(v)
