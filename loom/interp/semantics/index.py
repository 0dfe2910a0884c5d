"""Semantics of the index dialect: address arithmetic that never wraps silently."""

from __future__ import annotations

from typing import Any

import numpy as np

from loom.interp import affine as A
from loom.interp.numerics import (
    count_leading_zeros,
    count_trailing_zeros,
    popcount,
    rotate_left,
)
from loom.interp.semantics import affine, lazy_operands, semantics
from loom.interp.semantics._util import back, itype, rtype, sv, uv

_I64 = np.int64


def _domain(ctx: Any, step: Any, r: Any, bad: Any, *args: Any) -> Any:
    if step.floor == 0:  # offsets are never negative
        bad = bad | (r < 0)
    if not (bad.any() if type(bad) is np.ndarray else bad):
        return r
    t = rtype(step)
    ctx.check(
        step,
        bad,
        "RUNTIME/006",
        f"result is outside the {t} domain (operands {{}}, {{}})",
        *args[:2],
    )
    return r


def _is_offset(step: Any) -> bool:
    return rtype(step).spelling == "offset"


@semantics("index.constant")
def _constant(ctx: Any, step: Any) -> Any:
    v = step.cache.get("v")
    if v is None:
        v = step.cache["v"] = _I64(step.attrs["value"])
    return v


def _in_domain(ctx: Any, step: Any, a: Any, b: Any, sign: int) -> bool:
    """True when ``a + sign * b`` provably stays in the result's domain on every lane of the
    chunk: ``a`` lane-affine (its exact bounds from the fact), ``b`` uniform."""
    affs = ctx.affs
    if len(affs) != 2 or affs[0] is None or type(b) is np.ndarray:
        return False
    lo, hi = A.span(affs[0], ctx.extents)
    lo, hi = lo + sign * int(b), hi + sign * int(b)
    floor = 0 if _is_offset(step) else -(2**63)
    return lo >= floor and hi < 2**63


@semantics("index.add")
def _add(ctx: Any, step: Any, a: Any, b: Any) -> Any:
    if type(a) is np.ndarray and _in_domain(ctx, step, a, b, 1):
        return a + b
    r = a + b
    return _domain(ctx, step, r, ((a ^ r) & (b ^ r)) < 0, a, b)


@semantics("index.sub")
def _sub(ctx: Any, step: Any, a: Any, b: Any) -> Any:
    if type(a) is np.ndarray and _in_domain(ctx, step, a, b, -1):
        return a - b
    r = a - b
    return _domain(ctx, step, r, ((a ^ b) & (a ^ r)) < 0, a, b)


def _mul_overflow(a: Any, b: Any) -> Any:
    if type(a) is not np.ndarray and type(b) is not np.ndarray:
        # uniform operands (always so in the stepper): exact Python-int arithmetic
        return not -(2**63) <= int(a) * int(b) < 2**63
    approx = np.abs(np.multiply(a, b, dtype=np.float64))
    suspect = approx >= 2.0**62
    if not np.any(suspect):
        return suspect

    def exact(x: Any, y: Any) -> bool:
        return not -(2**63) <= int(x) * int(y) < 2**63

    if np.ndim(suspect) == 0:
        return np.bool_(exact(a, b))
    out = np.zeros(np.shape(suspect), dtype=bool)
    aa, bb = np.broadcast_to(a, out.shape), np.broadcast_to(b, out.shape)
    for i in np.flatnonzero(suspect):
        out[i] = exact(aa[i], bb[i])
    return out


@semantics("index.mul")
def _mul(ctx: Any, step: Any, a: Any, b: Any) -> Any:
    return _domain(ctx, step, a * b, _mul_overflow(a, b), a, b)


@semantics("index.madd")
def _madd(ctx: Any, step: Any, a: Any, b: Any, c: Any) -> Any:
    if type(a) is not np.ndarray and type(b) is not np.ndarray and type(c) is not np.ndarray:
        r = int(a) * int(b) + int(c)
        if step.floor <= r < 2**63:
            return _I64(r)
    p = a * b
    r = p + c
    bad = _mul_overflow(a, b) | (((p ^ r) & (c ^ r)) < 0)
    return _domain(ctx, step, r, bad, a, b)


