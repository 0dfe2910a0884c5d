"""index: address-domain arithmetic on ``index`` (signed coordinates) and ``offset`` (bytes)."""

from loom.dialects._shapes import INT_PREDICATE, binary_op, comparison_op, ternary_op
from loom.dsl import (
    ADDRESS,
    INDEX_T,
    INTEGER_OR_ADDRESS,
    OFFSET_T,
    Attr,
    AttrDef,
    AttrKind,
    Example,
    Kw,
    Operand,
    PredicateList,
    Pure,
    Ref,
    Refs,
    Result,
    SameTypeAt,
    TypeOf,
    TypesOf,
    Violation,
    op,
)
from loom.ir import OFFSET

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1


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
                f"attribute 'value' value {value} must be non-negative for offset",
                "value",
            )
        ]
    if not INT64_MIN <= value <= INT64_MAX:
        return [
            Violation(
                "STRUCTURE/014", f"attribute 'value' value {value} does not fit in 64 bits", "value"
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
            f"cast from {src} to {dst} must cross the index or offset "
            "boundary (use scalar.extsi/extui/trunci between integers)",
            "result",
        )
    ]


CONSTANT = op(
    "index.constant",
    "An index or offset constant.",
    attrs=[AttrDef("value", AttrKind.INT)],
    results=[Result("result", ADDRESS)],
    traits=[Pure()],
    format=[Attr("value"), Kw(":"), TypeOf("result")],
    examples=[
        Example("%c = index.constant 512 : index"),
        Example("%b = index.constant 0 : offset"),
    ],
    verifier=_verify_constant,
    verifier_cacheable=True,
)

CAST = op(
    "index.cast",
    "Converts between index/offset and integers (one side must be index or offset).",
    operands=[Operand("input", INTEGER_OR_ADDRESS)],
    results=[Result("result", INTEGER_OR_ADDRESS)],
    traits=[Pure()],
    format=[Ref("input"), Kw(":"), TypeOf("input"), Kw("to"), TypeOf("result")],
    examples=[Example("%o = index.cast %i : index to offset", "%i: index")],
    verifier=_verify_cast,
    verifier_cacheable=True,
)

ADD = binary_op(
    "index.add", "Address addition (index or offset).", ADDRESS, "%r = index.add %a, %b : index"
)
SUB = binary_op(
    "index.sub", "Address subtraction (index or offset).", ADDRESS, "%r = index.sub %a, %b : offset"
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
    ADDRESS,
    "%p = index.cmp ult, %i, %n : index",
)

ASSUME = op(
    "index.assume",
    "Returns its operands unchanged, carrying facts about them.",
    operands=[Operand("values", ADDRESS, variadic=True)],
    attrs=[AttrDef("predicates", AttrKind.PREDICATES)],
    results=[Result("results", ADDRESS, variadic=True)],
    traits=[Pure(), SameTypeAt("values", "results")],
    format=[Refs("values"), PredicateList("predicates"), Kw(":"), TypesOf("results")],
    examples=[
        Example("%n2 = index.assume %n [range(%n, 1, 4)] : index", "%n: index"),
        Example(
            "%a2, %b2 = index.assume %a, %b [mul(%a, 16), mul(%b, 64)] : index, offset",
            "%a: index, %b: offset",
        ),
    ],
)

OPS = (CONSTANT, CAST, ADD, SUB, MUL, MADD, DIV, REM, MIN, MAX, SCALE, CMP, ASSUME)
