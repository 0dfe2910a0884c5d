"""test: harness ops the corpora use as sinks and stand-in target records."""

from typing import Any

from loom.dialects._shapes import (
    CALLING_CONVENTION,
    CALLING_CONVENTION_FORMAT,
    VISIBILITY,
    VISIBILITY_FORMAT,
    constant_op,
)
from loom.dialects.config import literal_mismatch
from loom.dialects.func import SIGNATURE_ATTRS, signature_format
from loom.dialects.target import TARGET_GENERIC
from loom.dsl import (
    ANY,
    BUFFER_T,
    I1_T,
    INDEX_T,
    SCALAR,
    VIEW,
    ArgSource,
    AttrDef,
    AttrDict,
    AttrKind,
    BlockArgs,
    EnumDef,
    Example,
    FlagSetDef,
    IsolatedFromAbove,
    Kw,
    Operand,
    OptionalGroup,
    Pure,
    Ref,
    Refs,
    RegionDef,
    RegionRef,
    Result,
    SameType,
    Symbol,
    SymbolRef,
    SymbolUse,
    TemplateFlags,
    TemplateParam,
    Terminator,
    TypeConstraint,
    TypeOf,
    TypesOf,
    Uniformity,
    Violation,
    op,
)
from loom.ir import OpaqueType, ScalarType, ShapedType, TypeKind, opaque_family

TEST_TARGET = op(
    "test.target",
    "A synthetic target record for toolchain tests; kernels name it with target(@...).",
    attrs=[
        AttrDef("kind", AttrKind.ENUM, enum=EnumDef("kind", ("low_core", "quirky"))),
        # the same optional overrides as a real target record
        *(a for a in TARGET_GENERIC.attrs if a.name not in ("kind",)),
    ],
    traits=[Symbol("symbol", kind="record")],
    format=[TemplateParam("kind"), SymbolRef("symbol"), AttrDict()],
    builder="target",
    examples=[
        Example("test.target<low_core> @bench", top_level=True),
        Example("test.target<quirky> @odd {subgroup_size = 16}", top_level=True),
    ],
)

USE = op(
    "test.use",
    "A sink that keeps its operands alive; it does nothing at run time.",
    operands=[Operand("values", ANY, variadic=True)],
    format=[Refs("values"), Kw(":"), TypesOf("values")],
    builder="use",
    examples=[Example("test.use %a, %x : i32, f32", "%a: i32, %x: f32")],
)


# ------------------------------------------------------------------ functions, constants, records


def _verify_constant(op: Any, ctx: Any) -> list[Violation]:
    if not op.results or "value" not in op.attributes:
        return []
    t = op.results[0].type
    elem = t.element_type if isinstance(t, ShapedType) else t
    why = literal_mismatch(elem, op.attributes["value"])
    return [] if why is None else [Violation("TYPE/005", f"value: {why}", "value")]


_CONSTANT_RESULT = TypeConstraint(
    "a scalar, tile, tensor or vector type",
    lambda t: (
        isinstance(t, ScalarType)
        or (
            isinstance(t, ShapedType)
            and t.kind in (TypeKind.TILE, TypeKind.TENSOR, TypeKind.VECTOR)
        )
    ),
)

CONSTANT = constant_op(
    "test.constant",
    "A constant for tests: a scalar, or every element of a shaped result.",
    _CONSTANT_RESULT,
    [Example("%c = test.constant 42 : i32")],
    builder="constant",
    verifier=_verify_constant,
)


def _body(**kw: Any) -> RegionDef:
    """A test function's body: its entry args are the signature; it ends in test.yield."""
    return RegionDef(
        "body", terminator="test.yield", arg_source=ArgSource.VALUES, arg_keyword="args", **kw
    )


_FUNC_TRAITS = [Symbol("callee", kind="func"), IsolatedFromAbove()]

