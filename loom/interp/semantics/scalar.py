"""Semantics of the scalar dialect: integer wrap, float math in the declared width."""

from __future__ import annotations

import math
import operator
from fractions import Fraction
from typing import Any

import numpy as np

from loom.interp.numerics import bf16_round, constant, from_memory, memory_dtype, to_memory
from loom.interp.numerics import value_dtype as vdt
from loom.interp.semantics import semantics
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


semantics("scalar.addi")(_wrapping(lambda a, b: a + b, lambda a, b: a ^ b))
semantics("scalar.subi")(_wrapping(lambda a, b: a - b, lambda a, b: a ^ b))
semantics("scalar.muli")(_wrapping(lambda a, b: a * b, lambda a, b: a & b))
semantics("scalar.andi")(_wrapping(lambda a, b: a & b, lambda a, b: a & b))
semantics("scalar.ori")(_wrapping(lambda a, b: a | b, lambda a, b: a | b))
semantics("scalar.xori")(_wrapping(lambda a, b: a ^ b, lambda a, b: a ^ b))


def _nonzero_divisor(ctx: Any, step: Any, a: Any, b: Any, t: Any) -> Any:
    zero = b == 0
    ctx.check(step, zero, "RUNTIME/002", "integer division by zero ({} / {})", a, b)
    return np.where(zero, np.ones_like(b), b) if np.ndim(b) else b


@semantics("scalar.divsi", "scalar.remsi")
def _signed_div(ctx: Any, step: Any, a: Any, b: Any) -> Any:
    t = rtype(step)
    b = _nonzero_divisor(ctx, step, a, b, t)
    sa, sb = sv(a, t), sv(b, t)
    lo = -(1 << (t.bit_width - 1))
    ovf = (sa == lo) & (sb == -1)
    ctx.check(step, ovf, "RUNTIME/003", "signed division overflow ({} / {})", a, b)
    sb = np.where(ovf, np.ones_like(sb), sb) if np.ndim(ovf) else (1 if ovf else sb)
    sb = sb.astype(sa.dtype) if hasattr(sb, "astype") else sa.dtype.type(sb)
    r = np.fmod(sa, sb)
    if step.cache.setdefault("rem", step.op.name.endswith("remsi")):
        return back(r, t)
    return back((sa - r) // sb, t)


@semantics("scalar.divui", "scalar.remui")
def _unsigned_div(ctx: Any, step: Any, a: Any, b: Any) -> Any:
    t = rtype(step)
    b = _nonzero_divisor(ctx, step, a, b, t)
    ua, ub = uv(a, t), uv(b, t)
    r = ua % ub if step.cache.setdefault("rem", step.op.name.endswith("remui")) else ua // ub
    return back(r, t)


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
    return back(uv(a, t) << s, t)


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
        if ufunc is not None and (type(a) is np.ndarray or type(b) is np.ndarray):
            dt = a.dtype
            if dt == b.dtype and not _is_bf16(step):
                # same-dtype lanes: the result has that dtype, written into a recycled array
                out = ctx.out_array(step, dt)
                if out is not None:
                    return ufunc(a, b, out=out)
                return ctx.produced(step, ufunc(a, b))
        r = fn(a, b)
        return bf16_round(r) if _is_bf16(step) else r

    return sem


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
semantics("scalar.minimumf")(
    _float_binary(lambda a, b: _signed_zero_fix(np.minimum(a, b), a, b, True))
)
semantics("scalar.maximumf")(
    _float_binary(lambda a, b: _signed_zero_fix(np.maximum(a, b), a, b, False))
)
semantics("scalar.minnumf")(_float_binary(lambda a, b: _signed_zero_fix(np.fmin(a, b), a, b, True)))
semantics("scalar.maxnumf")(
    _float_binary(lambda a, b: _signed_zero_fix(np.fmax(a, b), a, b, False))
)


def _float_unary(fn: Any) -> Any:
    def sem(ctx: Any, step: Any, a: Any) -> Any:
        return _rounded(step, fn(a))

    return sem


def _rsqrt(a: Any) -> Any:
    return (a.dtype.type(1) / np.sqrt(a)).astype(a.dtype)


semantics("scalar.negf")(_float_unary(np.negative))
semantics("scalar.absf")(_float_unary(np.abs))
semantics("scalar.sqrtf")(_float_unary(np.sqrt))
semantics("scalar.rsqrtf")(_float_unary(_rsqrt))
semantics("scalar.expf")(_float_unary(np.exp))
semantics("scalar.logf")(_float_unary(np.log))
semantics("scalar.tanhf")(_float_unary(np.tanh))
semantics("scalar.floorf")(_float_unary(np.floor))
semantics("scalar.ceilf")(_float_unary(np.ceil))
semantics("scalar.roundevenf")(_float_unary(np.rint))


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
    # the product of two f32/f16/bf16 values is exact in f64; one rounding to f64, one to T
    wide = np.multiply(a, b, dtype=np.float64) + np.asarray(c, dtype=np.float64)
    if t.spelling == "bf16":
        return bf16_round(wide.astype(np.float32))
    r = wide.astype(vdt(t))
    return r[()] if np.ndim(r) == 0 else r


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
        if dst.spelling == "bf16":
            return bf16_round(x.astype(np.float64).astype(np.float32))
        return x.astype(vdt(dst))

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
    dst = rtype(step)
    if dst.spelling == "bf16":
        return bf16_round(np.asarray(a).astype(np.float32))
    r = np.asarray(a).astype(vdt(dst))
    return r[()] if r.ndim == 0 else r


@semantics("scalar.bitcast")
def _bitcast(ctx: Any, step: Any, a: Any) -> Any:
    src, dst = itype(step), rtype(step)
    raw = to_memory(src, a).view(memory_dtype(dst))
    r = from_memory(dst, raw)
    return r[0] if np.ndim(a) == 0 else r


# every scalar op is a pure function of its operands and attributes
