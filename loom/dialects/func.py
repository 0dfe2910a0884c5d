"""func: helper functions callable from kernels."""

from loom.dsl import (
    ANY,
    BUFFER_T,
    ArgSource,
    Attr,
    AttrDef,
    AttrKind,
    BlockArgs,
    Call,
    Clause,
    EnumDef,
    Example,
    Glue,
    IsolatedFromAbove,
    Kw,
    NoReturn,
    Operand,
    OptionalGroup,
    PredicateList,
    PureWhen,
    Ref,
    Refs,
    RegionDef,
    RegionRef,
    Result,
    ResultTypeList,
    Symbol,
    SymbolRef,
    SymbolUse,
    Terminator,
    TypeOf,
    TypesOf,
    Violation,
    op,
)

PURITY = EnumDef("purity", ("pure",))
TEMPERATURE = EnumDef("temperature", ("hot", "cold"))
INLINE_POLICY = EnumDef("inline_policy", ("inline", "noinline"))
_CALL_MODIFIERS = [
    AttrDef("purity", AttrKind.ENUM, enum=PURITY, optional=True),
    AttrDef("temperature", AttrKind.ENUM, enum=TEMPERATURE, optional=True),
    AttrDef("inline_policy", AttrKind.ENUM, enum=INLINE_POLICY, optional=True),
]
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
_CALL_MODIFIER_FORMAT = [OptionalGroup(a.name, Attr(a.name)) for a in _CALL_MODIFIERS]

DEF = op(
    "func.def",
    "A function: a symbol with arguments, result types and a body ending in func.return.",
    attrs=[
        AttrDef(
            "visibility", AttrKind.ENUM, enum=EnumDef("visibility", ("public",)), optional=True
        ),
        AttrDef("retain", AttrKind.UNIT, optional=True),
        AttrDef(
            "cc",
            AttrKind.ENUM,
            optional=True,
            enum=EnumDef("cc", ("host", "device", "initializer", "deinitializer")),
        ),
        *_CALL_MODIFIERS,
        AttrDef("target", AttrKind.SYMBOL, optional=True),
        AttrDef("abi", AttrKind.ENUM, enum=ABI, optional=True, doc="the export ABI contract"),
        AttrDef("export_symbol", AttrKind.STRING, optional=True),
        AttrDef("callee", AttrKind.SYMBOL),
        AttrDef("result_types", AttrKind.TYPE_ARRAY, optional=True, builder_keyword="results"),
        AttrDef("predicates", AttrKind.PREDICATES, optional=True),
    ],
    regions=[
        RegionDef(
            "body",
            terminator="func.return",
            arg_source=ArgSource.VALUES,
            arg_keyword="args",
            yields="result_types",
            single_block=False,
        )
    ],
    traits=[
        Symbol("callee", kind="func"),
        IsolatedFromAbove(),
        SymbolUse("target", ("record",)),
        PureWhen("purity", "pure"),
    ],
    format=[
        OptionalGroup("visibility", Attr("visibility")),
        OptionalGroup("retain", Kw("retain")),
        OptionalGroup("cc", Attr("cc")),
        *_CALL_MODIFIER_FORMAT,
        OptionalGroup("target", Clause("target", SymbolRef("target"))),
        OptionalGroup("abi", Clause("abi", Attr("abi"))),
        OptionalGroup("export_symbol", Clause("export", Attr("export_symbol"))),
        SymbolRef("callee"),
        BlockArgs("body"),
        OptionalGroup("result_types", Kw("->"), ResultTypeList("result_types")),
        OptionalGroup("predicates", Kw("where"), PredicateList("predicates")),
        RegionRef("body"),
    ],
    examples=[
        Example(
            "func.def pure @twice(%x: index) -> (index) {\n"
            "  %y = index.add %x, %x : index\n"
            "  func.return %y : index\n"
            "}",
            top_level=True,
        ),
        Example(
            'func.def public abi(object_function) export("entry") @entry() {\n  func.return\n}',
            top_level=True,
        ),
    ],
)