FUNC = op(
    "test.func",
    "A function-like op for toolchain tests; its body ends in test.yield.",
    attrs=[VISIBILITY, CALLING_CONVENTION, *SIGNATURE_ATTRS],
    regions=[_body(yields="result_types")],
    traits=_FUNC_TRAITS,
    format=[
        VISIBILITY_FORMAT,
        CALLING_CONVENTION_FORMAT,
        *signature_format("body"),
        RegionRef("body"),
    ],
    builder="func",
    examples=[
        Example("test.func @identity(%x: f32) -> (f32) {\n  test.yield %x : f32\n}", top_level=True)
    ],
)

YIELD = op(
    "test.yield",
    "Ends a test.func body, passing on values.",
    operands=[Operand("values", ANY, variadic=True)],
    traits=[Terminator(values="values")],
    format=[Refs("values"), OptionalGroup("values", Kw(":"), TypesOf("values"))],
    builder="yield_",
    examples=[
        Example(
            "test.func @pair(%a: i32, %b: f32) -> (i32, f32) {\n  test.yield %a, %b : i32, f32\n}",
            top_level=True,
        )
    ],
)

SPLIT_FUNC = op(
    "test.split_func",
    "A function-like op with two regions seeing one signature: the body gets the written "
    "arguments, the launch region its own copies of them (same names and types).",
    attrs=[AttrDef("callee", AttrKind.SYMBOL)],
    regions=[
        _body(doc="Function body; its entry args are the signature."),
        RegionDef(
            "launch",
            terminator="test.yield",
            arg_source=ArgSource.DERIVED,
            derived_from=("body",),
            doc="Side region; its entry args are fresh values projected from the signature.",
        ),
    ],
    traits=_FUNC_TRAITS,
    format=[
        SymbolRef("callee"),
        BlockArgs("body"),
        RegionRef("body"),
        Kw("launch"),
        RegionRef("launch"),
    ],
    builder="split_func",
    examples=[
        Example(
            "test.split_func @twice(%n: index) {\n  test.use %n : index\n  test.yield\n"
            "} launch {\n  test.use %n : index\n  test.yield\n}",
            top_level=True,
        )
    ],
)

RECORD = op(
    "test.record",
    "A named record with no contents, for symbol-reference tests.",
    attrs=[AttrDef("symbol", AttrKind.SYMBOL)],
    traits=[Symbol("symbol", kind="record")],
    format=[SymbolRef("symbol"), AttrDict()],
    builder="record",
    examples=[Example("test.record @tables", top_level=True)],
)

TEMPLATE_SYMBOL = op(
    "test.template_param_symbol",
    "A test op whose template parameter is a symbol reference.",
    attrs=[AttrDef("target", AttrKind.SYMBOL)],
    traits=[SymbolUse("target", ("record",))],
    format=[TemplateParam("target")],
    builder="template_param_symbol",
    examples=[
        Example(
            "test.record @t\n\ntest.func @f() {\n  test.template_param_symbol<@t>\n  test.yield\n}",
            top_level=True,
        )
    ],
)

TEMPLATE_SYMBOL_FLAGS = op(
    "test.template_param_symbol_flags",
    "A test op whose template parameters are a symbol reference and optional flags.",
    attrs=[
        AttrDef("target", AttrKind.SYMBOL),
        AttrDef(
            "flags",
            AttrKind.FLAGS,
            flags=FlagSetDef("template_flags", ("debug", "trace")),
            optional=True,
        ),
    ],
    traits=[SymbolUse("target", ("record",))],
    format=[TemplateFlags("target", "flags")],
    builder="template_param_symbol_flags",
    examples=[
        Example(
            "test.record @t\n\ntest.func @f() {\n"
            "  test.template_param_symbol_flags<@t, debug|trace>\n  test.yield\n}",
            top_level=True,
        )
    ],
)

# ------------------------------------------------------------------ owned resources
# Lifetime effects on an opaque owned resource, for ownership analyses that need no target
# dialect. Each ``pool<N>`` is a distinct resource type (N is a size class).

opaque_family("pool", "An owned test resource of size class N (pool<N>).")
_POOL = TypeConstraint(
    "a pool<N> resource", lambda t: isinstance(t, OpaqueType) and t.name.startswith("pool<")
)


