"""sanitizer: run-time assertions (checked by the interpreter) and race-detector observations."""

from __future__ import annotations

from typing import Any

from loom.dialects._shapes import (
    MEMORY_SPACE,
    ORDERING,
    PREDICATED_FORMAT,
    PREDICATES,
    SCOPE,
    SYNC_CLAUSE_FORMAT,
    SYNC_FORMAT,
)
from loom.dialects.view import (
    ELEMENT_OPERANDS,
    ELEMENT_READ,
    STATIC_INDICES,
    _index_count,
    retype_problems,
)
from loom.dsl import (
    ANY,
    VIEW,
    AttrDef,
    AttrKind,
    EnumDef,
    Example,
    Kw,
    MemoryEffect,
    Operand,
    PredicateList,
    Ref,
    Refs,
    Result,
    TemplateParam,
    TypeOf,
    TypesOf,
    Violation,
    op,
)
from loom.ir import DYNAMIC_INDEX, Predicate, ScalarType, ShapedType, StaticDim, Value

ACCESS_KIND = EnumDef("kind", ("read", "write", "read_write"))
FLOAT_PREDICATES = ("not_nan", "not_inf", "finite")
"""Predicate kinds about floats; every other kind is about integers, indices or offsets."""

_EFFECTS = MemoryEffect(reads=True, writes=True)
"""Assertions stop the program when they fail: never removed, never merged."""


def _verify_predicates(op: Any, operand_what: str) -> list[Violation]:
    operands = op.operands
    for k, p in enumerate(op.attributes.get("predicates", ())):
        if not isinstance(p, Predicate):
            continue
        for j, arg in enumerate(p.args):
            if not isinstance(arg, Value):
                continue
            where = f"predicates[{k}].arg[{j}]"
            if all(arg is not v for v in operands):
                return [
                    Violation(
                        "STRUCTURE/032",
                        f"{where} must be {operand_what} (%{arg.display_name} is not one)",
                        "predicates",
                    )
                ]
            t = arg.type
            floaty = isinstance(t, ScalarType) and t.is_float
            if p.kind in FLOAT_PREDICATES and not floaty:
                return [
                    Violation(
                        "TYPE/003",
                        f"{where} of '{p.kind}' has type {t}; expected a floating-point value",
                        "predicates",
                    )
                ]
            if p.kind not in FLOAT_PREDICATES and (floaty or not isinstance(t, ScalarType)):
                return [
                    Violation(
                        "TYPE/003",
                        f"{where} of '{p.kind}' has type {t}; expected an integer, index, or "
                        "offset value",
                        "predicates",
                    )
                ]
    return []


def _verify_value(op: Any, ctx: Any) -> list[Violation]:
    n, m = len(op.operands), len(op.results)
    if n != m:
        return [
            Violation(
                "STRUCTURE/013",
                f"values and results differ in number: values has {n}, results has {m}",
                "results",
            )
        ]
    for k, (a, r) in enumerate(zip(op.operands, op.results)):
        if a.type != r.type:
            return [Violation("TYPE/001", f"result {k} has type {r.type}, value {k} has {a.type}")]
    return _verify_predicates(op, "an asserted value operand")


def _verify_op(op: Any, ctx: Any) -> list[Violation]:
    return _verify_predicates(op, "an assertion operand")


def _rank_list(op: Any, attr: str, rank: int) -> list[Violation]:
    values = op.attributes.get(attr)
    if values is not None and len(values) != rank:
        return [
            Violation(
                "SUBRANGE/003",
                f"attribute '{attr}' has {len(values)} entries; the view has rank {rank}",
                attr,
            )
        ]
    return []


def _positive(op: Any, attr: str, what: str, allow_zero: bool = False) -> list[Violation]:
    values = op.attributes.get(attr)
    if values is None:
        return []
    for v in values if isinstance(values, tuple) else (values,):
        if v < 0 or (v == 0 and not allow_zero):
            return [
                Violation(
                    "STRUCTURE/014",
                    f"attribute '{attr}' value {v} (\"{v}\") requires a {what}",
                    attr,
                )
            ]
    return []


def _static_box_fits(op: Any, vt: ShapedType, count: int, strides: tuple) -> list[Violation]:
    static = op.attributes.get("static_indices")
    extents = op.attributes.get("static_extents") or (1,) * vt.rank
    if static is None:
        return []
    for d, (o, e, dim) in enumerate(zip(static, extents, vt.dims)):
        if o == DYNAMIC_INDEX or not isinstance(dim, StaticDim):
            continue
        last = o + (count - 1) * (strides[d] if strides else 0) + e
        if last > dim.size:
            return [
                Violation(
                    "SUBRANGE/004",
                    f"the asserted access covers index {last - 1} of dimension {d}, outside "
                    f"the extent {dim.size} of {vt}",
                    "indices",
                )
            ]
    return []


