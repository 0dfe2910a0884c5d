"""Locations end to end: a toy frontend's mistakes are reported at the toy source."""

from __future__ import annotations

import pytest

from loom.examples.toyfront import ToySyntaxError, compile_toy
from loom.format.bytecode import read_module, write_module
from loom.format.text.parser import parse_module
from loom.format.text.printer import print_module
from loom.ir import FileLocation
from loom.verify import verify_module

GOOD = "y = x * 3 + 1\nif x > 10: barrier\n"
# Line 2 binds z inside the if; line 3 uses it outside (the toy frontend does not check this);
# line 4 puts a barrier under a lane-dependent condition.
BAD = "y = x * 3 + 1\nif x > 10: z = y - 10\ny = z + lane\nif lane < 4: barrier\n"


def test_valid_toy_program_verifies_and_prints_its_locations() -> None:
    module = compile_toy("y = x * 3 + 1\n")
    assert verify_module(module).codes == []
    text = print_module(module, print_locations=True)
    assert "scalar.muli %x, %" in text and 'loc("prog.toy":1:5 to 1:10)' in text


def test_barrier_under_data_dependent_control_is_reported_at_the_toy_line() -> None:
    # x comes from memory indexed by the workitem: lane-varying, so the barrier is divergent.
    diags = verify_module(compile_toy(GOOD))
    assert diags.codes == ["STRUCTURE/038"]
    lines = diags[0].render().splitlines()
    assert lines[0].startswith("prog.toy:2:12: error STRUCTURE/038: 'kernel.barrier' needs")
    assert lines[1:3] == ["if x > 10: barrier", "           ^~~~~~~"]


def test_toy_mistakes_point_at_the_toy_source(tmp_path) -> None:  # noqa: ANN001
    diags = verify_module(compile_toy(BAD))
    assert diags.codes == ["DOMINANCE/001", "STRUCTURE/038"]
    scope, barrier = (d.render().splitlines() for d in diags)
    assert scope[0].startswith("prog.toy:3:5: error DOMINANCE/001: 'scalar.addi' operand 'lhs'")
    assert "region that does not enclose this use" in scope[0]
    assert scope[1:3] == ["y = z + lane", "    ^~~~~~~~"]
    assert barrier[0].startswith("prog.toy:4:14: error STRUCTURE/038")
    # Structured parameters are listed on their own line, never in the headline.
    assert "{" not in barrier[0] and "control_distribution" not in barrier[0]
    assert barrier[1:3] == ["if lane < 4: barrier", "             ^~~~~~~"]
    params = [line for line in barrier if line.startswith("  params: ")]
    assert len(params) == 1
    assert 'op_name="kernel.barrier"' in params[0]
    assert 'control_distribution="lane_predicate"' in params[0]


def test_toy_source_read_from_disk_when_not_kept(tmp_path) -> None:  # noqa: ANN001
    path = tmp_path / "prog.toy"
    path.write_text(BAD)
    module = compile_toy(BAD, filename=str(path))
    module.source_texts.clear()
    text = verify_module(module)[0].render()
    assert text.splitlines()[:3] == [
        text.splitlines()[0],
        "y = z + lane",
        "    ^~~~~~~~",
    ]
    assert text.startswith(f"{path}:3:5: error DOMINANCE/001")


def test_locations_survive_text_and_bytecode_round_trips() -> None:
    module = compile_toy(GOOD)
    text = print_module(module, print_locations=True)
    reparsed = parse_module(text, filename="printed.loom")
    back = read_module(write_module(module))
    for copy in (reparsed, back):
        locs = {
            (copy.sources[loc.source_id], loc.start_line, loc.start_col)
            for loc in copy.locations
            if isinstance(loc, FileLocation)
        }
        assert ("prog.toy", 2, 12) in locs
    # After the bytecode round trip the diagnostic still points at the toy line.
    back.source_texts["prog.toy"] = GOOD
    rendered = verify_module(back)[0].render()
    assert rendered.startswith("prog.toy:2:12: error STRUCTURE/038")


def test_toy_syntax_errors_name_line_and_column() -> None:
    with pytest.raises(ToySyntaxError, match=r"prog.toy:2:5: unknown name 'q'"):
        compile_toy("y = x\ny = q + 1\n")
    with pytest.raises(ToySyntaxError, match=r"prog.toy:1:1: unexpected character"):
        compile_toy("y = x ? 1\n")
