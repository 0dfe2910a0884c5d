"""scalar: fixed-width integer and float arithmetic, comparisons and conversions."""

from loom.dialects._shapes import (
    FASTMATH,
    FLOAT_PREDICATE,
    INT_PREDICATE,
    OVERFLOW,
    binary_op,
    cast_op,
    comparison_op,
    ternary_op,
    unary_op,
    width_rule,
)
from loom.dsl import (
    FLOAT,
    INTEGER,
    NUMERIC,
    Attr,
    AttrDef,
    AttrKind,
    Example,
    Kw,
    Pure,
    Result,
    TypeOf,
    Violation,
    op,
)
from loom.ir import ScalarType


def _verify_constant(op, ctx) -> list[Violation]:  # noqa: ANN001
    value = op.attributes.get("value")
    t = op.results[0].type if op.results else None
    if not isinstance(t, ScalarType):
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


CONSTANT = op(
    "scalar.constant",
    "An integer or float constant (ints and bools for integer types, floats for float types).",
    attrs=[AttrDef("value", AttrKind.NUMBER)],
    results=[Result("result", NUMERIC)],
    traits=[Pure()],
    format=[Attr("value"), Kw(":"), TypeOf("result")],
    examples=[
        Example("%c = scalar.constant 42 : i32"),
        Example("%h = scalar.constant 0.5 : f32"),
        Example("%t = scalar.constant true : i1"),
    ],
    verifier=_verify_constant,
    verifier_cacheable=True,
)

_INT_BINARY = [
    ("addi", "Two's-complement addition (wraps).", OVERFLOW),
    ("subi", "Two's-complement subtraction (wraps).", OVERFLOW),
    ("muli", "Two's-complement multiplication (wraps).", OVERFLOW),
    ("divsi", "Signed division, rounding toward zero.", None),
    ("divui", "Unsigned division.", None),
    ("remsi", "Signed remainder (sign of the dividend).", None),
    ("remui", "Unsigned remainder.", None),
    ("andi", "Bitwise and.", None),
    ("ori", "Bitwise or.", None),
    ("xori", "Bitwise exclusive or.", None),
    ("shli", "Shift left.", OVERFLOW),
    ("shrsi", "Arithmetic shift right.", None),
    ("shrui", "Logical shift right.", None),
    ("minsi", "Signed minimum.", None),
    ("maxsi", "Signed maximum.", None),
    ("minui", "Unsigned minimum.", None),
    ("maxui", "Unsigned maximum.", None),
]
_FLOAT_BINARY = [
    ("addf", "IEEE addition rounded to the result type."),
    ("subf", "IEEE subtraction rounded to the result type."),
    ("mulf", "IEEE multiplication rounded to the result type."),
    ("divf", "IEEE division rounded to the result type."),
    ("minimumf", "IEEE-754-2019 minimum; NaN propagates, -0 < +0."),
    ("maximumf", "IEEE-754-2019 maximum; NaN propagates, -0 < +0."),
    ("minnumf", "C fmin: a NaN operand is ignored."),
    ("maxnumf", "C fmax: a NaN operand is ignored."),
]
_FLOAT_UNARY = [
    ("negf", "Flips the sign."),
    ("absf", "Absolute value."),
    ("sqrtf", "Square root."),
    ("rsqrtf", "Reciprocal square root."),
    ("expf", "e to the power x."),
    ("logf", "Natural logarithm."),
    ("tanhf", "Hyperbolic tangent."),
    ("floorf", "Rounds toward negative infinity."),
    ("ceilf", "Rounds toward positive infinity."),
    ("roundevenf", "Rounds to nearest, ties to even."),
]

INT_BINARY = tuple(
    binary_op(f"scalar.{n}", doc, INTEGER, f"%r = scalar.{n} %a, %b : i32", flags=flags)
    for n, doc, flags in _INT_BINARY
)
FLOAT_BINARY = tuple(
    binary_op(f"scalar.{n}", doc, FLOAT, f"%r = scalar.{n} %a, %b : f32", flags=FASTMATH)
    for n, doc in _FLOAT_BINARY
)
FLOAT_UNARY = tuple(
    unary_op(f"scalar.{n}", doc, FLOAT, f"%r = scalar.{n} %x : f32", flags=FASTMATH)
    for n, doc in _FLOAT_UNARY
)

FMAF = ternary_op(
    "scalar.fmaf",
    "a * b + c with a single rounding.",
    FLOAT,
    "%r = scalar.fmaf %a, %b, %c : f32",
    flags=FASTMATH,
)
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

CASTS = (
    cast_op(
        "scalar.extsi",
        "Sign-extends to a wider integer.",
        INTEGER,
        INTEGER,
        "%r = scalar.extsi %x : i8 to i32",
        verifier=width_rule("wider"),
    ),
    cast_op(
        "scalar.extui",
        "Zero-extends to a wider integer.",
        INTEGER,
        INTEGER,
        "%r = scalar.extui %x : i8 to i32",
        verifier=width_rule("wider"),
    ),
    cast_op(
        "scalar.trunci",
        "Keeps the low bits in a narrower integer.",
        INTEGER,
        INTEGER,
        "%r = scalar.trunci %x : i32 to i8",
        verifier=width_rule("narrower"),
    ),
    cast_op(
        "scalar.sitofp",
        "Signed integer to float (round to nearest even).",
        INTEGER,
        FLOAT,
        "%r = scalar.sitofp %x : i32 to f32",
    ),
    cast_op(
        "scalar.uitofp",
        "Unsigned integer to float (round to nearest even).",
        INTEGER,
        FLOAT,
        "%r = scalar.uitofp %x : i32 to f32",
    ),
    cast_op(
        "scalar.fptosi",
        "Float to signed integer, truncating toward zero.",
        FLOAT,
        INTEGER,
        "%r = scalar.fptosi %x : f32 to i32",
    ),
    cast_op(
        "scalar.fptoui",
        "Float to unsigned integer, truncating toward zero.",
        FLOAT,
        INTEGER,
        "%r = scalar.fptoui %x : f32 to i32",
    ),
    cast_op(
        "scalar.extf",
        "Widens a float exactly.",
        FLOAT,
        FLOAT,
        "%r = scalar.extf %x : f16 to f32",
        verifier=width_rule("wider"),
    ),
    cast_op(
        "scalar.fptrunc",
        "Narrows a float, rounding to nearest even.",
        FLOAT,
        FLOAT,
        "%r = scalar.fptrunc %x : f32 to f16",
        verifier=width_rule("narrower"),
    ),
    cast_op(
        "scalar.bitcast",
        "Reinterprets the bits in a type of the same width.",
        NUMERIC,
        NUMERIC,
        "%r = scalar.bitcast %x : f32 to i32",
        verifier=width_rule("same"),
    ),
)

OPS = (CONSTANT, *INT_BINARY, *FLOAT_BINARY, *FLOAT_UNARY, FMAF, CMPI, CMPF, *CASTS)
