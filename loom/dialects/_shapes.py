"""Shared declaration shapes (binary, unary, cast, comparison, constant), enums and the fields
of symbols that several dialects declare."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from loom.dsl import (
    ANY,
    Attr,
    AttrDef,
    AttrDict,
    AttrKind,
    Clause,
    EnumDef,
    Example,
    Flags,
    FlagSetDef,
    FormatElement,
    Kw,
    OpDef,
    Operand,
    OptionalGroup,
    PredicateList,
    Pure,
    Ref,
    Refs,
    Result,
    ResultTypeList,
    SameType,
    SameTypeAt,
    SymbolRef,
    SymbolUse,
    TemplateParam,
    TypeConstraint,
    TypeOf,
    TypesOf,
    Violation,
    op,
)
from loom.ir import ScalarType

DIMENSION = EnumDef("dimension", ("x", "y", "z"))
MEMORY_SPACE = EnumDef(
    "memory_space",
    ("unknown", "global", "workgroup", "private", "constant", "host", "descriptor", "generic"),
)
SCOPE = EnumDef("scope", ("thread", "subgroup", "workgroup", "device", "system"))
ORDERING = EnumDef("ordering", ("relaxed", "acquire", "release", "acq_rel", "seq_cst"))
INT_PREDICATE = EnumDef(
    "predicate", ("eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge")
)
FLOAT_PREDICATE = EnumDef(
    "predicate",
    (
        "oeq",
        "ogt",
        "oge",
        "olt",
        "ole",
        "one",
        "ord",
        "ueq",
        "ugt",
        "uge",
        "ult",
        "ule",
        "une",
        "uno",
    ),
)
OVERFLOW = FlagSetDef("overflow", ("nsw", "nuw"))
FASTMATH = FlagSetDef(
    "fastmath", ("reassoc", "nnan", "ninf", "nsz", "arcp", "contract", "afn", "fast")
)

ABI = EnumDef(
    "abi",
    (
        "unknown",
        "object_function",
        "hal_kernel",
        "vm_module_function",
        "shader_entry_point",
        "wasm_function",
        "command_program",
    ),
)
"""The calling contracts an exported function or a target's entry points follow."""
LINKAGE = EnumDef("linkage", ("default", "dso_local"))
"""How an exported symbol links."""

SYNC_FORMAT = [TemplateParam("memory_space"), AttrDict()]
"""``<space> {ordering = o, scope = s}``: a synchronisation of a memory space (barriers)."""
SYNC_CLAUSE_FORMAT = [
    TemplateParam("memory_space"),
    Clause("scope", Attr("scope")),
    Clause("ordering", Attr("ordering")),
]
"""The clause spelling ``<space> scope(s) ordering(o)`` of a synchronisation, also parsed."""

# --------------------------------------------------------------------------- symbol fields
# Fields that functions, kernels, check cases and test ops define with one meaning and one
# spelling: the attribute and the format element that writes it.