def _resource_op(name: str, doc: str, result: str | None = None) -> Any:
    """``test.resource.<name> %r : T`` (or ``%x = ... : T -> T`` with a ``result``)."""
    fmt: list[Any] = [Ref("resource"), Kw(":"), TypeOf("resource")]
    example = f"test.resource.{name} %p : pool<8>"
    if result is not None:
        fmt += [Kw("->"), TypeOf("result")]
        example = f"%q = {example} -> pool<8>"
    return op(
        f"test.resource.{name}",
        doc,
        operands=[Operand("resource", _POOL)],
        results=[Result("result", _POOL, doc=result)] if result is not None else [],
        traits=[SameType(("resource", "result"))] if result is not None else [],
        format=fmt,
        builder=f"resource_{name}",
        examples=[Example(example, "%p: pool<8>")],
    )


RESOURCE_OPS = (
    op(
        "test.resource.alloc",
        "Allocates a fresh owned resource of the given size.",
        operands=[Operand("size", INDEX_T)],
        results=[Result("result", _POOL)],
        format=[Ref("size"), Kw(":"), TypeOf("size"), Kw("->"), TypeOf("result")],
        builder="resource_alloc",
        examples=[Example("%p = test.resource.alloc %n : index -> pool<8>", "%n: index")],
    ),
    _resource_op("borrow", "Uses the resource without taking ownership."),
    _resource_op("borrow_ref", "Uses the resource's carrier by reference, without ownership."),
    _resource_op("consume", "Takes ownership of the resource; it may not be used after."),
    _resource_op("retain", "Takes one more owned reference to the resource.", "The new reference."),
    _resource_op("release", "Gives up one owned reference to the resource."),
    _resource_op("discard", "Drops the resource without using it further."),
    _resource_op("escape", "Lets the resource escape: ownership is no longer tracked."),
    _resource_op("alias", "Borrows the resource as a new alias.", "The borrowed alias."),
    _resource_op("borrowed", "Borrows the resource as a new value.", "The borrowed value."),
)

# ------------------------------------------------------------------ fact probes
# Each probe reports what is known about its operand: the compiler's facts engine folds it to a
# constant; the interpreter reports what it observes (see loom.interp.semantics.test).

_VALUE_OR_BUFFER = TypeConstraint(
    "a scalar, buffer or view",
    lambda t: t.kind in (TypeKind.SCALAR, TypeKind.BUFFER, TypeKind.VIEW),
)
_INT_RESULT = TypeConstraint(
    "an integer type", lambda t: isinstance(t, ScalarType) and t.is_integer
)

_INT_PROBES = (
    ("range_lo", SCALAR, "The lower bound of the operand's range (observed: the value)."),
    ("range_hi", SCALAR, "The upper bound of the operand's range (observed: the value)."),
    ("all_equal_range_lo", SCALAR, "The lower bound of the range every element shares."),
    ("all_equal_range_hi", SCALAR, "The upper bound of the range every element shares."),
    ("divisor", SCALAR, "A known divisor of the operand (observed: its magnitude)."),
    ("buffer_memory_space", BUFFER_T, "The memory space ordinal of a buffer (-1 unknown)."),
    ("view_memory_space", VIEW, "The memory space ordinal of a view's root (-1 unknown)."),
    ("view_byte_offset_lo", VIEW, "The lower bound of the view's byte offset in its root."),
    ("view_byte_offset_hi", VIEW, "The upper bound of the view's byte offset in its root."),
    ("view_byte_length_lo", VIEW, "The lower bound of the view's footprint in bytes."),
    ("view_byte_length_hi", VIEW, "The upper bound of the view's footprint in bytes."),
    ("view_min_alignment", VIEW, "The provable byte alignment of the view's first element."),
    ("buffer_min_alignment", BUFFER_T, "The provable byte alignment of a buffer root."),
    ("view_root_min_alignment", VIEW, "The provable byte alignment of a view's root."),
    ("view_element_bytes", VIEW, "The element size of a view in bytes (-1 unknown)."),
)
_BOOL_PROBES = (
    ("non_negative", SCALAR, "Whether the operand is provably non-negative."),
    ("non_zero", SCALAR, "Whether the operand is provably non-zero."),
    ("positive", SCALAR, "Whether the operand is provably positive."),
    ("power_of_two", SCALAR, "Whether the operand is provably a power of two."),
    ("finite", SCALAR, "Whether the operand is provably finite (not NaN or infinite)."),
    ("not_subnormal", SCALAR, "Whether the operand is provably not a subnormal float."),
    ("subgroup_uniform", _VALUE_OR_BUFFER, "Whether the operand is the same in a subgroup."),
    ("workgroup_uniform", _VALUE_OR_BUFFER, "Whether the operand is the same in a workgroup."),
    ("lane_varying", _VALUE_OR_BUFFER, "Whether the operand may differ between lanes."),
    ("is_buffer_reference", ANY, "Whether the operand is known to be a buffer reference."),
    ("is_view_reference", ANY, "Whether the operand is known to be a view reference."),
    ("alias_scope_known", ANY, "Whether the operand's alias scope is known."),
)


