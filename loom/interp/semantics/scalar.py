"""Semantics of the scalar dialect: integer wrap, float math in the declared width."""

from __future__ import annotations

import math
import operator
from fractions import Fraction
from typing import Any

import numpy as np

from loom.interp.numerics import (
    bf16_round,
    constant,
    count_leading_zeros,
    count_trailing_zeros,
    fma_round,
    from_memory,
    int_to_float,
    memory_dtype,
    popcount,
    rotate_left,
    round_float,
    to_memory,
)
from loom.interp.numerics import value_dtype as vdt
from loom.interp.semantics import semantics, view_operands
from loom.interp.semantics._util import back, itype, rtype, sv, uv

# ----------------------------------------------------------------------------- constants


@semantics("scalar.constant")
def _constant(ctx: Any, step: Any) -> Any:
    v = step.cache.get("v")
    if v is None:
        v = step.cache["v"] = constant(rtype(step), step.attrs["value"])
    return v


# ----------------------------------------------------------------------------- integers


def _wrapping(fn: Any, i1_fn: Any) -> Any:
    def sem(ctx: Any, step: Any, a: Any, b: Any) -> Any:
        t = rtype(step)
        if t.bit_width == 1:
            return i1_fn(a, b)
        return fn(a, b)

    return sem


def _flags(step: Any) -> tuple[bool, bool]:
    """(nsw, nuw) promised by the op's overflow flags."""
    flags = step.cache.get("flags")
    if flags is None:
        text = step.attrs.get("overflow") or ""
        flags = step.cache["flags"] = ("nsw" in text, "nuw" in text)
    return flags


def _mul_wraps(a: Any, b: Any, t: Any, signed: bool) -> Any:
    """Lanes where the exact product of the signed (or unsigned) readings does not fit."""
    bits = t.bit_width
    lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)
    x, y = (sv(a, t), sv(b, t)) if signed else (uv(a, t), uv(b, t))
    if bits <= 32:
        wide = np.int64 if signed else np.uint64
        p = np.asarray(x).astype(wide) * np.asarray(y).astype(wide)
        return (p < lo) | (p > hi)
    approx = np.abs(np.multiply(x, y, dtype=np.float64))
    suspect = np.atleast_1d(approx >= 2.0**62)
    out = np.zeros(suspect.shape, dtype=bool)
    xs, ys = np.broadcast_to(x, out.shape), np.broadcast_to(y, out.shape)
    for i in np.flatnonzero(suspect):  # few lanes: exact products of Python ints
        out[i] = not lo <= int(xs[i]) * int(ys[i]) <= hi
    return out if np.ndim(approx) else out[0]


def _promise(ctx: Any, step: Any, bad: Any, which: str, a: Any, b: Any) -> None:
    ctx.check(
        step,
        bad,
        "RUNTIME/041",
        f"the {which} promise is broken: the exact result of {{}} and {{}} does not fit",
        a,
        b,
    )


def _add_like(sub: bool) -> Any:
    def sem(ctx: Any, step: Any, a: Any, b: Any) -> Any:
        t = rtype(step)
        if t.bit_width == 1:
            return a ^ b
        r = a - b if sub else a + b
        nsw, nuw = _flags(step)
        if nsw:
            signed_bad = ((a ^ b) & (a ^ r)) < 0 if sub else ((a ^ r) & (b ^ r)) < 0
            _promise(ctx, step, signed_bad, "nsw", a, b)
        if nuw:
            ua, ub, ur = uv(a, t), uv(b, t), uv(r, t)
            _promise(ctx, step, (ua < ub) if sub else (ur < ua), "nuw", a, b)
        return r

    return sem


@semantics("scalar.muli")
def _muli(ctx: Any, step: Any, a: Any, b: Any) -> Any:
    t = rtype(step)
    if t.bit_width == 1:
        return a & b
    nsw, nuw = _flags(step)
    if nsw:
        _promise(ctx, step, _mul_wraps(a, b, t, True), "nsw", a, b)
    if nuw:
        _promise(ctx, step, _mul_wraps(a, b, t, False), "nuw", a, b)
    return a * b


