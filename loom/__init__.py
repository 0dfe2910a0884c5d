"""Loom Workbench: build, read, check and run Loom GPU kernel IR from Python."""

from loom.builder import DialectBuilder, LoomBuilder, OpCallable, module_builder
from loom.diagnostics import (
    Diagnostic,
    DiagnosticEngine,
    DiagnosticRelatedLocation,
    DiagnosticSeverity,
    LoomDiagnosticError,
    SourceProvenance,
    SourceRange,
)
from loom.errors import LoomBuilderError, LoomError
from loom.registry import OpRegistry, default_ops
from loom.verify import ModuleVerifier, verify_module

__version__ = "0.1.0"

__all__ = [
    "Diagnostic",
    "DiagnosticEngine",
    "DiagnosticRelatedLocation",
    "DiagnosticSeverity",
    "DialectBuilder",
    "LoomBuilder",
    "LoomBuilderError",
    "LoomDiagnosticError",
    "LoomError",
    "ModuleVerifier",
    "OpCallable",
    "OpRegistry",
    "SourceProvenance",
    "SourceRange",
    "default_ops",
    "module_builder",
    "verify_module",
]
