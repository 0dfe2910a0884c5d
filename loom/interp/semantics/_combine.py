"""Combining kinds of collectives and atomics: binary functions, identities, and the table
functions (reduce, scan, votes, shuffles...) the collectives of both engines call.

Every table function folds columns strictly in lane order (a loop over columns, vectorised over
rows), so float results do not depend on how many rows a table has.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from loom.interp.numerics import value_dtype


def _signed(a: Any) -> Any:
    return a


def _unsigned(a: Any) -> Any:
    if a.dtype.kind == "i":
        return a.view(np.dtype(f"u{a.dtype.itemsize}"))
    return a


def _min_max_ieee(pick_min: bool) -> Any:
    """IEEE-754 minimum/maximum: NaN propagates, -0 < +0."""

    def f(a: Any, b: Any) -> Any:
        r = np.minimum(a, b) if pick_min else np.maximum(a, b)
        zero = (a == 0) & (b == 0)
        if np.any(zero):
            neg = np.signbit(a) | np.signbit(b) if pick_min else np.signbit(a) & np.signbit(b)
            r = np.where(zero, np.copysign(np.zeros_like(r), np.where(neg, -1.0, 1.0)), r)
        return r.astype(a.dtype, copy=False)

    return f


def _num(pick_min: bool) -> Any:
    """C fmin/fmax: a NaN operand yields the other operand."""

    def f(a: Any, b: Any) -> Any:
        r = np.fmin(a, b) if pick_min else np.fmax(a, b)
        return r.astype(a.dtype, copy=False)

    return f


def _unsigned_op(op: Any) -> Any:
    def f(a: Any, b: Any) -> Any:
        return op(_unsigned(a), _unsigned(b)).view(a.dtype)

    return f


def _bool_safe(op: Any) -> Any:
    def f(a: Any, b: Any) -> Any:
        return op(a, b).astype(a.dtype, copy=False)

    return f


COMBINE = {
    "addi": _bool_safe(lambda a, b: a ^ b if a.dtype == np.bool_ else a + b),
    "muli": _bool_safe(lambda a, b: a & b if a.dtype == np.bool_ else a * b),
    "subi": _bool_safe(lambda a, b: a ^ b if a.dtype == np.bool_ else a - b),
    "andi": _bool_safe(np.bitwise_and),
    "ori": _bool_safe(np.bitwise_or),
    "xori": _bool_safe(np.bitwise_xor),
    "minsi": _bool_safe(np.minimum),
    "maxsi": _bool_safe(np.maximum),
    "minui": _unsigned_op(np.minimum),
    "maxui": _unsigned_op(np.maximum),
    "addf": np.add,
    "mulf": np.multiply,
    "minimumf": _min_max_ieee(True),
    "maximumf": _min_max_ieee(False),
    "minnumf": _num(True),
    "maxnumf": _num(False),
    "xchgi": lambda a, b: b,
    "xchgf": lambda a, b: b,
}
"""``kind -> f(old, value)`` over NumPy arrays of one dtype."""


def identity(kind: str, dtype: np.dtype) -> Any:
    """The value an exclusive scan starts from."""
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        return dtype.type(
            {"addf": 0.0, "mulf": 1.0, "minimumf": np.inf, "minnumf": np.inf}.get(kind, -np.inf)
        )
    if dtype == np.bool_:
        return np.bool_(kind in ("muli", "andi", "minsi", "minui"))
    info = np.iinfo(dtype)
    return dtype.type(
        {
            "muli": 1,
            "andi": -1 if info.min < 0 else info.max,
            "minsi": info.max,
            "maxsi": info.min,
            "minui": -1 if info.min < 0 else info.max,
        }.get(kind, 0)
    )


def _cluster_columns(width: int, size: int | None, stride: int | None) -> list[list[int]]:
    """Column groups that combine together: the whole row, or clusters of ``size`` lanes
    ``stride`` apart (lane L is in cluster (L // (size*stride), L % stride))."""
    if not size:
        return [list(range(width))]
    stride = stride or 1
    groups: dict[tuple[int, int], list[int]] = {}
    for c in range(width):
        groups.setdefault((c // (size * stride), c % stride), []).append(c)
    return list(groups.values())


def _as_slice(cols: list[int]) -> slice:
    """The columns of a cluster (evenly spaced, ascending) as a slice: basic indexing, no
    copies."""
    step = cols[1] - cols[0] if len(cols) > 1 else 1
    return slice(cols[0], cols[-1] + 1, step)


def reduce_table(step: Any, tables: list, active: np.ndarray, info: Any) -> tuple:
    """Every active lane gets the combination of its row's (cluster's) active values."""
    (v,) = tables
    f = COMBINE[step.attrs["kind"]]
    groups = _cluster_columns(
        info.width, step.attrs.get("cluster_size"), step.attrs.get("cluster_stride")
    )
    out = None if len(groups) == 1 else np.zeros(v.shape, dtype=v.dtype)
    for cols in groups:
        sel = _as_slice(cols)
        acc, has = v[:, cols[0]].copy(), active[:, cols[0]].copy()
        if active[:, sel].all():  # every lane takes part: fold the columns in lane order
            acc = _fold(f, v, cols)
        else:
            for c in cols[1:]:
                a = active[:, c]
                acc = np.where(a & has, f(acc, v[:, c]), np.where(a, v[:, c], acc))
                has |= a
        if out is None:  # one cluster: the row's value for every lane
            return (np.repeat(acc, v.shape[1]).reshape(v.shape),)
        out[:, sel] = acc[:, None]
    return (out,)


def _fold(f: Any, v: np.ndarray, cols: list[int]) -> np.ndarray:
    """``f`` over the columns ``cols`` of ``v`` in order (a ufunc: over the columns copied out
    contiguous, into one accumulator)."""
    if not isinstance(f, np.ufunc) or len(cols) < 3:
        acc = v[:, cols[0]].copy()
        for c in cols[1:]:
            acc = f(acc, v[:, c])
        return acc
    vt = np.ascontiguousarray(v[:, _as_slice(cols)].T)
    acc = vt[0].copy()
    for row in vt[1:]:
        f(acc, row, out=acc)
    return acc


def scan_table(step: Any, tables: list, active: np.ndarray, info: Any) -> tuple:
    """Prefix combination over the active lanes in lane order (reverse: from the top)."""
    (v,) = tables
    kind = step.attrs["kind"]
    f = COMBINE[kind]
    exclusive = step.attrs.get("mode") == "exclusive"
    reverse = step.attrs.get("direction") == "reverse"
    out = np.zeros_like(v)
    start = identity(kind, v.dtype)
    for cols in _cluster_columns(
        info.width, step.attrs.get("cluster_size"), step.attrs.get("cluster_stride")
    ):
        order = cols[::-1] if reverse else cols
        acc = np.full(v.shape[0], start, dtype=v.dtype)
        has = np.zeros(v.shape[0], dtype=bool)
        for c in order:
            a = active[:, c]
            nxt = np.where(has, f(acc, v[:, c]), v[:, c])
            out[:, c] = acc if exclusive else nxt
            acc = np.where(a, nxt, acc)
            has |= a
    return (out,)


def vote_table(mode: str) -> Any:
    """any / all / count of the predicate over the active lanes of the row."""

    def fn(step: Any, tables: list, active: np.ndarray, info: Any) -> tuple:
        (p,) = tables
        p = p.astype(bool) & active
        if mode == "any":
            r = p.any(axis=1)
        elif mode == "all":
            r = (p | ~active).all(axis=1)
        else:
            r = p.sum(axis=1).astype(value_dtype(step.op.results[0].type))
        return (np.broadcast_to(r[:, None], active.shape),)

    return fn


def _mask_of(bits: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """Per row, the integer whose bit c is set where ``bits[:, c]``."""
    width = bits.shape[1]
    weights = np.left_shift(np.uint64(1), np.arange(width, dtype=np.uint64))
    m = (bits.astype(np.uint64) * weights).sum(axis=1, dtype=np.uint64)
    return m.astype(np.dtype(f"u{np.dtype(dtype).itemsize}")).view(dtype)


def ballot_table(step: Any, tables: list, active: np.ndarray, info: Any) -> tuple:
    """Bit L set when lane L is active and its predicate holds."""
    (p,) = tables
    dtype = value_dtype(step.op.results[0].type)
    m = _mask_of(p.astype(bool) & active, dtype)
    return (np.broadcast_to(m[:, None], active.shape),)


def active_mask_table(step: Any, tables: list, active: np.ndarray, info: Any) -> tuple:
    """Bit L set when lane L is active."""
    dtype = value_dtype(step.op.results[0].type)
    return (np.broadcast_to(_mask_of(active, dtype)[:, None], active.shape),)


def _bits(v: np.ndarray) -> np.ndarray:
    """Values compared bit for bit (floats: -0 differs from +0, NaNs by payload)."""
    if v.dtype.kind == "f":
        return v.view(np.dtype(f"u{v.dtype.itemsize}"))
    return v


def match_any_table(step: Any, tables: list, active: np.ndarray, info: Any) -> tuple:
    """Per lane, the mask of active lanes of the row holding the same bits."""
    (v,) = tables
    b = _bits(v)
    dtype = value_dtype(step.op.results[0].type)
    same = (b[:, :, None] == b[:, None, :]) & active[:, None, :]
    out = np.zeros(active.shape, dtype=dtype)
    for c in range(active.shape[1]):
        out[:, c] = _mask_of(same[:, c, :], dtype)
    return (out,)


def match_all_table(step: Any, tables: list, active: np.ndarray, info: Any) -> tuple:
    """Whether all active lanes hold the same bits, and then the active mask (else 0)."""
    (v,) = tables
    b = _bits(v)
    first = np.argmax(active, axis=1)
    ref = b[np.arange(b.shape[0]), first]
    equal = ((b == ref[:, None]) | ~active).all(axis=1)
    dtype = value_dtype(step.op.results[0].type)
    m = np.where(equal, _mask_of(active, dtype), dtype.type(0))
    return (
        np.broadcast_to(m[:, None], active.shape),
        np.broadcast_to(equal[:, None], active.shape),
    )


def broadcast_table(step: Any, tables: list, active: np.ndarray, info: Any) -> tuple:
    """Every lane gets the value of the lane its `lane` operand names."""
    v, lane = tables
    src = np.clip(lane.astype(np.int64), 0, info.width - 1)
    rows = np.arange(v.shape[0])[:, None]
    return (v[rows, src],)


def first_table(step: Any, tables: list, active: np.ndarray, info: Any) -> tuple:
    """Every lane gets the value of the row's lowest active lane."""
    (v,) = tables
    first = np.argmax(active, axis=1)
    r = v[np.arange(v.shape[0]), first]
    return (np.broadcast_to(r[:, None], active.shape),)


def shuffle_table(step: Any, tables: list, active: np.ndarray, info: Any) -> tuple:
    """Lane L reads lane src(L) within its segment of `width` lanes; invalid reads keep the
    lane's own value and report valid = false."""
    v, off, w = tables
    mode = step.attrs["mode"]
    lanes = np.arange(info.width, dtype=np.int64)[None, :]
    off = off.astype(np.int64)
    w = np.maximum(w.astype(np.int64), 1)
    base = lanes - lanes % w
    if mode == "xor":
        src = lanes ^ off
    elif mode == "up":
        src = lanes - off
    elif mode == "down":
        src = lanes + off
    else:
        src = base + off
    ok = (src >= base) & (src < base + w) & (src >= 0) & (src < info.width)
    safe = np.where(ok, src, lanes)
    rows = np.arange(v.shape[0])[:, None]
    ok &= active[rows, safe]
    return (np.where(ok, v[rows, safe], v), ok)
