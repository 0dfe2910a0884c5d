"""Compiled print plans give byte-identical output to the generic format walk."""

from __future__ import annotations

import pytest
from test_roundtrip_property import random_module

from loom.format.elements import ResultTypeList, walk
from loom.format.text import printer as printer_module
from loom.format.text.parser import parse_module
from loom.format.text.printer import Printer, print_module


def generic_text(module) -> str:  # noqa: ANN001
    p = Printer()
    p._plan = lambda op: None  # type: ignore[method-assign]
    return p.print_module(module)


@pytest.mark.parametrize("seed", range(12))
def test_plans_match_generic_walk(seed: int) -> None:
    module = random_module(seed)
    assert print_module(module) == generic_text(module)


def test_op_lines_point_at_each_ops_first_line() -> None:
    text = (
        "target.generic<reference> @t\n\nkernel.def @k() {\n  %c1 = index.constant 1 : index\n"
        "  kernel.launch.config workgroups(%c1, %c1, %c1) workgroup_size(%c1, %c1, %c1) : index\n"
        "} launch(%p: i1) {\n  scf.if %p {\n    %x = index.constant 2 : index\n  }\n"
        "  kernel.return\n}\n"
    )
    module = parse_module(text)
    p = Printer()
    assert p.print_module(module) == text
    lines = text.splitlines()
    for op in module.walk():
        if id(op) in p.op_lines:
            line = lines[p.op_lines[id(op)] - 1].strip()
            assert op.name in line
    assert len(p.op_lines) == sum(1 for _ in module.walk()) - 1  # the elided scf.yield


def test_malformed_op_still_reports_print_error() -> None:
    from loom.errors import LoomPrintError
    from loom.ir import Operation

    module = parse_module("target.generic<reference> @t\n")
    module.ops.append(Operation("index.add"))
    with pytest.raises(LoomPrintError):
        print_module(module)
    assert printer_module.INDENT == "  "


# --------------------------------------------------------------------------- generated plans

import sys  # noqa: E402
from pathlib import Path  # noqa: E402

from loom.format.text.print_plan import PrintPlan  # noqa: E402
from loom.format.text.printer import _HELPERS, consumed_attrs  # noqa: E402
from loom.ir import Operation  # noqa: E402
from loom.registry import as_registry  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "corpus"))
from conftest import split_cases  # noqa: E402

CORPUS_CASES = [
    "\n".join(case.input_lines) + "\n"
    for path in sorted((ROOT / "tests" / "corpus").rglob("*.loom-test"))
    for mode, cases in [split_cases(path.read_text(encoding="utf-8"))]
    if mode == "roundtrip"
    for case in cases
]


def generic_with_locations(module) -> str:  # noqa: ANN001
    p = Printer(print_locations=True)
    p._plan = lambda op: None  # type: ignore[method-assign]
    return p.print_module(module)


def test_every_declaration_but_attr_typed_result_lists_gets_a_plan() -> None:
    missing = [
        d.name for d in as_registry(None) if PrintPlan(d, consumed_attrs(d), _HELPERS).fn is None
    ]
    attr_typed = [
        d.name
        for d in as_registry(None)
        if any(isinstance(e, ResultTypeList) and d.attr(e.field) for e in walk(d.format))
    ]
    assert "func.def" in attr_typed
    assert missing == attr_typed


@pytest.mark.parametrize("k", range(len(CORPUS_CASES)))
def test_plans_match_generic_walk_on_the_corpus(k: int) -> None:
    module = parse_module(CORPUS_CASES[k], filename="case.loom")
    assert print_module(module) == generic_text(module)
    assert print_module(module, print_locations=True) == generic_with_locations(module)


@pytest.mark.parametrize("seed", range(6))
def test_plans_match_generic_walk_with_locations(seed: int) -> None:
    module = random_module(seed)
    assert print_module(module, print_locations=True) == generic_with_locations(module)


def test_ops_that_do_not_fit_their_declaration_fall_back_to_the_generic_walk() -> None:
    from loom.errors import LoomPrintError

    text = (
        "kernel.def @k() {\n  %c1 = index.constant 1 : index\n"
        "  kernel.launch.config workgroups(%c1, %c1, %c1) workgroup_size(%c1, %c1, %c1) : index\n"
        "} launch(%p: i1, %a: i32, %b: i32) {\n  %s = scalar.addi %a, %b : i32\n"
        "  %c = scalar.cmpi slt, %a, %b : i32\n  kernel.return\n}\n"
    )
    body = parse_module(text).ops[0].regions[1].blocks[0]
    add, cmp = body.ops[0], body.ops[1]
    # An enum value whose text would change the spacing prints exactly as the generic walk.
    module = parse_module(text)
    module.ops[0].regions[1].blocks[0].ops[1].attributes = {"predicate": ")odd"}
    assert print_module(module) == generic_text(module)
    assert "slt" not in print_module(module)
    # Extra operands and missing attributes are reported, not silently printed.
    for broken in (
        Operation(add.name, (*add.operands, add.operands[0]), add.results),
        Operation(cmp.name, cmp.operands, cmp.results),
    ):
        module = parse_module(text)
        module.ops[0].regions[1].blocks[0].ops.insert(0, broken)
        with pytest.raises(LoomPrintError):
            print_module(module)


def test_region_op_falling_back_prints_its_lines_once() -> None:
    text = (
        "kernel.def @k() {\n  %c1 = index.constant 1 : index\n"
        "  kernel.launch.config workgroups(%c1, %c1, %c1) workgroup_size(%c1, %c1, %c1) : index\n"
        "} launch(%p: i1) {\n  scf.if %p {\n    %x = index.constant 2 : index\n  }\n"
        "  kernel.return\n}\n"
    )
    module = parse_module(text)
    kernel = module.ops[0]
    # Only the config region: the plan prints it, then finds no body and hands over.
    module.ops[0] = Operation(kernel.name, attributes=kernel.attributes, regions=kernel.regions[:1])
    from loom.errors import LoomPrintError

    with pytest.raises(LoomPrintError, match="missing region 'body'"):
        print_module(module)
    assert module.ops[0].regions[0].blocks[0].ops  # untouched


def test_type_texts_follow_value_renames_between_prints() -> None:
    text = (
        "kernel.def @k() {\n  %c1 = index.constant 1 : index\n"
        "  kernel.launch.config workgroups(%c1, %c1, %c1) workgroup_size(%c1, %c1, %c1) : index\n"
        "} launch(%n: index, %x: buffer) {\n  %z = index.constant 0 : offset\n"
        "  %v = buffer.view %x[%z] : buffer -> view<[%n]xf32>\n  kernel.return\n}\n"
    )
    module = parse_module(text)
    p = Printer()
    assert p.print_module(module) == text
    module.ops[0].regions[1].blocks[0].args[0].name = "m"
    assert "view<[%m]xf32>" in p.print_module(module)
