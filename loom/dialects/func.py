"""func: helper functions callable from kernels."""

from loom.diagnostics import count_of
from loom.dialects._shapes import (
    ABI,
    CALLING_CONVENTION,
    CALLING_CONVENTION_FORMAT,
    RESULTS,
    RESULTS_FORMAT,
    RETAIN,
    RETAIN_FORMAT,
    TARGET,
    TARGET_FORMAT,
    TARGET_USE,
    VISIBILITY,
    VISIBILITY_FORMAT,
    WHERE,
    WHERE_FORMAT,
)
from loom.dsl import (
    ANY,
    BUFFER_T,
    FUNC_REF,
    I1_T,
    ArgSource,
    Attr,
    AttrDef,
    AttrKind,
    BlockArgs,
    Call,
    Clause,
    Declaration,
    DefersPlacement,
    Dictionary,
    EnumDef,
    Example,
    Glue,
    IsolatedFromAbove,
    Kw,
    MemoryEffect,
    NoReturn,
    Operand,
    OptionalGroup,
    Pure,
    PureWhen,
    Ref,
    Refs,
    RegionDef,
    RegionRef,
    RequiresAttr,
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
from loom.ir import DynamicDim, FuncRefType, FunctionType, ScalarType, ShapedType, Value
from loom.ir.types import declare_func_ref, same_type_along

declare_func_ref("func.ref")

PURITY = EnumDef("purity", ("pure",))
TEMPERATURE = EnumDef("temperature", ("hot", "cold"))
INLINE_POLICY = EnumDef("inline_policy", ("inline", "noinline"))
_CALL_MODIFIERS = [
    AttrDef("purity", AttrKind.ENUM, enum=PURITY, optional=True),
    AttrDef("temperature", AttrKind.ENUM, enum=TEMPERATURE, optional=True),
    AttrDef("inline_policy", AttrKind.ENUM, enum=INLINE_POLICY, optional=True),
]
_CALL_MODIFIER_FORMAT = [OptionalGroup(a.name, Attr(a.name)) for a in _CALL_MODIFIERS]

_CONTRACT = [
    TARGET,
    AttrDef("abi", AttrKind.ENUM, enum=ABI, optional=True, doc="the export ABI contract"),
    AttrDef("abi_attrs", AttrKind.DICT, optional=True, doc="parameters of the ABI contract"),
    AttrDef("export_symbol", AttrKind.STRING, optional=True),
    AttrDef("export_attrs", AttrKind.DICT, optional=True, doc="parameters of the export"),
    AttrDef(
        "export_metadata",
        AttrKind.DICT,
        optional=True,
        doc="metadata published with the export (public or exported functions only)",
    ),
]
SIGNATURE_ATTRS = [
    AttrDef("callee", AttrKind.SYMBOL),
    AttrDef("result_types", AttrKind.TYPE_ARRAY, optional=True, builder_keyword="results"),
    WHERE,
]
_CONTRACT_FORMAT = [
    TARGET_FORMAT,
    OptionalGroup(
        "abi",
        Clause("abi", Attr("abi"), OptionalGroup("abi_attrs", Kw(","), Dictionary("abi_attrs"))),
    ),
    OptionalGroup(
        "export_symbol",
        Clause(
            "export",
            Attr("export_symbol"),
            OptionalGroup("export_attrs", Kw(","), Dictionary("export_attrs")),
        ),
    ),
    OptionalGroup("export_metadata", Clause("export_metadata", Dictionary("export_metadata"))),
]


def signature_format(region: str) -> list:
    """``@name(%a: T, ...) [-> (R, ...)] [where [...]]`` over the entry args of ``region``."""
    return [
        SymbolRef("callee"),
        BlockArgs(region),
        OptionalGroup("result_types", Kw("->"), ResultTypeList("result_types")),
        WHERE_FORMAT,
    ]


_FLOAT_CLASSES = frozenset({"not_nan", "not_inf", "finite"})
"""Predicate kinds that classify floats; every other kind relates integers."""


def _verify_predicates(op, ctx) -> list[Violation]:  # noqa: ANN001
    """``where`` predicates constrain signature values, of the kind's type family."""
    preds = op.attributes.get("predicates") or ()
    if not preds:
        return []
    region = op.regions[0] if op.regions else None
    signature = {id(v) for v in region.blocks[0].args} if region and region.blocks else set()
    out: list[Violation] = []
    for i, p in enumerate(preds):
        for j, a in enumerate(p.args):
            if not isinstance(a, Value):
                continue
            field = f"predicates[{i}].arg[{j}]"
            if id(a) not in signature:
                out.append(
                    Violation(
                        "STRUCTURE/032",
                        f"'{op.name}' {field} is %{a.display_name}; required origin: "
                        "a function argument or named result",
                        "predicates",
                    )
                )
                continue
            t = a.type
            if p.kind in _FLOAT_CLASSES:
                ok, want = isinstance(t, ScalarType) and t.is_float, "floating-point scalar"
            else:
                ok = isinstance(t, ScalarType) and (t.is_integer or t.is_address)
                want = "integer, index, or offset scalar"
            if not ok:
                out.append(
                    Violation("TYPE/003", f"{field} has type {t}, expected {want}", "predicates")
                )
    return out


def _verify_export_metadata(op) -> list[Violation]:  # noqa: ANN001
    """Export metadata describes an export: only a public or exported function has one."""
    meta = op.attributes.get("export_metadata")
    if not meta or op.attributes.get("visibility") or op.attributes.get("export_symbol"):
        return []
    return [
        Violation(
            "STRUCTURE/014",
            f"'{op.name}' attribute 'export_metadata' has {count_of(len(meta), 'entry')}; "
            "expected zero "
            "entries unless the function is public or explicitly exported",
            "export_metadata",
        )
    ]


def _verify_signature(op, ctx) -> list[Violation]:  # noqa: ANN001
    """The rules func.def and func.decl share: predicates and export metadata."""
    return _verify_predicates(op, ctx) + _verify_export_metadata(op)


DEF = op(
    "func.def",
    "A function: a symbol with arguments, result types and a body ending in func.return.",
    attrs=[VISIBILITY, RETAIN, CALLING_CONVENTION, *_CALL_MODIFIERS, *_CONTRACT, *SIGNATURE_ATTRS],
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
        TARGET_USE,
        PureWhen("purity", "pure"),
        DefersPlacement("inline_policy", "inline"),
    ],
    format=[
        VISIBILITY_FORMAT,
        RETAIN_FORMAT,
        CALLING_CONVENTION_FORMAT,
        *_CALL_MODIFIER_FORMAT,
        *_CONTRACT_FORMAT,
        *signature_format("body"),
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
        Example(
            "func.def @first(%n: index, %x: tensor<[%n]xf32>) -> (tensor<[%n]xf32>) {\n"
            "  func.return %x : tensor<[%n]xf32>\n"
            "}\n\n"
            "func.def @caller(%m: index, %t: tensor<[%m]xf32>) -> (tensor<[%m]xf32>) {\n"
            "  %r = func.call @first(%m, %t) : (index, tensor<[%m]xf32>) -> (tensor<[%m]xf32>)\n"
            "  func.return %r : tensor<[%m]xf32>\n"
            "}",
            top_level=True,
        ),
    ],
    verifier=_verify_signature,
)