semantics("scalar.addi")(_add_like(False))
semantics("scalar.subi")(_add_like(True))
semantics("scalar.andi")(_wrapping(lambda a, b: a & b, lambda a, b: a & b))
semantics("scalar.ori")(_wrapping(lambda a, b: a | b, lambda a, b: a | b))
semantics("scalar.xori")(_wrapping(lambda a, b: a ^ b, lambda a, b: a ^ b))


def _nonzero_divisor(ctx: Any, step: Any, a: Any, b: Any, t: Any) -> Any:
    zero = b == 0
    ctx.check(step, zero, "RUNTIME/002", "integer division by zero ({} / {})", a, b)
    return np.where(zero, np.ones_like(b), b) if np.ndim(b) else b


def _signed_division(mode: str) -> Any:
    """Signed quotient (``trunc``, ``ceil``, ``floor``) or remainder (``rem``)."""

    def sem(ctx: Any, step: Any, a: Any, b: Any) -> Any:
        t = rtype(step)
        b = _nonzero_divisor(ctx, step, a, b, t)
        sa, sb = sv(a, t), sv(b, t)
        lo = -(1 << (t.bit_width - 1))
        ovf = (sa == lo) & (sb == -1)
        ctx.check(step, ovf, "RUNTIME/003", "signed division overflow ({} / {})", a, b)
        sb = np.where(ovf, np.ones_like(sb), sb) if np.ndim(ovf) else (1 if ovf else sb)
        sb = sb.astype(sa.dtype) if hasattr(sb, "astype") else sa.dtype.type(sb)
        r = np.fmod(sa, sb)
        if mode == "rem":
            return back(r, t)
        q = (sa - r) // sb  # exact: sa - r is a multiple of sb
        if mode == "ceil":
            q = q + ((r != 0) & ((r < 0) == (sb < 0))).astype(q.dtype)
        elif mode == "floor":
            q = q - ((r != 0) & ((r < 0) != (sb < 0))).astype(q.dtype)
        return back(q, t)

    return sem


def _unsigned_division(mode: str) -> Any:
    """Unsigned quotient (``floor``, ``ceil``) or remainder (``rem``)."""

    def sem(ctx: Any, step: Any, a: Any, b: Any) -> Any:
        t = rtype(step)
        b = _nonzero_divisor(ctx, step, a, b, t)
        ua, ub = uv(a, t), uv(b, t)
        if mode == "rem":
            return back(ua % ub, t)
        q = ua // ub
        if mode == "ceil":
            q = q + (ua % ub != 0).astype(q.dtype)
        return back(q, t)

    return sem


semantics("scalar.divsi")(_signed_division("trunc"))
semantics("scalar.remsi")(_signed_division("rem"))
semantics("scalar.ceildivsi")(_signed_division("ceil"))
semantics("scalar.floordivsi")(_signed_division("floor"))
semantics("scalar.divui")(_unsigned_division("floor"))
semantics("scalar.remui")(_unsigned_division("rem"))
semantics("scalar.ceildivui")(_unsigned_division("ceil"))


@semantics("scalar.negi")
def _negi(ctx: Any, step: Any, a: Any) -> Any:
    t = rtype(step)
    if t.bit_width == 1:
        return a  # -x == x modulo 2
    return np.negative(a)


@semantics("scalar.absi")
def _absi(ctx: Any, step: Any, a: Any) -> Any:
    t = rtype(step)
    if t.bit_width == 1:
        return a  # |-1| = 1 wraps back to the bit pattern 1
    return np.abs(a)  # the minimum wraps to itself


@semantics("scalar.signi")
def _signi(ctx: Any, step: Any, a: Any) -> Any:
    t = rtype(step)
    return back(np.sign(sv(a, t)), t)


