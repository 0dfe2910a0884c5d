"""Lane-affine facts: a value equal to ``c0 + sum(c[d] * i[d])`` over the lane axes of a chunk.

The grid engine runs a box of workgroups at once; its lanes form six axes ``(workgroup z, y, x,
workitem z, y, x)`` with the chunk's extents, row-major in lane order. A fact is the pair
``(c0, coeffs)`` with one exact Python-int coefficient per axis. Index arithmetic propagates
facts (see the ``affine`` rules in ``loom.interp.semantics.index``); a load or store whose byte
address has a fact becomes a strided view of the buffer over all lanes instead of a gather.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import numpy as np

_CACHED = 1 << 12
"""Most remembered results of each pure function of facts and extents below (the same facts
recur in every chunk and every pass of a loop)."""

Fact = tuple[int, tuple[int, ...]]


def uniform(v: Any) -> bool:
    """True for a lane-uniform value (a scalar, not a lane array)."""
    return np.ndim(v) == 0


class Lazy:
    """A lane-varying value known by its fact whose lane array is made only when an op reads
    its lanes (most index values are only compared against uniform bounds or used as
    addresses, which the facts answer). The grid engine hands one only to ops registered with
    :func:`loom.interp.semantics.lazy_operands`; every other op gets the array."""

    __slots__ = ("fact", "make", "value")
    ndim = 1

    def __init__(self, fact: Fact, make: Any) -> None:
        self.fact = fact
        self.make = make
        self.value: np.ndarray | None = None

    def get(self) -> np.ndarray:
        """The lane array (made on the first call)."""
        v = self.value
        if v is None:
            v = self.value = self.make()
            self.make = None
        return v


def lanes(v: Any) -> bool:
    """True for a lane array or a :class:`Lazy` one."""
    t = type(v)
    return t is np.ndarray or t is Lazy


def values(v: Any) -> Any:
    """``v`` with a :class:`Lazy` value made into its lane array."""
    return v.get() if type(v) is Lazy else v


def plus(f: Fact, k: int) -> Fact:
    """``f + k`` for a uniform ``k``."""
    return (f[0] + k, f[1])


def times(f: Fact, k: int) -> Fact:
    """``f * k`` for a uniform ``k``."""
    return (f[0] * k, tuple(c * k for c in f[1]))


def add(f: Fact, g: Fact) -> Fact:
    """``f + g``."""
    return (f[0] + g[0], tuple(a + b for a, b in zip(f[1], g[1])))


def span(f: Fact, extents: tuple) -> tuple[int, int]:
    """Smallest and largest value of ``f`` over the lanes of the box."""
    lo, hi = _reach(f[1], extents)
    return f[0] + lo, f[0] + hi


@lru_cache(maxsize=_CACHED)
def _reach(coeffs: tuple, extents: tuple) -> tuple[int, int]:
    """:func:`span` of ``(0, coeffs)`` (the same for every start: loop-variant facts differ in
    their start only)."""
    lo = hi = 0
    for c, e in zip(coeffs, extents):
        d = c * (e - 1)
        if d < 0:
            lo += d
        else:
            hi += d
    return lo, hi


@lru_cache(maxsize=_CACHED)
def injective(coeffs: tuple, extents: tuple, size: int) -> bool:
    """True when the accesses of ``size`` bytes at ``coeffs`` never overlap between lanes."""
    axes = sorted((abs(c), e) for c, e in zip(coeffs, extents) if e > 1)
    reach = size
    for c, e in axes:
        if c < reach:
            return False
        reach = c * (e - 1) + reach
    return True


@lru_cache(maxsize=_CACHED)
def distinct_extents(coeffs: tuple, extents: tuple) -> tuple:
    """``extents`` with every axis ``coeffs`` does not depend on collapsed to 1: lanes along
    such axes share one position, so :func:`injective` over these says whether lanes at
    different positions never overlap."""
    return tuple(e if c else 1 for c, e in zip(coeffs, extents))


@lru_cache(maxsize=_CACHED)
def lane_strides(extents: tuple) -> tuple[int, ...]:
    """Row-major strides of the lane axes (the flat lane index's coefficients)."""
    out, s = [], 1
    for e in reversed(extents):
        out.append(s)
        s *= e
    return tuple(reversed(out))


def positions(f: Fact, extents: tuple) -> np.ndarray:
    """The fact's value for every lane, as a flat int64 array in lane order."""
    n = 1
    for e in extents:
        n *= e
    out = np.empty(n, dtype=np.int64)
    if n:
        fill_positions(f, extents, out)
    return out


@lru_cache(maxsize=64)
def _terms(coeffs: tuple, extents: tuple) -> tuple:
    """(shape, sum of all but the last varying axis' terms or None, last term or None) of
    :func:`fill_positions`: small read-only arrays, reused for every chunk."""
    # over the axes longer than 1 only (NumPy iterates fewer dimensions faster)
    axes = [(c, e) for c, e in zip(coeffs, extents) if e > 1]
    terms = []
    for d, (c, e) in enumerate(axes):
        if c:
            shape = [1] * len(axes)
            shape[d] = e
            terms.append((np.arange(e, dtype=np.int64) * c).reshape(shape))
    head = None
    for t in terms[:-1]:
        head = t if head is None else head + t
    for t in (head, terms[-1] if terms else None):
        if t is not None:
            t.flags.writeable = False
    return tuple(e for _, e in axes), head, terms[-1] if terms else None


def fill_positions(f: Fact, extents: tuple, out: np.ndarray) -> None:
    """Write :func:`positions` of ``f`` into the flat int64 array ``out`` (the last varying
    axis is added while writing: no lane-sized temporary)."""
    shape, head, last = _terms(f[1], extents)
    if last is None:
        out.fill(f[0])
        return
    v: Any = np.int64(f[0])
    if head is not None:
        v = head + v  # int64 sums wrap alike in any order
    np.add(v, last, out=out.reshape(shape))


@lru_cache(maxsize=_CACHED)
def _aligned(coeffs: tuple, size: int) -> bool:
    return not any(c % size for c in coeffs)


def strided(data: np.ndarray, f: Fact, extents: tuple, dtype: np.dtype) -> np.ndarray | None:
    """A strided view of ``data`` (bytes) with element ``f`` per lane (None when misaligned)."""
    size = dtype.itemsize
    c0, coeffs = f
    if c0 % size or not _aligned(coeffs, size):
        return None
    lo, hi = span(f, extents)
    if lo >= 0 and hi + size <= data.size and data.flags.c_contiguous:
        # inside the array: the direct constructor (as_strided builds an array interface)
        return np.ndarray(extents, dtype, buffer=data, offset=c0, strides=coeffs)
    elems = data[: data.size - data.size % size].view(dtype)
    return np.lib.stride_tricks.as_strided(elems[c0 // size :], extents, coeffs)


@lru_cache(maxsize=_CACHED)
def flat_stride(coeffs: tuple, extents: tuple) -> int | None:
    """``k`` when the fact is ``c0 + k * lane`` (lane = flat index in the chunk), else None."""
    k = None
    for c, f, e in zip(coeffs, lane_strides(extents), extents):
        if e > 1:
            if k is None:
                if c % f:
                    return None
                k = c // f
            if c != k * f:
                return None
    return 0 if k is None else k


def separable(facts: Any, extents: tuple) -> bool:
    """True when lanes map one-to-one onto index tuples: every lane axis that varies drives
    exactly one of the index facts, and each index is injective over its own axes. Then lanes
    whose indices are all in bounds of a non-overlapping view access distinct elements, whatever
    masked-off lanes would have touched."""
    return _separable(tuple(facts), extents)


@lru_cache(maxsize=_CACHED)
def _separable(facts: tuple, extents: tuple) -> bool:
    owner = [-1] * len(extents)
    for j, co in enumerate(facts):
        for d, c in enumerate(co):
            if c and extents[d] > 1:
                if owner[d] >= 0:
                    return False
                owner[d] = j
    if any(o < 0 for o, e in zip(owner, extents) if e > 1):
        return False
    for j, co in enumerate(facts):
        mine = [(c, e) for c, e, o in zip(co, extents, owner) if o == j]
        if not injective(tuple(c for c, _ in mine), tuple(e for _, e in mine), 1):
            return False
    return True


Box = tuple[tuple[int, int], ...]
"""Inclusive index ranges ``(first, last)``, one per lane axis."""


def interval_boxes(
    f: Fact, extents: tuple, lo: int | None, hi: int | None, most: int = 16
) -> list[Box] | None:
    """The lanes where ``lo <= f <= hi`` as disjoint boxes (see :func:`_interval_boxes`;
    remembered: a guard's boxes are the same in every chunk of the same shape)."""
    out = _interval_boxes(f, extents, lo, hi, most)
    return None if out is None else list(out)


@lru_cache(maxsize=_CACHED)
def _interval_boxes(
    f: Fact, extents: tuple, lo: int | None, hi: int | None, most: int
) -> tuple[Box, ...] | None:
    """The lanes where ``lo <= f <= hi`` (a bound of None is absent) as disjoint boxes, when
    the fact's varying axes are digits of a mixed radix (each coefficient's size exceeds the
    reach of every smaller one, as for ``group * size + item``): the lanes in range are then an
    interval in that digit order, at most ``2 * axes - 1`` boxes (``[]`` when none). None when
    the axes are not digits or there would be more than ``most`` boxes."""
    axes = sorted(
        ((abs(c), d, c, e) for d, (c, e) in enumerate(zip(f[1], extents)) if c and e > 1),
        reverse=True,
    )
    reach = 0
    for size, _, _, e in reversed(axes):
        if size <= reach:
            return None
        reach += size * (e - 1)
    # a negative coefficient counts its axis backwards: i = e - 1 - j with j counting up
    g0 = f[0] + sum(c * (e - 1) for _, _, c, e in axes if c < 0)
    full = tuple((0, e - 1) for e in extents)
    lo = -(1 << 64) if lo is None else lo
    hi = 1 << 64 if hi is None else hi
    out: list[Box] = []

    def walk(k: int, base: int, fixed: dict) -> None:
        if k == len(axes):
            if lo <= base <= hi:
                out.append(tuple(fixed.get(d, r) for d, r in enumerate(full)))
            return
        size, d, c, e = axes[k]
        rest = sum(s * (x - 1) for s, _, _, x in axes[k + 1 :])
        # digit values j whose whole sub-range [base + size*j, .. + rest] is inside [lo, hi]
        a = max(0, -((base - lo) // size))
        b = min(e - 1, (hi - rest - base) // size)

        def put(j0: int, j1: int) -> None:
            fixed[d] = (j0, j1) if c > 0 else (e - 1 - j1, e - 1 - j0)

        if a <= b:
            put(a, b)
            tail = {**fixed}
            for dd, r in enumerate(full):
                if dd not in tail:
                    tail[dd] = r
            out.append(tuple(tail[dd] for dd in range(len(full))))
        # the digit values where the range is cut: the one holding lo and the one holding hi
        cut = {(lo - base) // size, (hi - base) // size}
        for j in sorted(cut):
            if 0 <= j < e and not (a <= j <= b):
                lo_j, hi_j = base + size * j, base + size * j + rest
                if hi_j < lo or lo_j > hi:
                    continue
                put(j, j)
                walk(k + 1, base + size * j, fixed)
        fixed.pop(d, None)

    walk(0, g0, {})
    return tuple(out) if len(out) <= most else None


def boxes_volume(boxes: list[Box]) -> int:
    """The number of lanes in disjoint ``boxes`` (inclusive ranges per lane axis)."""
    total = 0
    for box in boxes:
        k = 1
        for a, b in box:
            k *= max(0, b - a + 1)
        total += k
    return total


def intersect_boxes(a: list[Box], b: list[Box], most: int = 16) -> list[Box] | None:
    """The nonempty pairwise intersections of two lists of disjoint boxes (None past
    ``most``)."""
    out = []
    for x in a:
        for y in b:
            z = tuple((max(p[0], q[0]), min(p[1], q[1])) for p, q in zip(x, y))
            if all(r[0] <= r[1] for r in z):
                out.append(z)
    return out if len(out) <= most else None
