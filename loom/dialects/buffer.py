"""buffer: untyped storage roots, raw byte access and facts about roots."""

from loom.dialects._shapes import MEMORY_SPACE
from loom.dsl import (
    BUFFER_T,
    BYTE_PATTERN,
    I32_T,
    OFFSET_T,
    VIEW,
    Attr,
    AttrDef,
    AttrDict,
    AttrKind,
    Clause,
    Example,
    Kw,
    MemoryEffect,
    Operand,
    OptionalGroup,
    Pure,
    Ref,
    Refs,
    Result,
    SameTypeAt,
    Subscript,
    TemplateParam,
    TypeOf,
    TypesOf,
    Violation,
    op,
)

VIEW_OP = op(
    "buffer.view",
    "A typed, non-owning view of a buffer starting at a byte offset.",
    operands=[Operand("buffer", BUFFER_T), Operand("byte_offset", OFFSET_T)],
    results=[Result("result", VIEW)],
    traits=[Pure()],
    format=[
        Ref("buffer"),
        Subscript("byte_offset"),
        Kw(":"),
        TypeOf("buffer"),
        Kw("->"),
        TypeOf("result"),
    ],
    examples=[
        Example(
            "%v = buffer.view %buf[%off] : buffer -> view<16xf32>", "%buf: buffer, %off: offset"
        ),
        Example(
            "%v = buffer.view %buf[%off] : buffer -> view<[%n]xf32>",
            "%n: index, %buf: buffer, %off: offset",
        ),
    ],
)

LOAD_I8_U = op(
    "buffer.load.i8.u",
    "Reads one byte and zero-extends it to i32.",
    operands=[Operand("source", BUFFER_T), Operand("byte_offset", OFFSET_T)],
    results=[Result("result", I32_T)],
    traits=[MemoryEffect(reads=True)],
    format=[Ref("source"), Subscript("byte_offset")],
    builder="load_i8_u",
    examples=[Example("%b = buffer.load.i8.u %src[%off]", "%src: buffer, %off: offset")],
)

STORE_I8 = op(
    "buffer.store.i8",
    "Writes the low 8 bits of an i32 value.",
    operands=[
        Operand("value", I32_T),
        Operand("target", BUFFER_T),
        Operand("byte_offset", OFFSET_T),
    ],
    traits=[MemoryEffect(writes=True)],
    format=[Ref("value"), Kw(","), Ref("target"), Subscript("byte_offset")],
    builder="store_i8",
    examples=[Example("buffer.store.i8 %v, %dst[%off]", "%v: i32, %dst: buffer, %off: offset")],
)

NOALIAS = op(
    "buffer.assume.noalias",
    "Returns the buffers unchanged, asserting they do not overlap.",
    operands=[Operand("buffers", BUFFER_T, variadic=True)],
    results=[Result("results", BUFFER_T, variadic=True)],
    traits=[Pure(), SameTypeAt("buffers", "results")],
    format=[Refs("buffers"), Kw(":"), TypesOf("results")],
    examples=[
        Example(
            "%a2, %b2 = buffer.assume.noalias %a, %b : buffer, buffer", "%a: buffer, %b: buffer"
        )
    ],
)


def _verify_alignment(op, ctx) -> list[Violation]:  # noqa: ANN001
    return _power_of_two(op, "minimum_alignment")


def _power_of_two(op, attr: str) -> list[Violation]:  # noqa: ANN001
    value = op.attributes.get(attr)
    if value is None:
        return []
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0 or value & (value - 1):
        return [
            Violation(
                "STRUCTURE/014",
                f"attribute '{attr}' value {value} must be a positive power of two",
                attr,
            )
        ]
    return []


ALIGNMENT = op(
    "buffer.assume.alignment",
    "Returns the buffers unchanged, asserting their base addresses are aligned.",
    operands=[Operand("buffers", BUFFER_T, variadic=True)],
    attrs=[AttrDef("minimum_alignment", AttrKind.INT)],
    results=[Result("results", BUFFER_T, variadic=True)],
    traits=[Pure(), SameTypeAt("buffers", "results")],
    format=[Refs("buffers"), AttrDict(), Kw(":"), TypesOf("results")],
    examples=[
        Example("%a2 = buffer.assume.alignment %a {minimum_alignment = 16} : buffer", "%a: buffer")
    ],
    verifier=_verify_alignment,
)

MEMORY_SPACE_OP = op(
    "buffer.assume.memory_space",
    "Returns the buffer unchanged, asserting the memory space it lives in.",
    operands=[Operand("buffer", BUFFER_T)],
    attrs=[AttrDef("memory_space", AttrKind.ENUM, enum=MEMORY_SPACE)],
    results=[Result("result", BUFFER_T)],
    traits=[Pure()],
    format=[TemplateParam("memory_space"), Ref("buffer"), Kw(":"), TypeOf("result")],
    legacy_formats=[[Ref("buffer"), AttrDict(), Kw(":"), TypeOf("result")]],
    examples=[Example("%g = buffer.assume.memory_space<global> %b : buffer", "%b: buffer")],
)

