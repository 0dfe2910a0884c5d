"""view: typed logical element access through views."""

from loom.dialects._shapes import SCOPE
from loom.dsl import (
    INDEX_T,
    SCALAR,
    VIEW,
    AttrDef,
    AttrDict,
    AttrKind,
    EnumDef,
    Example,
    Flags,
    FlagSetDef,
    IndexList,
    Kw,
    MemoryEffect,
    Operand,
    Pure,
    Ref,
    RequiresTogether,
    Result,
    TypeOf,
    Violation,
    op,
)
from loom.ir import DYNAMIC_INDEX, ShapedType, StaticDim

MEMORY_FLAGS = FlagSetDef("memory_flags", ("volatile",))
TEMPORAL = EnumDef("cache_temporal", ("normal", "non_temporal", "last_use", "streaming"))


def _index_count(op, ctx, view_field: str, index_field: str, static_attr: str) -> list[Violation]:  # noqa: ANN001
    view = ctx.operand_values(op, view_field)
    if not view or not isinstance(view[0].type, ShapedType):
        return []
    vt = view[0].type
    dynamic = ctx.operand_values(op, index_field)
    static = op.attributes.get(static_attr)
    count = len(static) if static is not None else len(dynamic)
    if count != vt.rank:
        return [
            Violation("SUBRANGE/001", f"{count} indices for a view of rank {vt.rank}", index_field)
        ]
    if static is not None:
        for pos, (idx, dim) in enumerate(zip(static, vt.dims)):
            if idx == DYNAMIC_INDEX:
                continue
            if idx < 0 or (isinstance(dim, StaticDim) and idx >= dim.size):
                return [
                    Violation(
                        "SUBRANGE/004",
                        f"static index {idx} at position {pos} is outside the extent of {vt}",
                        index_field,
                    )
                ]
    return []


def _element_matches(op, ctx, view_field: str, value: object, label: str) -> list[Violation]:  # noqa: ANN001
    view = ctx.operand_values(op, view_field)
    if view and isinstance(view[0].type, ShapedType) and value is not None:
        elem = view[0].type.element_type
        if value.type != elem:
            return [
                Violation(
                    "TYPE/001",
                    f"{label} type {value.type} does not match the view's element type {elem}",
                    label,
                )
            ]
    return []


def _verify_load(op, ctx) -> list[Violation]:  # noqa: ANN001
    return _index_count(op, ctx, "view", "indices", "static_indices") or _element_matches(
        op, ctx, "view", op.results[0] if op.results else None, "result"
    )


def _verify_store(op, ctx) -> list[Violation]:  # noqa: ANN001
    if op.attributes.get("cache_temporal") == "last_use":
        return [
            Violation(
                "STRUCTURE/014",
                "attribute 'cache_temporal' value last_use is a load-only hint",
                "cache_temporal",
            )
        ]
    value = ctx.operand_values(op, "value")
    return _index_count(op, ctx, "view", "indices", "static_indices") or _element_matches(
        op, ctx, "view", value[0] if value else None, "value"
    )


def _verify_subview(op, ctx) -> list[Violation]:  # noqa: ANN001
    problems = _index_count(op, ctx, "source", "offsets", "static_offsets")
    src = ctx.operand_values(op, "source")
    if not problems and src and op.results:
        st, rt = src[0].type, op.results[0].type
        if (
            isinstance(st, ShapedType)
            and isinstance(rt, ShapedType)
            and (st.rank != rt.rank or st.element_type != rt.element_type)
        ):
            problems = [
                Violation(
                    "TYPE/004",
                    f"result type {rt} must keep the rank and element type of {st}",
                    "result",
                )
            ]
    return problems


_CACHE_ATTRS = [
    AttrDef("memory_flags", AttrKind.FLAGS, flags=MEMORY_FLAGS, optional=True),
    AttrDef("static_indices", AttrKind.I64_ARRAY, optional=True),
    AttrDef("cache_scope", AttrKind.ENUM, enum=SCOPE, optional=True),
    AttrDef("cache_temporal", AttrKind.ENUM, enum=TEMPORAL, optional=True),
]

LOAD = op(
    "view.load",
    "Reads one element at a full-rank logical index.",
    operands=[Operand("view", VIEW), Operand("indices", INDEX_T, variadic=True)],
    attrs=_CACHE_ATTRS,
    results=[Result("result", SCALAR)],
    traits=[MemoryEffect(reads=True), RequiresTogether(("cache_scope", "cache_temporal"))],
    format=[
        Flags("memory_flags"),
        Ref("view"),
        IndexList("indices", "static_indices"),
        AttrDict(),
        Kw(":"),
        TypeOf("view"),
        Kw("->"),
        TypeOf("result"),
    ],
    examples=[
        Example(
            "%x = view.load %v[%i] : view<[%n]xf32> -> f32",
            "%n: index, %i: index, %v: view<[%n]xf32>",
        ),
        Example("%x = view.load %v[0, %j] : view<4x8xi32> -> i32", "%j: index, %v: view<4x8xi32>"),
    ],
    verifier=_verify_load,
    verifier_cacheable=True,
)

STORE = op(
    "view.store",
    "Writes one element at a full-rank logical index.",
    operands=[
        Operand("value", SCALAR),
        Operand("view", VIEW),
        Operand("indices", INDEX_T, variadic=True),
    ],
    attrs=_CACHE_ATTRS,
    traits=[MemoryEffect(writes=True), RequiresTogether(("cache_scope", "cache_temporal"))],
    format=[
        Flags("memory_flags"),
        Ref("value"),
        Kw(","),
        Ref("view"),
        IndexList("indices", "static_indices"),
        AttrDict(),
        Kw(":"),
        TypeOf("value"),
        Kw(","),
        TypeOf("view"),
    ],
    examples=[
        Example("view.store %x, %v[%i] : f32, view<16xf32>", "%x: f32, %i: index, %v: view<16xf32>")
    ],
    verifier=_verify_store,
    verifier_cacheable=True,
)

SUBVIEW = op(
    "view.subview",
    "A view whose origin moves by logical offsets; extents come from the result type.",
    operands=[Operand("source", VIEW), Operand("offsets", INDEX_T, variadic=True)],
    attrs=[AttrDef("static_offsets", AttrKind.I64_ARRAY, optional=True)],
    results=[Result("result", VIEW)],
    traits=[Pure()],
    format=[
        Ref("source"),
        IndexList("offsets", "static_offsets"),
        Kw(":"),
        TypeOf("source"),
        Kw("->"),
        TypeOf("result"),
    ],
    examples=[
        Example(
            "%s = view.subview %v[%r, 0] : view<64x32xf32> -> view<16x32xf32>",
            "%r: index, %v: view<64x32xf32>",
        )
    ],
    verifier=_verify_subview,
    verifier_cacheable=True,
)

OPS = (LOAD, STORE, SUBVIEW)