@semantics("scalar.fmai")
def _fmai(ctx: Any, step: Any, a: Any, b: Any, c: Any) -> Any:
    t = rtype(step)
    if t.bit_width == 1:
        return (a & b) ^ c
    p = a * b
    r = p + c
    # the flags promise that neither the product nor the sum wraps
    nsw, nuw = _flags(step)
    if nsw:
        _promise(ctx, step, _mul_wraps(a, b, t, True), "nsw", a, b)
        _promise(ctx, step, ((p ^ r) & (c ^ r)) < 0, "nsw", p, c)
    if nuw:
        _promise(ctx, step, _mul_wraps(a, b, t, False), "nuw", a, b)
        _promise(ctx, step, uv(r, t) < uv(p, t), "nuw", p, c)
    return r


def _shift_amount(ctx: Any, step: Any, a: Any, b: Any, t: Any) -> Any:
    ub = uv(b, t)
    bad = ub >= t.bit_width
    ctx.check(
        step,
        bad,
        "RUNTIME/004",
        f"shift amount {{1}} is not below the bit width {t.bit_width}",
        a,
        b,
    )
    if np.ndim(bad):
        ub = np.where(bad, np.zeros_like(ub), ub)
    elif bad:
        ub = ub.dtype.type(0)
    return ub


@semantics("scalar.shli")
def _shli(ctx: Any, step: Any, a: Any, b: Any) -> Any:
    t = rtype(step)
    s = _shift_amount(ctx, step, a, b, t)
    r = back(uv(a, t) << s, t)
    if t.bit_width > 1:
        nsw, nuw = _flags(step)
        if nuw:  # no set bit is shifted out
            _promise(ctx, step, (uv(r, t) >> s) != uv(a, t), "nuw", a, b)
        if nsw:  # every shifted-out bit equals the result's sign bit
            _promise(ctx, step, (r >> s.astype(r.dtype)) != a, "nsw", a, b)
    return r


@semantics("scalar.shrui")
def _shrui(ctx: Any, step: Any, a: Any, b: Any) -> Any:
    t = rtype(step)
    s = _shift_amount(ctx, step, a, b, t)
    return back(uv(a, t) >> s, t)


@semantics("scalar.shrsi")
def _shrsi(ctx: Any, step: Any, a: Any, b: Any) -> Any:
    t = rtype(step)
    s = _shift_amount(ctx, step, a, b, t)
    sa = sv(a, t)
    return back(sa >> s.astype(sa.dtype), t)


def _lane(r: Any) -> Any:
    """A uniform (0-d) result as a NumPy scalar, like the operands it came from."""
    return r[()] if isinstance(r, np.ndarray) and r.ndim == 0 else r


def _rotate(left: bool) -> Any:
    def sem(ctx: Any, step: Any, a: Any, b: Any) -> Any:
        t = rtype(step)
        w = t.bit_width
        s = uv(b, t).astype(np.uint64) % np.uint64(w)
        if not left:
            s = (np.uint64(w) - s) % np.uint64(w)
        return _lane(back(rotate_left(uv(a, t), s, w), t))

    return sem


semantics("scalar.rotli")(_rotate(True))
semantics("scalar.rotri")(_rotate(False))


def _bit_count(fn: Any) -> Any:
    def sem(ctx: Any, step: Any, a: Any) -> Any:
        t = rtype(step)
        return _lane(back(fn(uv(a, t), t.bit_width), t))

    return sem


semantics("scalar.ctlzi")(_bit_count(count_leading_zeros))
semantics("scalar.cttzi")(_bit_count(count_trailing_zeros))
semantics("scalar.ctpopi")(_bit_count(lambda u, w: popcount(u)))


