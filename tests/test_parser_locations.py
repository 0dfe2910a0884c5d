"""The compact location table behaves like the list of locations it stores."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from loom.format.text.parser import parse_module
from loom.ir import FileLocation, FusedLocation, LocationTable, Module, OpaqueLocation

_INT = st.integers(min_value=0, max_value=2**31 - 1)
_BIG = st.integers(min_value=-(2**40), max_value=2**40)
_FILE = st.builds(FileLocation, _INT, _INT, _INT, _INT, _INT, _INT)
_ODD_FILE = st.builds(FileLocation, _BIG, _BIG, _INT, _INT, _INT, _BIG)
_OTHER = st.one_of(
    st.builds(FusedLocation, st.lists(_INT, max_size=3).map(tuple)),
    st.builds(OpaqueLocation, _INT, st.binary(max_size=4)),
)
_LOCS = st.lists(st.one_of(_FILE, _ODD_FILE, _OTHER), max_size=30)


@settings(max_examples=60, deadline=None)
@given(_LOCS)
def test_table_is_the_list_it_was_given(locs: list) -> None:
    expected = [None, *locs]
    table = LocationTable(expected)
    assert len(table) == len(expected)
    assert list(table) == expected
    assert table == expected
    assert [table[i] for i in range(-len(expected), 0)] == expected
    assert table[1:] == expected[1:]
    # add() deduplicates against every entry, including those given at construction.
    for loc in locs:
        i = table.add(loc)
        assert table[i] == loc and expected.index(loc) == i
    assert len(table) == len(expected)


@settings(max_examples=60, deadline=None)
@given(_LOCS, _LOCS)
def test_add_appends_new_entries_once(first: list, second: list) -> None:
    table = LocationTable()
    ids = [table.add(loc) for loc in first + second]
    distinct = list(dict.fromkeys(first + second))
    assert list(table) == [None, *distinct]
    assert [table[i] for i in ids] == first + second


def test_append_span_and_errors() -> None:
    table = LocationTable()
    i = table.append_span(0, 3, 1, 3, 9)
    assert i == 1 and table[1] == FileLocation(0, 3, 1, 3, 9)
    assert table.add(FileLocation(0, 3, 1, 3, 9)) == 1
    assert table.append_span(0, 4, 1, 4, 2) == 2
    assert table.add(FileLocation(0, 4, 1, 4, 2)) == 2  # spans appended after the index exists
    with pytest.raises(IndexError):
        table[3]
    with pytest.raises(ValueError):
        table.append(None)
    with pytest.raises(ValueError):
        LocationTable([FileLocation(0, 1, 1, 1, 1)])


def test_module_locations_setter_and_parsed_spans() -> None:
    m = Module()
    m.locations = [None, OpaqueLocation(0, b"x")]
    assert isinstance(m.locations, LocationTable)
    assert m.location(1) == OpaqueLocation(0, b"x") and m.location(2) is None
    parsed = parse_module("target.generic<reference> @t\n  target.generic<reference> @u  \n")
    assert [parsed.location(op.location_id) for op in parsed.ops] == [
        FileLocation(0, 1, 1, 1, 29),
        FileLocation(0, 2, 3, 2, 31),
    ]


def test_spans_that_do_not_pack_are_kept_whole() -> None:
    table = LocationTable()
    odd = [
        (0, 3, 1, 4, 9),  # two lines
        (0, 3, 40000, 3, 40010),  # start column beyond the packed range
        (0, 3, 1, 3, 70000),  # end column beyond the packed range
        (2**31, 1, 1, 1, 2),  # source id beyond int32
        (256, 1, 1, 1, 2),  # source id beyond the packed range
        (0, 2**24, 1, 2**24, 2),  # line beyond the packed range
    ]
    edges = [(255, 2**24 - 1, 0x7FFF, 2**24 - 1, 0xFFFF), (0, 0, 0, 0, 0)]  # these do pack
    kept_whole = {0}
    for src, line, col, end_line, end_col in odd + edges:
        i = table.append_span(src, line, col, end_line, end_col)
        assert table[i] == FileLocation(src, line, col, end_line, end_col)
        ids = [i]
        if line == end_line:
            ids.append(table.append_line_span(src, line, col, end_col))
            assert table[ids[-1]] == table[i]
        if (src, line, col, end_line, end_col) in odd:
            kept_whole.update(ids)
    assert set(table._other) == kept_whole  # the edges are packed
    assert table.append(FileLocation(0, 1, 2, 1, 3, flags=1)) == len(table) - 1
    assert table[-1] == FileLocation(0, 1, 2, 1, 3, flags=1)


def test_parsed_value_ids_share_the_location_id_ints() -> None:
    text = "".join(f"target.generic<reference> @t{k}\n" for k in range(3)) + (
        "kernel.def @k() {\n  %c1 = index.constant 1 : index\n"
        "  kernel.launch.config workgroups(%c1, %c1, %c1) workgroup_size(%c1, %c1, %c1) : index\n"
        "} launch(%a: i32) {\n"
        + "".join(f"  %v{k} = scalar.addi %a, %a : i32\n" for k in range(400))
        + "  kernel.return\n}\n"
    )
    m = parse_module(text)
    by_value = {op.location_id: op for op in m.walk()}
    shared = [v for v in m.values if v.id in by_value and by_value[v.id].location_id is v.id]
    assert len(shared) > 390  # equal ids are one int object, not two


def test_append_line_span_matches_append_span() -> None:
    a, b = LocationTable(), LocationTable()
    for line, col, end_col in ((1, 1, 5), (2, 3, 40000), (3, 33000, 33001), (4, 7, 70000)):
        assert a.append_line_span(0, line, col, end_col) == b.append_span(
            0, line, col, line, end_col
        )
    assert a == b
    a.add(FileLocation(0, 9, 9, 9, 9))  # builds the index: later spans are indexed too
    i = a.append_line_span(0, 5, 1, 2)
    assert a.add(FileLocation(0, 5, 1, 5, 2)) == i


@settings(max_examples=40, deadline=None)
@given(_LOCS)
def test_file_rows_spell_the_same_entries(locs: list) -> None:
    table = LocationTable([None, *locs])
    rows = list(table.file_rows(1))
    assert len(rows) == len(locs)
    for row, loc in zip(rows, locs):
        if type(row) is tuple:
            flags, *fields = row
            assert FileLocation(*fields, flags=flags) == loc
        else:
            assert row == loc
