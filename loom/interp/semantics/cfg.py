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