def _bitfield(signed: bool) -> Any:
    def sem(ctx: Any, step: Any, a: Any) -> Any:
        src, dst = itype(step), rtype(step)
        offset, width = int(step.attrs["offset"]), int(step.attrs["width"])
        # move the field to the top of 64 bits, then shift it down with the wanted fill
        up = uv(a, src).astype(np.uint64) << np.uint64(64 - offset - width)
        down = np.uint64(64 - width)
        field = (up.view(np.int64) >> np.int64(down)) if signed else (up >> down).view(np.int64)
        return _lane(back(np.asarray(field, dtype=np.int64), dst))

    return sem


semantics("scalar.bitfield.extractu")(_bitfield(False))
semantics("scalar.bitfield.extracts")(_bitfield(True))


def _minmax(fn: Any, signed: bool) -> Any:
    def sem(ctx: Any, step: Any, a: Any, b: Any) -> Any:
        t = rtype(step)
        view = sv if signed else uv
        return back(fn(view(a, t), view(b, t)), t)

    return sem


semantics("scalar.minsi")(_minmax(np.minimum, True))
semantics("scalar.maxsi")(_minmax(np.maximum, True))
semantics("scalar.minui")(_minmax(np.minimum, False))
semantics("scalar.maxui")(_minmax(np.maximum, False))

_INT_CMP = {
    "eq": (np.equal, None),
    "ne": (np.not_equal, None),
    "slt": (np.less, True),
    "sle": (np.less_equal, True),
    "sgt": (np.greater, True),
    "sge": (np.greater_equal, True),
    "ult": (np.less, False),
    "ule": (np.less_equal, False),
    "ugt": (np.greater, False),
    "uge": (np.greater_equal, False),
}


@semantics("scalar.cmpi")
def _cmpi(ctx: Any, step: Any, a: Any, b: Any) -> Any:
    fn, signed = _INT_CMP[step.attrs["predicate"]]
    t = itype(step)
    if signed is True:
        a, b = sv(a, t), sv(b, t)
    elif signed is False:
        a, b = uv(a, t), uv(b, t)
    return fn(a, b)


# ----------------------------------------------------------------------------- floats


def _is_bf16(step: Any) -> bool:
    bf = step.cache.get("bf16")
    if bf is None:
        bf = step.cache["bf16"] = rtype(step).spelling == "bf16"
    return bf


def _rounded(step: Any, r: Any) -> Any:
    return bf16_round(r) if _is_bf16(step) else r


def _float_binary(fn: Any, ufunc: Any = None) -> Any:
    def sem(ctx: Any, step: Any, a: Any, b: Any) -> Any:
        if (type(a) is np.ndarray and a.ndim > 1) or (type(b) is np.ndarray and b.ndim > 1):
            return _on_views(ctx, step, fn, ufunc, a, b)
        if ufunc is not None and (type(a) is np.ndarray or type(b) is np.ndarray):
            dt = a.dtype
            if dt == b.dtype and not _is_bf16(step):
                # same-dtype lanes: the result has that dtype, written into a recycled array
                out = ctx.out_array(step, dt)
                if out is None and all(
                    v.shape == (ctx.n,) for v in (a, b) if type(v) is np.ndarray
                ):
                    out = ctx.fresh(step, dt)  # reusable scratch inside compacted regions
                if out is not None:
                    return ufunc(a, b, out=out)
                return ufunc(a, b)
        r = fn(a, b)
        return bf16_round(r) if _is_bf16(step) else r

    return sem


def _on_views(ctx: Any, step: Any, fn: Any, ufunc: Any, a: Any, b: Any) -> np.ndarray:
    """A float binary with an operand shaped like the lane extents (a read-only view of
    memory, see ``VIEW_OPERANDS``): computed in that shape into a lane array of its own."""
    shape = ctx.extents
    a, b = (v.reshape(shape) if type(v) is np.ndarray and v.ndim == 1 else v for v in (a, b))
    dt = a.dtype
    if ufunc is None or dt != b.dtype or _is_bf16(step):
        r = np.asarray(_rounded(step, fn(a, b)))
        return np.ascontiguousarray(r).reshape(-1)
    out = ctx.out_array(step, dt)
    if out is None:
        out = ctx.fresh(step, dt)
    ufunc(a, b, out=out.reshape(shape))
    return out