LENGTH = op(
    "buffer.length",
    "The buffer's length in bytes.",
    operands=[Operand("buffer", BUFFER_T)],
    results=[Result("result", OFFSET_T)],
    traits=[Pure()],
    format=[Ref("buffer")],
    examples=[Example("%n = buffer.length %b", "%b: buffer")],
)

COPY = op(
    "buffer.copy",
    "Copies byte_length bytes between non-overlapping ranges.",
    operands=[
        Operand("source", BUFFER_T),
        Operand("source_offset", OFFSET_T),
        Operand("target", BUFFER_T),
        Operand("target_offset", OFFSET_T),
        Operand("byte_length", OFFSET_T),
    ],
    traits=[MemoryEffect(reads=True, writes=True)],
    format=[
        Ref("source"),
        Subscript("source_offset"),
        Kw(","),
        Ref("target"),
        Subscript("target_offset"),
        Kw(","),
        Ref("byte_length"),
    ],
    examples=[
        Example(
            "buffer.copy %src[%so], %dst[%do], %len",
            "%src: buffer, %so: offset, %dst: buffer, %do: offset, %len: offset",
        )
    ],
)

FILL = op(
    "buffer.fill",
    "Repeats the little-endian bytes of a scalar pattern over a byte range.",
    operands=[
        Operand("pattern", BYTE_PATTERN),
        Operand("target", BUFFER_T),
        Operand("target_offset", OFFSET_T),
        Operand("byte_length", OFFSET_T),
    ],
    traits=[MemoryEffect(writes=True)],
    format=[
        Ref("pattern"),
        Kw(","),
        Ref("target"),
        Subscript("target_offset"),
        Kw(","),
        Ref("byte_length"),
        Kw(":"),
        TypeOf("pattern"),
    ],
    examples=[
        Example(
            "buffer.fill %pat, %dst[%do], %len : i32",
            "%pat: i32, %dst: buffer, %do: offset, %len: offset",
        )
    ],
)

COMPARE = op(
    "buffer.compare",
    "Compares two byte ranges lexicographically as unsigned bytes: -1, 0 or 1.",
    operands=[
        Operand("lhs", BUFFER_T),
        Operand("lhs_offset", OFFSET_T),
        Operand("rhs", BUFFER_T),
        Operand("rhs_offset", OFFSET_T),
        Operand("byte_length", OFFSET_T),
    ],
    results=[Result("result", I32_T)],
    traits=[MemoryEffect(reads=True)],
    format=[
        Ref("lhs"),
        Subscript("lhs_offset"),
        Kw(","),
        Ref("rhs"),
        Subscript("rhs_offset"),
        Kw(","),
        Ref("byte_length"),
    ],
    examples=[
        Example(
            "%o = buffer.compare %l[%lo], %r[%ro], %len",
            "%l: buffer, %lo: offset, %r: buffer, %ro: offset, %len: offset",
        )
    ],
)

_ALLOCA_SPACES = ("global", "workgroup", "private", "host", "generic")


def _verify_alloca(op, ctx) -> list[Violation]:  # noqa: ANN001
    space = op.attributes.get("memory_space")
    if space not in _ALLOCA_SPACES:
        return [
            Violation(
                "STRUCTURE/014",
                f"attribute 'memory_space' value {space} must be one "
                f"of {', '.join(_ALLOCA_SPACES)}",
                "memory_space",
            )
        ]
    return _power_of_two(op, "base_alignment")


ALLOCA = op(
    "buffer.alloca",
    "Fresh uninitialised scratch storage per execution (workgroup memory is per workgroup).",
    operands=[Operand("byte_length", OFFSET_T)],
    attrs=[
        AttrDef("memory_space", AttrKind.ENUM, enum=MEMORY_SPACE),
        AttrDef("base_alignment", AttrKind.INT, optional=True),
    ],
    results=[Result("result", BUFFER_T)],
    traits=[MemoryEffect(writes=True)],
    format=[
        TemplateParam("memory_space"),
        OptionalGroup("base_alignment", Clause("align", Attr("base_alignment"))),
        Ref("byte_length"),
        Kw(":"),
        TypeOf("result"),
    ],
    legacy_formats=[[Ref("byte_length"), AttrDict(), Kw(":"), TypeOf("result")]],
    examples=[Example("%s = buffer.alloca<workgroup> align(64) %bytes : buffer", "%bytes: offset")],
    verifier=_verify_alloca,
)

OPS = (
    VIEW_OP,
    LOAD_I8_U,
    STORE_I8,
    NOALIAS,
    ALIGNMENT,
    MEMORY_SPACE_OP,
    LENGTH,
    COPY,
    FILL,
    COMPARE,
    ALLOCA,
)
