"""scalar: fixed-width integer and float arithmetic, math, comparisons, bit ops, conversions."""

from loom.dialects._shapes import (
    FASTMATH,
    FLOAT_PREDICATE,
    INT_PREDICATE,
    OVERFLOW,
    assume_op,
    binary_op,
    cast_op,
    comparison_op,
    constant_op,
    flags_attr,
    ternary_op,
    unary_op,
    width_rule,
)
from loom.dsl import (
    FLOAT,
    I1_T,
    INTEGER,
    NUMERIC,
    SCALAR,
    Attr,
    AttrDef,
    AttrDict,
    AttrKind,
    EnumDef,
    Example,
    Glue,
    IsolatedFromAbove,
    Kw,
    OpDef,
    Operand,
    OptionalGroup,
    Pure,
    Ref,
    Result,
    SameType,
    Symbol,
    Terminator,
    TypeConstraint,
    TypeOf,
    Violation,
    op,
)
from loom.ir import ScalarType

PAYLOAD_FOR_CONSTANT = TypeConstraint(
    "integer or floating-point scalar; use index.constant for index and offset",
    NUMERIC.accepts,
)
CLAMP_MODE = EnumDef("mode", ("ordered", "number", "ieee"))
GELU_VARIANT = EnumDef("variant", ("erf", "tanh", "logistic"))

# ----------------------------------------------------------------------------- conversion


def constant_payload_violations(value: object, t: object) -> list[Violation]:
    """The TYPE/005 violations of a constant payload ``value`` for the element type ``t``: float
    literals for float types, integers that fit for integer types."""
    if not isinstance(t, ScalarType) or not (t.is_integer or t.is_float):
        return []
    if t.is_float:
        if not isinstance(value, float):
            return [
                Violation(
                    "TYPE/005",
                    f"attribute 'value' {value!r} must be a float literal for {t}",
                    "value",
                )
            ]
        return []
    if not isinstance(value, int):
        return [
            Violation(
                "TYPE/005",
                f"attribute 'value' {value!r} must be an integer literal for {t}",
                "value",
            )
        ]
    if t.bit_width == 1:
        lo, hi = 0, 1
    else:
        lo, hi = -(2 ** (t.bit_width - 1)), 2**t.bit_width - 1
    if not lo <= int(value) <= hi:
        return [Violation("TYPE/005", f"attribute 'value' {value} does not fit in {t}", "value")]
    return []


def _verify_constant(op, ctx) -> list[Violation]:  # noqa: ANN001
    t = op.results[0].type if op.results else None
    return constant_payload_violations(op.attributes.get("value"), t)


CONSTANT = constant_op(
    "scalar.constant",
    "An integer or float constant (ints and bools for integer types, floats for float types).",
    PAYLOAD_FOR_CONSTANT,
    [
        Example("%c = scalar.constant 42 : i32"),
        Example("%h = scalar.constant 0.5 : f32"),
        Example("%t = scalar.constant true : i1"),
    ],
    verifier=_verify_constant,
    verifier_cacheable=True,
)


def poison_observations(module, registry) -> dict[int, list]:  # noqa: ANN001
    """For each poison op of ``module`` (by ``id``), the ops that observe its value, each with
    the kind of observation.

    Poison flows through pure ops and through structured control (a region's arguments, the
    results its terminator yields to); it is observed where it leaves a function or kernel (an
    observation boundary) and by any op with effects."""
    origin: dict[int, object] = {}
    found: dict[int, list] = {}

    def callable_op(o) -> bool:  # noqa: ANN001
        d = registry.get(o.name)
        return d is not None and (d.trait(Symbol) or d.trait(IsolatedFromAbove)) is not None

    def taint(values, src) -> None:  # noqa: ANN001
        for v in values:
            origin.setdefault(v.id, src)

    def visit(o, parent) -> None:  # noqa: ANN001
        if o.name == POISON.name:
            found.setdefault(id(o), [])
            taint(o.results, o)
        else:
            srcs = [origin[v.id] for v in o.operands if v.id in origin]
            decl = registry.get(o.name) if srcs else None
            if decl is not None:
                src = srcs[0]
                if decl.trait(Terminator) is not None:
                    if parent is None or callable_op(parent):
                        for s in dict.fromkeys(srcs):
                            found[id(s)].append((o, "observation boundary"))
                    else:
                        taint(parent.results, src)
                elif o.regions:
                    taint(o.results, src)
                    for region in o.regions:
                        for block in region.blocks:
                            taint(block.args, src)
                elif decl.trait(Pure) is not None:
                    taint(o.results, src)
                else:
                    for s in dict.fromkeys(srcs):
                        found[id(s)].append((o, "effectful operation"))
        for region in o.regions:
            for block in region.blocks:
                for child in block.ops:
                    visit(child, o)

    for top in module.ops:
        visit(top, None)
    return found


