"""Semantics of the test dialect: records and sinks do nothing at run time."""

from __future__ import annotations

from typing import Any

from loom.interp.semantics import semantics


@semantics("test.target")
def _record(ctx: Any, step: Any) -> None:
    return None


@semantics("test.use")
def _use(ctx: Any, step: Any, *values: Any) -> None:
    return None
