"""Field-level access to an op through its declaration.

An op keeps its operands as one flat tuple; declarations group them into fields. When a
declaration has more than one variadic or optional operand field, the op records the group sizes
in the reserved attribute :data:`SEGMENTS_ATTR`; otherwise they follow from the counts. Every
layer (printer, parser, verifier, bytecode, interpreter) goes through these helpers.
"""

from __future__ import annotations

from loom.dsl import OpDef
from loom.ir import Operation, Region, Value

SEGMENTS_ATTR = "operand_segments"
"""Reserved attribute holding operand group sizes for ops with several variable fields."""


def needs_segments(decl: OpDef) -> bool:
    """True when operand group sizes cannot be derived from the operand count alone."""
    return sum(1 for o in decl.operands if o.variadic or o.optional) > 1


def operand_groups(op: Operation, decl: OpDef) -> dict[str, tuple[Value, ...]]:
    """Operands by field name. Raises ValueError if the op does not fit the declaration."""
    return _split(op.operands, decl.operands, op.attributes.get(SEGMENTS_ATTR), "operand")


def result_groups(op: Operation, decl: OpDef) -> dict[str, tuple[Value, ...]]:
    """Results by field name."""
    return _split(op.results, decl.results, None, "result")


def region_groups(op: Operation, decl: OpDef) -> dict[str, Region | None]:
    """Regions by field name (absent optional regions map to None; a variadic field maps to
    the tuple of its regions)."""
    out: dict[str, Region | None] = {}
    for i, rd in enumerate(decl.regions):
        if rd.variadic:
            out[rd.name] = tuple(op.regions[i:])  # type: ignore[assignment]
        else:
            out[rd.name] = op.regions[i] if i < len(op.regions) else None
    return out


def segment_sizes(
    decl: OpDef, groups: dict[str, list[Value] | tuple[Value, ...]]
) -> tuple[int, ...]:
    """The group sizes to store for ``decl`` given operands by field."""
    return tuple(len(groups.get(o.name, ())) for o in decl.operands)


def _split(values: tuple[Value, ...], fields, segments, what: str) -> dict[str, tuple[Value, ...]]:  # noqa: ANN001
    if segments is not None:
        if len(segments) != len(fields) or sum(segments) != len(values):
            raise ValueError(f"{what} segment sizes {segments} do not fit {len(values)} {what}s")
        out, pos = {}, 0
        for f, n in zip(fields, segments):
            out[f.name] = values[pos : pos + n]
            pos += n
        return out
    variable = [f for f in fields if f.variadic or getattr(f, "optional", False)]
    fixed = len(fields) - len(variable)
    extra = len(values) - fixed
    if extra < 0 or (not variable and extra):
        raise ValueError(f"expected {fixed} {what}s, found {len(values)}")
    if len(variable) > 1:
        raise ValueError(f"{what} group sizes are missing")
    out, pos = {}, 0
    for f in fields:
        if f.variadic or getattr(f, "optional", False):
            n = extra
            if getattr(f, "optional", False) and not f.variadic and n > 1:
                raise ValueError(f"optional {what} '{f.name}' takes at most one value, found {n}")
        else:
            n = 1
        out[f.name] = values[pos : pos + n]
        pos += n
    return out


def pack_operands(
    decl: OpDef, groups: dict[str, list[Value] | tuple[Value, ...]]
) -> tuple[tuple[Value, ...], tuple[int, ...] | None]:
    """Flatten operands given by field into declaration order, with segment sizes when the
    declaration needs them (store those under :data:`SEGMENTS_ATTR`)."""
    flat: list[Value] = []
    for o in decl.operands:
        flat.extend(groups.get(o.name, ()))
    return tuple(flat), (segment_sizes(decl, groups) if needs_segments(decl) else None)