def _verify_poison(op, ctx) -> list[Violation]:  # noqa: ANN001
    # one walk per verifier run finds the observers of every poison op of the module
    cache = ctx.__dict__.setdefault("_poison_observations", None)
    if cache is None:
        cache = ctx.__dict__["_poison_observations"] = poison_observations(ctx.module, ctx.registry)
    return [
        Violation(
            "TYPE/012",
            f"uses a poison value (from scalar.poison) at an {kind}; poison must be "
            "removed before it reaches an observation boundary or an effectful operation",
            None,
            at=user,
        )
        for user, kind in cache.get(id(op), ())
    ]


POISON = op(
    "scalar.poison",
    "A typed invalid value; it may only feed computations whose results are never observed.",
    results=[Result("result", SCALAR)],
    traits=[Pure()],
    format=[Kw(":"), TypeOf("result")],
    examples=[Example("%p = scalar.poison : f32")],
    verifier=_verify_poison,
)

_CASTS = (
    ("extsi", "Sign-extends to a wider integer.", INTEGER, INTEGER, "i8 to i32", "wider"),
    ("extui", "Zero-extends to a wider integer.", INTEGER, INTEGER, "i8 to i32", "wider"),
    (
        "trunci",
        "Keeps the low bits in a narrower integer.",
        INTEGER,
        INTEGER,
        "i32 to i8",
        "narrower",
    ),
    (
        "sitofp",
        "Signed integer to float (round to nearest even).",
        INTEGER,
        FLOAT,
        "i32 to f32",
        None,
    ),
    (
        "uitofp",
        "Unsigned integer to float (round to nearest even).",
        INTEGER,
        FLOAT,
        "i32 to f32",
        None,
    ),
    (
        "fptosi",
        "Float to signed integer, truncating toward zero.",
        FLOAT,
        INTEGER,
        "f32 to i32",
        None,
    ),
    (
        "fptoui",
        "Float to unsigned integer, truncating toward zero.",
        FLOAT,
        INTEGER,
        "f32 to i32",
        None,
    ),
    ("extf", "Widens a float exactly.", FLOAT, FLOAT, "f16 to f32", "wider"),
    (
        "fptrunc",
        "Narrows a float, rounding to nearest even.",
        FLOAT,
        FLOAT,
        "f32 to f16",
        "narrower",
    ),
    (
        "bitcast",
        "Reinterprets the bits in a type of the same width.",
        NUMERIC,
        NUMERIC,
        "f32 to i32",
        "same",
    ),
)
CASTS = tuple(
    cast_op(
        f"scalar.{n}",
        doc,
        src,
        dst,
        f"%r = scalar.{n} %x : {types}",
        verifier=width_rule(rel) if rel else None,
    )
    for n, doc, src, dst, types, rel in _CASTS
)

# ----------------------------------------------------------------------------- arithmetic

