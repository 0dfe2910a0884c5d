"""Value representation: NumPy dtypes per Loom scalar type, bf16 rounding, memory encoding.

Lane values are NumPy arrays (one element per lane) or NumPy scalars (uniform values). ``i1`` is
``bool``; ``index`` and ``offset`` are ``int64``; ``bf16`` values are ``float32`` numbers that are
always exactly representable in bfloat16 (every bf16 result is rounded with :func:`bf16_round`).
"""

from __future__ import annotations

import math
import struct
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


# ----------------------------------------------------------------------------- rounding


def _round_to_odd_f32(x: np.ndarray) -> np.ndarray:
    """float64 values narrowed to float32 with round-to-odd (a later rounding to any format of
    at most 22 significand bits then equals one correct rounding of the float64 value)."""
    r = x.astype(np.float32)
    back = r.astype(np.float64)
    inexact = (back != x) & np.isfinite(x)
    if not np.any(inexact):
        return r
    # step toward zero where nearest rounding went away from it, then make the last bit odd
    away = inexact & (np.abs(back) > np.abs(x))
    r = np.where(away, np.nextafter(r, np.float32(0)), r)
    bits = r.view(np.uint32)
    return np.where(inexact, bits | np.uint32(1), bits).astype(np.uint32).view(np.float32)


def round_float(t: ScalarType, x: Any) -> Any:
    """float64 values rounded once (to nearest, ties to even) to the float type ``t``."""
    a = np.asarray(x, dtype=np.float64)
    with np.errstate(over="ignore"):
        return _round_float(t.spelling, a)


def _round_float(s: str, a: np.ndarray) -> Any:
    if s == "f64":
        out = a
    elif s == "bf16":
        out = bf16_round(_round_to_odd_f32(np.atleast_1d(a)).reshape(a.shape))
        out = np.asarray(out, dtype=np.float32)
    else:
        # NumPy narrows float64 to float32 and float16 with one correct rounding
        out = a.astype(_VALUE_DTYPES[s])
    return out[()] if out.ndim == 0 else out


_TIES = {"f32": (29, 0x00800000), "f16": (42, 0x0400)}
"""Float type -> (float64 significand bits its rounding drops, the bits of its smallest normal)."""
_BITS = {"f32": np.dtype(np.uint32), "f16": np.dtype(np.uint16)}


_SCRATCH: dict[int, tuple] = {}


def _scratch(n: int) -> tuple:
    """Work arrays of ``n`` elements (float64 and uint64), kept for the next call
    (fresh lane-sized memory costs a page fault per page; a launch calls with one or two
    sizes)."""
    work = _SCRATCH.get(n)
    if work is None:
        if len(_SCRATCH) >= 4:
            _SCRATCH.clear()
        work = _SCRATCH[n] = (np.empty(n, np.float64), np.empty(n, np.uint64))
    return work


def fma_round(t: ScalarType, a: Any, b: Any, c: Any, out: np.ndarray | None = None) -> Any:
    """a * b + c with one rounding to ``t`` (f16, bf16, f32: the product is exact in f64).
    ``out``: an array of the result's dtype and lane count for lane results (not an operand)."""
    tie = _TIES.get(t.spelling)
    lanes = next((v for v in (a, b, c) if type(v) is np.ndarray), None)
    if tie is not None and lanes is not None and lanes.ndim == 1:
        return _fma_lanes(t, a, b, c, lanes.size, tie, out)
    if type(a) is not np.ndarray and type(b) is not np.ndarray and type(c) is not np.ndarray:
        return _fma_uniform(t, float(a), float(b), float(c))
    return _fma_exact(t, a, b, c)


def _fma_lanes(t: ScalarType, a: Any, b: Any, c: Any, n: int, tie: tuple, out: Any) -> Any:
    """:func:`fma_round` of lane arrays. Rounding the float64 sum again is one correct
    rounding of the exact sum unless the float64 sum is a tie of the narrow type or the result
    is at most the smallest normal in magnitude (zero included): only those lanes take the
    exact round-to-odd path. Both checks are reductions over kept arrays (one shift pass): no
    lane-sized temporaries, no mask unless some lane needs the exact path."""
    s, wide = _scratch(n)
    drop, tiny = tie
    dt = _VALUE_DTYPES[t.spelling]
    np.multiply(a, b, out=s, dtype=np.float64)
    np.add(s, c, out=s)
    if out is None or out.dtype != dt or out.shape != (n,) or out is a or out is b or out is c:
        out = np.empty(n, dt)
    np.copyto(out, s, casting="unsafe")  # the one rounding (NumPy narrows correctly)
    # a tie: the dropped bits of the float64 sum are exactly one half of the last kept bit,
    # i.e. shifted to the top they are the sign bit alone, the smallest signed integer
    top = np.left_shift(s.view(np.uint64), np.uint64(64 - drop), out=wide)
    stop = top.view(np.int64)
    least = -(2**63)
    # the result's bits: as unsigned, the least is the smallest positive magnitude; as signed,
    # the least is the negative result nearest zero (sign bit and smallest magnitude)
    ubits = out.view(_BITS[t.spelling])
    width = 8 * ubits.dtype.itemsize
    sbits = out.view(_SIGNED[width])
    sign = -(1 << (width - 1))
    if stop.min() == least or ubits.min() <= tiny or int(sbits.min()) - sign <= tiny:
        magnitude = ubits & ubits.dtype.type(-sign - 1)
        at = np.flatnonzero((stop == least) | (magnitude <= tiny))
        a, b, c = (v[at] if np.ndim(v) else v for v in (a, b, c))
        out[at] = _fma_exact(t, a, b, c)
    return out


