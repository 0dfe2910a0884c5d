"""Lane compaction: a region whose active lanes are exactly one box of the chunk runs over that
box alone, as if the box were the chunk.

A guard on an affine fact against a uniform bound (``lane < stride``) makes its mask exactly a
few boxes (:func:`loom.interp.affine.interval_boxes`). When it is one box and every op of the
region is lane-local (a lane's results depend on that lane's operands only), the grid engine
copies the region's lane-array inputs to the box, rebases their affine facts on the box's
corner (same coefficients, smaller extents) and runs the region unmasked over the box's lanes;
accesses map box lanes back to chunk lanes for the sanitizer (workitem ids, barrier epochs)
and for per-owner scratch memory. The region's results are written back into chunk-sized
arrays (their lanes outside the box are never read: the enclosing op merges by its mask).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from loom.dsl import Convergent, Pure, Uniformity
from loom.interp.memory import View
from loom.interp.semantics import LANE_LOCAL


def lane_local(step: Any) -> bool:
    """True when the op's effect on a lane depends only on that lane's operands (no
    coordinates, collectives, barriers, scratch allocation, calls or atomics)."""
    if step.callee is not None:
        return False
    if step.op.name in LANE_LOCAL:
        return True
    decl = step.decl
    return (
        not step.op.regions
        and decl.trait(Pure) is not None
        and decl.trait(Uniformity) is None
        and decl.trait(Convergent) is None
    )


def region_inputs(region: Any) -> tuple[int, ...] | None:
    """The slots ``region`` reads from outside itself when every op in it (nested regions
    included) is lane-local and single-block, else None."""
    defined: set[int] = set()
    read: list[int] = []

    def walk(r: Any) -> bool:
        if r is None or r.cfg is not None:
            return False
        defined.update(r.args)
        for step in r.steps:
            if not lane_local(step):
                return False
            read.extend(step.keys)
            if not all(walk(sub) for sub in step.regions):
                return False
            defined.update(step.outs)
        return True

    if not walk(region):
        return None
    return tuple(dict.fromkeys(s for s in read if s not in defined))


def holds_lanes(v: Any) -> bool:
    """True for a non-array value that carries lane arrays inside (a view with per-lane base,
    dims or strides): compaction would have to rewrite it, so it does not run."""
    if isinstance(v, View):
        parts = (v.base, *tuple(v.dims or ()), *tuple(v.strides or ()))
        return any(type(p) is np.ndarray and p.ndim for p in parts)
    return isinstance(v, tuple | list) and any(type(p) is np.ndarray for p in v)
