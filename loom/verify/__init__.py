"""The verifier: generic checks driven by the declarations, plus small per-op hooks.

``verify_module(module, ops=...)`` walks the module once and collects every problem as a
:class:`~loom.diagnostics.Diagnostic`, in source order; it never stops at the first. The codes
are listed in :mod:`loom.verify.core`.
"""

from __future__ import annotations

from collections.abc import Iterable

from loom.diagnostics import DiagnosticEngine, PrintedText, op_source_range
from loom.dsl import OpDef
from loom.ir import Module
from loom.registry import OpRegistry, as_registry
from loom.verify.core import ModuleVerifier, VerifyContext

__all__ = ["ModuleVerifier", "VerifyContext", "op_source_range", "verify_module"]


def verify_module(
    module: Module,
    *,
    ops: OpRegistry | Iterable[OpDef] | None = None,
    diagnostics: DiagnosticEngine | None = None,
    printed: PrintedText | None = None,
) -> DiagnosticEngine:
    """Check ``module`` against the declaration set ``ops``; returns the diagnostics.

    ``printed`` (for example :class:`loom.diagnostic_sources.PrintedModules`) lets the
    diagnostics of ops without a source location point at the op's line in the printed module.
    """
    return ModuleVerifier(module, as_registry(ops), diagnostics, printed).run()
