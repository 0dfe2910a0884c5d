"""Semantics of the func dialect: calls run the callee's body in a fresh environment.

A function reference value (``func.ref``) is an int64 per lane: 0 is null, ``k`` names the
``k``-th function of the compiled program whose address was taken
(:meth:`loom.interp.compile.Program.reference`). ``func.call.indirect`` runs each distinct target
for the lanes that name it, one after the other, and merges the results lane by lane.

A ``func.decl`` has no body: ``launch(..., functions={"name": fn})`` (and ``Stepper``) binds a
Python function to it, which :func:`host_call` runs; calling an unbound one is RUNTIME/022.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from loom.dialects.func import signature_of
from loom.errors import LoomRuntimeError
from loom.interp.numerics import bf16_round, value_dtype
from loom.interp.semantics import Control, call, done, run, semantics
from loom.ir import ScalarType


@semantics("func.def", "func.decl")
def _def(ctx: Any, step: Any, *args: Any) -> Any:
    raise LoomRuntimeError("a function definition runs only through func.call")


@semantics("func.fail")
def _fail(ctx: Any, step: Any, message: Any) -> tuple:
    lanes = ctx.active_lanes()
    data = getattr(message, "data", None)
    raw = bytes(data[:4096]) if data is not None else b""
    text = raw.split(b"\0", 1)[0].decode("utf-8", "replace")
    raise ctx.error(
        step,
        "RUNTIME/020",
        f"the invocation failed with status {step.attrs['status']}: {text!r}",
        lanes[0] if lanes else None,
    )


@semantics("func.return")
def _return(ctx: Any, step: Any, *values: Any) -> tuple:
    return values


# ----------------------------------------------------------------------------- host functions


def host_call(ctx: Any, step: Any, callee: Any, args: tuple, mask: Any) -> tuple:
    """Run the Python function bound to declaration ``callee`` for the lanes in ``mask``.

    Calling convention: the function gets one 1-D NumPy array per argument, holding the values
    of the calling lanes in lane order (every launch lane the grid engine runs together, one
    element in the stepper), with the dtype of the argument's type (``bool`` for ``i1``,
    ``float32`` for ``bf16``). It returns one array-like per result (a single one may be
    returned bare, none as ``None``), each of that length or broadcastable to it; results are
    converted to the result types. Only scalar types cross the boundary.
    """
    name = callee.name
    lanes = None if mask is None else np.flatnonzero(mask)
    first = None if lanes is None or not lanes.size else int(lanes[0])
    fn = ctx.functions.get(name)
    if fn is None:
        raise ctx.error(
            step,
            "RUNTIME/022",
            f"calls @{name}, a declaration without a body; bind a Python function to it with "
            f"launch(..., functions={{{name!r}: fn}})",
            first,
        )
    sig = signature_of(ctx.plan.module.symbols[name])
    arg_types, result_types = (sig.inputs, sig.results) if sig is not None else ((), ())
    count = ctx.n if lanes is None else lanes.size
    ins = _host_arguments(ctx, step, name, args, arg_types, lanes, count, first)
    try:
        out = fn(*ins)
    except Exception as exc:  # the user's code: report it as the call's failure
        raise ctx.error(
            step,
            "RUNTIME/023",
            f"the Python function bound to @{name} raised {type(exc).__name__}: {exc}",
            first,
        ) from exc
    if out is None:
        out = ()
    elif not isinstance(out, tuple | list):
        out = (out,)
    if len(out) != len(result_types):
        raise ctx.error(
            step,
            "RUNTIME/023",
            f"the Python function bound to @{name} returned {len(out)} values; "
            f"the declaration has {len(result_types)} results",
            first,
        )
    return _host_results(ctx, step, name, out, result_types, lanes, count, first)


def _host_arguments(
    ctx: Any, step: Any, name: str, args: tuple, types: tuple, lanes: Any, count: int, first: Any
) -> list[np.ndarray]:
    """One fresh 1-D array per argument over the calling lanes (scalars only)."""
    ins = []
    for i, (v, t) in enumerate(zip(args, types)):
        if not isinstance(t, ScalarType):
            raise ctx.error(
                step,
                "RUNTIME/023",
                f"argument {i} of @{name} has type {t}; only scalars pass to a Python function",
                first,
            )
        a = np.asarray(v, dtype=value_dtype(t))
        if a.ndim == 0:
            a = np.full(count, a, dtype=a.dtype)
        elif lanes is not None:
            a = a[lanes]
        else:
            a = a.copy()  # the function must not see (or change) the engine's arrays
        ins.append(a)
    return ins


def _host_results(
    ctx: Any, step: Any, name: str, out: Any, types: tuple, lanes: Any, count: int, first: Any
) -> tuple:
    """The function's results as engine values of the result types, over the calling lanes."""
    results = []
    for k, (r, t) in enumerate(zip(out, types)):
        if not isinstance(t, ScalarType):
            raise ctx.error(
                step,
                "RUNTIME/023",
                f"result {k} of @{name} has type {t}; only scalars return from a Python function",
                first,
            )
        try:
            a = np.broadcast_to(np.asarray(r), (count,)).astype(value_dtype(t))
        except (ValueError, TypeError) as exc:
            raise ctx.error(
                step,
                "RUNTIME/023",
                f"result {k} of the Python function bound to @{name} is not {count} values "
                f"of type {t}: {exc}",
                first,
            ) from None
        if t.spelling == "bf16":
            a = bf16_round(a)
        if ctx.n == 1:
            results.append(a.dtype.type(a[0]) if a.size else a.dtype.type(0))
        elif lanes is None:
            results.append(a)
        else:
            full = np.zeros(ctx.n, dtype=a.dtype)
            full[lanes] = a
            results.append(full)
    return tuple(results)


