"""cfg: unstructured branches between the blocks of one region."""

from loom.dsl import (
    ANY,
    I1_T,
    Attr,
    AttrDef,
    AttrKind,
    Branch,
    Example,
    Glue,
    Kw,
    Operand,
    OptionalGroup,
    Ref,
    Refs,
    Terminator,
    TypesOf,
    op,
)

BR = op(
    "cfg.br",
    "Jumps to block dest, passing args as its block arguments.",
    operands=[Operand("args", ANY, variadic=True, doc="values for dest's block arguments")],
    attrs=[AttrDef("dest", AttrKind.BLOCK, doc="the destination block")],
    traits=[Terminator(values="args"), Branch(("dest",), ("args",))],
    format=[
        Attr("dest"),
        OptionalGroup("args", Glue(), Kw("("), Refs("args"), Kw(":"), TypesOf("args"), Kw(")")),
    ],
    builder="br",
    examples=[
        Example(
            "func.def @forward(%a: i32) -> (i32) {\n"
            "  cfg.br ^exit(%a : i32)\n"
            "^exit(%v: i32):\n"
            "  func.return %v : i32\n"
            "}",
            top_level=True,
        ),
        Example(
            "func.def @skip() {\n  cfg.br ^done\n^done:\n  func.return\n}",
            top_level=True,
        ),
    ],
)

COND_BR = op(
    "cfg.cond_br",
    "Jumps to true_dest when the condition holds, else to false_dest (neither takes values).",
    operands=[Operand("condition", I1_T)],
    attrs=[
        AttrDef("true_dest", AttrKind.BLOCK, doc="taken when the condition is true"),
        AttrDef("false_dest", AttrKind.BLOCK, doc="taken when the condition is false"),
    ],
    traits=[Terminator(), Branch(("true_dest", "false_dest"))],
    format=[Ref("condition"), Kw(","), Attr("true_dest"), Kw(","), Attr("false_dest")],
    builder="cond_br",
    examples=[
        Example(
            "func.def @pick(%c: i1, %a: i32, %b: i32) -> (i32) {\n"
            "  cfg.cond_br %c, ^yes, ^no\n"
            "^yes:\n"
            "  func.return %a : i32\n"
            "^no:\n"
            "  func.return %b : i32\n"
            "}",
            top_level=True,
        )
    ],
)

OPS = (BR, COND_BR)
