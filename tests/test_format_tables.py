"""The keyed-table format elements (scf.switch's case regions, scf.lookup's rows), typed edge
values (``cfg.br ^b(%a: T)``) and successor lists (cfg.switch): every direction of each."""

from __future__ import annotations

import pytest

from loom.builder import module_builder
from loom.errors import LoomBuilderError, LoomParseError
from loom.format.text.parser import parse_module
from loom.format.text.printer import print_module, print_plan
from loom.highlight import loom_words
from loom.ir import F32, I32, INDEX
from loom.registry import default_registry
from loom.verify import verify_module

SWITCH = """func.def @f(%s: index, %a: f32, %b: f32) -> (f32) {
  %r = scf.switch %s -> (f32) {
    case 2 {
      scf.yield %a : f32
    }
    default {
      scf.yield %b : f32
    }
  }
  func.return %r : f32
}
"""


def _parse_error(text: str) -> str:
    with pytest.raises(LoomParseError) as info:
        parse_module(text, filename="t.loom")
    d = info.value.diagnostics[0]
    return f"{d.code} {d.range.line}:{d.range.column} {d.message}"


def test_switch_regions_are_stored_default_first_and_printed_cases_first() -> None:
    module = parse_module(SWITCH)
    op = module.ops[0].regions[0].blocks[0].ops[0]
    assert op.attributes["case_keys"] == (2,)
    assert len(op.regions) == 2
    # region 0 is the default (it yields %b), region 1 the case for key 2
    assert op.regions[0].blocks[0].ops[-1].operands[0].name == "b"
    assert op.regions[1].blocks[0].ops[-1].operands[0].name == "a"
    assert print_module(module) == SWITCH


@pytest.mark.parametrize("name", ["scf.switch", "scf.lookup", "cfg.switch", "cfg.br"])
def test_table_ops_get_a_generated_print_path(name: str) -> None:
    assert print_plan(default_registry().lookup(name)).fn is not None


def test_table_words_are_highlighted() -> None:
    assert {"case", "default", "cases"} <= loom_words().keywords


@pytest.mark.parametrize(
    ("text", "want"),
    [
        # the file ends inside the case table
        ("func.def @f(%s: index) {\n  scf.switch %s {\n    case 0 {\n    }\n", "PARSE/013 2:"),
        ("func.def @f(%s: index) {\n  scf.switch %s {\n    case x {\n", "PARSE/003 3:10"),
        ("func.def @f(%s: index) {\n  scf.switch %s {\n    other {\n", "PARSE/003 3:5"),
        (
            "func.def @f(%s: index) {\n  scf.switch %s {\n    default {\n    }\n    case 1 {\n",
            "PARSE/003 5:5 expected '}' closing the case table",
        ),
        (
            "func.def @f(%s: index) {\n  scf.switch %s {\n    case 1 {\n    }\n  }\n}\n",
            "PARSE/003 5:3 'scf.switch' needs a 'default {' region",
        ),
        (
            "func.def @f(%s: index, %a: i32) {\n  %r = scf.lookup %s {\n    0 (%a)\n",
            "PARSE/003 3:7 expected '='",
        ),
        (
            "func.def @f(%s: index, %a: i32) {\n  %r = scf.lookup %s {\n  } (%a) : i32\n}\n",
            "PARSE/003 3:5 expected 'default('",
        ),
        (
            "func.def @f(%s: index, %a: i32) {\n  %r = scf.lookup %s {\n    0 = (%a, %a)\n"
            "  } default(%a) : i32\n}\n",
            "PARSE/030 4:13 table row has 1 values, but the rows before it have 2",
        ),
        (
            "func.def @f(%a: i32) {\n  cfg.br ^b(%a, %a : i32)\n^b(%x: i32, %y: i32):\n"
            "  func.return\n}\n",
            "PARSE/012 2:22 'cfg.br' has 1 types for 2 values",
        ),
        (
            "func.def @f(%a: i32) {\n  cfg.br ^b(%a)\n^b(%x: i32):\n  func.return\n}\n",
            "PARSE/003 2:15 expected ':' and the type of each value",
        ),
    ],
)
def test_malformed_tables_are_reported_where_they_go_wrong(text: str, want: str) -> None:
    assert _parse_error(text).startswith(want)


def _switch_function(keys: list[int], n_cases: int) -> tuple:
    module, b = module_builder()
    s = b.value("s", INDEX)
    a = b.value("a", F32)
    body = b.region()
    with b.insertion_block(body.blocks[0]):
        cases = []
        for _ in range(n_cases):
            r = b.region()
            with b.insertion_block(r.blocks[0]):
                b.scf.yield_(values=[a])
            cases.append(r)
        default = b.region()
        with b.insertion_block(default.blocks[0]):
            b.scf.yield_(values=[a])
        got = b.scf.switch(
            selector=s,
            case_keys=keys,
            case_regions=cases,
            default_region=default,
            results=[F32],
            name="r",
        )
        b.func.return_(operands=got)
    b.func.def_(callee="f", args=[s, a], results=[F32], body=body)
    return module, b


def test_builder_makes_a_switch_that_prints_parses_and_verifies() -> None:
    module, _ = _switch_function([0, 5], 2)
    text = print_module(module)
    assert "    case 5 {\n      scf.yield %a : f32\n    }\n    default {" in text
    assert not verify_module(module).has_errors
    assert print_module(parse_module(text)) == text


def test_builder_refuses_tables_it_cannot_spell() -> None:
    with pytest.raises(LoomBuilderError, match="2 case keys need as many 'case_regions', got 1"):
        _switch_function([0, 5], 1)
    module, b = module_builder()
    s, x = b.value("s", INDEX), b.value("x", I32)
    body = b.region()
    with b.insertion_block(body.blocks[0]), pytest.raises(LoomBuilderError, match="whole rows"):
        b.scf.lookup(selector=s, case_keys=[1], values=[x, x, x], results=[I32])


def test_builder_cfg_switch_takes_blocks_or_labels() -> None:
    module, b = module_builder()
    s = b.value("s", INDEX)
    body = b.region()
    one = b.block(body, "one")
    other = b.block(body, "other")
    with b.insertion_block(body.blocks[0]):
        b.cfg.switch(selector=s, case_keys=[1, 3], case_dests=[one, "^other"], default_dest=other)
    for blk in (one, other):
        with b.insertion_block(blk):
            b.func.return_()
    b.func.def_(callee="f", args=[s], body=body)
    text = print_module(module)
    assert "cfg.switch %s cases [1, 3] -> [^one, ^other] default ^other" in text
    assert not verify_module(module).has_errors


def test_builder_switch_without_regions_gets_an_empty_default() -> None:
    module, b = module_builder()
    s = b.value("s", INDEX)
    body = b.region()
    with b.insertion_block(body.blocks[0]):
        b.scf.switch(selector=s, case_keys=[], results=[])
        b.func.return_()
    b.func.def_(callee="f", args=[s], body=body)
    assert "  scf.switch %s {\n    default {\n    }\n  }\n" in print_module(module)
    assert not verify_module(module).has_errors
