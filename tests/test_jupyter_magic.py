"""The %%loom cell magic in a real IPython shell."""

from __future__ import annotations

from pathlib import Path

import pytest
from IPython.core.interactiveshell import InteractiveShell
from IPython.utils.capture import capture_output

from loom.format.text.printer import print_module
from loom.ir import Module

KERNELS = Path(__file__).resolve().parents[1] / "examples" / "kernels"
VADD = """\
target.generic<reference> @reference

kernel.def target(@reference) export("vadd") @vadd(%n: index) {
  %one = index.constant 1 : index
  kernel.launch.config workgroups(%n, %one, %one) workgroup_size(%one, %one, %one) : index
} launch(%n: index, %a: buffer) {
  %base = index.constant 0 : offset
  %i = kernel.workitem.dispatch.id<x> : index
  %av = buffer.view %a[%base] : buffer -> view<[%n]xi32>
  %x = view.load %av[%i] : view<[%n]xi32> -> i32
  %y = scalar.addi %x, %x : i32
  view.store %y, %av[%i] : i32, view<[%n]xi32>
  kernel.return
}
"""


@pytest.fixture
def ip():
    shell = InteractiveShell.instance()
    shell.run_line_magic("load_ext", "loom_jupyter")
    yield shell
    shell.run_line_magic("unload_ext", "loom_jupyter")
    for name in ("vadd", "broken"):
        shell.user_ns.pop(name, None)


def run(ip, line: str, cell: str):
    with capture_output() as cap:
        ip.run_cell_magic("loom", line, cell)
    assert len(cap.outputs) == 1
    return cap.outputs[0].data


def test_valid_cell_shows_module_and_binds_name(ip) -> None:
    data = run(ip, "vadd", VADD)
    module = ip.user_ns["vadd"]
    assert isinstance(module, Module)
    assert print_module(module) == VADD
    lines = data["text/plain"].splitlines()
    assert lines[0] == "vadd = module (vadd.loom)"
    assert [ln[4:] for ln in lines[1:]] == VADD.splitlines()
    assert '<span class="lm-nb" style="color:#008000">scalar.addi</span>' in data["text/html"]


def test_without_name_nothing_is_bound(ip) -> None:
    before = set(ip.user_ns)
    data = run(ip, "", VADD)
    assert set(ip.user_ns) == before
    assert data["text/plain"].splitlines()[0] == "  1 target.generic<reference> @reference"


def test_print_locations(ip) -> None:
    data = run(ip, "vadd --print-locations", VADD)
    assert 'scalar.addi %x, %x : i32 loc("vadd.loom":11:3 to 11:' in data["text/plain"]


def test_verifier_errors_shown_under_the_cell_line(ip) -> None:
    bad = VADD.replace("scalar.addi %x, %x : i32", "scalar.addi %x, %i : i32")
    data = run(ip, "broken", bad)
    assert "broken" not in ip.user_ns
    lines = data["text/plain"].splitlines()
    assert lines[0].startswith("broken.loom: ") and "error" in lines[0]
    row = next(i for i, ln in enumerate(lines) if ln.startswith(" 11 "))
    assert lines[row + 1].strip().startswith("^")
    assert "error TYPE/" in lines[row + 2]
    assert 'class="loom-diag loom-error"' in data["text/html"]


def test_no_verify_binds_a_module_the_verifier_rejects(ip) -> None:
    bad = VADD.replace("scalar.addi %x, %x : i32", "scalar.addi %x, %i : i32")
    run(ip, "broken --no-verify", bad)
    assert isinstance(ip.user_ns["broken"], Module)


def test_parse_error_shows_caret_at_the_cell_position(ip) -> None:
    bad = VADD.replace("scalar.addi %x, %x : i32", "scalar.addi %x, %x i32")
    data = run(ip, "broken", bad)
    assert "broken" not in ip.user_ns
    lines = data["text/plain"].splitlines()
    assert lines[0] == "broken.loom: LoomParseError: 1 error"
    row = next(i for i, ln in enumerate(lines) if ln.startswith(" 11 "))
    caret = lines[row + 1]
    assert caret.index("^") == lines[row].index("i32")
    assert lines[row + 2].strip().startswith("error PARSE/")


def test_invalid_name_is_reported(ip) -> None:
    data = run(ip, "not-a-name", VADD)
    assert "is not a Python name" in data["text/plain"]


def test_output_is_deterministic(ip) -> None:
    assert run(ip, "vadd", VADD) == run(ip, "vadd", VADD)


@pytest.mark.parametrize("name", ["vector_add_i32", "reverse_blocks_f32"])
def test_sample_kernels_through_the_magic(ip, name: str) -> None:
    text = (KERNELS / f"{name}.loom").read_text()
    data = run(ip, name, text)
    assert print_module(ip.user_ns[name]) == text
    assert "error" not in data["text/plain"]
    ip.user_ns.pop(name)