def _verify_call(op, ctx) -> list[Violation]:  # noqa: ANN001
    callee = ctx.symbol(op.attributes.get("callee"))
    if callee is None or "callee" not in callee.attributes or not callee.regions:
        return []
    name = op.attributes["callee"]
    if op.attributes.get("purity") == "pure" and callee.attributes.get("purity") != "pure":
        return [
            Violation(
                "STRUCTURE/034",
                f"a pure call needs a pure callee: @{name} is not declared pure "
                f"(the contract of @{name} is defined there)",
                "purity",
            )
        ]
    formals = callee.regions[0].blocks[0].args
    params = tuple(v.type for v in formals)
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
    # A callee type naming its own parameters (``tensor<[%n]xf32>``) is bound per call: it
    # names the values passed for them here.
    bind = {id(f): a for f, a in zip(formals, op.operands)}
    for i, (a, p) in enumerate(zip(args, params)):
        if not same_type_along(p, a, bind):
            return [
                Violation(
                    "TYPE/001",
                    f"argument {i} type {a} does not match parameter type {p}"
                    + _bound_note(p, formals, op.operands),
                    "operands",
                )
            ]
    got = tuple(v.type for v in op.results)
    if len(got) != len(results) or not all(
        same_type_along(r, g, bind) for r, g in zip(results, got)
    ):
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