def _verify_call(op, ctx) -> list[Violation]:  # noqa: ANN001
    callee = ctx.symbol(op.attributes.get("callee"))
    if callee is None or "callee" not in callee.attributes or not callee.regions:
        return []
    params = tuple(v.type for v in callee.regions[0].blocks[0].args)
    results = tuple(callee.attributes.get("result_types", ()))
    args = tuple(v.type for v in op.operands)
    if len(args) != len(params):
        return [
            Violation(
                "STRUCTURE/013",
                f"call passes {len(args)} arguments to "
                f"@{op.attributes['callee']}, which takes {len(params)}",
                "operands",
            )
        ]
    for i, (a, p) in enumerate(zip(args, params)):
        if a != p:
            return [
                Violation(
                    "TYPE/001",
                    f"argument {i} type {a} does not match parameter type {p}",
                    "operands",
                )
            ]
    got = tuple(v.type for v in op.results)
    if got != results:
        return [
            Violation(
                "TYPE/001",
                f"call result types ({', '.join(map(str, got))}) do not "
                f"match @{op.attributes['callee']}'s "
                f"({', '.join(map(str, results))})",
                "results",
            )
        ]
    return []


CALL = op(
    "func.call",
    "Calls a function.",
    attrs=[*_CALL_MODIFIERS, AttrDef("callee", AttrKind.SYMBOL)],
    operands=[Operand("operands", ANY, variadic=True)],
    results=[Result("results", ANY, variadic=True)],
    traits=[SymbolUse("callee", ("func",)), Call("callee")],
    format=[
        *_CALL_MODIFIER_FORMAT,
        SymbolRef("callee"),
        Glue(),
        Kw("("),
        Refs("operands"),
        Kw(")"),
        Kw(":"),
        Kw("("),
        TypesOf("operands"),
        Kw(")"),
        OptionalGroup("results", Kw("->"), ResultTypeList("results")),
    ],
    examples=[
        Example(
            "func.def pure @twice(%x: index) -> (index) {\n"
            "  %y = index.add %x, %x : index\n"
            "  func.return %y : index\n"
            "}\n\n"
            "func.def @caller(%a: index) -> (index) {\n"
            "  %b = func.call pure @twice(%a) : (index) -> (index)\n"
            "  func.return %b : index\n"
            "}",
            top_level=True,
        )
    ],
    verifier=_verify_call,
)

RETURN = op(
    "func.return",
    "Ends a function body, returning values.",
    operands=[Operand("operands", ANY, variadic=True)],
    traits=[Terminator(values="operands")],
    format=[Refs("operands"), OptionalGroup("operands", Kw(":"), TypesOf("operands"))],
    examples=[
        Example(
            "func.def @pair(%a: i32, %b: f32) -> (i32, f32) {\n  func.return %a, %b : i32, f32\n}",
            top_level=True,
        )
    ],
)

STATUS_CODE = EnumDef(
    "status",
    (
        "cancelled",
        "unknown",
        "invalid_argument",
        "deadline_exceeded",
        "not_found",
        "already_exists",
        "permission_denied",
        "resource_exhausted",
        "failed_precondition",
        "aborted",
        "out_of_range",
        "unimplemented",
        "internal",
        "unavailable",
        "data_loss",
        "unauthenticated",
        "incompatible",
    ),
)

FAIL = op(
    "func.fail",
    "Ends the invocation with a non-OK status and a diagnostic message (bytes of a buffer).",
    operands=[Operand("message", BUFFER_T, doc="diagnostic message bytes (UTF-8)")],
    attrs=[AttrDef("status", AttrKind.ENUM, enum=STATUS_CODE, doc="the failure status")],
    traits=[Terminator(), NoReturn()],
    format=[Attr("status"), Kw(","), Ref("message"), Kw(":"), TypeOf("message")],
    examples=[
        Example(
            "func.def @check(%ok: i1, %message: buffer) {\n"
            "  cfg.cond_br %ok, ^fine, ^bad\n"
            "^fine:\n"
            "  func.return\n"
            "^bad:\n"
            "  func.fail invalid_argument, %message : buffer\n"
            "}",
            top_level=True,
        )
    ],
)

OPS = (DEF, CALL, RETURN, FAIL)