def _signed_zero_fix(r: Any, a: Any, b: Any, want_negative: bool) -> Any:
    eq = a == b
    if not np.any(eq):
        return r
    pick = np.where(np.signbit(a) == want_negative, a, b)
    out = np.where(eq, pick, r)
    return out[()] if out.ndim == 0 else out


semantics("scalar.addf")(_float_binary(operator.add, np.add))
semantics("scalar.subf")(_float_binary(operator.sub, np.subtract))
semantics("scalar.mulf")(_float_binary(operator.mul, np.multiply))
semantics("scalar.divf")(_float_binary(operator.truediv, np.true_divide))
# elementwise: a lane operand may be a view of memory shaped like the lanes
view_operands("scalar.addf", "scalar.subf", "scalar.mulf", "scalar.divf")
semantics("scalar.minimumf")(_float_binary(lambda a, b: _minimum(a, b)))
semantics("scalar.maximumf")(_float_binary(lambda a, b: _maximum(a, b)))
semantics("scalar.minnumf")(_float_binary(lambda a, b: _minnum(a, b)))
semantics("scalar.maxnumf")(_float_binary(lambda a, b: _maxnum(a, b)))


def _float_unary(fn: Any) -> Any:
    """An exact (sign, rounding) op computed in the operand's own dtype."""

    def sem(ctx: Any, step: Any, a: Any) -> Any:
        return _rounded(step, fn(a))

    return sem


def _math(fn: Any) -> Any:
    """A float function evaluated in float64 and rounded once to the result type."""

    def sem(ctx: Any, step: Any, *args: Any) -> Any:
        wide = [np.asarray(a, dtype=np.float64) for a in args]
        return round_float(rtype(step), _canonical_nan(fn(*wide)))

    return sem


def _canonical_nan(r: Any) -> Any:
    """NaN results as the positive quiet NaN: NumPy's sign of a NaN differs between its
    vector and scalar loops, and the two engines must agree bit for bit."""
    return np.where(np.isnan(r), np.nan, r)


def _turns(cosine: bool) -> Any:
    """sin/cos of x full turns with exact reduction to a quarter turn (so that whole and half
    turns give exact zeros and ones)."""

    def fn(x: Any) -> Any:
        n = np.rint(4.0 * x)
        f = x - 0.25 * n  # exact: n / 4 is the nearest quarter turn
        angle = 2.0 * np.pi * f
        quadrant = np.where(np.isfinite(n), n, 0.0).astype(np.int64) % 4
        if cosine:
            quadrant = (quadrant + 1) % 4
        sin, cos = np.sin(angle), np.cos(angle)
        r = np.choose(quadrant, [sin, cos, -sin, -cos])
        return np.where(np.isfinite(x), r, np.nan)

    return fn


def _logistic(x: Any) -> Any:
    return 1.0 / (1.0 + np.exp(-x))


def _softplus(x: Any) -> Any:
    return np.log1p(np.exp(-np.abs(x))) + np.maximum(x, 0.0)


def _round_half_away(x: Any) -> Any:
    t = np.trunc(x)
    with np.errstate(invalid="ignore"):
        up = np.abs(x - t) >= 0.5
    return np.copysign(np.where(up, t + np.sign(x), t), x)


_ERF = np.frompyfunc(math.erf, 1, 1)
_ERFC = np.frompyfunc(math.erfc, 1, 1)


def _erf(x: Any) -> Any:
    return np.asarray(_ERF(x), dtype=np.float64)


def _erfc(x: Any) -> Any:
    return np.asarray(_ERFC(x), dtype=np.float64)


def _rsqrt(x: Any) -> Any:
    return 1.0 / np.sqrt(x)


