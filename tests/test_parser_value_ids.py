"""Values spelled by their id (``%12``) are found through the value table, not a name dict.

These tests pin the scoping rules that table must follow exactly like named values do: a value
is visible in its region and the regions inside it, not after its region closes, not inside an
isolated region, not before its own definition; an inner name shadows an outer value with the
same spelling; a digit name that is not the value's id (``%9`` naming value 3) still works.
Every case is parsed with each parse path (whole-line, token, general) and must agree.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_parser_fast import assert_same, parse_modes
from test_roundtrip_property import random_module

from loom.errors import LoomParseError
from loom.format.text.parser import parse_module
from loom.format.text.printer import print_module
from loom.ir import Module, Operation
from loom.ir.compare import module_diff

HEAD = """target.generic<reference> @t

kernel.def target(@t) @example() {
  %0 = index.constant 1 : index
  kernel.launch.config workgroups(%0, %0, %0) workgroup_size(%0, %0, %0) : index
} launch(%1: i1, %2: f32, %3: index) {
"""
TAIL = """  kernel.return
}
"""

CANONICAL = (
    HEAD
    + """  %5 = scf.if %1 -> (f32) {
    %4 = scalar.addf %2, %2 : f32
    scf.yield %4 : f32
  } else {
    scf.yield %2 : f32
  }
  %9 = scf.for %6 = [%3 to %3 step %3](%7 = %5 : f32) -> (f32) {
    %8 = scalar.addf %7, %5 : f32
    scf.yield %8 : f32
  }
  %10 = scalar.addf %9, %2 : f32
"""
    + TAIL
)


def body(module: Module) -> list[Operation]:
    kernel = module.symbols["example"]
    return kernel.regions[1].blocks[0].ops


def parsed_every_way(text: str) -> Module:
    """The module from every parse path (they must agree); raises the first path's error."""
    modes = parse_modes(text)
    assert_same(text)
    if isinstance(modes[0], str):
        parse_module(text, filename="t.loom")  # raises the error
    return modes[0]  # type: ignore[return-value]


def test_id_spelled_values_round_trip_and_resolve() -> None:
    m = parsed_every_way(CANONICAL)
    assert print_module(m) == CANONICAL
    assert all(v.name is None for v in m.values)
    if_op, for_op, add = body(m)[:3]
    inner = if_op.regions[0].blocks[0].ops
    assert inner[0].operands == (m.values[2], m.values[2])
    assert inner[1].operands == (inner[0].results[0],)
    assert for_op.operands[-1] is if_op.results[0]
    loop = for_op.regions[0].blocks[0]
    assert loop.ops[0].operands == (loop.args[1], if_op.results[0])
    assert add.operands == (for_op.results[0], m.values[2])


def test_an_inner_digit_name_shadows_the_outer_value_with_that_id() -> None:
    text = (
        HEAD
        + """  %5 = scf.if %1 -> (f32) {
    %2 = scalar.addf %2, %2 : f32
    scf.yield %2 : f32
  } else {
    scf.yield %2 : f32
  }
  %6 = scalar.addf %5, %2 : f32
"""
        + TAIL
    )
    m = parsed_every_way(text)
    assert print_module(m) == text
    arg = m.values[2]
    if_op, add = body(m)[:2]
    then, other = (r.blocks[0].ops for r in if_op.regions)
    shadow = then[0].results[0]
    assert shadow.id == 4 and shadow.name == "2"
    assert then[0].operands == (arg, arg)  # defined after its own operands are read
    assert then[1].operands == (shadow,)  # the inner name wins inside its region
    assert other[0].operands == (arg,)  # a sibling region sees the outer value
    assert add.operands == (if_op.results[0], arg)  # and so does everything after


def test_digit_names_that_are_not_ids_round_trip() -> None:
    text = (
        HEAD
        + """  %77 = scalar.addf %2, %2 : f32
  %5 = scalar.addf %77, %2 : f32
  %0 = scalar.addf %5, %77 : f32
"""
        + TAIL
    )
    m = parsed_every_way(text)
    assert print_module(m) == text
    a, b, c = body(m)[:3]
    assert (a.results[0].id, a.results[0].name) == (4, "77")
    assert (b.results[0].id, b.results[0].name) == (5, None)
    assert c.results[0].name == "0"  # value 0 lives in the config region, hidden here
    assert b.operands == (a.results[0], m.values[2])
    assert c.operands == (b.results[0], a.results[0])


