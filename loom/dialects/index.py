"""index: address-domain arithmetic on ``index`` (signed coordinates) and ``offset`` (bytes)."""

from loom.dialects._shapes import (
    INT_PREDICATE,
    assume_op,
    binary_op,
    comparison_op,
    constant_op,
    ternary_op,
    unary_op,
)
from loom.dsl import (
    ADDRESS,
    INDEX_T,
    INTEGER_OR_ADDRESS,
    OFFSET_T,
    Example,
    Kw,
    Operand,
    Pure,
    Ref,
    Result,
    TypeConstraint,
    TypeOf,
    Violation,
    op,
)
from loom.ir import OFFSET

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
ADDRESS_T = TypeConstraint("address (index or offset)", ADDRESS.accepts)
BOUNDARY = TypeConstraint("integer, index, or offset", INTEGER_OR_ADDRESS.accepts)


def _verify_constant(op, ctx) -> list[Violation]:  # noqa: ANN001
    value = op.attributes.get("value")
    if isinstance(value, bool) or not isinstance(value, int):
        return [
            Violation("TYPE/005", f"attribute 'value' must be an integer, got {value!r}", "value")
        ]
    if op.results and op.results[0].type == OFFSET and value < 0:
        return [
            Violation(
                "STRUCTURE/014",
                f"attribute 'value' value {value} is outside the element type domain of "
                "offset (non-negative byte counts)",
                "value",
            )
        ]
    if not INT64_MIN <= value <= INT64_MAX:
        return [
            Violation(
                "STRUCTURE/014",
                f"attribute 'value' value {value} is outside the element type domain "
                "(64-bit integers)",
                "value",
            )
        ]
    return []


def _verify_cast(op, ctx) -> list[Violation]:  # noqa: ANN001
    src, dst = op.operands[0].type, op.results[0].type
    if getattr(src, "is_address", False) or getattr(dst, "is_address", False):
        return []
    return [
        Violation(
            "TYPE/004",
            f"result type {dst} (from {src}) must cross the index or offset "
            "boundary (use scalar.extsi/extui/trunci between integers)",
            "result",
        )
    ]


CONSTANT = constant_op(
    "index.constant",
    "An index or offset constant.",
    ADDRESS_T,
    [Example("%c = index.constant 512 : index"), Example("%b = index.constant 0 : offset")],
    verifier=_verify_constant,
    verifier_cacheable=True,
)

CAST = op(
    "index.cast",
    "Converts between index/offset and integers (one side must be index or offset).",
    operands=[Operand("input", BOUNDARY)],
    results=[Result("result", BOUNDARY)],
    traits=[Pure()],
    format=[Ref("input"), Kw(":"), TypeOf("input"), Kw("to"), TypeOf("result")],
    examples=[Example("%o = index.cast %i : index to offset", "%i: index")],
    verifier=_verify_cast,
    verifier_cacheable=True,
)

ADD = binary_op(
    "index.add", "Address addition (index or offset).", ADDRESS_T, "%r = index.add %a, %b : index"
)
SUB = binary_op(
    "index.sub",
    "Address subtraction (index or offset).",
    ADDRESS_T,
    "%r = index.sub %a, %b : offset",
)
MUL = binary_op("index.mul", "Index product.", INDEX_T, "%r = index.mul %a, %b : index")
DIV = binary_op(
    "index.div",
    "Index quotient (non-negative dividend, positive divisor).",
    INDEX_T,
    "%q = index.div %a, %b : index",
)
REM = binary_op(
    "index.rem",
    "Index remainder (non-negative dividend, positive divisor).",
    INDEX_T,
    "%r = index.rem %a, %b : index",
)
MIN = binary_op("index.min", "Signed index minimum.", INDEX_T, "%r = index.min %a, %b : index")
MAX = binary_op("index.max", "Signed index maximum.", INDEX_T, "%r = index.max %a, %b : index")
MADD = ternary_op(
    "index.madd", "a * b + c on indices.", INDEX_T, "%r = index.madd %a, %b, %c : index"
)

SCALE = op(
    "index.scale",
    "index * stride bytes: the logical-to-physical boundary.",
    operands=[Operand("index", INDEX_T), Operand("stride", OFFSET_T)],
    results=[Result("result", OFFSET_T)],
    traits=[Pure()],
    format=[
        Ref("index"),
        Kw(","),
        Ref("stride"),
        Kw(":"),
        TypeOf("index"),
        Kw(","),
        TypeOf("stride"),
        Kw("->"),
        TypeOf("result"),
    ],
    examples=[
        Example(
            "%o = index.scale %i, %stride : index, offset -> offset", "%i: index, %stride: offset"
        )
    ],
)

CMP = comparison_op(
    "index.cmp",
    "Compares two addresses, signed or unsigned.",
    INT_PREDICATE,
    ADDRESS_T,
    "%p = index.cmp ult, %i, %n : index",
)

ASSUME = assume_op(
    "index.assume",
    "Returns its operands unchanged, carrying facts about them.",
    ADDRESS_T,
    ADDRESS_T,
    [
        Example("%n2 = index.assume %n [range(%n, 1, 4)] : index", "%n: index"),
        Example(
            "%a2, %b2 = index.assume %a, %b [mul(%a, 16), mul(%b, 64)] : index, offset",
            "%a: index, %b: offset",
        ),
    ],
)

_BITWISE = [
    ("andi", "Bitwise and of the index carrier bits."),
    ("ori", "Bitwise or of the index carrier bits."),
    ("xori", "Bitwise exclusive or of the index carrier bits."),
    ("shli", "Shift left (amount below the carrier width)."),
    ("shrsi", "Arithmetic shift right (sign fill)."),
    ("shrui", "Logical shift right (zero fill)."),
    ("rotli", "Rotate left within the carrier width (amount modulo the width)."),
    ("rotri", "Rotate right within the carrier width (amount modulo the width)."),
]
_BIT_COUNTS = [
    ("ctlzi", "Count of leading zero bits of the carrier (the width for 0)."),
    ("cttzi", "Count of trailing zero bits of the carrier (the width for 0)."),
    ("ctpopi", "Count of set bits of the carrier."),
]
BITWISE = tuple(
    binary_op(f"index.{n}", doc, INDEX_T, f"%r = index.{n} %a, %b : index") for n, doc in _BITWISE
)
BIT_COUNTS = tuple(
    unary_op(f"index.{n}", doc, INDEX_T, f"%r = index.{n} %x : index") for n, doc in _BIT_COUNTS
)

OPS = (
    CONSTANT,
    CAST,
    ASSUME,
    ADD,
    SUB,
    MUL,
    SCALE,
    DIV,
    REM,
    MIN,
    MAX,
    MADD,
    *BITWISE,
    *BIT_COUNTS,
    CMP,
)
