"""Helpers shared by the semantics modules: signed/unsigned views, selects, result types."""

from __future__ import annotations

from typing import Any

import numpy as np

from loom.interp.numerics import signed_dtype, unsigned_dtype, value_dtype
from loom.ir import ScalarType


def rtype(step: Any, i: int = 0) -> ScalarType:
    """Type of result ``i`` of the step's op."""
    return step.op.results[i].type


def itype(step: Any, i: int = 0) -> ScalarType:
    """Type of operand ``i`` of the step's op."""
    return step.op.operands[i].type


def sv(v: Any, t: ScalarType) -> Any:
    """Signed reading of integer lanes (i1 true is -1)."""
    if t.bit_width == 1:
        return -(v.astype(np.int8))
    return v


def uv(v: Any, t: ScalarType) -> Any:
    """Unsigned reading of integer lanes (same width)."""
    if t.bit_width == 1:
        return v.astype(np.uint8)
    return v.view(unsigned_dtype(t.bit_width))


def back(r: Any, t: ScalarType) -> Any:
    """Integer results (any integer dtype) wrapped into the value dtype of ``t``."""
    if t.bit_width == 1:
        return (r & 1).astype(np.bool_)
    d = value_dtype(t)
    if r.dtype == d:
        return r
    if r.dtype.itemsize == d.itemsize:
        return r.view(d)
    return r.astype(d)


def as_signed_wide(v: Any, t: ScalarType) -> Any:
    """Signed lanes converted to int64."""
    return sv(v, t).astype(np.int64)


def width_signed(t: ScalarType) -> np.dtype:
    """The signed dtype of ``t``'s width."""
    return signed_dtype(t.bit_width)


def where(cond: Any, a: Any, b: Any) -> Any:
    """Lane-wise select that keeps scalars scalar and passes buffers/views through."""
    if a is None:
        return b
    if b is None or a is b:
        return a
    if isinstance(a, np.generic | np.ndarray) and isinstance(b, np.generic | np.ndarray):
        if type(cond) is not np.ndarray and a.dtype == b.dtype:
            # a uniform choice (a loop's carried values under uniform control, a lane array
            # replacing its uniform initial value): no lane work
            return a if cond else b
        r = np.where(cond, a, b)
        return r[()] if r.ndim == 0 else r
    if np.ndim(cond) == 0:
        return a if bool(cond) else b
    c = np.asarray(cond)
    if c.all():
        return a
    if not c.any():
        return b
    from loom.errors import LoomRuntimeError

    raise LoomRuntimeError(
        "lanes chose different buffers or views; the interpreter needs "
        "buffer and view values to be uniform across a workgroup"
    )


_SCALAR_BOOL = (bool, np.bool_)


def any_true(m: Any) -> bool:
    """True if any lane of a mask (or the scalar) is set."""
    if type(m) in _SCALAR_BOOL:
        return bool(m)
    return bool(np.any(m))


def not_executable(why: str) -> Any:
    """Semantics for an op that has no meaning on the reference target: a RUNTIME/013 error
    naming the op and ``why``."""

    def sem(ctx: Any, step: Any, *args: Any) -> Any:
        raise ctx.error(
            step,
            "RUNTIME/013",
            f"'{step.op.name}' is not executable on the reference target: {why}",
            None,
        )

    return sem
