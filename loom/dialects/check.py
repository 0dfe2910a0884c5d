"""check: executable test cases (cases, parameters, generated inputs, oracles, expectations).

Case values are scalars and value-semantic ``tensor<...>`` values, which the runner
(:mod:`loom.check`) materialises as dense row-major NumPy arrays. Providers are dotted names
written bare inside ``<...>`` (``check.requires<target.feature> {feature = "x"}``); their
parameters are a dictionary attribute ``attrs``.
"""

import math

from loom.dialects._shapes import VISIBILITY, VISIBILITY_FORMAT
from loom.dsl import (
    INTEGER,
    INTEGER_OR_ADDRESS,
    SCALAR,
    SCALAR_OR_TENSOR,
    TENSOR,
    Attr,
    AttrDef,
    AttrKind,
    Clause,
    Dictionary,
    EnumDef,
    Example,
    HasAncestor,
    IndexList,
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
    ResultTypeList,
    SameType,
    Symbol,
    SymbolRef,
    SymbolUse,
    TemplateParam,
    Terminator,
    TypeOf,
    TypesOf,
    Violation,
    op,
)
from loom.ir import INDEX

_IN_CASE = HasAncestor("check.case")
_NAME = AttrDef("param_name", AttrKind.STRING, optional=True, doc="The parameter's report name.")
_NAME_FMT = OptionalGroup("param_name", Clause("name", Attr("param_name")))
_PROVIDER = AttrDef("provider", AttrKind.NAME, doc="The provider looked up by name.")
_ATTRS = AttrDef("attrs", AttrKind.DICT, optional=True, doc="The provider's parameters.")
_CASE_ARGS = "%m: index"

CASE = op(
    "check.case",
    "An executable test case: a body of inputs, invocations and expectations run per sample.",
    attrs=[VISIBILITY, AttrDef("case_symbol", AttrKind.SYMBOL)],
    regions=[RegionDef("body", terminator="check.return")],
    traits=[Symbol("case_symbol", kind="record"), IsolatedFromAbove()],
    format=[
        VISIBILITY_FORMAT,
        SymbolRef("case_symbol"),
        RegionRef("body"),
    ],
    builder="case",
    examples=[
        Example(
            "check.case public @smoke {\n"
            "  %x = check.literal value(42) : i32\n"
            "  check.expect.equal actual(%x) expected(%x) : i32\n"
            "  check.return\n"
            "}",
            top_level=True,
        ),
        Example("check.case @empty {\n  check.return\n}", top_level=True),
    ],
)

RETURN = op(
    "check.return",
    "Ends a check case body.",
    traits=[Terminator(), _IN_CASE],
    builder="return_",
    examples=[Example("check.case @empty {\n  check.return\n}", top_level=True)],
)

_SMOKE = "check.case @c {{\n  {}\n  check.return\n}}"


def _in_case(text: str) -> Example:
    return Example(_SMOKE.format(text.replace("\n", "\n  ")), top_level=True)


REQUIRES = op(
    "check.requires",
    "Skips the case unless the named provider reports the requirement satisfied.",
    attrs=[_PROVIDER, _ATTRS],
    traits=[_IN_CASE],
    format=[TemplateParam("provider"), Dictionary("attrs")],
    builder="requires",
    examples=[
        _in_case('check.requires<target.feature> {feature = "amdgpu.gfx11"}'),
        _in_case("check.requires<target.feature>"),
    ],
)

SKIP_IF = op(
    "check.skip_if",
    "Skips the case when the named provider reports the predicate satisfied.",
    attrs=[_PROVIDER, _ATTRS, AttrDef("reason", AttrKind.STRING, optional=True)],
    traits=[_IN_CASE],
    format=[
        TemplateParam("provider"),
        Dictionary("attrs"),
        OptionalGroup("reason", Clause("reason", Attr("reason"))),
    ],
    builder="skip_if",
    examples=[
        _in_case(
            'check.skip_if<device.memory> {max_bytes = 1073741824} reason("fixture too large")'
        )
    ],
)


def _verify_range(op, ctx) -> list[Violation]:  # noqa: ANN001
    a = op.attributes
    if a.get("policy") == "po2":
        if not op.results[0].type.is_integer and not op.results[0].type.is_address:
            return [Violation("TYPE/005", "po2 ranges are integral", "policy")]
        if not isinstance(a.get("lower"), int) or a["lower"] <= 0:
            return [Violation("TYPE/005", "a po2 range needs a lower bound > 0", "lower")]
    step = a.get("step")
    if step is not None and step <= 0:
        return [Violation("TYPE/005", "a range step must be > 0", "step")]
    if a.get("upper", 0) < a.get("lower", 0):
        return [Violation("TYPE/005", "a range's upper bound is below its lower bound", "upper")]
    return []