def _view_type(op: Any) -> ShapedType | None:
    t = op.operands[0].type if op.operands else None
    return t if isinstance(t, ShapedType) else None


def _verify_access(op: Any, ctx: Any) -> list[Violation]:
    vt = _view_type(op)
    if vt is None:
        return []
    return (
        _index_count(op, ctx, "view", "indices", "static_indices")
        or _rank_list(op, "static_extents", vt.rank)
        or _positive(op, "static_extents", "positive extent")
        or _static_box_fits(op, vt, 1, ())
    )


def _verify_accesses(op: Any, ctx: Any) -> list[Violation]:
    vt = _view_type(op)
    if vt is None:
        return []
    found = (
        _index_count(op, ctx, "view", "indices", "static_indices")
        or _positive(op, "static_count", "positive count")
        or _rank_list(op, "static_extents", vt.rank)
        or _rank_list(op, "static_strides", vt.rank)
        or _positive(op, "static_extents", "positive extent")
        or _positive(op, "static_strides", "non-negative stride", allow_zero=True)
    )
    if found:
        return found
    count = op.attributes.get("static_count", 1)
    strides = op.attributes.get("static_strides", ())
    if count > 1 and not any(strides):
        return [
            Violation(
                "STRUCTURE/014",
                "attribute 'static_strides' value 0 (\"0\") requires a non-zero stride for "
                "repeated accesses",
                "static_strides",
            )
        ]
    return _static_box_fits(op, vt, count, strides)


def _verify_race_access(op: Any, ctx: Any) -> list[Violation]:
    found = _index_count(op, ctx, "view", "indices", "static_indices")
    if found:
        return found
    atomic = bool(op.attributes.get("atomic", False))
    has_ordering = "ordering" in op.attributes
    if atomic != has_ordering:
        state = "present when atomic is true" if atomic else "absent when atomic is false"
        return [
            Violation(
                "STRUCTURE/014",
                f"attribute 'ordering' (\"0\") must be {state}",
                "ordering",
            )
        ]
    return []


def _verify_race_sync(op: Any, ctx: Any) -> list[Violation]:
    if op.attributes.get("ordering") == "relaxed":
        return [
            Violation(
                "STRUCTURE/014",
                "attribute 'ordering' value relaxed (\"0\") requires an acquire, release, "
                "acq_rel, or seq_cst ordering",
                "ordering",
            )
        ]
    return []


def _verify_layout(op: Any, ctx: Any) -> list[Violation]:
    st = _view_type(op)
    rt = op.results[0].type if op.results else None
    if st is None or not isinstance(rt, ShapedType):
        return []

    def layout_kept() -> list[Violation]:
        if st.encoding is not None and rt.encoding is None:
            return [
                Violation(
                    "ENCODING/001",
                    f"the result type layout is missing: the view type {st} has one",
                    "result",
                )
            ]
        return []

    return retype_problems(st, rt, layout_kept)


_ACCESS_FORMAT = [TemplateParam("kind"), *ELEMENT_READ]
"""``<kind> %v[%i] {attrs} : view<...>``: the kind of an access and the element it reaches."""

ASSERT_ACCESS = op(
    "sanitizer.assert.access",
    "Asserts that the box from the index (static_extents elements per dimension, default one) "
    "lies inside the view, and that the view's layout maps it inside the buffer.",
    operands=ELEMENT_OPERANDS,
    attrs=[
        AttrDef("kind", AttrKind.ENUM, enum=ACCESS_KIND),
        STATIC_INDICES,
        AttrDef("static_extents", AttrKind.I64_ARRAY, optional=True),
    ],
    traits=[_EFFECTS],
    format=_ACCESS_FORMAT,
    builder="assert_access",
    examples=[
        Example(
            "sanitizer.assert.access<read> %v[%row, 0] {static_extents = [1, 4]} : view<16x32xf32>",
            "%row: index, %v: view<16x32xf32>",
        )
    ],
    verifier=_verify_access,
    verifier_cacheable=True,
)

_PREDICATED = dict(
    operands=[Operand("values", ANY, variadic=True)],
    attrs=[PREDICATES],
)
"""Values and the ``[...]`` predicates asserted on them."""

ASSERT_VALUE = op(
    "sanitizer.assert.value",
    "Asserts the predicates on its values and returns them unchanged.",
    **_PREDICATED,
    results=[Result("results", ANY, variadic=True)],
    traits=[_EFFECTS],
    format=PREDICATED_FORMAT,
    builder="value",
    examples=[
        Example(
            "%n2 = sanitizer.assert.value %n [range(%n, 0, 4096), mul(%n, 16)] : index",
            "%n: index",
        ),
        Example(
            "%a2, %b2 = sanitizer.assert.value %a, %b [lt(%a, %b)] : i32, i32",
            "%a: i32, %b: i32",
        ),
    ],
    verifier=_verify_value,
)

