"""view: typed logical element access through views."""

from collections.abc import Callable

from loom.dialects._memory import (
    ATOMIC_KIND,
    BYTE_SCALAR_TEXT,
    FLOAT_ATOMIC_KINDS,
    LOAD_ORDERING,
    ORDERINGS,
    STORE_ORDERING,
    cache_attrs,
    cache_policy,
    is_byte_scalar,
)
from loom.dialects._shapes import ORDERING, SCOPE
from loom.dialects.encoding import kept_layout_problems
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
    Result,
    SameType,
    TemplateFlags,
    TypeConstraint,
    TypeOf,
    Violation,
    op,
)
from loom.ir import DYNAMIC_INDEX, ShapedType, StaticDim

MEMORY_FLAGS = FlagSetDef("memory_flags", ("volatile",))
ATOMIC_FLAGS = FlagSetDef("memory_flags", ("noftz",))
PREFETCH_INTENT = EnumDef("intent", ("read", "write"))
PREFETCH_LOCALITY = EnumDef("locality", ("none", "l1", "l2", "l3"))
BYTE_SCALAR = TypeConstraint(BYTE_SCALAR_TEXT, is_byte_scalar)


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
    return (
        cache_policy(op, "load")
        or _index_count(op, ctx, "view", "indices", "static_indices")
        or _element_matches(op, ctx, "view", op.results[0] if op.results else None, "result")
    )


def _verify_store(op, ctx) -> list[Violation]:  # noqa: ANN001
    problems = cache_policy(op, "store")
    if problems:
        return problems
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
    if not problems and src and op.results:
        problems = kept_layout_problems(src[0].type, op.results[0].type, "result")
    return problems


STATIC_INDICES = AttrDef("static_indices", AttrKind.I64_ARRAY, optional=True)
"""The static entries of an element's index (``DYNAMIC_INDEX`` where an operand stands)."""
_CACHE_ATTRS = [
    AttrDef("memory_flags", AttrKind.FLAGS, flags=MEMORY_FLAGS, optional=True),
    STATIC_INDICES,
    *cache_attrs(),
]
ELEMENT_OPERANDS = [Operand("view", VIEW), Operand("indices", INDEX_T, variadic=True)]
"""The view and the full-rank index of the element an access reaches."""
_ELEMENT_AT = [Ref("view"), IndexList("indices", "static_indices")]
"""``%v[%i, 0]``: the element an access reaches."""
ELEMENT_READ = [*_ELEMENT_AT, AttrDict(), Kw(":"), TypeOf("view")]
"""``%v[%i] {attrs} : view<...>``: the element a read reaches."""
_WRITE = [
    Ref("value"),
    Kw(","),
    *_ELEMENT_AT,
    AttrDict(),
    Kw(":"),
    TypeOf("value"),
    Kw(","),
    TypeOf("view"),
]
"""``%x, %v[%i] {attrs} : T, view<...>``: the value a write puts at an element."""