PARAM_RANGE = op(
    "check.param.range",
    "A case parameter sweeping a linear or power-of-two range of scalar values.",
    results=[Result("result", SCALAR)],
    attrs=[
        AttrDef("policy", AttrKind.ENUM, enum=EnumDef("policy", ("linear", "po2"))),
        AttrDef("lower", AttrKind.NUMBER),
        AttrDef("upper", AttrKind.NUMBER),
        AttrDef("step", AttrKind.FLOAT, optional=True),
        _NAME,
    ],
    traits=[_IN_CASE],
    format=[
        Attr("policy"),
        Clause("bounds", Attr("lower"), Kw("to"), Attr("upper")),
        OptionalGroup("step", Clause("step", Attr("step"))),
        _NAME_FMT,
        Kw(":"),
        TypeOf("result"),
    ],
    builder="range",
    verifier=_verify_range,
    examples=[
        _in_case('%m = check.param.range po2 bounds(1 to 64) name("m") : index'),
        _in_case("%a = check.param.range linear bounds(0.0 to 1.0) step(0.25) : f32"),
    ],
)

PARAM_CHOICE = op(
    "check.param.choice",
    "A case parameter taking each listed integer value in order.",
    results=[Result("result", INTEGER_OR_ADDRESS)],
    attrs=[AttrDef("values", AttrKind.I64_ARRAY), _NAME],
    traits=[_IN_CASE],
    format=[Clause("values", Attr("values")), _NAME_FMT, Kw(":"), TypeOf("result")],
    builder="choice",
    examples=[_in_case("%k = check.param.choice values([16, 24, 32, 64]) : index")],
)

PARAM_SEED = op(
    "check.param.seed",
    "A case parameter sweeping ``count`` consecutive seeds starting at ``base``.",
    results=[Result("result", INTEGER)],
    attrs=[AttrDef("base", AttrKind.INT), AttrDef("count", AttrKind.INT), _NAME],
    traits=[_IN_CASE],
    format=[
        Clause("base", Attr("base")),
        Clause("count", Attr("count")),
        _NAME_FMT,
        Kw(":"),
        TypeOf("result"),
    ],
    builder="seed",
    examples=[_in_case("%seed = check.param.seed base(1282371437) count(32) : i64")],
)


def _literals_match(*fields: str):  # noqa: ANN202
    """A verifier: number attributes ``fields`` are integers when the result's element type
    is integral, and the result tensor's dynamic dimensions are index values."""

    def verify(op, ctx) -> list[Violation]:  # noqa: ANN001
        t = op.results[0].type
        elem = getattr(t, "element_type", t)
        integral = getattr(elem, "is_integer", False) or getattr(elem, "is_address", False)
        out = []
        for f in fields:
            v = op.attributes.get(f)
            if integral and isinstance(v, float):
                out.append(Violation("TYPE/005", f"'{f}' {v} is not an integer of type {t}", f))
        for d in getattr(t, "dims", ()):
            v = getattr(d, "value", None)
            if v is not None and v.type is not INDEX:
                out.append(
                    Violation(
                        "TYPE/003",
                        f"dynamic dimension %{v.display_name} of {t} is {v.type}; expected index",
                        "result",
                    )
                )
        return out

    return verify


_verify_literal = _literals_match("value")
_VALUE = AttrDef("value", AttrKind.NUMBER)
_VALUE_FORMAT = [Clause("value", Attr("value")), Kw(":"), TypeOf("result")]
"""``value(42) : T``: a number given as every element of the result (or as the scalar)."""


LITERAL = op(
    "check.literal",
    "A scalar constant inside a case.",
    results=[Result("result", SCALAR)],
    attrs=[_VALUE],
    traits=[Pure(), _IN_CASE],
    format=_VALUE_FORMAT,
    builder="literal",
    verifier=_verify_literal,
    examples=[_in_case("%s = check.literal value(42) : i32")],
)

