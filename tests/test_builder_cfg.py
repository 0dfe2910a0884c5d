"""Building multi-block functions: builder.block(), cfg branches, and misuse errors."""

import pytest

from loom import LoomBuilderError, module_builder
from loom.format.text.parser import parse_module
from loom.format.text.printer import print_module
from loom.ir import I1, I32
from loom.verify import verify_module


def _select_function():
    module, b = module_builder()
    c, x, y = b.value("c", I1), b.value("x", I32), b.value("y", I32)
    body = b.region()
    join = b.block(body, "join", [("r", I32)])
    yes = b.block(body, "^yes")  # the leading '^' is optional
    with b.insertion_block(body.blocks[0]):
        b.cfg.cond_br(condition=c, true_dest=yes, false_dest="join_x")
    with b.insertion_block(yes):
        b.cfg.br(dest="join", args=[x])
    with b.insertion_block(join):
        b.func.return_(operands=[join.args[0]])
    b.func.def_(callee="pick", args=[c, x, y], results=[I32], body=body)
    return module, body


def test_built_cfg_function_prints_parses_and_verifies() -> None:
    module, body = _select_function()
    # fix the deliberately wrong label, then the function is well formed
    body.blocks[0].ops[-1].attributes = {**body.blocks[0].ops[-1].attributes, "false_dest": "join"}
    diags = verify_module(module)
    assert "STRUCTURE/025" in diags.codes  # ^join takes a value, cond_br passes none
    text = print_module(module)
    assert "cfg.cond_br %c, ^yes, ^join" in text
    assert "^join(%r: i32):" in text and "cfg.br ^join(%x: i32)" in text
    again = parse_module(text)
    assert print_module(again) == text


def test_a_branch_to_an_unknown_label_is_reported() -> None:
    module, _ = _select_function()
    diags = verify_module(module)
    assert "STRUCTURE/023" in diags.codes


def test_block_misuse_is_a_builder_error() -> None:
    _, b = module_builder()
    body = b.region()
    b.block(body, "once")
    with pytest.raises(LoomBuilderError, match="already used"):
        b.block(body, "once")
    with pytest.raises(LoomBuilderError, match="not a valid label"):
        b.block(body, "has space")
    with pytest.raises(LoomBuilderError, match="needs a Region"):
        b.block(body.blocks[0], "x")
