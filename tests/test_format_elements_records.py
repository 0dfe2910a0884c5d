"""The record elements: LocalType (declaration-local names), CoResultType (a type naming its
own op's results) and TemplateFlags, on the generic and the generated print paths."""

from __future__ import annotations

import pytest

from loom.errors import LoomParseError
from loom.format.text.parser import parse_module
from loom.format.text.printer import Printer, print_module
from loom.ir import INDEX, DynamicDim


def _generic(module, locations: bool = False) -> str:  # noqa: ANN001
    p = Printer(print_locations=locations)
    p._plan = lambda op: None  # type: ignore[method-assign]
    return p.print_module(module)


TEXTS = [
    "global.variable @sq : view<[%n]x[%n]xf32> where [mul(%n, 4)]\n",
    "config.decl @c : %value: index where [range(%value, 1, 8)]\n",
    "config.def @d = 0 : index\n",
    "global.variable @g : view<[%n]x[%n]xf32>\n\n"
    "func.def @f() -> (index) {\n"
    "  %v, %k = global.load @g : view<[%k]x[%k]xf32>\n"
    "  func.return %k : index\n"
    "}\n",
    "test.record @r\n\ntest.func @t() {\n  test.template_param_symbol_flags<@r, debug>\n"
    "  test.yield\n}\n",
]


@pytest.mark.parametrize("text", TEXTS)
def test_generated_and_generic_printers_agree(text: str) -> None:
    m = parse_module(text)
    assert print_module(m) == text
    assert _generic(m) == text
    assert print_module(m, print_locations=True) == _generic(m, locations=True)


def test_local_names_are_arguments_of_the_names_region() -> None:
    m = parse_module(TEXTS[0])
    op = m.ops[0]
    (n,) = op.regions[0].blocks[0].args
    t = op.attributes["type"][0]
    assert n.type == INDEX and all(isinstance(d, DynamicDim) and d.value is n for d in t.dims)
    assert op.attributes["predicates"][0].args[0] is n
    own = parse_module(TEXTS[1]).ops[0].regions[0].blocks[0].args[-1]
    assert own.name == "value" and own.type == INDEX
    assert not parse_module(TEXTS[2]).ops[0].regions  # no names, no region


def test_co_results_are_the_results_the_type_names() -> None:
    m = parse_module(TEXTS[3])
    load = m.ops[1].regions[0].blocks[0].ops[0]
    v, k = load.results
    assert [d.value for d in v.type.dims] == [k, k] and k.type == INDEX


def test_co_results_need_result_names() -> None:
    with pytest.raises(LoomParseError, match="expected result names"):
        parse_module("func.def @f() {\n  global.load @g : f32\n  func.return\n}\n")