LOAD = op(
    "view.load",
    "Reads one element at a full-rank logical index.",
    operands=ELEMENT_OPERANDS,
    attrs=_CACHE_ATTRS,
    results=[Result("result", SCALAR)],
    traits=[MemoryEffect(reads=True)],
    format=[Flags("memory_flags"), *ELEMENT_READ, Kw("->"), TypeOf("result")],
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
    operands=[Operand("value", SCALAR), *ELEMENT_OPERANDS],
    attrs=_CACHE_ATTRS,
    traits=[MemoryEffect(writes=True)],
    format=[Flags("memory_flags"), *_WRITE],
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


def retype_problems(
    st: ShapedType, rt: ShapedType, layout: Callable[[], list[Violation]] | None = None
) -> list[Violation]:
    """The first problem of retyping view type ``st`` as ``rt`` (the rank and element type are
    kept, TYPE/004; static extents agree, SHAPE/001), with ``layout``'s problems checked in
    between when given."""
    if st.rank != rt.rank or st.element_type != rt.element_type:
        return [
            Violation(
                "TYPE/004",
                f"result type {rt} must keep the rank and element type of {st}",
                "result",
            )
        ]
    problems = layout() if layout is not None else []
    if problems:
        return problems
    for a, b in zip(st.dims, rt.dims):
        if isinstance(a, StaticDim) and isinstance(b, StaticDim) and a.size != b.size:
            return [
                Violation(
                    "SHAPE/001",
                    f"source static dimension {a.size} differs from result static dimension "
                    f"{b.size}",
                    "result",
                )
            ]
    return []


def _verify_refine(op, ctx) -> list[Violation]:  # noqa: ANN001
    src = ctx.operand_values(op, "source")
    if not src or not op.results:
        return []
    st, rt = src[0].type, op.results[0].type
    if not (isinstance(st, ShapedType) and isinstance(rt, ShapedType)):
        return []
    return retype_problems(st, rt) or kept_layout_problems(st, rt, "result", adds=True)


REFINE = op(
    "view.refine",
    "The same view with more precise type facts (static extents for dynamic ones, a layout); "
    "a false assertion is an invalid program.",
    operands=[Operand("source", VIEW)],
    results=[Result("result", VIEW)],
    traits=[Pure()],
    format=[Ref("source"), Kw(":"), TypeOf("source"), Kw("->"), TypeOf("result")],
    examples=[
        Example(
            "%r = view.refine %v : view<[%n]xf32> -> view<16xf32>",
            "%n: index, %v: view<[%n]xf32>",
        )
    ],
    verifier=_verify_refine,
    verifier_cacheable=True,
)


def _atomic_rules(op, ctx, *, reduce: bool = False, kind: bool = True) -> list[Violation]:  # noqa: ANN001
    out = cache_policy(op, "atomic")
    k = op.attributes.get("kind")
    if kind and isinstance(k, str):
        views = ctx.operand_values(op, "view")
        elem = (
            views[0].type.element_type if views and isinstance(views[0].type, ShapedType) else None
        )
        if elem is not None:
            if k in FLOAT_ATOMIC_KINDS and not elem.is_float:
                out.append(
                    Violation(
                        "TYPE/003",
                        f"kind {k} needs a floating-point element type for atomic kind, "
                        f"found {elem}",
                        "value",
                    )
                )
            elif k not in FLOAT_ATOMIC_KINDS and elem.is_float:
                out.append(
                    Violation(
                        "TYPE/003",
                        f"kind {k} needs an integer element type for atomic kind, found {elem}",
                        "value",
                    )
                )
        if reduce and k in ("xchgi", "xchgf"):
            out.append(
                Violation(
                    "STRUCTURE/014",
                    f"attribute 'kind' value {k} ({ATOMIC_KIND.cases.index(k)}) must be a "
                    "non-exchange atomic reduce kind",
                    "kind",
                )
            )
        if op.attributes.get("memory_flags") == "noftz" and k != "addf":
            out.append(
                Violation(
                    "STRUCTURE/014",
                    "attribute 'memory_flags': noftz requires floating-point atomic addition",
                    "memory_flags",
                )
            )
    return out


def _indexed(view_field: str = "view"):  # noqa: ANN202
    def check(op, ctx) -> list[Violation]:  # noqa: ANN001
        value = ctx.operand_values(op, "value") or ctx.operand_values(op, "expected")
        subject = value[0] if value else (op.results[0] if op.results else None)
        return _index_count(op, ctx, view_field, "indices", "static_indices") or _element_matches(
            op, ctx, view_field, subject, "value" if value else "result"
        )

    return check


_ATOMIC_MISSING = "TYPE/005"
"""Upstream reports an atomic's absent ordering or scope as an attribute-kind mismatch."""


def _verify_rmw(reduce: bool):  # noqa: ANN202
    def check(op, ctx) -> list[Violation]:  # noqa: ANN001
        return _indexed()(op, ctx) or _atomic_rules(op, ctx, reduce=reduce)

    return check


def _atomic_enum(name: str, enum: EnumDef) -> AttrDef:
    """A required ordering or scope of an atomic access."""
    return AttrDef(name, AttrKind.ENUM, enum=enum, missing_code=_ATOMIC_MISSING)


_ATOMIC_SCOPE = _atomic_enum("scope", SCOPE)


def _atomic_access_attrs(ordering: EnumDef) -> list[AttrDef]:
    """An atomic access's index, cache and memory-model attributes (orderings from ``ordering``)."""
    return [STATIC_INDICES, *cache_attrs(), _atomic_enum("ordering", ordering), _ATOMIC_SCOPE]


_ATOMIC_ATTRS = [
    AttrDef("kind", AttrKind.ENUM, enum=ATOMIC_KIND),
    AttrDef("memory_flags", AttrKind.FLAGS, flags=ATOMIC_FLAGS, optional=True),
    *_atomic_access_attrs(ORDERING),
]
_ATOMIC_HEAD = [TemplateFlags("kind", "memory_flags"), *_WRITE]
_ATOMIC_OPERANDS = [Operand("value", BYTE_SCALAR), *ELEMENT_OPERANDS]
_AT = "%x: i32, %i: index, %v: view<16xi32>"

ATOMIC_REDUCE = op(
    "view.atomic.reduce",
    "Atomically combines the value into one element (no result): xchg kinds are rmw-only.",
    operands=_ATOMIC_OPERANDS,
    attrs=_ATOMIC_ATTRS,
    traits=[MemoryEffect(reads=True, writes=True)],
    format=_ATOMIC_HEAD,
    builder="reduce",
    examples=[
        Example(
            "view.atomic.reduce<addi> %x, %v[%i] {ordering = relaxed, scope = device}"
            " : i32, view<16xi32>",
            _AT,
        ),
        Example(
            "view.atomic.reduce<addf, noftz> %x, %v[%i] {ordering = relaxed, scope = device}"
            " : f32, view<16xf32>",
            "%x: f32, %i: index, %v: view<16xf32>",
        ),
    ],
    verifier=_verify_rmw(True),
    verifier_cacheable=True,
)

ATOMIC_RMW = op(
    "view.atomic.rmw",
    "Atomically combines the value into one element and returns the element's old value.",
    operands=_ATOMIC_OPERANDS,
    attrs=_ATOMIC_ATTRS,
    results=[Result("result", BYTE_SCALAR)],
    traits=[MemoryEffect(reads=True, writes=True), SameType(("value", "result"))],
    format=[*_ATOMIC_HEAD, Kw("->"), TypeOf("result")],
    builder="rmw",
    examples=[
        Example(
            "%old = view.atomic.rmw<maxsi> %x, %v[%i] {ordering = acq_rel, scope = workgroup}"
            " : i32, view<16xi32> -> i32",
            _AT,
        )
    ],
    verifier=_verify_rmw(False),
    verifier_cacheable=True,
)

_FAILURE_OK = {
    "relaxed": ("relaxed",),
    "acquire": ("relaxed", "acquire"),
    "release": ("relaxed",),
    "acq_rel": ("relaxed", "acquire"),
    "seq_cst": ("relaxed", "acquire", "seq_cst"),
}


def _verify_cmpxchg(op, ctx) -> list[Violation]:  # noqa: ANN001
    problems = _indexed()(op, ctx) or _atomic_rules(op, ctx, kind=False)
    if problems:
        return problems
    success = op.attributes.get("success_ordering")
    failure = op.attributes.get("failure_ordering")
    n = ORDERINGS.index(failure) if failure in ORDERINGS else -1
    if failure in ("release", "acq_rel"):
        return [
            Violation(
                "STRUCTURE/014",
                f"attribute 'failure_ordering' value {failure} ({n}) must be a relaxed, "
                "acquire, or seq_cst failure ordering",
                "failure_ordering",
            )
        ]
    if success in _FAILURE_OK and failure not in _FAILURE_OK[success]:
        return [
            Violation(
                "STRUCTURE/014",
                f"attribute 'failure_ordering' value {failure} ({n}) must be a failure "
                f"ordering no stronger than success ordering {success}",
                "failure_ordering",
            )
        ]
    return []


CMPXCHG = op(
    "view.atomic.cmpxchg",
    "Atomically replaces one element when its bits equal `expected`'s; returns the old value "
    "(success is bits(old) == bits(expected)).",
    operands=[
        Operand("expected", BYTE_SCALAR),
        Operand("replacement", BYTE_SCALAR),
        *ELEMENT_OPERANDS,
    ],
    attrs=[
        STATIC_INDICES,
        *cache_attrs(),
        _atomic_enum("failure_ordering", ORDERING),
        _ATOMIC_SCOPE,
        _atomic_enum("success_ordering", ORDERING),
    ],
    results=[Result("result", BYTE_SCALAR)],
    traits=[
        MemoryEffect(reads=True, writes=True),
        SameType(("expected", "replacement", "result")),
    ],
    format=[
        Ref("expected"),
        Kw(","),
        Ref("replacement"),
        Kw(","),
        *_ELEMENT_AT,
        AttrDict(),
        Kw(":"),
        TypeOf("result"),
        Kw(","),
        TypeOf("view"),
        Kw("->"),
        TypeOf("result"),
    ],
    builder="cmpxchg",
    examples=[
        Example(
            "%old = view.atomic.cmpxchg %e, %x, %v[%i] {failure_ordering = relaxed,"
            " scope = workgroup, success_ordering = acq_rel} : i32, view<16xi32> -> i32",
            "%e: i32, " + _AT,
        )
    ],
    verifier=_verify_cmpxchg,
    verifier_cacheable=True,
)

PREFETCH = op(
    "view.prefetch",
    "A hint that an element will soon be read or written; no effect on memory, never faults.",
    operands=ELEMENT_OPERANDS,
    attrs=[
        STATIC_INDICES,
        AttrDef("intent", AttrKind.ENUM, enum=PREFETCH_INTENT),
        AttrDef("locality", AttrKind.ENUM, enum=PREFETCH_LOCALITY),
    ],
    format=ELEMENT_READ,
    examples=[
        Example(
            "view.prefetch %v[%i] {intent = read, locality = l2} : view<16xf32>",
            "%i: index, %v: view<16xf32>",
        )
    ],
    verifier=lambda op, ctx: _index_count(op, ctx, "view", "indices", "static_indices"),
    verifier_cacheable=True,
)


def _verify_atomic_access(op, ctx) -> list[Violation]:  # noqa: ANN001
    return _indexed()(op, ctx) or _atomic_rules(op, ctx, kind=False)


ATOMIC_LOAD = op(
    "view.atomic.load",
    "An indivisible read of one element with an ordering at a scope (never merged or removed).",
    operands=ELEMENT_OPERANDS,
    attrs=_atomic_access_attrs(LOAD_ORDERING),
    results=[Result("result", BYTE_SCALAR)],
    traits=[MemoryEffect(reads=True)],
    format=[*ELEMENT_READ, Kw("->"), TypeOf("result")],
    builder="atomic_load",
    examples=[
        Example(
            "%g = view.atomic.load %v[0] {ordering = acquire, scope = system} : view<1xi32> -> i32",
            "%v: view<1xi32>",
        )
    ],
    verifier=_verify_atomic_access,
    verifier_cacheable=True,
)

ATOMIC_STORE = op(
    "view.atomic.store",
    "An indivisible write of one element with an ordering at a scope.",
    operands=_ATOMIC_OPERANDS,
    attrs=_atomic_access_attrs(STORE_ORDERING),
    traits=[MemoryEffect(writes=True)],
    format=_WRITE,
    builder="atomic_store",
    examples=[
        Example(
            "view.atomic.store %x, %v[0] {ordering = release, scope = system} : i32, view<1xi32>",
            "%x: i32, %v: view<1xi32>",
        )
    ],
    verifier=_verify_atomic_access,
    verifier_cacheable=True,
)

OPS = (
    LOAD,
    STORE,
    SUBVIEW,
    REFINE,
    ATOMIC_REDUCE,
    ATOMIC_RMW,
    CMPXCHG,
    PREFETCH,
    ATOMIC_LOAD,
    ATOMIC_STORE,
)