_INT_BINARY = [
    ("addi", "Two's-complement addition (wraps).", OVERFLOW),
    ("subi", "Two's-complement subtraction (wraps).", OVERFLOW),
    ("muli", "Two's-complement multiplication (wraps).", OVERFLOW),
    ("divsi", "Signed division, rounding toward zero.", None),
    ("divui", "Unsigned division.", None),
    ("remsi", "Signed remainder (sign of the dividend).", None),
    ("remui", "Unsigned remainder.", None),
    ("ceildivsi", "Signed division rounding toward positive infinity.", None),
    ("ceildivui", "Unsigned division rounding up.", None),
    ("floordivsi", "Signed division rounding toward negative infinity.", None),
    ("minsi", "Signed minimum.", None),
    ("maxsi", "Signed maximum.", None),
    ("minui", "Unsigned minimum.", None),
    ("maxui", "Unsigned maximum.", None),
]
_INT_UNARY = [
    ("negi", "Two's-complement negation (negi of the minimum is the minimum)."),
    ("absi", "Absolute value of the signed reading (absi of the minimum is the minimum)."),
]
_FLOAT_BINARY = [
    ("addf", "IEEE addition rounded to the result type."),
    ("subf", "IEEE subtraction rounded to the result type."),
    ("mulf", "IEEE multiplication rounded to the result type."),
    ("divf", "IEEE division rounded to the result type."),
    ("remf", "C fmod: the exact remainder with the sign of the dividend."),
    ("minimumf", "IEEE-754-2019 minimum; NaN propagates, -0 < +0."),
    ("maximumf", "IEEE-754-2019 maximum; NaN propagates, -0 < +0."),
    ("minnumf", "C fmin: a NaN operand is ignored."),
    ("maxnumf", "C fmax: a NaN operand is ignored."),
]
_FLOAT_SIGN = [
    ("negf", "Flips the sign bit."),
    ("absf", "Clears the sign bit."),
]

INT_BINARY = tuple(
    binary_op(f"scalar.{n}", doc, INTEGER, f"%r = scalar.{n} %a, %b : i32", flags=flags)
    for n, doc, flags in _INT_BINARY
)
INT_UNARY = tuple(
    unary_op(f"scalar.{n}", doc, INTEGER, f"%r = scalar.{n} %x : i32") for n, doc in _INT_UNARY
)
FMAI = ternary_op(
    "scalar.fmai",
    "a * b + c in two's complement (wraps).",
    INTEGER,
    "%r = scalar.fmai %a, %b, %c : i64",
    flags=OVERFLOW,
)
FLOAT_BINARY = tuple(
    binary_op(f"scalar.{n}", doc, FLOAT, f"%r = scalar.{n} %a, %b : f32", flags=FASTMATH)
    for n, doc in _FLOAT_BINARY
)
FLOAT_SIGN = tuple(
    unary_op(f"scalar.{n}", doc, FLOAT, f"%r = scalar.{n} %x : f32", flags=FASTMATH)
    for n, doc in _FLOAT_SIGN
)


def _template_with_flags(enum_field: str) -> list:
    """``<case>`` or ``<case, flags>`` glued to the op name."""
    return [
        Glue(),
        Kw("<"),
        Glue(),
        Attr(enum_field),
        OptionalGroup(FASTMATH.name, Kw(","), Attr(FASTMATH.name)),
        Glue(),
        Kw(">"),
    ]


CLAMPF = op(
    "scalar.clampf",
    "Clamps value to [lower, upper] with an explicit NaN policy (ordered, number or ieee).",
    operands=[
        Operand("value", FLOAT),
        Operand("lower", FLOAT),
        Operand("upper", FLOAT),
    ],
    results=[Result("result", FLOAT)],
    attrs=[AttrDef("mode", AttrKind.ENUM, enum=CLAMP_MODE), flags_attr(FASTMATH)],
    traits=[Pure(), SameType(("value", "lower", "upper", "result"))],
    format=[
        *_template_with_flags("mode"),
        Ref("value"),
        Kw(","),
        Ref("lower"),
        Kw(","),
        Ref("upper"),
        Kw(":"),
        TypeOf("result"),
    ],
    examples=[
        Example("%r = scalar.clampf<ordered> %v, %lo, %hi : f32", "%v: f32, %lo: f32, %hi: f32"),
        Example(
            "%r = scalar.clampf<ieee, nnan|nsz> %v, %lo, %hi : f16", "%v: f16, %lo: f16, %hi: f16"
        ),
    ],
)
COPYSIGNF = binary_op(
    "scalar.copysignf",
    "The magnitude of lhs with the sign bit of rhs.",
    FLOAT,
    "%r = scalar.copysignf %a, %b : f32",
)