def _by_uniform(a: np.ndarray, b: Any, rem: bool) -> np.ndarray:
    """Floor ``a // b`` or ``a % b`` for a uniform ``b > 0``: a shift or a mask when ``b`` is a
    power of two (the same on every int64, negative ones included; cheaper than dividing)."""
    k = int(b)
    if k & (k - 1) == 0:
        return a & _I64(k - 1) if rem else a >> _I64(k.bit_length() - 1)
    return a % b if rem else a // b


def _divrem(rem: bool) -> Any:
    def sem(ctx: Any, step: Any, a: Any, b: Any) -> Any:
        if type(b) is not np.ndarray and type(a) is not np.ndarray and a >= 0 and b > 0:
            return a % b if rem else a // b  # uniform and in the domain: nothing to check
        if type(b) is not np.ndarray and b > 0 and type(a) is np.ndarray:
            affs = ctx.affs
            if affs and affs[0] is not None and A.span(affs[0], ctx.extents)[0] >= 0:
                # a lane-affine dividend that is never negative (from its fact): no checks
                return _by_uniform(a, b, rem)
        bad = (a < 0) | (b <= 0)
        ctx.check(
            step,
            bad,
            "RUNTIME/006",
            "index division needs a non-negative dividend and a positive divisor (got {} and {})",
            a,
            b,
        )
        if np.ndim(b):
            b = np.where(b <= 0, _I64(1), b)
        elif b <= 0:
            b = _I64(1)
        elif type(a) is np.ndarray:
            return _by_uniform(a, b, rem)
        return a % b if rem else a // b

    return sem


semantics("index.div")(_divrem(False))
semantics("index.rem")(_divrem(True))
semantics("index.min")(lambda ctx, step, a, b: np.minimum(a, b))
semantics("index.max")(lambda ctx, step, a, b: np.maximum(a, b))


@semantics("index.scale")
def _scale(ctx: Any, step: Any, i: Any, stride: Any) -> Any:
    r = i * stride
    return _domain(ctx, step, r, _mul_overflow(i, stride), i, stride)


_CMP = {
    "eq": (np.equal, False),
    "ne": (np.not_equal, False),
    "slt": (np.less, False),
    "sle": (np.less_equal, False),
    "sgt": (np.greater, False),
    "sge": (np.greater_equal, False),
    "ult": (np.less, True),
    "ule": (np.less_equal, True),
    "ugt": (np.greater, True),
    "uge": (np.greater_equal, True),
}


_MONOTONE = {"slt", "sle", "sgt", "sge"}


def _uniform_cmp(ctx: Any, fn: Any, a: Any, b: Any) -> Any:
    """The comparison as a lane-uniform bool when a lane-affine operand against a uniform one
    gives the same answer on every lane (checked at the smallest and largest value over the
    chunk: a signed order against a constant holds everywhere between when it holds at both
    ends); else None."""
    affs = ctx.affs
    if len(affs) != 2:
        return None
    fa, fb = affs
    if fa is not None and not A.lanes(b) and A.lanes(a):
        ends = A.span(fa, ctx.extents)
        if ends[0] < -(2**63) or ends[1] >= 2**63:
            return None
        first, last = (fn(_I64(e), b) for e in ends)
    elif fb is not None and not A.lanes(a) and A.lanes(b):
        ends = A.span(fb, ctx.extents)
        if ends[0] < -(2**63) or ends[1] >= 2**63:
            return None
        first, last = (fn(a, _I64(e)) for e in ends)
    else:
        return None
    return np.bool_(first) if first == last else None


@semantics("index.cmp")
def _cmp(ctx: Any, step: Any, a: Any, b: Any) -> Any:
    predicate = step.attrs["predicate"]
    fn, unsigned = _CMP[predicate]
    if predicate in _MONOTONE:
        r = _uniform_cmp(ctx, fn, a, b)
        if r is not None:
            return r
    if predicate in _GUARDS and (A.lanes(a) or A.lanes(b)):
        r = _guard_mask(ctx, predicate, a, b)
        if r is not None:
            return r
    a, b = A.values(a), A.values(b)
    if unsigned:
        a, b = a.view(np.uint64), b.view(np.uint64)
    r = fn(a, b)
    if type(r) is np.ndarray and predicate in _GUARDS:
        _note_guard(ctx, predicate, a, b, r)
    return r