def test_of_two_visible_values_spelled_alike_the_inner_one_wins() -> None:
    # Outer value spelled by digits through a name (id 4 named "7") vs an inner value spelled
    # by its id (7); then an outer value spelled by its id (9) vs an inner digit name "9".
    text = (
        HEAD
        + """  %7 = scalar.addf %2, %2 : f32
  scf.if %1 {
    %5 = scalar.addf %7, %2 : f32
    %6 = scalar.addf %2, %2 : f32
    %7 = scalar.addf %6, %2 : f32
    scf.if %1 {
      %8 = scalar.addf %7, %5 : f32
    }
  }
  %9 = scalar.addf %2, %2 : f32
  scf.if %1 {
    %9 = scalar.addf %2, %2 : f32
    scf.if %1 {
      %11 = scalar.addf %9, %2 : f32
    }
  }
"""
        + TAIL
    )
    m = parsed_every_way(text)
    assert print_module(m) == text
    named7, if1, id9, if2 = body(m)[:4]
    a5, _, id7, inner1 = if1.regions[0].blocks[0].ops[:4]
    assert a5.operands[0] is named7.results[0]
    assert inner1.regions[0].blocks[0].ops[0].operands == (id7.results[0], a5.results[0])
    assert (id9.results[0].id, id9.results[0].name) == (9, None)
    named9, inner2 = if2.regions[0].blocks[0].ops[:2]
    assert (named9.results[0].id, named9.results[0].name) == (10, "9")
    assert inner2.regions[0].blocks[0].ops[0].operands[0] is named9.results[0]


def test_an_isolated_region_does_not_see_values_defined_outside_it() -> None:
    # A value at the top level (the verifier would object; the parser's scoping must too).
    text = """%0 = index.constant 1 : index
target.generic<reference> @t

kernel.def target(@t) @example() {
  %1 = index.constant 1 : index
  kernel.launch.config workgroups(%1, %1, %1) workgroup_size(%1, %1, %1) : index
} launch(%2: index) {
  %3 = index.add %2, %USE : index
  kernel.return
}
"""
    for use in ("0", "2"):
        results = parse_modes(text.replace("%USE", "%" + use))
        if use == "0":
            assert all(isinstance(r, str) and "PARSE/001" in r and "'%0'" in r for r in results)
        else:
            assert not any(isinstance(r, str) for r in results)


@pytest.mark.parametrize(
    ("lines", "code", "token"),
    [
        pytest.param(
            """  %5 = scf.if %1 -> (f32) {
    %4 = scalar.addf %2, %2 : f32
    scf.yield %4 : f32
  } else {
    scf.yield %2 : f32
  }
  %6 = scalar.addf %4, %2 : f32
""",
            "PARSE/001",
            "%4",
            id="used-after-its-region-closed",
        ),
        pytest.param(
            "  %4 = index.add %0, %3 : index\n",
            "PARSE/001",
            "%0",
            id="from-outside-an-isolated-region",
        ),
        pytest.param(
            "  %4 = scalar.addf %4, %2 : f32\n", "PARSE/001", "%4", id="used-by-its-own-definition"
        ),
        pytest.param(
            """  scf.for %4 = [%4 to %3 step %3] {
  }
""",
            "PARSE/001",
            "%4",
            id="loop-variable-in-its-own-bounds",
        ),
        pytest.param(
            "  %4 = index.add %3, %6 : index\n", "PARSE/001", "%6", id="an-id-not-yet-defined"
        ),
        pytest.param(
            "  %4 = scalar.addf %2, %2 : f32\n  %4 = scalar.addf %2, %2 : f32\n",
            "PARSE/002",
            "%4",
            id="id-then-the-same-digits",
        ),
        pytest.param(
            "  %5 = scalar.addf %2, %2 : f32\n  %5 = scalar.addf %2, %2 : f32\n",
            "PARSE/002",
            "%5",
            id="digits-then-the-same-id",
        ),
        pytest.param(
            "  %4 = scalar.addf %2, %2 : f32\n  %004 = scalar.addf %2, %2 : f32\n",
            "PARSE/002",
            "%004",
            id="an-id-spelled-with-leading-zeros-twice",
        ),
    ],
)
def test_scoping_errors(lines: str, code: str, token: str) -> None:
    text = HEAD + lines + TAIL
    results = parse_modes(text)
    assert all(isinstance(r, str) for r in results), "every path must reject the text"
    assert len(set(results)) == 1, "every path must report the same error"
    with pytest.raises(LoomParseError) as e:
        parse_module(text, filename="t.loom")
    d = e.value.diagnostics[0]
    assert d.code == code
    assert f"'{token}'" in d.message


# ---------------------------------------------------------------------- property


def respell(module: Module, rng: random.Random) -> None:
    """Give values random spellings: their id, a fresh word, or fresh digits (not an id)."""
    fresh = len(module.values) + 1000
    for k, v in enumerate(module.values):
        choice = rng.random()
        if choice < 0.4:
            v.name = None
        elif choice < 0.7:
            v.name = str(fresh + k)
        else:
            v.name = f"v{k}"


def check_respelled(seed: int) -> None:
    rng = random.Random(seed)
    module = random_module(seed)
    respell(module, rng)
    text = print_module(module)
    parsed = parsed_every_way(text)
    assert module_diff(module, parsed, locations=False) is None, text
    assert print_module(parsed) == text


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 2**32))
def test_respelled_modules_round_trip_on_every_path(seed: int) -> None:
    check_respelled(seed)


@pytest.mark.slow
@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 2**32))
def test_respelled_modules_round_trip_on_every_path_long(seed: int) -> None:
    check_respelled(seed)