# ----------------------------------------------------------------------------- math

_MATH_UNARY = [
    ("expf", "e to the power x."),
    ("exp2f", "2 to the power x."),
    ("expm1f", "e to the power x, minus 1 (accurate near 0)."),
    ("logf", "Natural logarithm."),
    ("log2f", "Base-2 logarithm."),
    ("log10f", "Base-10 logarithm."),
    ("log1pf", "ln(1 + x) (accurate near 0)."),
    ("sqrtf", "Square root."),
    ("rsqrtf", "Reciprocal square root."),
    ("cbrtf", "Cube root."),
    ("sinf", "Sine (radians)."),
    ("cosf", "Cosine (radians)."),
    ("tanf", "Tangent (radians)."),
    ("sinturnsf", "sin(2 pi x): the sine of x full turns."),
    ("costurnsf", "cos(2 pi x): the cosine of x full turns."),
    ("asinf", "Arc sine."),
    ("acosf", "Arc cosine."),
    ("atanf", "Arc tangent."),
    ("sinhf", "Hyperbolic sine."),
    ("coshf", "Hyperbolic cosine."),
    ("tanhf", "Hyperbolic tangent."),
    ("asinhf", "Inverse hyperbolic sine."),
    ("acoshf", "Inverse hyperbolic cosine."),
    ("atanhf", "Inverse hyperbolic tangent."),
    ("erff", "Error function."),
    ("erfcf", "Complementary error function 1 - erf(x)."),
    ("logisticf", "The logistic sigmoid 1 / (1 + e^-x)."),
    ("siluf", "SiLU (swish): x * logistic(x)."),
    ("softplusf", "Softplus: ln(1 + e^x)."),
    ("ceilf", "Rounds toward positive infinity."),
    ("floorf", "Rounds toward negative infinity."),
    ("truncf", "Rounds toward zero."),
    ("roundf", "Rounds to nearest, ties away from zero."),
    ("roundevenf", "Rounds to nearest, ties to even."),
]
_MATH_BINARY = [
    ("powf", "lhs to the power rhs (C pow)."),
    ("atan2f", "atan2(y = lhs, x = rhs): the angle of the point (x, y)."),
]

MATH_UNARY = tuple(
    unary_op(f"scalar.{n}", doc, FLOAT, f"%r = scalar.{n} %x : f32", flags=FASTMATH)
    for n, doc in _MATH_UNARY
)
MATH_BINARY = tuple(
    binary_op(f"scalar.{n}", doc, FLOAT, f"%r = scalar.{n} %a, %b : f32", flags=FASTMATH)
    for n, doc in _MATH_BINARY
)
FMAF = ternary_op(
    "scalar.fmaf",
    "a * b + c with a single rounding.",
    FLOAT,
    "%r = scalar.fmaf %a, %b, %c : f32",
    flags=FASTMATH,
)


def _verify_geluf(op, ctx) -> list[Violation]:  # noqa: ANN001
    variant = op.attributes.get("variant")
    has_scale = "scale" in op.attributes
    if variant == "logistic" and not has_scale:
        return [
            Violation(
                "TYPE/005",
                "attribute 'scale' is required by the logistic variant "
                "(actual kind 0 = absent, expected kind 2 = float)",
                "scale",
            )
        ]
    if variant in ("erf", "tanh") and has_scale:
        return [
            Violation(
                "TYPE/005",
                f"attribute 'scale' is only allowed with the logistic variant, not {variant} "
                "(actual kind 2 = float, expected kind 0 = absent)",
                "scale",
            )
        ]
    return []