semantics("scalar.negf")(_float_unary(np.negative))
semantics("scalar.absf")(_float_unary(np.abs))
semantics("scalar.sqrtf")(_float_unary(np.sqrt))
semantics("scalar.ceilf")(_float_unary(np.ceil))
semantics("scalar.floorf")(_float_unary(np.floor))
semantics("scalar.truncf")(_float_unary(np.trunc))
semantics("scalar.roundevenf")(_float_unary(np.rint))
semantics("scalar.roundf")(_float_unary(_round_half_away))

_MATH = {
    "scalar.rsqrtf": _rsqrt,
    "scalar.cbrtf": np.cbrt,
    "scalar.expf": np.exp,
    "scalar.exp2f": np.exp2,
    "scalar.expm1f": np.expm1,
    "scalar.logf": np.log,
    "scalar.log2f": np.log2,
    "scalar.log10f": np.log10,
    "scalar.log1pf": np.log1p,
    "scalar.sinf": np.sin,
    "scalar.cosf": np.cos,
    "scalar.tanf": np.tan,
    "scalar.sinturnsf": _turns(False),
    "scalar.costurnsf": _turns(True),
    "scalar.asinf": np.arcsin,
    "scalar.acosf": np.arccos,
    "scalar.atanf": np.arctan,
    "scalar.sinhf": np.sinh,
    "scalar.coshf": np.cosh,
    "scalar.tanhf": np.tanh,
    "scalar.asinhf": np.arcsinh,
    "scalar.acoshf": np.arccosh,
    "scalar.atanhf": np.arctanh,
    "scalar.erff": _erf,
    "scalar.erfcf": _erfc,
    "scalar.logisticf": _logistic,
    "scalar.siluf": lambda x: x * _logistic(x),
    "scalar.softplusf": _softplus,
    "scalar.powf": np.power,
    "scalar.atan2f": np.arctan2,
}
for _name, _fn in _MATH.items():
    semantics(_name)(_math(_fn))

_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)


@semantics("scalar.geluf")
def _geluf(ctx: Any, step: Any, a: Any) -> Any:
    x = np.asarray(a, dtype=np.float64)
    variant = step.attrs["variant"]
    if variant == "erf":
        r = 0.5 * x * (1.0 + _erf(x / math.sqrt(2.0)))
    elif variant == "tanh":
        r = 0.5 * x * (1.0 + np.tanh(_SQRT_2_OVER_PI * (x + 0.044715 * x * x * x)))
    else:
        r = x * _logistic(float(step.attrs["scale"]) * x)
    return round_float(rtype(step), _canonical_nan(r))


@semantics("scalar.remf")
def _remf(ctx: Any, step: Any, a: Any, b: Any) -> Any:
    # fmod is exact, so the operands' own dtype gives the correctly rounded result
    return _rounded(step, np.fmod(a, b))


@semantics("scalar.copysignf")
def _copysignf(ctx: Any, step: Any, a: Any, b: Any) -> Any:
    return np.copysign(a, b)


def _minimum(a: Any, b: Any) -> Any:
    return _signed_zero_fix(np.minimum(a, b), a, b, True)


def _maximum(a: Any, b: Any) -> Any:
    return _signed_zero_fix(np.maximum(a, b), a, b, False)


def _minnum(a: Any, b: Any) -> Any:
    return _signed_zero_fix(np.fmin(a, b), a, b, True)


def _maxnum(a: Any, b: Any) -> Any:
    return _signed_zero_fix(np.fmax(a, b), a, b, False)


@semantics("scalar.clampf")
def _clampf(ctx: Any, step: Any, v: Any, lo: Any, hi: Any) -> Any:
    mode = step.attrs["mode"]
    if mode == "ordered":
        # comparisons with NaN are false: a NaN value passes, a NaN bound is ignored
        r = np.where(v < lo, lo, v)
        r = np.where(r > hi, hi, r)
        return r[()] if r.ndim == 0 else r
    if mode == "number":
        return _minnum(_maxnum(v, lo), hi)
    return _minimum(_maximum(v, lo), hi)


