"""Lane-affine facts: a value equal to ``c0 + sum(c[d] * i[d])`` over the lane axes of a chunk.

The grid engine runs a box of workgroups at once; its lanes form six axes ``(workgroup z, y, x,
workitem z, y, x)`` with the chunk's extents, row-major in lane order. A fact is the pair
``(c0, coeffs)`` with one exact Python-int coefficient per axis. Index arithmetic propagates
facts (see the ``affine`` rules in ``loom.interp.semantics.index``); a load or store whose byte
address has a fact becomes a strided view of the buffer over all lanes instead of a gather.
"""

from __future__ import annotations

from typing import Any

import numpy as np

Fact = tuple[int, tuple[int, ...]]


def uniform(v: Any) -> bool:
    """True for a lane-uniform value (a scalar, not a lane array)."""
    return np.ndim(v) == 0


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
    lo = hi = f[0]
    for c, e in zip(f[1], extents):
        d = c * (e - 1)
        if d < 0:
            lo += d
        else:
            hi += d
    return lo, hi


def injective(coeffs: tuple, extents: tuple, size: int) -> bool:
    """True when the accesses of ``size`` bytes at ``coeffs`` never overlap between lanes."""
    axes = sorted((abs(c), e) for c, e in zip(coeffs, extents) if e > 1)
    reach = size
    for c, e in axes:
        if c < reach:
            return False
        reach = c * (e - 1) + reach
    return True


def distinct_extents(coeffs: tuple, extents: tuple) -> tuple:
    """``extents`` with every axis ``coeffs`` does not depend on collapsed to 1: lanes along
    such axes share one position, so :func:`injective` over these says whether lanes at
    different positions never overlap."""
    return tuple(e if c else 1 for c, e in zip(coeffs, extents))


def lane_strides(extents: tuple) -> tuple[int, ...]:
    """Row-major strides of the lane axes (the flat lane index's coefficients)."""
    out, s = [], 1
    for e in reversed(extents):
        out.append(s)
        s *= e
    return tuple(reversed(out))


def positions(f: Fact, extents: tuple) -> np.ndarray:
    """The fact's value for every lane, as a flat int64 array in lane order."""
    v = np.full((1,) * len(extents), f[0], dtype=np.int64)
    for d, (c, e) in enumerate(zip(f[1], extents)):
        if c and e > 1:
            shape = [1] * len(extents)
            shape[d] = e
            v = v + (np.arange(e, dtype=np.int64) * c).reshape(shape)
    return np.broadcast_to(v, extents).reshape(-1)


def fill_positions(f: Fact, extents: tuple, out: np.ndarray) -> None:
    """Write :func:`positions` of ``f`` into the flat int64 array ``out`` (the last varying
    axis is added while writing: no lane-sized temporary)."""
    terms = []
    for d, (c, e) in enumerate(zip(f[1], extents)):
        if c and e > 1:
            shape = [1] * len(extents)
            shape[d] = e
            terms.append((np.arange(e, dtype=np.int64) * c).reshape(shape))
    v: Any = np.int64(f[0])
    for t in terms[:-1]:
        v = v + t
    if terms:
        np.add(v, terms[-1], out=out.reshape(extents))
    else:
        out.fill(f[0])


def strided(data: np.ndarray, f: Fact, extents: tuple, dtype: np.dtype) -> np.ndarray | None:
    """A strided view of ``data`` (bytes) with element ``f`` per lane (None when misaligned)."""
    size = dtype.itemsize
    c0, coeffs = f
    if c0 % size or any(c % size for c in coeffs):
        return None
    elems = data[: data.size - data.size % size].view(dtype)
    return np.lib.stride_tricks.as_strided(elems[c0 // size :], extents, coeffs)


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


def separable(facts: list, extents: tuple) -> bool:
    """True when lanes map one-to-one onto index tuples: every lane axis that varies drives
    exactly one of the index facts, and each index is injective over its own axes. Then lanes
    whose indices are all in bounds of a non-overlapping view access distinct elements, whatever
    masked-off lanes would have touched."""
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
