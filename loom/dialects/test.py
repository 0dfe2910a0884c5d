"""test: harness ops the corpora use as sinks and stand-in target records."""

from loom.dialects.target import TARGET_GENERIC
from loom.dsl import (
    ANY,
    AttrDef,
    AttrDict,
    AttrKind,
    EnumDef,
    Example,
    Kw,
    Operand,
    Refs,
    Symbol,
    SymbolRef,
    TemplateParam,
    TypesOf,
    op,
)

TEST_TARGET = op(
    "test.target",
    "A synthetic target record for toolchain tests; kernels name it with target(@...).",
    attrs=[
        AttrDef("kind", AttrKind.ENUM, enum=EnumDef("kind", ("low_core", "quirky"))),
        # the same optional overrides as a real target record
        *(a for a in TARGET_GENERIC.attrs if a.name not in ("kind",)),
    ],
    traits=[Symbol("symbol", kind="record")],
    format=[TemplateParam("kind"), SymbolRef("symbol"), AttrDict()],
    builder="target",
    examples=[
        Example("test.target<low_core> @bench", top_level=True),
        Example("test.target<quirky> @odd {subgroup_size = 16}", top_level=True),
    ],
)

USE = op(
    "test.use",
    "A sink that keeps its operands alive; it does nothing at run time.",
    operands=[Operand("values", ANY, variadic=True)],
    format=[Refs("values"), Kw(":"), TypesOf("values")],
    builder="use",
    examples=[Example("test.use %a, %x : i32, f32", "%a: i32, %x: f32")],
)

OPS = (TEST_TARGET, USE)