# ----------------------------------------------------------------------------- calls


def _call_enter(ctx: Any, step: Any, args: tuple) -> tuple:
    if step.callee.body is None:
        return None, done(host_call(ctx, step, step.callee, tuple(args), ctx.mask))
    # region -1 is the callee's body (the engine resolves it through step.callee)
    return None, run(-1, tuple(args), ctx.mask)


def _call_resume(ctx: Any, step: Any, state: Any, yielded: Any) -> tuple:
    return None, done(tuple(yielded))


semantics("func.call")(Control(_call_enter, _call_resume))


def _merge(acc: tuple | None, got: tuple, mask: Any) -> tuple:
    """Results of one target's lanes (``mask``) laid over those of the earlier targets."""
    if acc is None or mask is None:
        return tuple(got)
    out = []
    for a, g in zip(acc, got):
        if a is g:
            out.append(a)
        elif isinstance(a, np.generic | np.ndarray) and isinstance(g, np.generic | np.ndarray):
            out.append(np.where(mask, g, a))
        else:
            raise LoomRuntimeError(
                "func.call.indirect: lanes calling different functions got different "
                "buffers or views back; the interpreter merges only scalar results"
            )
    return tuple(out)


def _indirect_enter(ctx: Any, step: Any, vals: tuple) -> tuple:
    target, args = vals[0], tuple(vals[1:])
    ctx.check(step, np.asarray(target) == 0, "RUNTIME/021", "calls a null function reference")
    program = ctx.plan.program
    if np.ndim(target) == 0:
        ids = [int(target)]
    else:
        live = target if ctx.mask is None else target[ctx.mask]
        ids = [int(k) for k in np.unique(live)]
    todo = []
    for k in ids:
        func = program.referenced(k)
        if func is None:
            raise ctx.error(step, "RUNTIME/021", f"calls an invalid function reference {k}", None)
        todo.append((func, None if len(ids) == 1 else ctx.active(np.asarray(target) == k)))
    return _indirect_next(ctx, step, (todo, 0, args, None))


def _indirect_next(ctx: Any, step: Any, state: tuple) -> tuple:
    todo, pos, args, acc = state
    while pos < len(todo):
        func, m = todo[pos]
        if func.body is not None:
            return (todo, pos, args, acc), call(func, args, m)
        got = host_call(ctx, step, func, args, ctx.mask if m is None else m)
        acc = _merge(acc, got, m)
        pos += 1
    return None, done(acc if acc is not None else ())


def _indirect_resume(ctx: Any, step: Any, state: Any, yielded: Any) -> tuple:
    todo, pos, args, acc = state
    if yielded is not None:  # None: no lane of this target is active any more
        acc = _merge(acc, tuple(yielded), todo[pos][1])
    return _indirect_next(ctx, step, (todo, pos + 1, args, acc))


semantics("func.call.indirect")(Control(_indirect_enter, _indirect_resume))


# ----------------------------------------------------------------------------- references


@semantics("func.null")
def _null(ctx: Any, step: Any) -> Any:
    return np.int64(0)


@semantics("func.compare.null")
def _compare_null(ctx: Any, step: Any, f: Any) -> Any:
    return np.equal(f, 0)


@semantics("func.address")
def _address(ctx: Any, step: Any) -> Any:
    return np.int64(ctx.plan.program.reference(step.callee))


@semantics("func.ref.cast")
def _ref_cast(ctx: Any, step: Any, f: Any) -> Any:
    return f


@semantics("func.import.resolved")
def _import_resolved(ctx: Any, step: Any) -> Any:
    callee = step.callee
    return np.bool_(callee.body is not None or callee.name in ctx.functions)
