"""Running multi-block regions (cfg branches) in both engines.

A multi-block region compiles to one :class:`CRegion` per block; branch semantics return their
edges as ``[(successor index, lane selector, values), ...]``. The grid engine keeps a block
index per lane and always runs the lowest-numbered block that some lane is waiting at, for
every lane waiting there. Blocks are laid out in program order, so lanes that took different
arms of a branch meet again at the join block and run it together: a barrier there sees the
whole workgroup, while a barrier inside one arm sees only that arm's lanes (a divergence
finding). Back edges go to lower-numbered blocks, so a loop runs until its last lane leaves.
The stepper follows one workitem's edge at a time.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from loom.dsl import Branch
from loom.errors import LoomRuntimeError
from loom.interp.semantics._util import where

CFG_TARGETS = "branch_targets"
"""``Step.cache`` key of a branch step: ``(plan, block index of each successor)``."""


class CfgPlan:
    """The compiled blocks of one multi-block region."""

    __slots__ = ("blocks",)

    def __init__(self, blocks: list[Any]) -> None:
        self.blocks = blocks


def compile_cfg(program: Any, func: Any, region: Any, depth: int = 0) -> Any:
    """Compile every block of ``region``; returns the entry block's CRegion carrying the plan."""
    blocks = [program.compile_block(func, region, b, depth) for b in region.blocks]
    labels = {b.label: i for i, b in enumerate(region.blocks) if b.label is not None}
    targets_of = []
    for cb in blocks:
        last = cb.steps[-1] if cb.steps else None
        branch = last.decl.trait(Branch) if last is not None else None
        if branch is None:
            continue
        targets = []
        for label, _ in branch.edges(last.op.attributes):
            if label not in labels:
                raise LoomRuntimeError(
                    f"'{last.op.name}' jumps to '^{label}', which is no block of its region"
                )
            targets.append(labels[label])
        targets_of.append((last, tuple(targets)))
    plan = CfgPlan(blocks)
    for last, targets in targets_of:
        last.cache[CFG_TARGETS] = (plan, targets)
    head = type(blocks[0])(func, region)
    head.args, head.steps, head.cfg = blocks[0].args, blocks[0].steps, plan
    return head


def _lanes(ctx: Any, mask: Any) -> np.ndarray:
    n = ctx.n
    if mask is None:
        return np.ones(n, dtype=bool)
    if type(mask) is np.ndarray and mask.ndim:
        return mask.copy()
    return np.full(n, bool(mask))


def run_cfg(ctx: Any, head: Any, args: Any, mask: Any) -> tuple:
    """Grid engine: run a multi-block region for the lanes in ``mask``; returns the values
    passed on by the terminators that leave it (merged lane by lane)."""
    plan = head.cfg
    env, aff = ctx.env, ctx.aff
    for s, v in zip(head.args, args):
        env[s] = v
        aff[s] = None
    pc = np.where(_lanes(ctx, mask), 0, -1)
    results: list | None = None
    while True:
        live = pc >= 0
        live = _narrow(ctx, live)
        if not live.any():
            break
        j = int(pc[live].min())
        m = live & (pc == j)
        block = plan.blocks[j]
        run_mask = None if (mask is None and _narrow(ctx, m) is m and m.all()) else m
        res = ctx.run_region(block, (), run_mask)
        m = _narrow(ctx, m)
        last = block.steps[-1] if block.steps else None
        edge = last.cache.get(CFG_TARGETS) if last is not None else None
        targets = edge[1] if edge is not None else None
        if targets is None or not isinstance(res, list):
            pc[m | (pc == j)] = -1
            if targets is None and last is not None and last.term and m.any():
                vals = tuple(res) if isinstance(res, tuple) else (res,)
                results = (
                    list(vals)
                    if results is None
                    else [where(m, a, b) for a, b in zip(vals, results)]
                )
            continue
        for k, sel, vals in res:
            lanes = m & sel if type(sel) is np.ndarray else (m if sel else m & False)
            if not lanes.any():
                continue
            dest = plan.blocks[targets[k]]
            for s, v in zip(dest.args, vals):
                old = env[s]
                env[s] = v if old is None else where(lanes, v, old)
                aff[s] = None
            pc[lanes] = targets[k]
    return tuple(results) if results is not None else ()


def _narrow(ctx: Any, lanes: np.ndarray) -> np.ndarray:
    live = getattr(ctx, "live", None)
    return lanes if live is None else lanes & live


def step_branch(stepper: Any, it: Any, step: Any, res: Any) -> bool:
    """Stepper: follow the edge a branch step took for this workitem (False: not a branch)."""
    edge = step.cache.get(CFG_TARGETS)
    if edge is None:
        return False
    plan, targets = edge
    _, _, env, owner = it.stack[-1]
    for k, sel, vals in res:
        if bool(np.all(sel)):
            dest = plan.blocks[targets[k]]
            log = stepper._rec[5]
            for s, v in zip(dest.args, vals):
                log.append((s, env[s]))  # a slot of the innermost environment
                env[s] = v
            it.stack = it.stack[:-1] + ((dest, 0, env, owner),)
            return True
    raise LoomRuntimeError(f"'{step.op.name}' took no edge")