lazy_operands(0, "index.cmp")

_GUARDS = {
    # predicate -> bounds (lo, hi) of the affine left operand given the uniform right one b,
    # and of the affine right operand given the uniform left one a
    "slt": (lambda b: (None, b - 1), lambda a: (a + 1, None)),
    "sle": (lambda b: (None, b), lambda a: (a, None)),
    "sgt": (lambda b: (b + 1, None), lambda a: (None, a - 1)),
    "sge": (lambda b: (b, None), lambda a: (None, a)),
    "eq": (lambda b: (b, b), lambda a: (a, a)),
}


def _guard_mask(ctx: Any, predicate: str, a: Any, b: Any) -> Any:
    """The comparison of an affine operand with a uniform one built from the fact by the
    engine (see ``guard_mask``), or None."""
    affs = ctx.affs
    if len(affs) != 2:
        return None
    left, right = _GUARDS[predicate]
    if affs[0] is not None and not A.lanes(b):
        return ctx.guard_mask(affs[0], *left(int(b)))
    if affs[1] is not None and not A.lanes(a):
        return ctx.guard_mask(affs[1], *right(int(a)))
    return None


def _note_guard(ctx: Any, predicate: str, a: Any, b: Any, r: np.ndarray) -> None:
    """Tell the engine the bounds an affine operand has where the comparison holds (a guard:
    loads and stores under it check bounds and restrict work from the bounds)."""
    affs = ctx.affs
    if len(affs) != 2:
        return
    left, right = _GUARDS[predicate]
    if affs[0] is not None and type(b) is not np.ndarray:
        ctx.guard(r, affs[0], *left(int(b)))
    elif affs[1] is not None and type(a) is not np.ndarray:
        ctx.guard(r, affs[1], *right(int(a)))


@semantics("index.cast")
def _cast(ctx: Any, step: Any, a: Any) -> Any:
    src, dst = itype(step), rtype(step)
    if dst.is_address:
        if src.is_address:
            bad = a < 0  # index <-> offset must be representable (both are [0, 2^63) here)
            ctx.check(step, bad, "RUNTIME/006", f"value {{}} is not representable as {dst}", a)
            return a
        if src.bit_width == 1:
            return a.astype(_I64)
        if dst.spelling == "index":
            return sv(a, src).astype(_I64)
        raw = uv(a, src).astype(np.uint64)
        if src.bit_width == 64:
            bad = raw >= np.uint64(2**63)
            ctx.check(
                step, bad, "RUNTIME/006", "i64 value {} is negative and not a valid offset", a
            )
        return raw.astype(_I64)
    # out of the address domain: keep the low bits of the (signed or unsigned) carrier
    return back(a, dst) if dst.bit_width == 64 else back(a.astype(_I64), dst)


semantics("index.andi")(lambda ctx, step, a, b: a & b)
semantics("index.ori")(lambda ctx, step, a, b: a | b)
semantics("index.xori")(lambda ctx, step, a, b: a ^ b)

_WIDTH = 64
"""The reference target's index carrier width."""


def _lane(r: Any) -> Any:
    return r[()] if isinstance(r, np.ndarray) and r.ndim == 0 else r


def _amount(ctx: Any, step: Any, a: Any, b: Any) -> Any:
    ub = b.view(np.uint64)
    bad = ub >= np.uint64(_WIDTH)
    ctx.check(
        step, bad, "RUNTIME/004", f"shift amount {{1}} is not below the index width {_WIDTH}", a, b
    )
    return _lane(np.where(bad, np.uint64(0), ub))


@semantics("index.shli")
def _shli(ctx: Any, step: Any, a: Any, b: Any) -> Any:
    s = _amount(ctx, step, a, b)
    r = (a.view(np.uint64) << s).view(_I64)
    # the exact product a * 2^s must stay in the index domain (never a silent wrap)
    return _domain(ctx, step, r, (r >> s.astype(_I64)) != a, a, b)