IOTA = op(
    "check.generate.iota",
    "A tensor whose element k (flat row-major) is offset + (k mod period) * step.",
    results=[Result("result", TENSOR)],
    attrs=[
        AttrDef("offset", AttrKind.NUMBER),
        AttrDef("step", AttrKind.NUMBER),
        AttrDef("period", AttrKind.INT, optional=True),
    ],
    traits=[Pure(), _IN_CASE],
    format=[
        Clause("offset", Attr("offset")),
        Clause("step", Attr("step")),
        OptionalGroup("period", Clause("period", Attr("period"))),
        Kw(":"),
        TypeOf("result"),
    ],
    builder="iota",
    verifier=_literals_match("offset", "step"),
    examples=[
        _in_case("%v = check.generate.iota offset(0) step(1) : tensor<8xi32>"),
        _in_case("%r = check.generate.iota offset(0) step(1) period(4) : tensor<16xi32>"),
    ],
)

FILL = op(
    "check.generate.fill",
    "A tensor with every element equal to ``value``.",
    results=[Result("result", TENSOR)],
    attrs=[_VALUE],
    traits=[Pure(), _IN_CASE],
    format=_VALUE_FORMAT,
    builder="fill",
    verifier=_literals_match("value"),
    examples=[_in_case("%v = check.generate.fill value(17) : tensor<4x4xi32>")],
)

UNIFORM = op(
    "check.generate.random.uniform",
    "A tensor of uniform random elements in [lower, upper] drawn from a seeded generator.",
    operands=[Operand("seed", INTEGER)],
    results=[Result("result", TENSOR)],
    attrs=[AttrDef("lower", AttrKind.NUMBER), AttrDef("upper", AttrKind.NUMBER)],
    traits=[Pure(), _IN_CASE],
    format=[
        Clause("seed", Ref("seed")),
        Clause("range", Attr("lower"), Kw("to"), Attr("upper")),
        Kw(":"),
        TypeOf("result"),
    ],
    builder="uniform",
    verifier=_literals_match("lower", "upper"),
    examples=[
        _in_case(
            "%s = check.literal value(7) : i64\n"
            "%v = check.generate.random.uniform seed(%s) range(-1.0 to 1.0) : tensor<16xf32>"
        )
    ],
)

READ_NPY = op(
    "check.file.read.npy",
    "A tensor read from a NumPy ``.npy`` file (path relative to the module's directory).",
    results=[Result("result", TENSOR)],
    attrs=[AttrDef("path", AttrKind.STRING)],
    traits=[_IN_CASE],
    format=[Clause("path", Attr("path")), Kw(":"), TypeOf("result")],
    builder="file_read_npy",
    verifier=_literals_match(),
    examples=[_in_case('%v = check.file.read.npy path("fixtures/input.npy") : tensor<16xf32>')],
)

WRITE_NPY = op(
    "check.file.write.npy",
    "Writes a value to a ``.npy`` file after the expectations (always or only on failure).",
    operands=[Operand("value", TENSOR)],
    attrs=[
        AttrDef(
            "mode",
            AttrKind.ENUM,
            enum=EnumDef("mode", ("always", "on_failure")),
            optional=True,
        ),
        AttrDef("path", AttrKind.STRING),
    ],
    traits=[_IN_CASE],
    format=[
        Clause("value", Ref("value")),
        Clause("path", Attr("path")),
        OptionalGroup("mode", Clause("mode", Attr("mode"))),
        Kw(":"),
        TypeOf("value"),
    ],
    builder="file_write_npy",
    examples=[
        _in_case(
            "%v = check.generate.fill value(1.0) : tensor<4xf32>\n"
            'check.file.write.npy value(%v) path("out/v.npy") mode(always) : tensor<4xf32>'
        )
    ],
)


def _verify_view(op, ctx) -> list[Violation]:  # noqa: ANN001
    out = _literals_match()(op, ctx)
    start = op.attributes.get("byte_offset", 0)
    if start < 0:
        return [*out, Violation("TYPE/005", f"'byte_offset' {start} is negative", "byte_offset")]
    src, dst = op.operands[0].type, op.results[0].type
    sizes = (getattr(src, "static_shape", (None,)), getattr(dst, "static_shape", (None,)))
    if all(None not in s for s in sizes):
        have = math.prod(sizes[0]) * src.element_type.byte_size
        need = start + math.prod(sizes[1]) * dst.element_type.byte_size
        if need > have:
            out.append(
                Violation(
                    "TYPE/005",
                    f"'byte_offset' {start}: the view needs bytes up to {need}, the source "
                    f"{src} has {have}",
                    "byte_offset",
                )
            )
    return out


