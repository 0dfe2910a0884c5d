"""Collectives: ops whose result for one workitem depends on the values of its subgroup or
workgroup (reductions, scans, votes, shuffles, ...), run the same way by both engines.

A collective's computation is a *table function* ``fn(step, values, active, info)`` over 2-D
arrays: one row per subgroup (or workgroup), one column per lane position in it (lane id, or flat
workitem id for workgroup scope). ``active`` marks the workitems taking part; other cells hold
filler that ``fn`` must ignore. It returns one 2-D array per result.

* The grid engine runs whole workgroups in lockstep: it scatters the lanes of a chunk into the
  table (:func:`grid_collective`), calls ``fn`` once, and gathers the results back; lanes that
  are live but masked off are a divergence finding, like a barrier reached by only some.
* The stepper treats a collective like a barrier: each workitem arrives with its operands and
  waits; when every live workitem of its subgroup (workgroup) waits there, the table is built
  from the arrivals (one row) and the results are handed out (:func:`table_from_arrivals`).

Both build the same columns in the same order, so their results agree bit for bit.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

SUBGROUP, WORKGROUP = "subgroup", "workgroup"
DIVERGENCE_CODE = "SANITIZE/005"


@dataclass(frozen=True)
class Info:
    """What a table function may need beyond the values: the row width (subgroup size or
    workgroup size) and the subgroup size."""

    width: int
    subgroup: int


def _flat_local(ctx: Any) -> np.ndarray:
    """Flat workitem id inside its workgroup of every lane of a grid chunk."""
    return np.tile(np.arange(ctx.wg, dtype=np.int64), ctx.ng)


def shape(ctx: Any, scope: str) -> tuple[int, int]:
    """(rows, width) of a grid chunk's table."""
    if scope == WORKGROUP:
        return ctx.ng, ctx.wg
    sg = ctx.subgroup
    return ctx.ng * -(-ctx.wg // sg), sg


def layout(ctx: Any, scope: str) -> tuple[np.ndarray, np.ndarray, int, int]:
    """(row of each lane, column of each lane, rows, width) of a grid chunk's table."""
    key = ("collective-layout", scope, ctx.subgroup)

    def make() -> tuple:
        flat = _flat_local(ctx)
        group = np.repeat(np.arange(ctx.ng, dtype=np.int64), ctx.wg)
        if scope == WORKGROUP:
            return group, flat, ctx.ng, ctx.wg
        sg = ctx.subgroup
        per = -(-ctx.wg // sg)
        return group * per + flat // sg, flat % sg, ctx.ng * per, sg

    return ctx._per_shape(key, make)


def grid_collective(ctx: Any, step: Any, scope: str, fn: Any, values: tuple) -> Any:
    """Run a collective for the active lanes of a grid chunk (results per lane)."""
    nrows, width = shape(ctx, scope)
    n = ctx.n
    mask = ctx.mask
    # whole rows in lane order (every workgroup a multiple of the width): the table is the
    # lanes reshaped (read-only views), no scatter and gather
    if nrows * width == n:
        if mask is None:
            # contiguous (a broadcast True makes every reduction over it slow)
            table_active = ctx._per_shape(
                ("collective-all", nrows, width), lambda: np.ones((nrows, width), dtype=bool)
            )
        else:
            table_active = np.asarray(mask, dtype=bool).reshape(nrows, width)
        tables = [_lanes(v, n).reshape(nrows, width) for v in values]
        if ctx.sanitize and mask is not None:
            _grid_divergence(ctx, step, scope, layout(ctx, scope)[0], nrows, mask)
        out = fn(step, tables, table_active, Info(width, ctx.subgroup))
        results = tuple(np.ascontiguousarray(r).reshape(n) for r in out)
        return results[0] if len(results) == 1 else results
    rows, cols, _, _ = layout(ctx, scope)
    active = np.ones(n, dtype=bool) if mask is None else np.asarray(mask, dtype=bool)
    table_active = np.zeros((nrows, width), dtype=bool)
    table_active[rows, cols] = active
    tables = []
    for v in values:
        arr = np.broadcast_to(np.asarray(v), (n,))
        t = np.zeros((nrows, width), dtype=arr.dtype)
        t[rows, cols] = arr
        tables.append(t)
    if ctx.sanitize and mask is not None:
        # every lane active (no mask): every live workitem arrives
        _grid_divergence(ctx, step, scope, rows, nrows, active)
    out = fn(step, tables, table_active, Info(width, ctx.subgroup))
    results = tuple(r[rows, cols] for r in out)
    return results[0] if len(results) == 1 else results


def _lanes(v: Any, n: int) -> np.ndarray:
    """``v`` as an array over the ``n`` lanes (a uniform value broadcast, read-only)."""
    if type(v) is np.ndarray and v.shape == (n,):
        return v
    return np.broadcast_to(np.asarray(v), (n,))


def _grid_divergence(
    ctx: Any, step: Any, scope: str, rows: np.ndarray, nrows: int, active: np.ndarray
) -> None:
    live = ctx.live if ctx.live is not None else np.ones(ctx.n, dtype=bool)
    arrived = np.bincount(rows[active], minlength=nrows)
    alive = np.bincount(rows[live], minlength=nrows)
    bad = (arrived > 0) & (arrived < alive)
    if not bad.any():
        return
    r = int(np.flatnonzero(bad)[0])
    in_row = rows == r
    here = int(np.flatnonzero(in_row & active)[0])
    missing = int(np.flatnonzero(in_row & live & ~active)[0])
    base = ctx.g0 * ctx.wg
    ctx.findings.add(
        "collective",
        _error(),
        DIVERGENCE_CODE,
        step,
        base + here,
        divergence_message(scope),
        step,
        base + missing,
        "not reached",
        count=int(bad.sum()),
    )


def _error() -> Any:
    from loom.diagnostics import DiagnosticSeverity

    return DiagnosticSeverity.ERROR


def divergence_message(scope: str) -> str:
    """The finding's text (the engines append who reached it)."""
    return (
        f"collective divergence: not every live workitem of the {scope} reaches this "
        "collective; reached"
    )


def table_from_arrivals(
    step: Any, fn: Any, arrivals: list[tuple[int, tuple]], width: int, subgroup: int
) -> tuple:
    """Run a collective for the stepper: ``arrivals`` are (column, operand values) of the
    workitems that reached it; returns one row of results per result (indexed by column)."""
    active = np.zeros((1, width), dtype=bool)
    tables = []
    for k in range(len(arrivals[0][1])):
        first = np.asarray(arrivals[0][1][k])
        t = np.zeros((1, width), dtype=first.dtype)
        for col, vals in arrivals:
            t[0, col] = vals[k]
        tables.append(t)
    for col, _ in arrivals:
        active[0, col] = True
    return tuple(r[0] for r in fn(step, tables, active, Info(width, subgroup)))