def _fma_uniform(t: ScalarType, a: float, b: float, c: float) -> Any:
    """:func:`fma_round` of single values in Python floats (the stepper's case)."""
    p = a * b
    s = p + c
    if not math.isfinite(s) or not math.isfinite(p):
        return _fma_exact(t, np.float64(a), np.float64(b), np.float64(c))
    bb = s - p
    err = (p - (s - bb)) + (c - bb)
    if err and not struct.unpack("<Q", struct.pack("<d", s))[0] & 1:
        s = math.nextafter(s, math.inf if err > 0 else -math.inf)  # round to odd
    if t.spelling in _TIES:
        return _VALUE_DTYPES[t.spelling].type(s)  # one rounding (callers ignore overflow)
    return round_float(t, s)


def _fma_exact(t: ScalarType, a: Any, b: Any, c: Any) -> Any:
    p = np.multiply(a, b, dtype=np.float64)
    c64 = np.asarray(c, dtype=np.float64)
    s = p + c64
    # the exact sum is s + err (TwoSum); round-to-odd in f64 makes the final rounding single
    bb = s - p
    err = (p - (s - bb)) + (c64 - bb)
    inexact = (err != 0) & np.isfinite(s)
    if np.any(inexact):
        even = (np.asarray(s).view(np.uint64) & np.uint64(1)) == 0
        nudge = inexact & even
        s = np.where(nudge, np.nextafter(s, s + np.where(err > 0, np.inf, -np.inf)), s)
    return round_float(t, s)


# ----------------------------------------------------------------------------- bit counts


def popcount(u: Any) -> Any:
    """Set bits of unsigned lanes (same dtype)."""
    return np.bitwise_count(u).astype(np.asarray(u).dtype)


def count_leading_zeros(u: Any, width: int) -> Any:
    """Leading zero bits of ``width``-bit unsigned lanes (``width`` for zero)."""
    x = np.asarray(u).astype(np.uint64)
    shift = 1
    while shift < width:
        x = x | (x >> np.uint64(shift))
        shift *= 2
    return (np.uint64(width) - np.bitwise_count(x).astype(np.uint64)).astype(np.asarray(u).dtype)


def count_trailing_zeros(u: Any, width: int) -> Any:
    """Trailing zero bits of ``width``-bit unsigned lanes (``width`` for zero)."""
    x = np.asarray(u).astype(np.uint64)
    mask = np.uint64((1 << width) - 1)
    with np.errstate(over="ignore"):
        low = ((x & (~x + np.uint64(1))) - np.uint64(1)) & mask
    return np.bitwise_count(low).astype(np.asarray(u).dtype)


def rotate_left(u: Any, amount: Any, width: int) -> Any:
    """``width``-bit unsigned lanes rotated left by ``amount`` modulo ``width``."""
    x = np.asarray(u).astype(np.uint64)
    s = (np.asarray(amount).astype(np.uint64)) % np.uint64(width)
    mask = np.uint64((1 << width) - 1) if width < 64 else np.uint64(2**64 - 1)
    # a right shift by the full width is avoided: s == 0 keeps x as it is
    right = np.where(s == 0, np.uint64(0), np.uint64(width) - s)
    hi = (x << s) & mask
    lo = np.where(s == 0, np.uint64(0), x >> np.where(s == 0, np.uint64(0), right))
    return (hi | lo).astype(np.asarray(u).dtype)


_SIGNIFICAND_BITS = {"f16": 11, "bf16": 8, "f32": 24, "f64": 53}


def int_to_float(t: ScalarType, x: Any, signed: bool) -> Any:
    """64-bit integer lanes (int64, read signed or unsigned) rounded once to float type ``t``."""
    a = np.asarray(x, dtype=np.int64)
    u = a.view(np.uint64)
    neg = (a < 0) if signed else np.zeros(a.shape, dtype=bool)
    with np.errstate(over="ignore"):
        mag = np.where(neg, ~u + np.uint64(1), u)
    p = _SIGNIFICAND_BITS[t.spelling]
    n = np.uint64(64) - count_leading_zeros(mag, 64).astype(np.uint64)
    shift = np.where(n > np.uint64(p), n - np.uint64(p), np.uint64(0))
    q = mag >> shift
    rem = mag & ((np.uint64(1) << shift) - np.uint64(1))
    half = np.where(shift > 0, np.uint64(1) << (shift - np.uint64(1)), np.uint64(0))
    up = (shift > 0) & ((rem > half) | ((rem == half) & ((q & np.uint64(1)) == 1)))
    q = q + up.astype(np.uint64)
    # q has at most p + 1 bits and shift < 64: the product is exact in float64
    mag_f = np.ldexp(q.astype(np.float64), shift.astype(np.int64))
    return round_float(t, np.where(neg, -mag_f, mag_f))