TENSOR_VIEW = op(
    "check.tensor.view",
    "A dense typed alias of a tensor's storage starting ``byte_offset`` bytes in.",
    operands=[Operand("source", TENSOR)],
    results=[Result("result", TENSOR)],
    attrs=[AttrDef("byte_offset", AttrKind.INT)],
    traits=[Pure(), _IN_CASE],
    format=[
        Ref("source"),
        Clause("offset", Attr("byte_offset")),
        Kw(":"),
        TypeOf("source"),
        Kw("->"),
        TypeOf("result"),
    ],
    builder="view",
    verifier=_verify_view,
    examples=[
        _in_case(
            "%p = check.generate.fill value(0) : tensor<144xi8>\n"
            "%w = check.tensor.view %p offset(16) : tensor<144xi8> -> tensor<32xi32>"
        )
    ],
)

ORACLE_CALL = op(
    "check.oracle.call",
    "Computes expected values with a named oracle provider (``reference.*`` run in NumPy).",
    operands=[Operand("inputs", SCALAR_OR_TENSOR, variadic=True)],
    results=[Result("results", SCALAR_OR_TENSOR, variadic=True)],
    attrs=[_PROVIDER, _ATTRS, AttrDef("callee", AttrKind.SYMBOL)],
    traits=[_IN_CASE],
    format=[
        TemplateParam("provider"),
        Dictionary("attrs"),
        Clause("callee", SymbolRef("callee")),
        Clause("inputs", Refs("inputs")),
        Kw(":"),
        Kw("("),
        TypesOf("inputs"),
        Kw(")"),
        Kw("->"),
        ResultTypeList("results"),
    ],
    builder="call",
    examples=[
        _in_case(
            "%a = check.generate.fill value(2.0) : tensor<4xf32>\n"
            "%e = check.oracle.call<reference.copy> callee(@copy) inputs(%a)"
            " : (tensor<4xf32>) -> (tensor<4xf32>)"
        ),
        _in_case(
            "%a = check.generate.fill value(2) : tensor<2x2xi32>\n"
            '%c = check.oracle.call<reference.matmul> {accumulator = "i32"} callee(@mm)'
            " inputs(%a, %a) : (tensor<2x2xi32>, tensor<2x2xi32>) -> (tensor<2x2xi32>)"
        ),
    ],
)


def _verify_tolerance(op, ctx) -> list[Violation]:  # noqa: ANN001
    return [
        Violation("TYPE/005", f"'{f}' {op.attributes[f]} is negative", f)
        for f in ("atol", "rtol")
        if op.attributes.get(f, 0.0) < 0
    ]


def _binary(name, doc, builder, extra_attrs=(), extra_fmt=(), example="", verifier=None):  # noqa: ANN001, ANN202
    return op(
        name,
        doc,
        operands=[Operand("actual", SCALAR_OR_TENSOR), Operand("expected", SCALAR_OR_TENSOR)],
        attrs=list(extra_attrs),
        traits=[_IN_CASE, SameType(("actual", "expected"))],
        format=[
            Clause("actual", Ref("actual")),
            Clause("expected", Ref("expected")),
            *extra_fmt,
            Kw(":"),
            TypeOf("actual"),
        ],
        builder=builder,
        verifier=verifier,
        examples=[_in_case(example)],
    )


_PAIR = "%a = check.generate.iota offset(0) step(1) : tensor<4xf32>\n"
EXPECT_EQUAL = _binary(
    "check.expect.equal",
    "Expects equal values (floats by IEEE ==, NaN never equal; other types exactly).",
    "equal",
    example=_PAIR + "check.expect.equal actual(%a) expected(%a) : tensor<4xf32>",
)
EXPECT_BITWISE = _binary(
    "check.expect.bitwise",
    "Expects identical storage bytes.",
    "bitwise",
    example=_PAIR + "check.expect.bitwise actual(%a) expected(%a) : tensor<4xf32>",
)
EXPECT_CLOSE = _binary(
    "check.expect.close",
    "Expects |actual - expected| <= atol + rtol*|expected| elementwise, with a NaN policy.",
    "close",
    extra_attrs=[
        AttrDef("atol", AttrKind.FLOAT),
        AttrDef("rtol", AttrKind.FLOAT),
        AttrDef("nan", AttrKind.ENUM, enum=EnumDef("nan", ("same", "different"))),
    ],
    verifier=_verify_tolerance,
    extra_fmt=[
        Clause("atol", Attr("atol")),
        Clause("rtol", Attr("rtol")),
        Clause("nan", Attr("nan")),
    ],
    example=_PAIR + "check.expect.close actual(%a) expected(%a) atol(0.0001) rtol(0.0001) nan(same)"
    " : tensor<4xf32>",
)

