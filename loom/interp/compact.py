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

from collections.abc import Iterator
from typing import Any

import numpy as np

from loom.dsl import Convergent, MemoryEffect, Pure, Uniformity
from loom.interp.memory import CODED, View
from loom.interp.semantics import LANE_LOCAL, VIEW_OPERANDS, VIEW_RESULTS


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


def view_loads(region: Any) -> set[int]:
    """Step indices of the loads of ``VIEW_RESULTS`` in ``region`` (nested ones included) whose
    result may be a read-only strided view of memory rather than a copy of it, decided from
    the op list alone: the op sits in a single-block region, its element type is stored as
    itself (not encoded), and every use of its result is an op of ``VIEW_OPERANDS`` later
    in the same block (not a terminator, not an op with regions or a nested op, not a type's
    dimension), with no op between the load and its last use that may write memory."""
    found: set[int] = set()
    _mark_view_loads(region, found)
    return found


def _mark_view_loads(region: Any, found: set[int]) -> None:
    if region is None:
        return
    blocks = region.cfg.blocks if region.cfg is not None else [region]
    for block in blocks:
        if region.cfg is None:  # a multi-block region's values may be used in other blocks
            found.update(_block_view_loads(block))
        for step in block.steps:
            for sub in step.regions:
                _mark_view_loads(sub, found)


def _block_view_loads(block: Any) -> Iterator[int]:
    steps = block.steps
    slot_of = block.func.slots
    uses: dict[int, list[int]] = {}
    writes = [0]  # writes[k]: how many of steps[:k] may write memory
    for j, s in enumerate(steps):
        read = set(s.keys)
        read.update(slot_of[v] for v in _nested_reads(s.op) if v in slot_of)
        for slot in read:
            uses.setdefault(slot, []).append(j)
        writes.append(writes[-1] + may_write(s))
    for i, step in enumerate(steps):
        if step.op.name not in VIEW_RESULTS or _encoded(step.op.results[0].type):
            continue
        at = uses.get(step.outs[0])
        if not at or writes[at[-1] + 1] != writes[i + 1]:
            continue
        if all(_takes_view(steps[j], step.outs[0]) for j in at):
            yield step.index


def _encoded(t: Any) -> bool:
    """True when memory holds an encoding of values of type ``t`` (their lanes are decoded),
    or ``t`` is no scalar type."""
    spelling = getattr(t, "spelling", None)
    return spelling is None or spelling in CODED


def _takes_view(step: Any, slot: int) -> bool:
    """True when ``step`` reads ``slot`` only as an operand that may be a view of memory."""
    return (
        step.op.name in VIEW_OPERANDS
        and not step.op.regions
        and not step.term
        and slot not in step.keys[len(step.ins) :]
    )


def may_write(step: Any) -> bool:
    """False only for ops known not to write memory: pure ops and ops whose memory effect is a
    read, without regions or a callee."""
    if step.callee is not None or step.op.regions:
        return True
    decl = step.decl
    if decl.trait(Pure) is not None:
        return False
    effect = decl.trait(MemoryEffect)
    return effect is None or effect.writes


def _nested_reads(op: Any) -> Iterator[int]:
    """Ids of the values the ops nested in ``op``'s regions read (operands, and values in
    the types of their results and block arguments)."""
    for region in op.regions:
        for block in region.blocks:
            for arg in block.args:
                yield from _type_reads(arg.type)
            for inner in block.ops:
                for v in inner.operands:
                    yield v.id
                for v in inner.results:
                    yield from _type_reads(v.type)
                yield from _nested_reads(inner)


def _type_reads(t: Any) -> Iterator[int]:
    for d in getattr(t, "dims", ()):
        v = getattr(d, "value", None)
        if v is not None:
            yield v.id
    enc = getattr(t, "encoding", None)
    if hasattr(enc, "id"):
        yield enc.id
