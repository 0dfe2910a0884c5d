"""Semantics of scf: conditionals and loops with per-lane divergence (active masks)."""

from __future__ import annotations

from typing import Any

import numpy as np

from loom.interp.semantics import Control, done, lane_local, run, semantics
from loom.interp.semantics._util import any_true, where

_I64 = np.int64


@semantics("scf.yield")
def _yield(ctx: Any, step: Any, *values: Any) -> tuple:
    return values


@semantics("scf.condition")
def _condition(ctx: Any, step: Any, *values: Any) -> tuple:
    return values


@semantics("scf.schedule.fence", "scf.residency.require")
def _compiler_hint(ctx: Any, step: Any) -> None:
    return None  # a compiler contract: nothing happens at run time


@semantics("scf.residency.candidate")
def _candidate(ctx: Any, step: Any, source: Any, *captures: Any) -> Any:
    return source


@semantics("scf.select")
def _select(ctx: Any, step: Any, c: Any, a: Any, b: Any) -> Any:
    return where(c, a, b)


# ----------------------------------------------------------------------------- scf.if
# state: (stage, cond, then_values)


def _if_enter(ctx: Any, step: Any, args: tuple) -> tuple:
    cond = args[0]
    # the engine skips the region (resuming with None) when no lane takes it
    return (0, cond, None), run(0, (), ctx.active(cond))


def _if_resume(ctx: Any, step: Any, state: tuple, yielded: Any) -> tuple:
    stage, cond, then_vals = state
    if stage == 0:
        then_vals = yielded
        if len(step.regions) > 1:
            other = ctx.active(~cond if np.ndim(cond) else not cond)
            return (1, cond, then_vals), run(1, (), other)
        yielded = None
    else_vals = yielded
    n = len(step.op.results)
    if not n:
        return None, done()
    if then_vals is None:
        return None, done(tuple(else_vals))
    if else_vals is None:
        return None, done(tuple(then_vals))
    return None, done(tuple(where(cond, a, b) for a, b in zip(then_vals, else_vals)))


semantics("scf.if")(Control(_if_enter, _if_resume))

# ----------------------------------------------------------------------------- scf.for
# state: (iv, carried, active, step_value, upper)


def _lt(step: Any, iv: Any, ub: Any) -> Any:
    if step.op.operands[0].type.spelling == "offset":
        return iv.view(np.uint64) < ub.view(np.uint64)
    return iv < ub


def _for_enter(ctx: Any, step: Any, args: tuple) -> tuple:
    lb, ub, st = args[0], args[1], args[2]
    carried = step.field(args, "iter_args")
    ctx.check(step, st <= 0, "RUNTIME/007", "scf.for step {} is not positive", st)
    active = ctx.active(_lt(step, lb, ub))
    return _for_next(ctx, step, lb, tuple(carried), active, st, ub)


def _for_next(ctx: Any, step: Any, iv: Any, carried: tuple, active: Any, st: Any, ub: Any) -> tuple:
    if not any_true(active):
        return None, done(carried)
    return (iv, carried, active, st, ub), run(0, (iv, *carried), active)


def _for_resume(ctx: Any, step: Any, state: tuple, yielded: Any) -> tuple:
    iv, carried, active, st, ub = state
    if carried:
        carried = tuple(where(active, y, c) for y, c in zip(yielded, carried))
    if type(iv) is not np.ndarray and type(active) is not np.ndarray and type(st) is not np.ndarray:
        # uniform control (every stepper loop): Python ints, the step is positive
        nxt_int = int(iv) + int(st)
        if nxt_int >= 2**63 or not active:
            return _for_next(ctx, step, iv, carried, False, st, ub)
        iv = _I64(nxt_int)
        return _for_next(ctx, step, iv, carried, bool(_lt(step, iv, ub)), st, ub)
    nxt = iv + st
    overflow = ((iv ^ nxt) & (st ^ nxt)) < 0
    if np.ndim(active) or np.ndim(nxt):
        iv = np.where(active, nxt, iv)
        iv = iv[()] if iv.ndim == 0 else iv
    else:
        iv = nxt
    active = active & _lt(step, iv, ub) & ~overflow
    return _for_next(ctx, step, iv, carried, active, st, ub)


semantics("scf.for")(Control(_for_enter, _for_resume))

# ----------------------------------------------------------------------------- scf.while
# state: (stage, active, results)


def _while_enter(ctx: Any, step: Any, args: tuple) -> tuple:
    active = ctx.active(True)
    n = len(step.op.results)
    return (0, active, (None,) * n), run(0, tuple(args), active)


def _while_resume(ctx: Any, step: Any, state: tuple, yielded: Any) -> tuple:
    stage, active, results = state
    if stage == 0:
        cond, fwd = yielded[0], tuple(yielded[1:])
        stop = active & ~cond if np.ndim(cond) or np.ndim(active) else active and not cond
        results = tuple(where(stop, f, r) for f, r in zip(fwd, results))
        active = active & cond
        if not any_true(active):
            return None, done(results)
        return (1, active, results), run(1, fwd, active)
    return (0, active, results), run(0, tuple(yielded), active)


semantics("scf.while")(Control(_while_enter, _while_resume))

# ----------------------------------------------------------------------------- scf.switch
# Region 0 is the default, regions 1.. the cases in key order. The case regions run first,
# each for the lanes whose selector equals its key, then the default for the rest.
# state: (stage, masks, results)


def _switch_masks(ctx: Any, step: Any, sel: Any) -> list:
    keys = step.op.attributes.get("case_keys", ())
    hits = [sel == k for k in keys]
    taken = np.False_
    for h in hits:
        taken = taken | h
    return [*hits, ~taken]  # cases in order, then the default


def _switch_enter(ctx: Any, step: Any, args: tuple) -> tuple:
    masks = _switch_masks(ctx, step, args[0])
    return _switch_next(ctx, step, 0, masks, None)


def _switch_next(ctx: Any, step: Any, stage: int, masks: list, results: Any) -> tuple:
    if stage == len(masks):
        return None, done(tuple(results) if results is not None else ())
    region = stage + 1 if stage + 1 < len(masks) else 0
    return (stage, masks, results), run(region, (), ctx.active(masks[stage]))


def _switch_resume(ctx: Any, step: Any, state: tuple, yielded: Any) -> tuple:
    stage, masks, results = state
    if yielded is not None and step.op.results:
        if results is None:
            results = tuple(yielded)
        else:
            results = tuple(where(masks[stage], y, r) for y, r in zip(yielded, results))
    return _switch_next(ctx, step, stage + 1, masks, results)


semantics("scf.switch")(Control(_switch_enter, _switch_resume))

# structured control runs its regions under per-lane masks of the running lanes
lane_local("scf.if", "scf.for", "scf.while", "scf.switch", "scf.yield", "scf.condition")


@semantics("scf.lookup")
def _lookup(ctx: Any, step: Any, sel: Any, *values: Any) -> Any:
    keys = step.op.attributes.get("case_keys", ())
    n = len(step.op.results)
    out = list(values[len(keys) * n :])  # the default row
    for k in range(len(keys) - 1, -1, -1):
        hit = sel == keys[k]
        out = [where(hit, v, o) for v, o in zip(values[k * n : (k + 1) * n], out)]
    return out[0] if n == 1 else tuple(out)
