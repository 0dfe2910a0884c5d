"""Semantics of the target dialect: target records do nothing at run time."""

from __future__ import annotations

from typing import Any

from loom.interp.semantics import semantics


@semantics("target.generic")
def _record(ctx: Any, step: Any) -> None:
    return None
