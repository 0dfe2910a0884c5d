"""check: case bodies run only inside :func:`loom.check.run`, never in a kernel launch."""

from __future__ import annotations

from typing import Any

from loom.dialects.check import OPS
from loom.interp.semantics import semantics


def _runner_only(ctx: Any, step: Any, *args: Any) -> Any:
    raise ctx.error(
        step,
        "RUNTIME/013",
        f"'{step.op.name}' is not executable on the reference target: check cases only run "
        "inside loom.check.run (or loom-test)",
        None,
    )


semantics(*(d.name for d in OPS))(_runner_only)