def _bound_note(t, formals, actuals) -> str:  # noqa: ANN001
    """`` (with %n bound to %m)`` for the parameters a callee type names."""
    if not isinstance(t, ShapedType):
        return ""
    named = [d.value for d in t.dims if isinstance(d, DynamicDim)]
    if isinstance(t.encoding, Value):
        named.append(t.encoding)
    pairs = [
        f"%{f.display_name} bound to %{a.display_name}"
        for f, a in zip(formals, actuals)
        if any(f is v for v in named)
    ]
    return f" (with {', '.join(pairs)})" if pairs else ""


_CALL_SITE = [
    Glue(),
    Kw("("),
    Refs("operands"),
    Kw(")"),
    Kw(":"),
    Kw("("),
    TypesOf("operands"),
    Kw(")"),
    RESULTS_FORMAT,
]
"""``(%a, %b) : (T, U) -> (R)`` after the callee: the call's operands and its signature."""
_CALL_OPERANDS = Operand("operands", ANY, variadic=True)

CALL = op(
    "func.call",
    "Calls a function.",
    attrs=[*_CALL_MODIFIERS, AttrDef("callee", AttrKind.SYMBOL)],
    operands=[_CALL_OPERANDS],
    results=[RESULTS],
    traits=[SymbolUse("callee", ("func",)), Call("callee")],
    format=[
        *_CALL_MODIFIER_FORMAT,
        SymbolRef("callee"),
        *_CALL_SITE,
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

IMPORT_POLICY = EnumDef("import_policy", ("optional",))

DECL = op(
    "func.decl",
    "A function defined elsewhere (an import; in the interpreter, a Python function bound "
    "with launch(functions=...)): a callable signature without a body.",
    attrs=[
        VISIBILITY,
        RETAIN,
        AttrDef(
            "import_policy",
            AttrKind.ENUM,
            enum=IMPORT_POLICY,
            optional=True,
            doc="linking may leave the import unresolved (test with func.import.resolved)",
        ),
        AttrDef("import_module", AttrKind.STRING, optional=True, doc="module to import from"),
        AttrDef("import_symbol", AttrKind.STRING, optional=True, doc="name in that module"),
        AttrDef(
            "import_metadata",
            AttrKind.DICT,
            optional=True,
            doc="metadata the import carries to the linker",
        ),
        CALLING_CONVENTION,
        *_CALL_MODIFIERS,
        *_CONTRACT,
        *SIGNATURE_ATTRS,
    ],
    regions=[
        RegionDef(
            "signature",
            arg_source=ArgSource.VALUES,
            arg_keyword="args",
            doc="only the entry arguments (the signature values); no ops",
        )
    ],
    traits=[
        Symbol("callee", kind="func"),
        Declaration(),
        IsolatedFromAbove(),
        TARGET_USE,
        PureWhen("purity", "pure"),
        RequiresAttr("import_symbol", "import_module"),
    ],
    format=[
        VISIBILITY_FORMAT,
        RETAIN_FORMAT,
        OptionalGroup("import_policy", Attr("import_policy")),
        OptionalGroup(
            "import_module",
            Clause(
                "import",
                Attr("import_module"),
                OptionalGroup("import_symbol", Kw(","), Attr("import_symbol")),
            ),
        ),
        OptionalGroup("import_metadata", Clause("import_metadata", Dictionary("import_metadata"))),
        CALLING_CONVENTION_FORMAT,
        *_CALL_MODIFIER_FORMAT,
        *_CONTRACT_FORMAT,
        *signature_format("signature"),
    ],
    builder="decl",
    examples=[
        Example(
            'func.decl import("mathlib", "fast_tanh") @tanh(%x: f32) -> (f32)\n\n'
            "func.def @squash(%x: f32) -> (f32) {\n"
            "  %y = func.call @tanh(%x) : (f32) -> (f32)\n"
            "  func.return %y : f32\n"
            "}",
            top_level=True,
        ),
        Example("func.decl public optional hot @probe(%n: index)", top_level=True),
        Example(
            'func.decl public import("runtime", "callback") import_metadata({"runtime.revision" '
            '= u64(3)}) export_metadata({"help.summary" = "Progress callback", "wire.tag" = '
            'bytes("00feff")}) @progress(%done: index)',
            top_level=True,
        ),
    ],
    verifier=_verify_signature,
)


def signature_of(callee) -> FunctionType | None:  # noqa: ANN001
    """The ``(args) -> (results)`` type of a func.def or func.decl op (None for others)."""
    if callee.name not in (DEF.name, DECL.name) or not callee.regions:
        return None
    if not callee.regions[0].blocks:
        return None
    params = tuple(v.type for v in callee.regions[0].blocks[0].args)
    return FunctionType(params, tuple(callee.attributes.get("result_types", ())))


NULL = op(
    "func.null",
    "A null function reference of the given type (calling it is a runtime error).",
    results=[Result("result", FUNC_REF)],
    traits=[Pure()],
    format=[Kw(":"), TypeOf("result")],
    examples=[Example("%none = func.null : func.ref<(i32) -> (i32)>")],
)

COMPARE_NULL = op(
    "func.compare.null",
    "True when a function reference is null.",
    operands=[Operand("function", FUNC_REF)],
    results=[Result("result", I1_T)],
    traits=[Pure()],
    format=[Ref("function"), Kw(":"), TypeOf("function")],
    examples=[
        Example(
            "%is_null = func.compare.null %f : func.ref<(i32) -> (i32)>",
            args="%f: func.ref<(i32) -> (i32)>",
        )
    ],
)


def _verify_address(op, ctx) -> list[Violation]:  # noqa: ANN001
    callee = ctx.symbol(op.attributes.get("callee"))
    ref = op.results[0].type if op.results else None
    if callee is None or not isinstance(ref, FuncRefType):
        return []
    have = signature_of(callee)
    if have is not None and have != ref.signature:
        return [
            Violation(
                "TYPE/001",
                f"result type {ref} does not match the signature {have} of "
                f"@{op.attributes['callee']}",
                "result",
            )
        ]
    return []


ADDRESS = op(
    "func.address",
    "A function reference to a func.def or func.decl (its signature must match exactly).",
    attrs=[AttrDef("callee", AttrKind.SYMBOL, doc="the function referred to")],
    results=[Result("result", FUNC_REF)],
    traits=[Pure(), SymbolUse("callee", ("func",))],
    format=[SymbolRef("callee"), Kw(":"), TypeOf("result")],
    examples=[
        Example(
            "func.def @inc(%x: i32) -> (i32) {\n"
            "  %one = scalar.constant 1 : i32\n"
            "  %y = scalar.addi %x, %one : i32\n"
            "  func.return %y : i32\n"
            "}\n\n"
            "func.def @apply(%x: i32) -> (i32) {\n"
            "  %f = func.address @inc : func.ref<(i32) -> (i32)>\n"
            "  %y = func.call.indirect %f(%x) : (i32) -> (i32)\n"
            "  func.return %y : i32\n"
            "}",
            top_level=True,
        )
    ],
    verifier=_verify_address,
)


def _verify_ref_cast(op, ctx) -> list[Violation]:  # noqa: ANN001
    src, dst = op.operands[0].type, op.results[0].type
    if not (FUNC_REF(src) and FUNC_REF(dst)):
        return []  # the constraints report it
    if src.yieldable:
        return [
            Violation(
                "TYPE/003",
                f"operand 'source' has type {src}, expected synchronous func.ref",
                "source",
            )
        ]
    if not dst.yieldable:
        return [
            Violation(
                "TYPE/004", f"result 'result' has type {dst}, expected yieldable func.ref", "result"
            )
        ]
    if src.signature != dst.signature:
        return [
            Violation(
                "TYPE/001",
                f"source type {src} and result type {dst} have different signatures",
                "result",
            )
        ]
    return []


REF_CAST = op(
    "func.ref.cast",
    "Widens a synchronous function reference to a yieldable one with the same signature "
    "(the same function).",
    operands=[Operand("source", FUNC_REF)],
    results=[Result("result", FUNC_REF)],
    traits=[Pure()],
    format=[Ref("source"), Kw(":"), TypeOf("source"), Kw("to"), TypeOf("result")],
    builder="ref_cast",
    examples=[
        Example(
            "%y = func.ref.cast %f : func.ref<(i32) -> (i32)> to "
            "func.ref<yieldable (i32) -> (i32)>",
            args="%f: func.ref<(i32) -> (i32)>",
        )
    ],
    verifier=_verify_ref_cast,
    verifier_cacheable=True,
)


def _verify_call_indirect(op, ctx) -> list[Violation]:  # noqa: ANN001
    ref = op.operands[0].type if op.operands else None
    if not FUNC_REF(ref):
        return []  # the constraint reports it
    sig = ref.signature
    args = [v.type for v in op.operands[1:]]
    results = [v.type for v in op.results]
    out: list[Violation] = []
    if len(args) != len(sig.inputs):
        out.append(
            Violation(
                "STRUCTURE/001",
                f"func.call.indirect passes {len(args)} arguments to a function taking "
                f"{len(sig.inputs)}",
                "operands",
            )
        )
    if len(results) != len(sig.results):
        out.append(
            Violation(
                "STRUCTURE/002",
                f"func.call.indirect has {len(results)} results but the function returns "
                f"{len(sig.results)}",
                "results",
            )
        )
    for i, (a, p) in enumerate(zip(args, sig.inputs)):
        if a != p:
            out.append(
                Violation(
                    "TYPE/001",
                    f"operand {i} has type {a} but function argument {i} is {p}",
                    "operands",
                )
            )
    for i, (r, p) in enumerate(zip(results, sig.results)):
        if r != p:
            out.append(
                Violation(
                    "TYPE/001",
                    f"result {i} has type {r} but function result {i} is {p}",
                    "results",
                )
            )
    return out


CALL_INDIRECT = op(
    "func.call.indirect",
    "Calls the function a function reference names (each workitem its own function).",
    operands=[Operand("target", FUNC_REF), _CALL_OPERANDS],
    results=[RESULTS],
    traits=[MemoryEffect(reads=True, writes=True)],
    format=[
        Ref("target"),
        *_CALL_SITE,
    ],
    builder="call_indirect",
    examples=[
        Example(
            "%y = func.call.indirect %f(%x) : (i32) -> (i32)",
            args="%f: func.ref<(i32) -> (i32)>, %x: i32",
        )
    ],
    verifier=_verify_call_indirect,
    verifier_cacheable=True,
)

IMPORT_RESOLVED = op(
    "func.import.resolved",
    "True when the function is available: a definition, or a declaration the host bound.",
    attrs=[AttrDef("callee", AttrKind.SYMBOL, doc="the function asked about")],
    results=[Result("result", I1_T)],
    traits=[Pure(), SymbolUse("callee", ("func",))],
    format=[SymbolRef("callee")],
    examples=[
        Example(
            'func.decl optional import("ext") @feature(%x: i32) -> (i32)\n\n'
            "func.def @has_feature() -> (i1) {\n"
            "  %ok = func.import.resolved @feature\n"
            "  func.return %ok : i1\n"
            "}",
            top_level=True,
        )
    ],
)

OPS = (
    DEF,
    DECL,
    CALL,
    CALL_INDIRECT,
    RETURN,
    FAIL,
    NULL,
    COMPARE_NULL,
    ADDRESS,
    REF_CAST,
    IMPORT_RESOLVED,
)
