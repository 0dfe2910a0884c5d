"""Declarations of every Loom op, by dialect. This package imports only ``loom.dsl`` and
``loom.ir``."""

from importlib import import_module

from loom.dsl import OpDef

DIALECT_MODULES: tuple[str, ...] = (
    "target",
    "kernel",
    "index",
    "scalar",
    "scf",
    "buffer",
    "view",
    "func",
    "cfg",
    "check",
    "test",
    "vector",
    "encoding",
    "global_",
    "config",
    "sanitizer",
)
"""The dialect modules of this package in registry order; ``loom.interp.semantics`` has a
module of the same name for each."""

ALL_OPS: tuple[OpDef, ...] = tuple(
    op for name in DIALECT_MODULES for op in import_module(f"loom.dialects.{name}").OPS
)
"""Every declared op, in registry order (dialect by dialect)."""