@semantics("index.shrsi")
def _shrsi(ctx: Any, step: Any, a: Any, b: Any) -> Any:
    return a >> _amount(ctx, step, a, b).astype(_I64)


@semantics("index.shrui")
def _shrui(ctx: Any, step: Any, a: Any, b: Any) -> Any:
    return (a.view(np.uint64) >> _amount(ctx, step, a, b)).view(_I64)


def _rotate(left: bool) -> Any:
    def sem(ctx: Any, step: Any, a: Any, b: Any) -> Any:
        s = b.view(np.uint64) % np.uint64(_WIDTH)
        if not left:
            s = (np.uint64(_WIDTH) - s) % np.uint64(_WIDTH)
        return _lane(rotate_left(a.view(np.uint64), s, _WIDTH).view(_I64))

    return sem


semantics("index.rotli")(_rotate(True))
semantics("index.rotri")(_rotate(False))


def _count(fn: Any) -> Any:
    def sem(ctx: Any, step: Any, a: Any) -> Any:
        return _lane(fn(a.view(np.uint64), _WIDTH).astype(_I64))

    return sem


semantics("index.ctlzi")(_count(count_leading_zeros))
semantics("index.cttzi")(_count(count_trailing_zeros))
semantics("index.ctpopi")(_count(lambda u, w: popcount(u)))


@semantics("index.assume")
def _assume(ctx: Any, step: Any, *values: Any) -> Any:
    return values[0] if len(values) == 1 else values


@affine("index.add")
def _aff_add(ctx: Any, step: Any, args: tuple, affs: tuple) -> Any:
    (a, b), (fa, fb) = args, affs
    if fa is not None and fb is not None:
        return A.add(fa, fb)
    if fa is not None and A.uniform(b):
        return A.plus(fa, int(b))
    if fb is not None and A.uniform(a):
        return A.plus(fb, int(a))
    return None


@affine("index.sub")
def _aff_sub(ctx: Any, step: Any, args: tuple, affs: tuple) -> Any:
    (a, b), (fa, fb) = args, affs
    if fb is not None:
        neg = A.times(fb, -1)
        if fa is not None:
            return A.add(fa, neg)
        return A.plus(neg, int(a)) if A.uniform(a) else None
    if fa is not None and A.uniform(b):
        return A.plus(fa, -int(b))
    return None


def _product(a: Any, b: Any, fa: Any, fb: Any) -> Any:
    if fa is not None and A.uniform(b):
        return A.times(fa, int(b))
    if fb is not None and A.uniform(a):
        return A.times(fb, int(a))
    return None


@affine("index.mul", "index.scale")
def _aff_mul(ctx: Any, step: Any, args: tuple, affs: tuple) -> Any:
    (a, b), (fa, fb) = args, affs
    return _product(a, b, fa, fb)


@affine("index.madd")
def _aff_madd(ctx: Any, step: Any, args: tuple, affs: tuple) -> Any:
    (a, b, c), (fa, fb, fc) = args, affs
    if A.uniform(a) and A.uniform(b):
        prod: Any = (int(a) * int(b), None)
    else:
        prod = _product(a, b, fa, fb)
        if prod is None:
            return None
    if prod[1] is None:
        return A.plus(fc, prod[0]) if fc is not None else None
    if fc is not None:
        return A.add(prod, fc)
    return A.plus(prod, int(c)) if A.uniform(c) else None


def _aff_bound(pick_max: bool) -> Any:
    def rule(ctx: Any, step: Any, args: tuple, affs: tuple) -> Any:
        # min/max of a lane-affine value and a uniform one is affine when one side wins on
        # every lane of the chunk
        (a, b), (fa, fb) = args, affs
        if fa is not None and A.uniform(b):
            f, k = fa, int(b)
        elif fb is not None and A.uniform(a):
            f, k = fb, int(a)
        else:
            return None
        lo, hi = A.span(f, ctx.extents)
        if (lo >= k) if pick_max else (hi <= k):
            return f
        return None

    return rule


affine("index.min")(_aff_bound(False))
affine("index.max")(_aff_bound(True))


@affine("index.cast")
def _aff_cast(ctx: Any, step: Any, args: tuple, affs: tuple) -> Any:
    return affs[0] if rtype(step).is_address and itype(step).is_address else None
