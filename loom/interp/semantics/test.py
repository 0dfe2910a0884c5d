"""Semantics of the test dialect: records and sinks do nothing; probes report observed facts."""

from __future__ import annotations

from typing import Any

import numpy as np

from loom.dialects._shapes import MEMORY_SPACE
from loom.interp.collectives import SUBGROUP, WORKGROUP
from loom.interp.memory import Buf, View
from loom.interp.numerics import constant
from loom.interp.semantics import semantics
from loom.interp.semantics._util import back, not_executable, rtype
from loom.ir import ScalarType


@semantics("test.target")
def _record(ctx: Any, step: Any) -> None:
    return None


@semantics("test.use")
def _use(ctx: Any, step: Any, *values: Any) -> None:
    return None


@semantics("test.record", "test.func", "test.split_func")
def _declaration(ctx: Any, step: Any, *args: Any) -> None:
    return None


@semantics("test.yield")
def _yield(ctx: Any, step: Any, *values: Any) -> tuple:
    return values


@semantics("test.constant")
def _constant(ctx: Any, step: Any) -> Any:
    t = rtype(step)
    if not isinstance(t, ScalarType):
        raise ctx.error(
            step,
            "RUNTIME/013",
            f"'{step.op.name}' of {t} is not executable on the reference target: the "
            "interpreter holds scalar lane values only",
            None,
        )
    return constant(t, step.attrs["value"])


# ------------------------------------------------------------------ fact probes
# The compiler folds a probe to what its facts engine proves; the interpreter reports what it
# observes for the value at hand, so a notebook can set stated facts beside observed ones.


def _i64(x: Any) -> Any:
    return np.asarray(x).astype(np.int64)[()] if np.ndim(x) else np.int64(x)


def _scalar_probe(fn: Any) -> Any:
    def sem(ctx: Any, step: Any, x: Any) -> Any:
        with np.errstate(all="ignore"):
            r = fn(x)
        out = rtype(step)
        if out.bit_width == 1:
            return np.asarray(r, dtype=np.bool_)[()] if np.ndim(r) else np.bool_(r)
        return back(np.asarray(_i64(r)), out)[()] if np.ndim(r) else constant(out, int(r))

    return sem


def _subnormal(x: Any) -> Any:
    if not np.issubdtype(np.asarray(x).dtype, np.floating):
        return np.zeros(np.shape(x), dtype=np.bool_)[()] if np.ndim(x) else np.bool_(False)
    tiny = np.finfo(np.asarray(x).dtype).tiny
    return (x != 0) & (np.abs(x) < tiny)


def _pow2(x: Any) -> Any:
    u = np.asarray(x).astype(np.int64)
    return (u > 0) & ((u & (u - 1)) == 0)


_SCALAR_PROBES = {
    "test.fact_range_lo": lambda x: x,
    "test.fact_range_hi": lambda x: x,
    "test.fact_all_equal_range_lo": lambda x: x,
    "test.fact_all_equal_range_hi": lambda x: x,
    "test.fact_divisor": lambda x: np.abs(_i64(x)),
    "test.fact_non_negative": lambda x: x >= 0,
    "test.fact_non_zero": lambda x: x != 0,
    "test.fact_positive": lambda x: x > 0,
    "test.fact_power_of_two": _pow2,
    "test.fact_finite": lambda x: np.isfinite(x),
    "test.fact_not_subnormal": lambda x: ~np.asarray(_subnormal(x)),
}
for _name, _fn in _SCALAR_PROBES.items():
    semantics(_name)(_scalar_probe(_fn))


def _space(buf: Any) -> int:
    cases = MEMORY_SPACE.cases
    return cases.index(buf.space) if buf.space in cases else -1


def _footprint(view: View) -> Any:
    last = sum((np.int64(d) - 1) * np.int64(s) for d, s in zip(view.dims, view.strides))
    empty = any(np.asarray(d) == 0 for d in view.dims)
    return np.int64(0) if empty else (last + 1) * view.size


_MEMORY_PROBES = {
    "test.fact_buffer_memory_space": lambda b: _space(b),
    "test.fact_view_memory_space": lambda v: _space(v.buf),
    "test.fact_view_byte_offset_lo": lambda v: v.base,
    "test.fact_view_byte_offset_hi": lambda v: v.base,
    "test.fact_view_byte_length_lo": _footprint,
    "test.fact_view_byte_length_hi": _footprint,
    "test.fact_view_element_bytes": lambda v: v.size,
    "test.fact_is_buffer_reference": lambda x: isinstance(x, Buf),
    "test.fact_is_view_reference": lambda x: isinstance(x, View),
}


def _memory_probe(fn: Any) -> Any:
    def sem(ctx: Any, step: Any, x: Any) -> Any:
        r = fn(x)
        out = rtype(step)
        if out.bit_width == 1:
            return np.bool_(r)
        return back(np.asarray(_i64(r)), out)[()] if np.ndim(r) else constant(out, int(r))

    return sem


for _name, _fn in _MEMORY_PROBES.items():
    semantics(_name)(_memory_probe(_fn))


@semantics("test.fact_view_root_matches")
def _root_matches(ctx: Any, step: Any, view: View, buf: Any) -> Any:
    return np.bool_(view.buf is buf)


@semantics("test.fact_alias_scope_matches")
def _same_scope(ctx: Any, step: Any, a: Any, b: Any) -> Any:
    return np.bool_(a is b)


def _uniform_table(varying: bool) -> Any:
    def table(step: Any, tables: list, active: np.ndarray, info: Any) -> tuple:
        (v,) = tables
        first = np.argmax(active, axis=1)
        ref = v[np.arange(v.shape[0]), first]
        same = ((v == ref[:, None]) | ~active).all(axis=1)
        r = ~same if varying else same
        return (np.broadcast_to(r[:, None], active.shape),)

    return table


def _uniformity(scope: str, varying: bool) -> Any:
    table = _uniform_table(varying)

    def sem(ctx: Any, step: Any, x: Any) -> Any:
        if not isinstance(step.op.operands[0].type, ScalarType):
            # buffers and views are uniform across a workgroup in the interpreter
            return np.bool_(not varying)
        return ctx.collective(step, scope, table, (x,))

    return sem


semantics("test.fact_subgroup_uniform")(_uniformity(SUBGROUP, False))
semantics("test.fact_workgroup_uniform")(_uniformity(WORKGROUP, False))
semantics("test.fact_lane_varying")(_uniformity(SUBGROUP, True))


semantics(
    "test.fact_view_min_alignment",
    "test.fact_buffer_min_alignment",
    "test.fact_view_root_min_alignment",
)(
    not_executable(
        "the interpreter's buffers have no device addresses, so alignment is not observed"
    )
)
semantics("test.fact_alias_scope_known")(
    not_executable("alias scopes are compiler bookkeeping with no run-time counterpart")
)


semantics("test.template_param_symbol", "test.template_param_symbol_flags")(_declaration)


semantics(
    "test.resource.alloc",
    "test.resource.borrow",
    "test.resource.borrow_ref",
    "test.resource.consume",
    "test.resource.retain",
    "test.resource.release",
    "test.resource.discard",
    "test.resource.escape",
    "test.resource.alias",
    "test.resource.borrowed",
)(not_executable("pool<N> resources are ownership bookkeeping with no run-time counterpart"))
