"""cfg: unstructured branches between the blocks of one region."""

from loom.dsl import (
    ANY,
    I1_T,
    INDEX_T,
    Attr,
    AttrDef,
    AttrKind,
    Branch,
    ControlFlow,
    Example,
    Glue,
    Kw,
    Operand,
    OptionalGroup,
    Ref,
    Terminator,
    TypedRefs,
    Violation,
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
        OptionalGroup("args", Glue(), Kw("("), TypedRefs("args"), Kw(")")),
    ],
    builder="br",
    examples=[
        Example(
            "func.def @forward(%a: i32) -> (i32) {\n"
            "  cfg.br ^exit(%a: i32)\n"
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
    traits=[
        Terminator(),
        Branch(("true_dest", "false_dest")),
        ControlFlow("cfg_selector", ("condition",)),
    ],
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


def _verify_switch(op, ctx) -> list[Violation]:  # noqa: ANN001
    keys = tuple(op.attributes.get("case_keys", ()))
    dests = tuple(op.attributes.get("case_dests", ()))
    found = []
    for prev, key in zip(keys, keys[1:]):
        if key <= prev:
            found.append(
                Violation(
                    "STRUCTURE/014",
                    f"'case_keys' value {key} follows {prev}: expected a strictly increasing "
                    f"sorted unique case key (attr_name=case_keys, actual_value={key})",
                    "case_keys",
                )
            )
            break
    if len(dests) != len(keys):
        found.append(
            Violation(
                "STRUCTURE/013",
                f"case_dests count is {len(dests)}; it must equal the case key count "
                f"(expected {len(keys)})",
                "case_dests",
            )
        )
    return found


SWITCH = op(
    "cfg.switch",
    "Jumps to the case block whose key equals the selector, else to default_dest "
    "(no block takes values).",
    operands=[Operand("selector", INDEX_T)],
    attrs=[
        AttrDef("case_keys", AttrKind.I64_ARRAY, doc="strictly increasing case keys"),
        AttrDef("case_dests", AttrKind.BLOCK_LIST, doc="the block of each case key, in order"),
        AttrDef("default_dest", AttrKind.BLOCK, doc="taken when no case key matches"),
    ],
    traits=[
        Terminator(),
        Branch(("default_dest", "case_dests")),
        ControlFlow("cfg_selector", ("selector",)),
    ],
    format=[
        Ref("selector"),
        Kw("cases"),
        Attr("case_keys"),
        Kw("->"),
        Attr("case_dests"),
        Kw("default"),
        Attr("default_dest"),
    ],
    builder="switch",
    examples=[
        Example(
            "func.def @classify(%s: index, %a: i32, %b: i32, %c: i32) -> (i32) {\n"
            "  cfg.switch %s cases [0, 2] -> [^zero, ^two] default ^other\n"
            "^zero:\n"
            "  func.return %a : i32\n"
            "^two:\n"
            "  func.return %b : i32\n"
            "^other:\n"
            "  func.return %c : i32\n"
            "}",
            top_level=True,
        )
    ],
    verifier=_verify_switch,
)

OPS = (BR, COND_BR, SWITCH)