def _fma64(a: float, b: float, c: float) -> float:
    if not all(math.isfinite(x) for x in (a, b, c)):
        return a * b + c
    exact = Fraction(a) * Fraction(b) + Fraction(c)
    try:
        r = float(exact)
    except OverflowError:
        return math.copysign(math.inf, exact)
    if r == 0.0 and exact == 0:
        return a * b + c  # keeps IEEE signed-zero rules
    return r


@semantics("scalar.fmaf")
def _fmaf(ctx: Any, step: Any, a: Any, b: Any, c: Any) -> Any:
    t = rtype(step)
    if t.spelling == "f64":
        fn = getattr(math, "fma", _fma64)
        r = np.vectorize(fn, otypes=[np.float64])(a, b, c)
        return r[()] if r.ndim == 0 else r
    if type(a) is np.ndarray or type(b) is np.ndarray or type(c) is np.ndarray:
        # lane results written into a recycled array when there is one
        out = ctx.out_array(step, vdt(t))
        r = fma_round(t, a, b, c, out)
        return r if r is out else ctx.produced(step, r)
    return fma_round(t, a, b, c)


@semantics("scalar.isnanf")
def _isnanf(ctx: Any, step: Any, a: Any) -> Any:
    return np.isnan(a)


@semantics("scalar.isinff")
def _isinff(ctx: Any, step: Any, a: Any) -> Any:
    return np.isinf(a)


@semantics("scalar.isfinitef")
def _isfinitef(ctx: Any, step: Any, a: Any) -> Any:
    return np.isfinite(a)


@semantics("scalar.signf")
def _signf(ctx: Any, step: Any, a: Any) -> Any:
    # +0.0 for both zeros and for NaN (upstream's constant folder)
    one = np.ones_like(a)
    r = np.where(a > 0, one, np.where(a < 0, -one, np.zeros_like(a)))
    return r[()] if r.ndim == 0 else r


def _ordered(fn: Any) -> Any:
    return lambda a, b: fn(a, b) & ~(np.isnan(a) | np.isnan(b))


def _unordered(fn: Any) -> Any:
    return lambda a, b: fn(a, b) | np.isnan(a) | np.isnan(b)


_FLOAT_CMP = {
    "oeq": _ordered(np.equal),
    "ogt": _ordered(np.greater),
    "oge": _ordered(np.greater_equal),
    "olt": _ordered(np.less),
    "ole": _ordered(np.less_equal),
    "one": _ordered(np.not_equal),
    "ord": lambda a, b: ~(np.isnan(a) | np.isnan(b)),
    "ueq": _unordered(np.equal),
    "ugt": _unordered(np.greater),
    "uge": _unordered(np.greater_equal),
    "ult": _unordered(np.less),
    "ule": _unordered(np.less_equal),
    "une": lambda a, b: np.not_equal(a, b),
    "uno": lambda a, b: np.isnan(a) | np.isnan(b),
}


@semantics("scalar.cmpf")
def _cmpf(ctx: Any, step: Any, a: Any, b: Any) -> Any:
    return _FLOAT_CMP[step.attrs["predicate"]](a, b)


# ----------------------------------------------------------------------------- casts


@semantics("scalar.extsi", "scalar.trunci")
def _extsi_trunci(ctx: Any, step: Any, a: Any) -> Any:
    src, dst = itype(step), rtype(step)
    return back(sv(a, src).astype(np.int64), dst)


@semantics("scalar.extui")
def _extui(ctx: Any, step: Any, a: Any) -> Any:
    src, dst = itype(step), rtype(step)
    return back(uv(a, src).astype(np.uint64), dst)


def _int_to_float(signed: bool) -> Any:
    def sem(ctx: Any, step: Any, a: Any) -> Any:
        src, dst = itype(step), rtype(step)
        x = sv(a, src) if signed else uv(a, src)
        if src.bit_width <= 32:
            return round_float(dst, np.asarray(x, dtype=np.float64))  # exact in float64
        return int_to_float(dst, x.view(np.int64) if not signed else x, signed)

    return sem


