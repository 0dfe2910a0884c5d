"""Semantics of the target dialect: records do nothing at run time; queries read the target."""

from __future__ import annotations

from typing import Any

import numpy as np

from loom.interp.semantics import semantics


@semantics("target.generic", "target.decl")
def _record(ctx: Any, step: Any) -> None:
    return None


@semantics("target.subgroup.size")
def _subgroup_size(ctx: Any, step: Any) -> Any:
    # the kernel's target record's subgroup_size, else the reference target's default
    return np.int64(ctx.plan.subgroup_size())
