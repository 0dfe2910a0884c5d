"""buffer: untyped storage roots, raw byte access and facts about roots."""

from loom.dialects._memory import BYTE_SCALAR_TEXT, FENCE_ORDERING, facts, is_byte_scalar
from loom.dialects._shapes import MEMORY_SPACE, SCOPE
from loom.dialects.encoding import view_layout_check
from loom.dsl import (
    BUFFER_T,
    I32_T,
    OFFSET_T,
    VIEW,
    AlignedRefs,
    Attr,
    AttrDef,
    AttrDict,
    AttrKind,
    Clause,
    Example,
    FormatElement,
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
    TypeConstraint,
    TypeOf,
    TypesOf,
    Violation,
    op,
)


def _position(buffer: str, offset: str | None = None) -> list[Operand]:
    """A byte position: a buffer and a byte offset into it (``offset``: ``<buffer>_offset``)."""
    return [Operand(buffer, BUFFER_T), Operand(offset or f"{buffer}_offset", OFFSET_T)]


def _position_format(buffer: str, offset: str | None = None) -> list[FormatElement]:
    """``%buf[%off]``: how a byte position (:func:`_position`) is written."""
    return [Ref(buffer), Subscript(offset or f"{buffer}_offset")]


VIEW_OP = op(
    "buffer.view",
    "A typed, non-owning view of a buffer starting at a byte offset.",
    operands=_position("buffer", "byte_offset"),
    results=[Result("result", VIEW)],
    traits=[Pure()],
    format=[
        *_position_format("buffer", "byte_offset"),
        Kw(":"),
        TypeOf("buffer"),
        Kw("->"),
        TypeOf("result"),
    ],
    verifier=view_layout_check,
    examples=[
        Example(
            "%v = buffer.view %buf[%off] : buffer -> view<16xf32>", "%buf: buffer, %off: offset"
        ),
        Example(
            "%v = buffer.view %buf[%off] : buffer -> view<[%n]xf32>",
            "%n: index, %buf: buffer, %off: offset",
        ),
        Example(
            "%v = buffer.view %buf[%off] : buffer -> view<16x32xf32, %layout>",
            "%layout: encoding<layout>, %buf: buffer, %off: offset",
        ),
    ],
)

LOAD_I8_U = op(
    "buffer.load.i8.u",
    "Reads one byte and zero-extends it to i32.",
    operands=_position("source", "byte_offset"),
    results=[Result("result", I32_T)],
    traits=[MemoryEffect(reads=True)],
    format=_position_format("source", "byte_offset"),
    builder="load_i8_u",
    examples=[Example("%b = buffer.load.i8.u %src[%off]", "%src: buffer, %off: offset")],
)

STORE_I8 = op(
    "buffer.store.i8",
    "Writes the low 8 bits of an i32 value.",
    operands=[Operand("value", I32_T), *_position("target", "byte_offset")],
    traits=[MemoryEffect(writes=True)],
    format=[Ref("value"), Kw(","), *_position_format("target", "byte_offset")],
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
                f"attribute '{attr}' value {value} must be a positive power-of-two byte alignment",
                attr,
            )
        ]
    return []


BYTE_PATTERN = TypeConstraint(
    f"an 8/16/32/64-bit scalar pattern ({BYTE_SCALAR_TEXT})", is_byte_scalar
)


def _space_number(space: object) -> int:
    return MEMORY_SPACE.cases.index(space) if space in MEMORY_SPACE.cases else -1


