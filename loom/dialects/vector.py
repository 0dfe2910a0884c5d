"""vector: the construction ops that kernel-level IR uses to materialise register vectors.

Only the two constructors that kernel-level code spells are declared here; the rest of upstream's
vector dialect (lane-wise arithmetic, shuffles, contractions) is outside the kernel-level
language. The reference interpreter holds scalar lane values, so these ops print, parse, verify
and round-trip but do not execute."""

from loom.dialects._shapes import constant_op
from loom.dialects.scalar import constant_payload_violations
from loom.dsl import (
    SCALAR,
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
from loom.ir import ScalarType, ShapedType, TypeKind

VECTOR_T = TypeConstraint(
    "a vector type", lambda t: isinstance(t, ShapedType) and t.kind is TypeKind.VECTOR
)


def _element(op) -> ScalarType | None:  # noqa: ANN001
    t = op.results[0].type if op.results else None
    return t.element_type if isinstance(t, ShapedType) else None


def _verify_constant(op, ctx) -> list[Violation]:  # noqa: ANN001
    return constant_payload_violations(op.attributes.get("value"), _element(op))


def _verify_splat(op, ctx) -> list[Violation]:  # noqa: ANN001
    elem = _element(op)
    scalar = op.operands[0].type if op.operands else None
    if elem is None or scalar is None or scalar == elem:
        return []
    return [
        Violation(
            "TYPE/001",
            f"'scalar' type {scalar} does not match the element type {elem} of 'result'",
            "scalar",
        )
    ]


CONSTANT = constant_op(
    "vector.constant",
    "A vector whose every lane holds the same constant; the result type gives the shape and the "
    "element type that the payload must fit.",
    VECTOR_T,
    [
        Example("%zeros = vector.constant 0.0 : vector<4xf32>"),
        Example("%mask = vector.constant false : vector<16xi1>"),
    ],
    verifier=_verify_constant,
    verifier_cacheable=True,
)

SPLAT = op(
    "vector.splat",
    "Replicate one scalar into every lane of a vector; the scalar already has the vector's "
    "element type (convert before or after, never inside the splat).",
    operands=[Operand("scalar", SCALAR)],
    results=[Result("result", VECTOR_T)],
    traits=[Pure()],
    format=[Ref("scalar"), Kw(":"), TypeOf("result")],
    examples=[
        Example("%v = vector.splat %x : vector<8xi32>", args="%x: i32"),
    ],
    verifier=_verify_splat,
    verifier_cacheable=True,
)

OPS = (CONSTANT, SPLAT)