semantics("scalar.sitofp")(_int_to_float(True))
semantics("scalar.uitofp")(_int_to_float(False))


def _float_to_int(signed: bool) -> Any:
    def sem(ctx: Any, step: Any, a: Any) -> Any:
        dst = rtype(step)
        bits = dst.bit_width
        if signed:
            lo, hi = (-1, 0) if bits == 1 else (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1)
        else:
            lo, hi = 0, 2**bits - 1
        x = np.trunc(np.asarray(a, dtype=np.float64))
        bad = np.isnan(x) | (x < lo) | (x > hi)
        ctx.check(
            step,
            bad,
            "RUNTIME/005",
            f"float value {{}} does not fit in {dst} ({'signed' if signed else 'unsigned'})",
            a,
        )
        if np.ndim(bad):
            x = np.where(bad, 0.0, x)
        elif bad:
            x = np.float64(0.0)
        # unsigned values up to 2**64-1 do not fit int64: go through uint64
        r = x.astype(np.int64) if signed else x.astype(np.uint64).astype(np.int64)
        r = back(r, dst)
        return r[()] if np.ndim(r) == 0 and isinstance(r, np.ndarray) else r

    return sem


semantics("scalar.fptosi")(_float_to_int(True))
semantics("scalar.fptoui")(_float_to_int(False))


@semantics("scalar.extf", "scalar.fptrunc")
def _float_cast(ctx: Any, step: Any, a: Any) -> Any:
    src, dst = itype(step), rtype(step)
    if dst.spelling == "bf16" and src.spelling == "f64":
        return round_float(dst, a)  # float64 -> bf16 in one rounding (not via float32)
    if dst.spelling == "bf16":
        return bf16_round(np.asarray(a).astype(np.float32))  # exact widening, one rounding
    # NumPy's float conversions round once (widening is exact)
    r = np.asarray(a).astype(vdt(dst))
    return r[()] if r.ndim == 0 else r


@semantics("scalar.bitcast")
def _bitcast(ctx: Any, step: Any, a: Any) -> Any:
    src, dst = itype(step), rtype(step)
    raw = to_memory(src, a).view(memory_dtype(dst))
    r = from_memory(dst, raw)
    return r[0] if np.ndim(a) == 0 else r


@semantics("scalar.assume")
def _assume(ctx: Any, step: Any, *values: Any) -> Any:
    return values[0] if len(values) == 1 else values


@semantics("scalar.poison")
def _poison(ctx: Any, step: Any) -> Any:
    observers = step.cache.get("observers")
    if observers is None:
        observers = step.cache["observers"] = poison_observations_of(ctx, step.op)
    if observers:
        user, kind = observers[0]
        raise ctx.error(
            step,
            "RUNTIME/040",
            f"a poison value is computed here and observed by '{user.name}' "
            f"({kind}){source_line(ctx, user)}; its value is undefined",
            None,
        )
    # unobserved: the value can never matter, any bit pattern will do
    v = step.cache.get("v")
    if v is None:
        t = rtype(step)
        v = step.cache["v"] = constant(t, 0.0 if t.is_float else 0)
    return v


def poison_observations_of(ctx: Any, op: Any) -> list:
    """The observers of one poison op of the running kernel's module."""
    plan = ctx.plan
    cache = plan.__dict__.get("_poison_observations")
    if cache is None:
        from loom.dialects.scalar import poison_observations

        cache = poison_observations(plan.module, plan.program.registry)
        plan.__dict__["_poison_observations"] = cache
    return cache.get(id(op), [])


def source_line(ctx: Any, op: Any) -> str:
    """`` at line N`` for an op with a file location (else empty)."""
    loc = ctx.plan.module.location(op.location_id)
    line = getattr(loc, "start_line", None)
    return f" at line {line}" if line else ""


# every scalar op is a pure function of its operands and attributes