GELUF = op(
    "scalar.geluf",
    "GELU activation: erf (exact), tanh (polynomial) or logistic (x * logistic(scale * x)).",
    operands=[Operand("input", FLOAT)],
    results=[Result("result", FLOAT)],
    attrs=[
        AttrDef("variant", AttrKind.ENUM, enum=GELU_VARIANT),
        flags_attr(FASTMATH),
        AttrDef("scale", AttrKind.FLOAT, optional=True, doc="logistic variant only"),
    ],
    traits=[Pure(), SameType(("input", "result"))],
    format=[*_template_with_flags("variant"), Ref("input"), AttrDict(), Kw(":"), TypeOf("result")],
    examples=[
        Example("%r = scalar.geluf<erf> %x : f32", "%x: f32"),
        Example("%r = scalar.geluf<tanh, afn> %x : bf16", "%x: bf16"),
        Example("%r = scalar.geluf<logistic> %x {scale = 1.5} : f32", "%x: f32"),
    ],
    verifier=_verify_geluf,
    verifier_cacheable=True,
)

# ----------------------------------------------------------------------------- comparison

CMPI = comparison_op(
    "scalar.cmpi",
    "Integer comparison producing i1.",
    INT_PREDICATE,
    INTEGER,
    "%p = scalar.cmpi slt, %a, %b : i32",
)
CMPF = comparison_op(
    "scalar.cmpf",
    "Float comparison (o*: false on NaN, u*: true on NaN).",
    FLOAT_PREDICATE,
    FLOAT,
    "%p = scalar.cmpf olt, %a, %b : f32",
    flags=FASTMATH,
)


def _classify(name: str, doc: str) -> OpDef:
    return op(
        f"scalar.{name}",
        doc,
        operands=[Operand("input", FLOAT)],
        results=[Result("result", I1_T)],
        traits=[Pure()],
        format=[Ref("input"), Kw(":"), TypeOf("input")],
        examples=[Example(f"%p = scalar.{name} %x : f32", "%x: f32")],
    )


CLASSIFY = (
    _classify("isnanf", "True for a NaN."),
    _classify("isinff", "True for +inf or -inf."),
    _classify("isfinitef", "True for a value that is neither NaN nor infinite."),
)
SIGNF = unary_op(
    "scalar.signf",
    "-1.0, 0.0 or +1.0 by the sign of x (NaN gives 0.0).",
    FLOAT,
    "%r = scalar.signf %x : f32",
)
SIGNI = unary_op(
    "scalar.signi",
    "-1, 0 or +1 by the sign of the signed reading.",
    INTEGER,
    "%r = scalar.signi %x : i32",
)

# ----------------------------------------------------------------------------- bitwise

_BITWISE = [
    ("andi", "Bitwise and.", None),
    ("ori", "Bitwise or.", None),
    ("xori", "Bitwise exclusive or.", None),
    ("shli", "Shift left (amount read unsigned, below the width).", OVERFLOW),
    ("shrsi", "Arithmetic shift right (sign fill).", None),
    ("shrui", "Logical shift right (zero fill).", None),
    ("rotli", "Rotate left within the width (amount modulo the width).", None),
    ("rotri", "Rotate right within the width (amount modulo the width).", None),
]
_BIT_COUNTS = [
    ("ctlzi", "Count of leading zero bits (the width for 0)."),
    ("cttzi", "Count of trailing zero bits (the width for 0)."),
    ("ctpopi", "Count of set bits."),
]
BITWISE = tuple(
    binary_op(f"scalar.{n}", doc, INTEGER, f"%r = scalar.{n} %a, %b : i32", flags=flags)
    for n, doc, flags in _BITWISE
)
BIT_COUNTS = tuple(
    unary_op(f"scalar.{n}", doc, INTEGER, f"%r = scalar.{n} %x : i32") for n, doc in _BIT_COUNTS
)


