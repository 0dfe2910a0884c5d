"""Semantics of cfg: branches name their edges; the engines move lanes between blocks.

A branch returns ``[(successor index, lane selector, values), ...]`` (see
:mod:`loom.interp.cfg_exec`): the lanes whose selector is true take that edge with the values.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from loom.interp.semantics import semantics


@semantics("cfg.br")
def _br(ctx: Any, step: Any, *args: Any) -> list:
    return [(0, True, args)]


@semantics("cfg.cond_br")
def _cond_br(ctx: Any, step: Any, cond: Any) -> list:
    other = ~cond if np.ndim(cond) else not cond
    return [(0, cond, ()), (1, other, ())]


@semantics("cfg.switch")
def _switch(ctx: Any, step: Any, sel: Any) -> list:
    # edge 0 is the default, edges 1.. the cases in key order (see Branch.edges)
    keys = step.op.attributes.get("case_keys", ())
    hits = [sel == k for k in keys]
    taken = np.False_
    for h in hits:
        taken = taken | h
    return [(0, ~taken, ()), *((k + 1, h, ()) for k, h in enumerate(hits))]
