"""Semantics of the sanitizer dialect: assertions checked as the program runs, race observations.

A failing assertion stops the launch with ``RUNTIME/030``: the message names the assertion and
the values that broke it, the diagnostic points at the op's line and names the workitem. The
grid engine reports the first failing workitem in launch order, as the stepper (which runs them
in that order) and ``loom-run`` (which runs the grid engine) do.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from loom.interp.memory import View
from loom.interp.semantics import semantics
from loom.interp.semantics._util import itype, rtype
from loom.interp.semantics.buffer import _layout_strides, type_dims
from loom.interp.semantics.view import _address, _indices
from loom.ir import Predicate, StaticDim, Value

FAILED = "RUNTIME/030"
"""Code of a failed sanitizer assertion."""


def _arg(step: Any, values: tuple, a: Any) -> Any:
    if isinstance(a, Value):
        for v, x in zip(step.op.operands, values):
            if v is a:
                return x
        raise AssertionError("the verifier keeps predicate arguments among the operands")
    return np.int64(a)


def holds(p: Predicate, args: list) -> Any:
    """Per lane, whether predicate ``p`` holds for argument values ``args``."""
    k = p.kind
    if k == "range":
        x, lo, hi = args
        return (x >= lo) & (x <= hi)
    if k in ("not_nan", "not_inf", "finite", "pow2"):
        (x,) = args
        if k == "not_nan":
            return ~np.isnan(x)
        if k == "not_inf":
            return ~np.isinf(x)
        if k == "finite":
            return np.isfinite(x)
        u = np.asarray(x).astype(np.int64)
        return (u > 0) & ((u & (u - 1)) == 0)
    a, b = args
    if k == "mul":
        b64 = np.asarray(b).astype(np.int64)
        safe = np.where(b64 == 0, 1, b64)
        return np.where(b64 == 0, np.asarray(a) == 0, np.asarray(a).astype(np.int64) % safe == 0)
    return {
        "eq": np.equal,
        "ne": np.not_equal,
        "lt": np.less,
        "le": np.less_equal,
        "gt": np.greater,
        "ge": np.greater_equal,
        "min": np.greater_equal,
        "max": np.less_equal,
    }[k](a, b)


def predicate_text(p: Predicate) -> str:
    """``kind(%a, 4)`` of a predicate."""
    parts = [f"%{a.display_name}" if isinstance(a, Value) else str(a) for a in p.args]
    return f"{p.kind}({', '.join(parts)})"


def _check_predicates(ctx: Any, step: Any, values: tuple) -> None:
    for p in step.attrs.get("predicates", ()):
        args = [_arg(step, values, a) for a in p.args]
        with np.errstate(all="ignore"):
            bad = ~np.asarray(holds(p, args))
        if not bad.any():
            continue
        named = [(a, x) for a, x in zip(p.args, args) if isinstance(a, Value)]
        shown = ", ".join(f"%{a.display_name} = {{}}" for a, _ in named)
        ctx.check(
            step,
            bad if bad.ndim else bool(bad),
            FAILED,
            f"failed: {predicate_text(p)} does not hold ({shown})",
            *(x for _, x in named),
        )


@semantics("sanitizer.assert.value")
def _assert_value(ctx: Any, step: Any, *values: Any) -> Any:
    _check_predicates(ctx, step, values)
    return values[0] if len(values) == 1 else values


@semantics("sanitizer.assert.op")
def _assert_op(ctx: Any, step: Any, *values: Any) -> None:
    _check_predicates(ctx, step, values)


def _check_boxes(ctx: Any, step: Any, view: View, dyn: tuple, count: int, strides: tuple) -> None:
    origin = _indices(step, dyn, "static_indices")
    extents = step.attrs.get("static_extents") or (1,) * len(origin)
    # box k starts at origin + k * strides; strides (verifier) and layout strides (encoding)
    # are non-negative, so box 0 holds the lowest element and box count-1 the highest one
    reach = [(count - 1) * (strides[d] if strides else 0) + e - 1 for d, e in enumerate(extents)]
    bad: Any = False
    for o, r, dim in zip(origin, reach, view.dims):
        bad = bad | (o < 0) | (o + r >= dim)
    idx = ", ".join("{}" for _ in origin)
    box = "x".join(str(e) for e in extents)
    what = f"the {box} box at [{idx}]"
    if count > 1:
        what = f"{count} {box} boxes from [{idx}] (strides {list(strides)})"
    kind = step.attrs.get("kind", "read")
    if np.any(bad):
        shape = "x".join(str(d) if np.ndim(d) == 0 else "?" for d in view.dims)
        ctx.check(
            step,
            bad,
            FAILED,
            f"failed: the {kind} of {what} is outside the view of shape {shape}",
            *origin,
        )
        return
    # inside the logical extents: the view's layout must also map every element of every box
    # into its buffer (a layout that does not fit its storage is caught here, at the assertion)
    first: Any = 0
    span: Any = 0
    for o, r, s in zip(origin, reach, view.strides):
        first = first + o * s
        span = span + r * s
    lo = view.base + first * view.size
    hi = lo + (span + 1) * view.size
    outside = (lo < 0) | (hi > view.buf.length)
    if np.any(outside):
        layout = ", ".join(str(s) if np.ndim(s) == 0 else "?" for s in view.strides)
        ctx.check(
            step,
            outside,
            FAILED,
            f"failed: the {kind} of {what} addresses bytes {{}}..{{}}, outside buffer "
            f"{view.buf.name} of {view.buf.length} bytes (element strides [{layout}])",
            *origin,
            lo,
            hi - 1,
        )


@semantics("sanitizer.assert.access")
def _assert_access(ctx: Any, step: Any, view: View, *dyn: Any) -> None:
    _check_boxes(ctx, step, view, dyn, 1, ())


@semantics("sanitizer.assert.accesses")
def _assert_accesses(ctx: Any, step: Any, view: View, *dyn: Any) -> None:
    strides = tuple(step.attrs.get("static_strides", ()))
    _check_boxes(ctx, step, view, dyn, int(step.attrs.get("static_count", 1)), strides)


def _same_layout(a: Any, b: Any) -> bool:
    if isinstance(a, Value) or isinstance(b, Value):
        return a is b
    return a == b


@semantics("sanitizer.assert.layout")
def _assert_layout(ctx: Any, step: Any, view: View) -> View:
    want = rtype(step)
    bad: Any = False
    for have, d in zip(view.dims, want.dims):
        if isinstance(d, StaticDim):
            bad = bad | (have != d.size)
    if np.any(bad):
        shape = ", ".join("{}" for _ in view.dims)
        ctx.check(
            step,
            bad,
            FAILED,
            f"failed: the view's extents ({shape}) are not those of {want}",
            *view.dims,
        )
    if want.encoding is not None and not _same_layout(want.encoding, itype(step).encoding):
        # a layout other than the view's own: it must address the view's elements where the
        # view's runtime layout does (same element strides for these extents)
        expected = _layout_strides(ctx, step, want, view.dims)
        bad = False
        for have, s in zip(view.strides, expected):
            bad = bad | (have != s)
        if np.any(bad):
            parts = ", ".join("{}" for _ in view.strides)
            ctx.check(
                step,
                bad,
                FAILED,
                f"failed: the view's element strides [{parts}] are not those of the layout of "
                f"{want} ([{parts}])",
                *view.strides,
                *expected,
            )
    dims = type_dims(ctx, want)
    return View(view.buf, view.base, dims, view.strides, view.etype)


@semantics("sanitizer.race.access")
def _race_access(ctx: Any, step: Any, view: View, *dyn: Any) -> None:
    # The detector already watches every real access; an observation is checked and recorded
    # as that access would be (bounds, the race state, atomicity) without touching memory.
    kind = step.attrs.get("kind", "read")
    atomic = bool(step.attrs.get("atomic", False))
    addr, _ = _address(ctx, step, view, _indices(step, dyn, "static_indices"), ())
    if kind != "write":
        ctx.observe(step, view.buf, addr, view.mdtype, False, atomic)
    if kind != "read":
        ctx.observe(step, view.buf, addr, view.mdtype, True, atomic)


@semantics("sanitizer.race.sync")
def _race_sync(ctx: Any, step: Any) -> None:
    return None
