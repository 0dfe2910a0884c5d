"""Semantics of the global dialect: loads and stores of the launch's global cells."""

from __future__ import annotations

from typing import Any

from loom.dialects.global_ import CONSTANT
from loom.interp.memory import View, dense_strides
from loom.interp.numerics import from_memory, memory_dtype, to_memory
from loom.interp.semantics import semantics
from loom.interp.semantics._records import records_of
from loom.interp.semantics._util import rtype
from loom.ir import ScalarType, TypeKind


def _declarations(ctx: Any, step: Any) -> None:
    return None


semantics("global.constant", "global.variable", "global.rodata.def", "global.rodata.decl")(
    _declarations
)
semantics("global.rodata")(_declarations)


def _cell(ctx: Any, step: Any) -> Any:
    name = step.attrs["global"]
    cell = records_of(ctx).cells.get(name)
    if cell is None:
        raise ctx.error(step, "RUNTIME/032", f"the module has no global @{name}", None)
    if cell.buf is None:
        if cell.type.kind in (TypeKind.SCALAR, TypeKind.BUFFER, TypeKind.VIEW):
            raise ctx.error(
                step,
                "RUNTIME/032",
                f"global @{name} has no value: pass it with globals={{'{name}': ...}} "
                f"(loom-run: --global {name}=...)",
                None,
            )
        raise ctx.error(
            step,
            "RUNTIME/013",
            f"'{step.op.name}' of {cell.type} is not executable on the reference target: "
            f"{cell.type.kind.value} globals are not modelled (scalars, buffers, views and "
            "rodata are)",
            None,
        )
    return cell


@semantics("global.load")
def _load(ctx: Any, step: Any) -> Any:
    cell = _cell(ctx, step)
    t = cell.type
    if cell.dims:
        # a view global: the supplied array, and its extents as the co-results
        loaded = rtype(step)
        view = View(cell.buf, 0, cell.dims, dense_strides(cell.dims), t.element_type)
        extents = []
        for v in step.op.results[1:]:
            k = next(k for k, d in enumerate(loaded.dims) if getattr(d, "value", None) is v)
            extents.append(cell.dims[k])
        return (view, *extents) if extents else view
    if not isinstance(t, ScalarType):
        return cell.buf
    dtype = memory_dtype(t)
    raw = ctx.load(step, cell.buf, 0, dtype, None)
    return from_memory(t, raw) if t.spelling in ("bf16", "i1") else raw


@semantics("global.store")
def _store(ctx: Any, step: Any, value: Any) -> None:
    cell = _cell(ctx, step)
    if cell.op.name == CONSTANT.name:
        raise ctx.error(
            step,
            "RUNTIME/031",
            f"global @{cell.name} is a constant: only initializers store to it, not a launch",
            None,
        )
    t = cell.type
    if not isinstance(t, ScalarType):
        raise ctx.error(
            step,
            "RUNTIME/013",
            f"'{step.op.name}' of {t} is not executable on the reference target: a buffer "
            "global is written through its buffer, not replaced",
            None,
        )
    raw = to_memory(t, value) if t.spelling in ("bf16", "i1") else value
    if t.spelling in ("bf16", "i1") and raw.shape == (1,):
        raw = raw[0]
    ctx.store(step, cell.buf, 0, raw, memory_dtype(t), None)
