"""Declarations of every Loom op, by dialect. This package imports only ``loom.dsl`` and
``loom.ir``."""

from loom.dialects import (
    buffer,
    cfg,
    check,
    func,
    index,
    kernel,
    scalar,
    scf,
    target,
    test,
    vector,
    view,
)
from loom.dialects import config as config_dialect
from loom.dialects import global_ as global_dialect
from loom.dialects import sanitizer as sanitizer_dialect
from loom.dsl import OpDef

ALL_OPS: tuple[OpDef, ...] = (
    *target.OPS,
    *kernel.OPS,
    *index.OPS,
    *scalar.OPS,
    *scf.OPS,
    *buffer.OPS,
    *view.OPS,
    *func.OPS,
    *cfg.OPS,
    *check.OPS,
    *test.OPS,
    *vector.OPS,
    *global_dialect.OPS,
    *config_dialect.OPS,
    *sanitizer_dialect.OPS,
)
"""Every declared op, in registry order (dialect by dialect)."""
