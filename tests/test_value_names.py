"""Value names of parsed modules live in one :class:`NamePool` per module, not one string per
value; ``Value.name`` reads them. These tests pin that reading, renaming and writing them back
(text and bytecode) give exactly the names of the source."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from test_parser_value_ids import HEAD, TAIL

from loom.format.bytecode import read_module, write_module
from loom.format.text.parser import parse_module
from loom.format.text.printer import print_module
from loom.ir.values import NamePool, Value

NAMED = (
    HEAD
    + """  %sum = scalar.addf %2, %2 : f32
  %a-b_$9 = scalar.addf %sum, %sum : f32
  %5 = scalar.addf %a-b_$9, %sum : f32
  scf.if %1 {
    %inner = scalar.mulf %sum, %5 : f32
  }
"""
    + TAIL
)


def test_pool_reads_queued_and_joined_names() -> None:
    pool = NamePool()
    assert pool.add(3, "%x3") and pool.add(0, "%first") and pool.add(7, "%b")
    assert pool.get(0) == "first"  # the first read joins the queue
    assert pool.add(9, "%late")  # queued after the join
    assert [pool.get(k) for k in (3, 0, 7, 9)] == ["x3", "first", "b", "late"]
    assert pool.text == "%x3%first%b%late%"


@given(
    st.lists(
        st.tuples(st.integers(0, 40), st.from_regex(r"%[a-z_][a-z0-9_$-]{0,6}", fullmatch=True))
    )
)
def test_add_name_pools_exactly_what_add_pools(items: list[tuple[int, str]]) -> None:
    # add_name takes the short way for the next id in order and defers to add otherwise.
    by_add, by_add_name = NamePool(), NamePool()
    seen: dict[int, str] = {}
    for vid, token in items:
        assert by_add.add(vid, token) == by_add_name.add_name(vid, token)
        seen[vid] = token[1:]
    assert by_add.flush() == by_add_name.flush()
    assert list(by_add.starts) == list(by_add_name.starts)
    assert {k: by_add_name.get(k) for k in seen} == seen


def test_pool_refuses_names_it_cannot_delimit() -> None:
    pool = NamePool()
    assert not pool.add(0, "x")  # no leading '%'
    assert not pool.add(1, "%a%b")  # a '%' inside would end the name early


def test_parsed_names_are_pooled_and_read_back() -> None:
    module = parse_module(NAMED)
    names = {v.name for v in module.values}
    assert {"sum", "a-b_$9", "inner"} <= names
    pooled = [v for v in module.values if v.name in ("sum", "a-b_$9", "inner")]
    assert all(isinstance(v._name, NamePool) for v in pooled)
    assert len({id(v._name) for v in pooled}) == 1  # one pool for the module
    assert print_module(module) == NAMED


def test_rename_and_bytecode_keep_names_exactly() -> None:
    module = parse_module(NAMED)
    value = next(v for v in module.values if v.name == "sum")
    value.name = "total"
    assert value.name == "total"
    assert next(v for v in module.values if v.name == "inner").name == "inner"
    text = print_module(module)
    assert "%total = scalar.addf" in text and "%sum" not in text
    assert print_module(read_module(write_module(module))) == text
    assert print_module(parse_module(text)) == text


def test_unpooled_values_keep_their_own_string() -> None:
    v = Value(0, None, "plain")  # type: ignore[arg-type]
    assert v.name == "plain" and v.display_name == "plain"
    v.name = None
    assert v.name is None and v.display_name == "0"