ASSERT_OP = op(
    "sanitizer.assert.op",
    "Asserts an operation's contract on its operands (a non-zero divisor, a shift in range).",
    **_PREDICATED,
    traits=[_EFFECTS],
    format=[Refs("values"), PredicateList("predicates"), Kw(":"), TypesOf("values")],
    builder="op",
    examples=[Example("sanitizer.assert.op %a, %b [ne(%b, 0)] : i32, i32", "%a: i32, %b: i32")],
    verifier=_verify_op,
)

ASSERT_LAYOUT = op(
    "sanitizer.assert.layout",
    "Asserts that the view has the refined type's static extents and, when that type names "
    "another layout, the element strides that layout gives; returns the view.",
    operands=[Operand("view", VIEW)],
    results=[Result("result", VIEW)],
    traits=[_EFFECTS],
    format=[Ref("view"), Kw(":"), TypeOf("view"), Kw("->"), TypeOf("result")],
    builder="layout",
    examples=[
        Example(
            "%w = sanitizer.assert.layout %v : view<[%m]x32xf32> -> view<16x32xf32>",
            "%m: index, %v: view<[%m]x32xf32>",
        )
    ],
    verifier=_verify_layout,
    verifier_cacheable=True,
)

RACE_ACCESS = op(
    "sanitizer.race.access",
    "Tells the race detector about an element access (an observed write leaves memory alone).",
    operands=ELEMENT_OPERANDS,
    attrs=[
        AttrDef("kind", AttrKind.ENUM, enum=ACCESS_KIND),
        AttrDef("atomic", AttrKind.BOOL, optional=True, default=False),
        AttrDef("ordering", AttrKind.ENUM, enum=ORDERING, optional=True),
        AttrDef("scope", AttrKind.ENUM, enum=SCOPE, optional=True),
        STATIC_INDICES,
    ],
    traits=[_EFFECTS],
    format=_ACCESS_FORMAT,
    builder="race_access",
    examples=[
        Example("sanitizer.race.access<read> %v[%i] : view<64xi32>", "%i: index, %v: view<64xi32>"),
        Example(
            "sanitizer.race.access<read_write> %v[%i] {atomic = true, ordering = acq_rel, "
            "scope = workgroup} : view<64xi32>",
            "%i: index, %v: view<64xi32>",
        ),
    ],
    verifier=_verify_race_access,
    verifier_cacheable=True,
)

RACE_SYNC = op(
    "sanitizer.race.sync",
    "Tells the race detector about a synchronisation of one memory space.",
    attrs=[
        AttrDef("memory_space", AttrKind.ENUM, enum=MEMORY_SPACE),
        AttrDef("ordering", AttrKind.ENUM, enum=ORDERING),
        AttrDef("scope", AttrKind.ENUM, enum=SCOPE),
    ],
    traits=[_EFFECTS],
    format=SYNC_FORMAT,
    legacy_formats=[SYNC_CLAUSE_FORMAT],
    builder="sync",
    examples=[Example("sanitizer.race.sync<workgroup> {ordering = acq_rel, scope = workgroup}")],
    verifier=_verify_race_sync,
    verifier_cacheable=True,
)

ASSERT_ACCESSES = op(
    "sanitizer.assert.accesses",
    "Asserts static_count boxes inside the view (and, under its layout, the buffer): box k "
    "starts at the index plus k times static_strides.",
    operands=ELEMENT_OPERANDS,
    attrs=[
        AttrDef("kind", AttrKind.ENUM, enum=ACCESS_KIND),
        STATIC_INDICES,
        AttrDef("static_extents", AttrKind.I64_ARRAY),
        AttrDef("static_strides", AttrKind.I64_ARRAY),
        AttrDef("static_count", AttrKind.INT),
    ],
    traits=[_EFFECTS],
    format=_ACCESS_FORMAT,
    builder="accesses",
    examples=[
        Example(
            "sanitizer.assert.accesses<write> %v[%row, 0] {static_count = 4, "
            "static_extents = [1, 4], static_strides = [1, 0]} : view<16x32xf32>",
            "%row: index, %v: view<16x32xf32>",
        )
    ],
    verifier=_verify_accesses,
    verifier_cacheable=True,
)

OPS = (
    ASSERT_ACCESS,
    ASSERT_VALUE,
    ASSERT_OP,
    ASSERT_LAYOUT,
    RACE_ACCESS,
    RACE_SYNC,
    ASSERT_ACCESSES,
)
