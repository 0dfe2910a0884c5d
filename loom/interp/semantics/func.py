"""Semantics of the func dialect: calls run the callee's body in a fresh environment."""

from __future__ import annotations

from typing import Any

from loom.errors import LoomRuntimeError
from loom.interp.semantics import Control, done, run, semantics


@semantics("func.def")
def _def(ctx: Any, step: Any, *args: Any) -> Any:
    raise LoomRuntimeError("a function definition runs only through func.call")


@semantics("func.fail")
def _fail(ctx: Any, step: Any, message: Any) -> tuple:
    lanes = ctx.active_lanes()
    data = getattr(message, "data", None)
    raw = bytes(data[:4096]) if data is not None else b""
    text = raw.split(b"\0", 1)[0].decode("utf-8", "replace")
    raise ctx.error(
        step,
        "RUNTIME/020",
        f"the invocation failed with status {step.attrs['status']}: {text!r}",
        lanes[0] if lanes else None,
    )


@semantics("func.return")
def _return(ctx: Any, step: Any, *values: Any) -> tuple:
    return values


def _call_enter(ctx: Any, step: Any, args: tuple) -> tuple:
    # region -1 is the callee's body (the engine resolves it through step.callee)
    return None, run(-1, tuple(args), ctx.mask)


def _call_resume(ctx: Any, step: Any, state: Any, yielded: Any) -> tuple:
    return None, done(tuple(yielded))


semantics("func.call")(Control(_call_enter, _call_resume))