def _verify_assumed_space(op, ctx) -> list[Violation]:  # noqa: ANN001
    space = op.attributes.get("memory_space")
    if space == "unknown":
        return [
            Violation(
                "STRUCTURE/014",
                "attribute 'memory_space' value unknown (0) must be a concrete memory space",
                "memory_space",
            )
        ]
    if op.operands:
        producer = facts(ctx).producer.get(op.operands[0].id)
        known = (
            producer.attributes.get("memory_space")
            if producer is not None and producer.name in (ALLOCA.name, MEMORY_SPACE_OP.name)
            else None
        )
        if known is not None and known != space:
            return [
                Violation(
                    "STRUCTURE/014",
                    f"attribute 'memory_space' value {space} ({_space_number(space)}) "
                    f"contradicts the existing memory-space fact {_space_number(known)} "
                    f"({known})",
                    "memory_space",
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
    verifier=_verify_assumed_space,
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

_BYTE_LENGTH = Operand("byte_length", OFFSET_T)


def _two_ranges(a: str, b: str) -> dict:
    """``%a[%a_offset], %b[%b_offset], %byte_length``: two byte ranges of one length."""
    return dict(
        operands=[*_position(a), *_position(b), _BYTE_LENGTH],
        format=[*_position_format(a), Kw(","), *_position_format(b), Kw(","), Ref("byte_length")],
    )


COPY = op(
    "buffer.copy",
    "Copies byte_length bytes between non-overlapping ranges.",
    **_two_ranges("source", "target"),
    traits=[MemoryEffect(reads=True, writes=True)],
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
    operands=[Operand("pattern", BYTE_PATTERN), *_position("target"), _BYTE_LENGTH],
    traits=[MemoryEffect(writes=True)],
    format=[
        Ref("pattern"),
        Kw(","),
        *_position_format("target"),
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
    **_two_ranges("lhs", "rhs"),
    results=[Result("result", I32_T)],
    traits=[MemoryEffect(reads=True)],
    examples=[
        Example(
            "%o = buffer.compare %l[%lo], %r[%ro], %len",
            "%l: buffer, %lo: offset, %r: buffer, %ro: offset, %len: offset",
        )
    ],
)

_ALLOCA_SPACES = ("workgroup", "private")
"""What the stored upstream corpus allows (its newest declaration also lists global, host and
generic; the reference interpreter has workgroup and private scratch only)."""


def _verify_alloca(op, ctx) -> list[Violation]:  # noqa: ANN001
    space = op.attributes.get("memory_space")
    if space not in _ALLOCA_SPACES:
        return [
            Violation(
                "STRUCTURE/014",
                f"attribute 'memory_space' value {space} ({_space_number(space)}) must be "
                "workgroup or private memory space",
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
    # upstream's corpora print the dictionary form; the template/clause form also parses
    format=[Ref("byte_length"), AttrDict(), Kw(":"), TypeOf("result")],
    legacy_formats=[
        [
            TemplateParam("memory_space"),
            OptionalGroup("base_alignment", Clause("align", Attr("base_alignment"))),
            Ref("byte_length"),
            Kw(":"),
            TypeOf("result"),
        ]
    ],
    examples=[
        Example(
            "%s = buffer.alloca %bytes {base_alignment = 64, memory_space = workgroup} : buffer",
            "%bytes: offset",
        )
    ],
    verifier=_verify_alloca,
)


def _verify_pack(op, ctx) -> list[Violation]:  # noqa: ANN001
    n = len(op.operands)
    if not n:
        return [
            Violation(
                "STRUCTURE/014",
                "attribute 'byte_lengths' count 0: needs at least one physical byte range",
                "byte_lengths",
            )
        ]
    aligns = op.attributes.get("minimum_alignments") or ()
    if len(aligns) != n:
        return [
            Violation(
                "STRUCTURE/014",
                f"attribute 'minimum_alignments' has {len(aligns)} entries; needs one entry per "
                "byte length",
                "minimum_alignments",
            )
        ]
    for i, a in enumerate(aligns):
        if a <= 0 or a & (a - 1):
            return [
                Violation(
                    "STRUCTURE/014",
                    f"attribute 'minimum_alignments[{i}]' value {a} must be a positive "
                    "power-of-two byte alignment",
                    "minimum_alignments",
                )
            ]
    return []


PACK = op(
    "buffer.pack",
    "Lays byte ranges out one after another, each at the next multiple of its alignment: the "
    "total length (rounded up to the largest alignment) and each range's offset. Pure.",
    operands=[Operand("byte_lengths", OFFSET_T, variadic=True)],
    attrs=[AttrDef("minimum_alignments", AttrKind.I64_ARRAY)],
    results=[
        Result("total_byte_length", OFFSET_T),
        Result("byte_offsets", OFFSET_T, variadic=True),
    ],
    traits=[Pure(), SameTypeAt("byte_lengths", "byte_offsets")],
    format=[
        AlignedRefs("byte_lengths", "minimum_alignments", results="byte_offsets"),
        AttrDict(),
        Kw(":"),
        TypeOf("total_byte_length"),
    ],
    # the workbench's earlier spelling: alignments in the dictionary, every result type written
    legacy_formats=[
        [
            Refs("byte_lengths"),
            AttrDict(),
            Kw(":"),
            TypesOf("total_byte_length", "byte_offsets"),
        ]
    ],
    examples=[
        Example(
            "%total, %h, %p = buffer.pack [align(16) %a, align(256) %b] : offset",
            "%a: offset, %b: offset",
        )
    ],
    verifier=_verify_pack,
    verifier_cacheable=True,
)

SAME_ROOT = op(
    "buffer.assume.same_root",
    "Returns the buffer unchanged, asserting it names the same allocation as `root`.",
    operands=[Operand("buffer", BUFFER_T), Operand("root", BUFFER_T)],
    results=[Result("result", BUFFER_T)],
    traits=[Pure()],
    format=[Ref("buffer"), Kw(","), Ref("root"), Kw(":"), TypeOf("result")],
    examples=[Example("%s = buffer.assume.same_root %b, %r : buffer", "%b: buffer, %r: buffer")],
)

FENCE = op(
    "buffer.fence",
    "Orders this workitem's memory accesses (acquire/release) at a scope; no rendezvous, and "
    "it does not complete asynchronous transfers.",
    attrs=[
        AttrDef("scope", AttrKind.ENUM, enum=SCOPE),
        AttrDef("ordering", AttrKind.ENUM, enum=FENCE_ORDERING),
    ],
    traits=[MemoryEffect(reads=True, writes=True)],
    format=[Clause("scope", Attr("scope")), Clause("ordering", Attr("ordering"))],
    examples=[Example("buffer.fence scope(device) ordering(release)")],
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
    PACK,
    SAME_ROOT,
    FENCE,
)