VISIBILITY = AttrDef(
    "visibility", AttrKind.ENUM, enum=EnumDef("visibility", ("public",)), optional=True
)
VISIBILITY_FORMAT = OptionalGroup("visibility", Attr("visibility"))
"""``public``: the symbol is visible outside the module."""
RETAIN = AttrDef("retain", AttrKind.UNIT, optional=True)
RETAIN_FORMAT = OptionalGroup("retain", Kw("retain"))
"""``retain``: keep the symbol even when nothing uses it."""
TARGET = AttrDef("target", AttrKind.SYMBOL, optional=True)
TARGET_FORMAT = OptionalGroup("target", Clause("target", SymbolRef("target")))
"""``target(@t)``: the target record the symbol is built for."""
TARGET_USE = SymbolUse("target", ("record",))
RESULTS = Result("results", ANY, variadic=True)
RESULTS_FORMAT = OptionalGroup("results", Kw("->"), ResultTypeList("results"))
"""``-> (T, ...)``: the types of an op's ``results`` (none: no arrow)."""
PREDICATES = AttrDef("predicates", AttrKind.PREDICATES)
PREDICATED_FORMAT = [Refs("values"), PredicateList("predicates"), Kw(":"), TypesOf("results")]
"""``%a, %b [range(%a, 0, 8), ...] : T, U``: values, the facts stated about them, and the
types of the results that pass them on."""
WHERE = AttrDef("predicates", AttrKind.PREDICATES, optional=True)
WHERE_FORMAT = OptionalGroup("predicates", Kw("where"), PredicateList("predicates"))
"""``where [range(%n, 1, 64), ...]``: predicates promised on a symbol's declared values."""
"""The ``target`` attribute names a target record."""
CALLING_CONVENTION = AttrDef(
    "cc",
    AttrKind.ENUM,
    optional=True,
    enum=EnumDef("cc", ("host", "device", "initializer", "deinitializer")),
)
CALLING_CONVENTION_FORMAT = OptionalGroup("cc", Attr("cc"))
"""``host``, ``device``...: where and when a function runs."""


def flags_attr(flag_set: FlagSetDef) -> AttrDef:
    """An optional flags attribute named after its set."""
    return AttrDef(flag_set.name, AttrKind.FLAGS, flags=flag_set, optional=True)


def _flagged(flags: FlagSetDef | None, fmt: list[FormatElement]) -> list[FormatElement]:
    """The format ``fmt`` after the op name, with the optional ``<flags>`` first."""
    return ([Flags(flags.name)] if flags else []) + fmt


def _flag_attrs(flags: FlagSetDef | None) -> list[AttrDef]:
    """The optional flags attribute of ``flags``, if the op takes flags."""
    return [flags_attr(flags)] if flags else []


def _one_line(example: str) -> list[Example]:
    """A one-line example whose free values are declared from its trailing types."""
    return [Example(example, _args_of(example))]


def _same_type_op(
    name: str,
    doc: str,
    constraint: TypeConstraint,
    example: str,
    operands: tuple[str, ...],
    flags: FlagSetDef | None,
    traits: Iterable = (),
    **kw,
) -> OpDef:
    """``%r = NAME[<flags>] %a, %b, ... : T``: pure, every operand and the result of one type."""
    refs: list[FormatElement] = []
    for name_ in operands:
        refs += [Kw(","), Ref(name_)] if refs else [Ref(name_)]
    return op(
        name,
        doc,
        operands=[Operand(o, constraint) for o in operands],
        results=[Result("result", constraint)],
        attrs=_flag_attrs(flags),
        traits=[Pure(), SameType((*operands, "result")), *traits],
        format=_flagged(flags, [*refs, Kw(":"), TypeOf("result")]),
        examples=_one_line(example),
        **kw,
    )


def binary_op(
    name: str,
    doc: str,
    constraint: TypeConstraint,
    example: str,
    *,
    flags: FlagSetDef | None = None,
    traits: Iterable = (),
    **kw,
) -> OpDef:
    """``%r = NAME[<flags>] %lhs, %rhs : T`` with one type throughout."""
    return _same_type_op(name, doc, constraint, example, ("lhs", "rhs"), flags, traits, **kw)


def ternary_op(
    name: str,
    doc: str,
    constraint: TypeConstraint,
    example: str,
    *,
    flags: FlagSetDef | None = None,
) -> OpDef:
    """``%r = NAME[<flags>] %a, %b, %c : T``."""
    return _same_type_op(name, doc, constraint, example, ("a", "b", "c"), flags)


def unary_op(
    name: str,
    doc: str,
    constraint: TypeConstraint,
    example: str,
    *,
    flags: FlagSetDef | None = None,
) -> OpDef:
    """``%r = NAME[<flags>] %input : T``."""
    return _same_type_op(name, doc, constraint, example, ("input",), flags)


