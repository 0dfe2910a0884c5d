"""Diagnostics for runtime errors and sanitizer findings (op, source location, workitems)."""

from __future__ import annotations

from typing import Any

from loom.diagnostics import (
    Diagnostic,
    DiagnosticRelatedLocation,
    DiagnosticSeverity,
    op_source_range,
)
from loom.errors import LoomRuntimeError


def coords_text(coords: tuple[tuple[int, int, int], tuple[int, int, int]] | None) -> str:
    """``workgroup (0, 0, 0) workitem (5, 0, 0)``."""
    if coords is None:
        return "the host (config region)"
    (wx, wy, wz), (tx, ty, tz) = coords
    return f"workgroup ({wx}, {wy}, {wz}) workitem ({tx}, {ty}, {tz})"


def op_diagnostic(
    step: Any,
    severity: DiagnosticSeverity,
    code: str,
    message: str,
    notes: list[tuple[str, Any]] = (),
) -> Diagnostic:
    """A diagnostic anchored on the step's op; ``notes`` are (message, other step or None)."""
    module = step.module
    rel = [
        DiagnosticRelatedLocation(m, op_source_range(module, s.op) if s is not None else None)
        for m, s in notes
    ]
    return Diagnostic(
        severity,
        code,
        f"'{step.op.name}' {message}",
        op_source_range(module, step.op),
        rel,
        op=step.op,
        module=module,
        location_id=step.op.location_id,
    )


def runtime_error(step: Any, code: str, message: str, coords: Any) -> LoomRuntimeError:
    """The exception for a runtime error of one workitem at ``step``."""
    d = op_diagnostic(step, DiagnosticSeverity.ERROR, code, f"{message} in {coords_text(coords)}")
    return LoomRuntimeError(d.render(), [d])


def format_lane(fmt: str, values: tuple, lane: int | None) -> str:
    """Format ``fmt`` with each value taken at ``lane`` (scalars as they are)."""
    import numpy as np

    picked = []
    for v in values:
        x = v[lane] if lane is not None and np.ndim(v) else v
        picked.append(_show(x))
    try:
        return fmt.format(*picked)
    except (IndexError, KeyError, ValueError):
        return fmt


def _show(x: Any) -> str:
    import numpy as np

    if isinstance(x, np.bool_ | bool):
        return "true" if x else "false"
    if isinstance(x, np.floating | float):
        return repr(float(x))
    if isinstance(x, np.integer):
        return str(int(x))
    return str(x)
