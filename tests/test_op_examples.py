"""Foundation acceptance: every declared op's examples parse, print back exactly, and can be
rebuilt op by op through the generated builder methods to the same text."""

from __future__ import annotations

import pytest
from rebuild import rebuild

from loom.dsl import Example, OpDef
from loom.format.text.parser import parse_module
from loom.format.text.printer import print_module
from loom.ir.compare import module_diff
from loom.registry import default_registry
from loom.verify import verify_module

CASES = [(d, k, ex) for d in default_registry() for k, ex in enumerate(d.examples)]


def example_module_text(ex: Example) -> str:
    """The example as a whole module (non-top-level ones wrapped in a kernel body)."""
    if ex.top_level:
        return ex.text + "\n"
    body = "\n".join("  " + line if line else line for line in ex.text.splitlines())
    return (
        "target.generic<reference> @t\n\n"
        "kernel.def target(@t) @example() {\n"
        "  %c1 = index.constant 1 : index\n"
        "  kernel.launch.config workgroups(%c1, %c1, %c1) workgroup_size(%c1, %c1, %c1)"
        " : index\n"
        f"}} launch({ex.args}) {{\n{body}\n  kernel.return\n}}\n"
    )


@pytest.mark.parametrize(("decl", "k", "ex"), CASES, ids=[f"{d.name}-{k}" for d, k, _ in CASES])
def test_example_parses_and_prints_back(decl: OpDef, k: int, ex: Example) -> None:
    text = example_module_text(ex)
    module = parse_module(text, filename=f"{decl.name}.loom")
    assert print_module(module) == text
    assert any(op.name == decl.name for op in module.walk())


@pytest.mark.parametrize(("decl", "k", "ex"), CASES, ids=[f"{d.name}-{k}" for d, k, _ in CASES])
def test_example_rebuilt_through_builder(decl: OpDef, k: int, ex: Example) -> None:
    text = example_module_text(ex)
    parsed = parse_module(text)
    built = rebuild(parsed)
    assert print_module(built) == text
    assert module_diff(parsed, built, locations=False) is None


@pytest.mark.parametrize(("decl", "k", "ex"), CASES, ids=[f"{d.name}-{k}" for d, k, _ in CASES])
def test_example_verifies(decl: OpDef, k: int, ex: Example) -> None:
    diags = verify_module(parse_module(example_module_text(ex)))
    assert not diags.has_errors, diags.render()


def test_every_op_has_an_example() -> None:
    assert {d.name for d, _, _ in CASES} == {d.name for d in default_registry()}
