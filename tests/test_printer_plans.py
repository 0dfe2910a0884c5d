"""Compiled print plans give byte-identical output to the generic format walk."""

from __future__ import annotations

import pytest
from test_roundtrip_property import random_module

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
