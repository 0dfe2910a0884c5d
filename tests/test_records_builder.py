"""Builders of the module-level record ops: declaration-local names, co-results, and the text
the printer writes for what the builder made."""

from __future__ import annotations

import pytest

from loom.builder import module_builder
from loom.errors import LoomBuilderError
from loom.format.bytecode.reader import read_module
from loom.format.bytecode.writer import write_module
from loom.format.text.parser import parse_module
from loom.format.text.printer import print_module
from loom.ir import F32, INDEX, BufferType, Predicate, view_type
from loom.ir.compare import module_diff
from loom.verify import verify_module


def test_builders_make_what_the_text_spells() -> None:
    m, b = module_builder()
    n = b.value("n", INDEX)
    b.global_.variable(
        symbol="square",
        results=[view_type(F32, n, n)],
        local_names=[n],
        predicates=[Predicate("mul", (n, 8))],
    )
    b.global_.constant(symbol="gain", results=[F32], initializer=0.5)
    b.global_.def_(symbol="table", contents="0102", alignment=2)
    b.config.def_(symbol="tile", value=64, results=[INDEX])
    own = b.value("value", INDEX)
    b.config.decl(
        symbol="limit",
        results=[INDEX],
        local_names=[own],
        predicates=[Predicate("range", (own, 1, 9))],
    )
    body = b.region()
    with b.insertion_block(body.blocks[0]):
        stand_in = b.value(None, INDEX)  # any value: the builder rebinds it to the co-result
        view, k = b.global_.load(
            global_="square", results=[view_type(F32, stand_in, stand_in), INDEX], names=["v", "k"]
        )
        b.config.get(config="tile", results=[INDEX], name="t")
        b.global_.load(global_="table", results=[BufferType()], name="bytes")
        b.func.return_(operands=[k])
    b.func.def_(callee="read", results=[INDEX], body=body)
    assert view.type.dims[0].value is k and view.type.dims[1].value is k
    text = print_module(m)
    assert text == (
        "global.variable @square : view<[%n]x[%n]xf32> where [mul(%n, 8)]\n\n"
        "global.constant @gain : f32 = 0.5\n\n"
        'global.rodata.def @table = align(2) bytes("0102")\n\n'
        "config.def @tile = 64 : index\n\n"
        "config.decl @limit : %value: index where [range(%value, 1, 9)]\n\n"
        "func.def @read() -> (index) {\n"
        "  %v, %k = global.load @square : view<[%k]x[%k]xf32>\n"
        "  %t = config.get @tile : index\n"
        "  %bytes = global.load @table : buffer\n"
        "  func.return %k : index\n"
        "}\n"
    )
    assert not verify_module(m).diagnostics
    parsed = parse_module(text)
    assert module_diff(m, parsed, locations=False) is None
    assert print_module(read_module(write_module(m), verify=True)) == text


@pytest.mark.parametrize(
    ("results", "fragment"),
    [
        ([], "needs at least one result"),
        ([F32, INDEX], "takes 1 results"),
        ("square-f32", "must be index"),
    ],
)
def test_load_results_the_text_cannot_spell_are_refused(results, fragment: str) -> None:
    m, b = module_builder()
    body = b.region()
    with b.insertion_block(body.blocks[0]):
        if results == "square-f32":
            d = b.value(None, INDEX)
            results = [view_type(F32, d), F32]
        with pytest.raises(LoomBuilderError, match=fragment):
            b.global_.load(global_="g", results=results)


def test_an_attribute_equal_to_its_declared_default_is_not_stored() -> None:
    m, b = module_builder()
    v = b.value("v", view_type(F32, 4))
    body = b.region()
    with b.insertion_block(body.blocks[0]):
        b.sanitizer.race_access(kind="read", view=v, indices=[0], atomic=False)
        plain = b.last_op
        b.sanitizer.race_access(
            kind="write", view=v, indices=[1], atomic=True, ordering="release", scope="device"
        )
        atomic = b.last_op
        b.func.return_(operands=[])
    assert "atomic" not in plain.attributes and atomic.attributes["atomic"] is True
    b.func.def_(callee="f", args=[v], body=body)
    text = print_module(m)
    assert "sanitizer.race.access<read> %v[0] : view<4xf32>" in text
    assert module_diff(m, parse_module(text), locations=False) is None