_UNIFORMITY = {
    # observed across the scope's workitems (a collective): results agree within that scope
    "subgroup_uniform": (Uniformity("subgroup"),),
    "lane_varying": (Uniformity("subgroup"),),
    "workgroup_uniform": (Uniformity("uniform"),),
}


def _probe(name: str, constraint: TypeConstraint, doc: str, result: TypeConstraint) -> Any:
    r = "i64" if result is _INT_RESULT else "i1"
    arg = {SCALAR: "%x: index", BUFFER_T: "%b: buffer", VIEW: "%v: view<4xf32>"}.get(
        constraint, "%x: index"
    )
    ref, t = arg.split(": ")
    return op(
        f"test.fact_{name}",
        doc,
        operands=[Operand("value", constraint)],
        results=[Result("result", result)],
        traits=[Pure(), *_UNIFORMITY.get(name, ())],
        format=[Ref("value"), Kw(":"), TypeOf("value"), Kw("->"), TypeOf("result")],
        builder=f"fact_{name}",
        examples=[Example(f"%r = test.fact_{name} {ref} : {t} -> {r}", arg)],
    )


def _pair_probe(name: str, lhs: TypeConstraint, rhs: TypeConstraint, doc: str, args: str) -> Any:
    (a, ta), (b, tb) = (x.split(": ") for x in args.split(", "))
    return op(
        f"test.fact_{name}",
        doc,
        operands=[Operand("lhs", lhs), Operand("rhs", rhs)],
        results=[Result("result", I1_T)],
        traits=[Pure()],
        format=[
            Ref("lhs"),
            Kw(","),
            Ref("rhs"),
            Kw(":"),
            TypeOf("lhs"),
            Kw(","),
            TypeOf("rhs"),
            Kw("->"),
            TypeOf("result"),
        ],
        builder=f"fact_{name}",
        examples=[Example(f"%r = test.fact_{name} {a}, {b} : {ta}, {tb} -> i1", args)],
    )


FACT_PROBES = (
    *(_probe(n, c, d, _INT_RESULT) for n, c, d in _INT_PROBES),
    *(_probe(n, c, d, I1_T) for n, c, d in _BOOL_PROBES),
    _pair_probe(
        "view_root_matches",
        VIEW,
        BUFFER_T,
        "Whether the view's root is the buffer.",
        "%v: view<4xf32>, %b: buffer",
    ),
    _pair_probe(
        "alias_scope_matches",
        BUFFER_T,
        BUFFER_T,
        "Whether two buffers share an alias scope.",
        "%a: buffer, %b: buffer",
    ),
)

OPS = (
    TEST_TARGET,
    USE,
    CONSTANT,
    FUNC,
    YIELD,
    RECORD,
    SPLIT_FUNC,
    *RESOURCE_OPS,
    TEMPLATE_SYMBOL,
    TEMPLATE_SYMBOL_FLAGS,
    *FACT_PROBES,
)