def _verify_bitfield(op, ctx) -> list[Violation]:  # noqa: ANN001
    offset, width = op.attributes.get("offset"), op.attributes.get("width")
    if not (isinstance(offset, int) and isinstance(width, int)):
        return []
    if width <= 0:
        return [
            Violation(
                "STRUCTURE/014",
                f"attribute 'width' value {width} must be a positive bitfield width",
                "width",
            )
        ]
    if offset < 0:
        return [
            Violation(
                "STRUCTURE/014",
                f"attribute 'offset' value {offset} must be a non-negative bit offset",
                "offset",
            )
        ]
    src = op.operands[0].type if op.operands else None
    dst = op.results[0].type if op.results else None
    out = []
    if isinstance(src, ScalarType) and offset + width > src.bit_width:
        out.append(
            Violation(
                "STRUCTURE/014",
                f"attribute 'width' value {width} at offset {offset} must keep the "
                f"bitfield range within storage element width {src.bit_width} of {src}",
                "width",
            )
        )
    if isinstance(dst, ScalarType) and dst.bit_width < width:
        out.append(
            Violation(
                "TYPE/004",
                f"result type {dst} must have element bit width at least width ({width})",
                "result",
            )
        )
    return out


def _bitfield(name: str, doc: str, example: str) -> OpDef:
    return op(
        f"scalar.bitfield.{name}",
        doc,
        operands=[Operand("source", INTEGER)],
        results=[Result("result", INTEGER)],
        attrs=[
            AttrDef("offset", AttrKind.INT, doc="least significant bit of the field"),
            AttrDef("width", AttrKind.INT, doc="bits in the field"),
        ],
        traits=[Pure()],
        format=[
            Ref("source"),
            AttrDict(),
            Kw(":"),
            TypeOf("source"),
            Kw("->"),
            TypeOf("result"),
        ],
        examples=[Example(example, "%w: i32")],
        verifier=_verify_bitfield,
        verifier_cacheable=True,
    )


BITFIELD = (
    _bitfield(
        "extractu",
        "The bits [offset, offset + width) of source, zero-extended into the result.",
        "%f = scalar.bitfield.extractu %w {offset = 4, width = 12} : i32 -> i32",
    ),
    _bitfield(
        "extracts",
        "The bits [offset, offset + width) of source, sign-extended into the result.",
        "%f = scalar.bitfield.extracts %w {offset = 16, width = 8} : i32 -> i64",
    ),
)

# ----------------------------------------------------------------------------- analysis


PAYLOAD_FOR_ASSUME = TypeConstraint(
    "an integer or floating-point scalar; use index.assume for index and offset",
    NUMERIC.accepts,
)


ASSUME = assume_op(
    "scalar.assume",
    "Returns its operands unchanged, carrying promised facts about them.",
    PAYLOAD_FOR_ASSUME,
    NUMERIC,
    [
        Example("%n2 = scalar.assume %n [range(%n, 0, 255)] : i32", "%n: i32"),
        Example(
            "%a2, %x2 = scalar.assume %a, %x [mul(%a, 4), finite(%x)] : i64, f32",
            "%a: i64, %x: f32",
        ),
    ],
)

ARITHMETIC = (*INT_BINARY, *INT_UNARY, FMAI, *FLOAT_BINARY, *FLOAT_SIGN, CLAMPF, COPYSIGNF)
MATH = (*MATH_UNARY, *MATH_BINARY, GELUF, FMAF)
COMPARISON = (CMPI, CMPF, *CLASSIFY, SIGNF, SIGNI)
CONVERSION = (*CASTS, CONSTANT, POISON)
BITS = (*BITWISE, *BIT_COUNTS, *BITFIELD)
ANALYSIS = (ASSUME,)

OPS = (*ARITHMETIC, *MATH, *COMPARISON, *CONVERSION, *BITS, *ANALYSIS)
