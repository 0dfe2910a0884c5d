"""Semantics of the config dialect: reads of the launch's config values."""

from __future__ import annotations

from typing import Any

from loom.interp.semantics import semantics
from loom.interp.semantics._records import records_of
from loom.ir import ScalarType


@semantics("config.decl", "config.def")
def _declaration(ctx: Any, step: Any) -> None:
    return None


@semantics("config.get")
def _get(ctx: Any, step: Any) -> Any:
    name = step.attrs["config"]
    records = records_of(ctx)
    value = records.configs.get(name)
    t = records.config_types.get(name)
    if value is None and t is not None and not isinstance(t, ScalarType):
        raise ctx.error(
            step,
            "RUNTIME/013",
            f"'{step.op.name}' of {t} is not executable on the reference target: configs of "
            "encoding types are compile-time values only",
            None,
        )
    if value is None:
        if name in records.config_types:
            why = (
                f"config @{name} is only declared: pass it with config={{'{name}': ...}} "
                f"(loom-run: --config {name}=...)"
            )
        else:
            why = f"the module has no config @{name}"
        raise ctx.error(step, "RUNTIME/032", why, None)
    return value