def cast_op(
    name: str,
    doc: str,
    source: TypeConstraint,
    target: TypeConstraint,
    example: str,
    *,
    verifier: Callable | None = None,
) -> OpDef:
    """``%r = NAME %input : S to T``."""
    return op(
        name,
        doc,
        operands=[Operand("input", source)],
        results=[Result("result", target)],
        traits=[Pure()],
        format=[Ref("input"), Kw(":"), TypeOf("input"), Kw("to"), TypeOf("result")],
        examples=_one_line(example),
        verifier=verifier,
    )


def constant_op(
    name: str, doc: str, result: TypeConstraint, examples: Iterable[Example], **kw
) -> OpDef:
    """``%c = NAME VALUE : T``: the literal ``value`` attribute as a value of the result type."""
    return op(
        name,
        doc,
        attrs=[AttrDef("value", AttrKind.NUMBER)],
        results=[Result("result", result)],
        traits=[Pure()],
        format=[Attr("value"), Kw(":"), TypeOf("result")],
        examples=examples,
        **kw,
    )


def assume_op(
    name: str,
    doc: str,
    values: TypeConstraint,
    results: TypeConstraint,
    examples: Iterable[Example],
) -> OpDef:
    """``%a2, %b2 = NAME %a, %b [facts] : T, U``: the values unchanged, carrying the facts."""
    return op(
        name,
        doc,
        operands=[Operand("values", values, variadic=True)],
        attrs=[PREDICATES],
        results=[Result("results", results, variadic=True)],
        traits=[Pure(), SameTypeAt("values", "results")],
        format=PREDICATED_FORMAT,
        examples=examples,
    )


def comparison_op(
    name: str,
    doc: str,
    predicate: EnumDef,
    constraint: TypeConstraint,
    example: str,
    *,
    flags: FlagSetDef | None = None,
) -> OpDef:
    """``%p = NAME[<flags>] pred, %lhs, %rhs : T`` producing ``i1`` (not printed)."""
    from loom.dsl import I1_T

    fmt = [Attr("predicate"), Kw(","), Ref("lhs"), Kw(","), Ref("rhs"), Kw(":"), TypeOf("lhs")]
    return op(
        name,
        doc,
        operands=[Operand("lhs", constraint), Operand("rhs", constraint)],
        results=[Result("result", I1_T)],
        attrs=[AttrDef("predicate", AttrKind.ENUM, enum=predicate), *_flag_attrs(flags)],
        traits=[Pure(), SameType(("lhs", "rhs"))],
        format=_flagged(flags, fmt),
        examples=_one_line(example),
    )


def width_rule(relation: str) -> Callable:
    """A cast verifier: result width must be ``wider``/``narrower``/``same`` than the input."""

    def check(op, ctx) -> list[Violation]:  # noqa: ANN001
        src, dst = op.operands[0].type, op.results[0].type
        if not (isinstance(src, ScalarType) and isinstance(dst, ScalarType)):
            return []
        ok = {
            "wider": dst.bit_width > src.bit_width,
            "narrower": dst.bit_width < src.bit_width,
            "same": dst.bit_width == src.bit_width,
        }[relation]
        if ok:
            return []
        want = {"wider": "wider than", "narrower": "narrower than", "same": "as wide as"}[relation]
        return [
            Violation("TYPE/004", f"result type {dst} must be {want} input type {src}", "result")
        ]

    return check


def _args_of(example: str) -> str:
    """Declare the free values of a one-line example from its trailing types.

    Shapes with one operand type after ``:`` (binary, unary, comparison) give every operand that
    type; casts use the source type.
    """
    head, _, types = example.rpartition(" : ")
    rhs = head.split(" = ", 1)[-1]
    names = [t.strip(",[]") for t in rhs.split() if t.startswith("%")]
    src_type = types.split(" to ")[0].strip()
    seen: list[str] = []
    for n in names:
        if n not in seen:
            seen.append(n)
    return ", ".join(f"{n}: {src_type}" for n in seen)