EXPECT_SHAPE = op(
    "check.expect.shape",
    "Expects a tensor of the given shape (static sizes mixed with index values).",
    operands=[Operand("value", TENSOR), Operand("dims", INTEGER_OR_ADDRESS, variadic=True)],
    attrs=[AttrDef("static_dims", AttrKind.I64_ARRAY, optional=True, doc="Absent: all dynamic.")],
    traits=[_IN_CASE],
    format=[
        Clause("value", Ref("value")),
        Clause("shape", IndexList("dims", "static_dims")),
        Kw(":"),
        TypeOf("value"),
    ],
    builder="shape",
    examples=[
        _in_case(
            "%a = check.generate.fill value(0.0) : tensor<2x4xf32>\n"
            "check.expect.shape value(%a) shape([2, 4]) : tensor<2x4xf32>"
        )
    ],
)

EXPECT = op(
    "check.expect",
    "Expects a named custom validator provider to accept actual against expected.",
    operands=[Operand("actual", SCALAR_OR_TENSOR), Operand("expected", SCALAR_OR_TENSOR)],
    attrs=[_PROVIDER, _ATTRS],
    traits=[_IN_CASE, SameType(("actual", "expected"))],
    format=[
        TemplateParam("provider"),
        Clause("actual", Ref("actual")),
        Clause("expected", Ref("expected")),
        Dictionary("attrs"),
        Kw(":"),
        TypeOf("actual"),
    ],
    builder="expect",
    examples=[
        _in_case(_PAIR + "check.expect<topk.equal> actual(%a) expected(%a) {k = 5} : tensor<4xf32>")
    ],
)

EXPECT_EVENT = op(
    "check.expect.event",
    "Expects a number of captured device events (sanitizer reports) matching given keys.",
    attrs=[_PROVIDER, _ATTRS],
    traits=[_IN_CASE],
    format=[TemplateParam("provider"), Dictionary("attrs")],
    builder="event",
    examples=[
        _in_case(
            'check.expect.event<device> {asan = {access = "write"}, count = 1,'
            ' type = "asan_report"}'
        )
    ],
)

_CASE_REF_KINDS = ("record", "func", "kernel")


def _verify_benchmark(op, ctx) -> list[Violation]:  # noqa: ANN001
    name = op.attributes.get("case_ref")
    target = ctx.symbol(name)
    if target is None or target.name == CASE.name:
        return []
    return [
        Violation("SYMBOL/003", f"'@{name}' is a '{target.name}'; expected check case", "case_ref")
    ]


BENCHMARK = op(
    "check.benchmark",
    "A benchmark record over a case, fixing some of its parameters.",
    attrs=[
        AttrDef("case_ref", AttrKind.SYMBOL),
        AttrDef("benchmark", AttrKind.SYMBOL, optional=True),
        AttrDef("attrs", AttrKind.DICT, optional=True, doc="Parameter values it fixes."),
    ],
    # any function-like or record symbol resolves; _verify_benchmark wants a check.case
    traits=[Symbol("benchmark", kind="record"), SymbolUse("case_ref", _CASE_REF_KINDS)],
    verifier=_verify_benchmark,
    format=[
        TemplateParam("case_ref"),
        OptionalGroup("benchmark", SymbolRef("benchmark")),
        Dictionary("attrs"),
    ],
    builder="benchmark",
    examples=[
        Example(
            "check.case @sweep {\n"
            '  %m = check.param.choice values([8, 16]) name("m") : index\n'
            "  check.return\n}\n"
            "check.benchmark<@sweep> @sweep_latency {m = 16}\n"
            "check.benchmark<@sweep>",
            top_level=True,
        )
    ],
)

OPS = (
    CASE,
    RETURN,
    REQUIRES,
    SKIP_IF,
    PARAM_RANGE,
    PARAM_CHOICE,
    PARAM_SEED,
    LITERAL,
    IOTA,
    FILL,
    UNIFORM,
    READ_NPY,
    WRITE_NPY,
    ORACLE_CALL,
    EXPECT_EQUAL,
    EXPECT_BITWISE,
    EXPECT_CLOSE,
    EXPECT_SHAPE,
    EXPECT,
    EXPECT_EVENT,
    BENCHMARK,
    TENSOR_VIEW,
)

# Requirement provider names upstream's runner registers (check.requires<NAME> / skip_if<NAME>);
# the reference runner (loom.check) implements them.
TARGET_FEATURE = "target.feature"
DEVICE_MEMORY = "device.memory"
