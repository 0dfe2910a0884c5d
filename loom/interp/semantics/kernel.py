"""Semantics of the kernel dialect: coordinates, barriers, exit and assert.

``kernel.def`` itself is driven by the engines (config region on the host, then the body for
every workitem); its entry here only documents that.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from loom.errors import LoomRuntimeError
from loom.interp.semantics import Control, affine, done, run, semantics
from loom.interp.semantics._util import any_true


@semantics("kernel.def")
def _kernel_def(ctx: Any, step: Any, *args: Any) -> Any:
    raise LoomRuntimeError(
        "a kernel definition is launched with loom.interp.launch, not run as a nested op"
    )


@semantics("kernel.launch.config", "kernel.return")
def _pass_on(ctx: Any, step: Any, *values: Any) -> tuple:
    return values


def _coordinate(kind: str) -> Any:
    def sem(ctx: Any, step: Any) -> Any:
        return ctx.coord(kind, step.attrs["dimension"], step)

    def aff(ctx: Any, step: Any, args: tuple, affs: tuple) -> Any:
        return ctx.coord_affine(kind, step.attrs["dimension"])

    return sem, aff


for _kind, _name in (
    ("workitem", "kernel.workitem.id"),
    ("workgroup", "kernel.workgroup.id"),
    ("size", "kernel.workgroup.size"),
    ("count", "kernel.workgroup.count"),
    ("dispatch", "kernel.workitem.dispatch.id"),
):
    _sem, _aff = _coordinate(_kind)
    semantics(_name)(_sem)
    affine(_name)(_aff)


@semantics("kernel.barrier")
def _barrier(ctx: Any, step: Any) -> None:
    ctx.barrier(step)


def _exit_enter(ctx: Any, step: Any, args: tuple) -> tuple:
    leaving = ctx.active(args[0])
    if step.regions and any_true(leaving):
        return leaving, run(0, (), leaving)
    ctx.retire(step, leaving)
    return None, done()


def _exit_resume(ctx: Any, step: Any, leaving: Any, yielded: Any) -> tuple:
    ctx.retire(step, leaving)
    return None, done()


semantics("kernel.exit")(Control(_exit_enter, _exit_resume))


@semantics("kernel.assert")
def _assert(ctx: Any, step: Any, ok: Any) -> None:
    message = step.attrs.get("message")
    text = f"assertion failed: {message}" if message else "assertion failed"
    ctx.check(
        step,
        ~np.asarray(ok, dtype=bool) if np.ndim(ok) else not ok,
        "RUNTIME/008",
        text.replace("{", "{{").replace("}", "}}"),
    )
