"""The vector constructors: text, verifier rules, and a clear refusal at run time."""

from __future__ import annotations

import numpy as np
import pytest

from loom.errors import LoomRuntimeError
from loom.format.text.parser import parse_module
from loom.format.text.printer import print_module
from loom.interp import launch
from loom.verify import verify_module

HEAD = """target.generic<reference> @t

kernel.def target(@t) @k() {
  %c1 = index.constant 1 : index
  kernel.launch.config workgroups(%c1, %c1, %c1) workgroup_size(%c1, %c1, %c1) : index
} launch(%x: i32) {
"""


def kernel(*lines: str) -> str:
    """A kernel whose body is ``lines`` (the body starts on line 7)."""
    return HEAD + "".join(f"  {x}\n" for x in lines) + "  kernel.return\n}\n"


@pytest.mark.parametrize(
    "line",
    [
        "%v = vector.constant 0.0 : vector<4xf32>",
        "%v = vector.constant false : vector<128xi1>",
        "%v = vector.constant -3 : vector<2x8xi32>",
        "%v = vector.splat %x : vector<8xi32>",
    ],
)
def test_constructors_round_trip_and_verify(line: str) -> None:
    text = kernel(line)
    module = parse_module(text)
    assert not verify_module(module).diagnostics
    assert print_module(module) == text


@pytest.mark.parametrize(
    ("line", "code", "fragment"),
    [
        ("%v = vector.constant 1 : vector<4xf32>", "TYPE/005", "float literal"),
        ("%v = vector.constant 0.5 : vector<4xi32>", "TYPE/005", "integer literal"),
        ("%v = vector.constant 300 : vector<4xi8>", "TYPE/005", "does not fit"),
        ("%v = vector.constant 0.0 : f32", "TYPE/004", "vector"),
        ("%v = vector.splat %x : vector<8xi64>", "TYPE/001", "element type i64"),
        ("%v = vector.splat %x : i32", "TYPE/004", "vector"),
    ],
)
def test_constructor_verifier_rules(line: str, code: str, fragment: str) -> None:
    diags = verify_module(parse_module(kernel(line), filename="v.loom")).diagnostics
    assert [d.code for d in diags] == [code], [(d.code, d.message) for d in diags]
    assert diags[0].range is not None and diags[0].range.line == 7
    assert fragment in diags[0].message


def test_vectors_are_refused_at_run_time_with_the_op_named() -> None:
    module = parse_module(kernel("%v = vector.splat %x : vector<8xi32>"), filename="v.loom")
    with pytest.raises(LoomRuntimeError, match="'vector.splat' is not executable") as e:
        launch(module, "k", args=[np.int32(3)])
    assert e.value.diagnostics[0].code == "RUNTIME/013"
    assert e.value.diagnostics[0].range.line == 7
