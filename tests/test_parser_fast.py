"""Generated fast parse paths build exactly what the general plans build, or decline."""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_op_examples import CASES as EXAMPLES
from test_op_examples import example_module_text
from test_roundtrip_property import random_module

from loom.errors import LoomParseError
from loom.format.text import parse_format as pf
from loom.format.text import tokenizer
from loom.format.text.parser import parse_module
from loom.format.text.printer import print_module
from loom.ir.compare import module_diff
from loom.registry import as_registry

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "corpus"))
sys.path.insert(0, str(ROOT / "benchmarks"))
from common import OPS, make_module  # noqa: E402
from conftest import split_cases  # noqa: E402

CASES = [
    "\n".join(case.input_lines) + "\n"
    for path in sorted((ROOT / "tests" / "corpus").rglob("*.loom-test"))
    for mode, cases in [split_cases(path.read_text(encoding="utf-8"))]
    for case in cases
]


@contextmanager
def line_paths_off() -> Iterator[None]:
    """Parse with the compiled line paths switched off (general plans only)."""
    plans = [pf.plan_for(d) for d in as_registry(None)] + [pf.plan_for(d) for d in OPS]
    saved = [(p, p.line_re) for p in plans]
    for p in plans:
        p.line_re = None
    try:
        yield
    finally:
        for p, r in saved:
            p.line_re = r


def parse_modes(text: str, ops: object = None) -> list[object]:
    """Parse with the compiled line paths, and with the general plans only.

    Each result is a module or the parse error's rendering.
    """
    out = []
    for general_only in (False, True):
        try:
            if general_only:
                with line_paths_off():
                    got: object = parse_module(text, filename="t.loom", ops=ops)
            else:
                got = parse_module(text, filename="t.loom", ops=ops)
        except LoomParseError as e:
            got = str(e)
        out.append(got)
    return out


def both(text: str, ops: object = None) -> tuple[object, object]:
    """(result with the compiled paths, result of the general plans only)."""
    modes = parse_modes(text, ops)
    return modes[0], modes[1]


def assert_same(text: str, ops: object = None) -> None:
    first, *others = parse_modes(text, ops)
    for other in others:
        if isinstance(first, str) or isinstance(other, str):
            assert first == other
            continue
        assert module_diff(first, other) is None  # type: ignore[arg-type]
        assert [v.id for v in first.values] == [v.id for v in other.values]  # type: ignore[attr-defined]
        assert [v.name for v in first.values] == [v.name for v in other.values]  # type: ignore[attr-defined]
        assert list(first.locations) == list(other.locations)  # type: ignore[attr-defined]
        assert print_module(first, ops=ops) == print_module(other, ops=ops)  # type: ignore[arg-type]


def test_most_declarations_have_a_line_path() -> None:
    plans = [pf.plan_for(d) for d in as_registry(None)]
    lines = [p.name for p in plans if p.line_re is not None]
    assert len(lines) >= 70
    assert all(p.line_source.startswith("def _line(") for p in plans if p.line_re is not None)


def test_one_compiled_parse_path() -> None:
    from loom.format.text import codegen

    assert [k for k in codegen.KINDS if k.startswith("parse")] == ["parse_line"]


def test_the_line_path_takes_canonical_lines() -> None:
    text = print_module(make_module(200), ops=OPS)
    calls = []
    plan = pf.plan_for(next(d for d in OPS if d.name == "scalar.addf"))
    inner = plan.line_fn

    def spy(p, g, lhs, *rest):  # noqa: ANN001, ANN002, ANN202
        calls.append(lhs)
        return inner(p, g, lhs, *rest)

    plan.line_fn = spy
    try:
        parse_module(text, ops=OPS)
    finally:
        plan.line_fn = inner
    assert len(calls) == text.count("scalar.addf")


@pytest.mark.parametrize("k", range(len(CASES)))
def test_fast_equals_general_on_the_corpus(k: int) -> None:
    assert_same(CASES[k])


@pytest.mark.parametrize("seed", range(8))
def test_fast_equals_general_on_random_modules(seed: int) -> None:
    assert_same(print_module(random_module(seed)))


@pytest.mark.parametrize(
    ("decl", "k", "ex"), EXAMPLES, ids=[f"{d.name}-{k}" for d, k, _ in EXAMPLES]
)
def test_fast_equals_general_on_every_declared_example(decl: object, k: int, ex: object) -> None:
    assert_same(example_module_text(ex))  # type: ignore[arg-type]


def test_fast_equals_general_on_the_benchmark_module() -> None:
    assert_same(print_module(make_module(400), ops=OPS), OPS)


HEAD = (
    "kernel.def @k() {\n  %c1 = index.constant 1 : index\n"
    "  kernel.launch.config workgroups(%c1, %c1, %c1) workgroup_size(%c1, %c1, %c1) : index\n"
    "} launch(%n: index, %x: buffer, %a: i32, %b: i32, %f: f32) {\n"
    "  %z = index.constant 0 : offset\n  %v = buffer.view %x[%z] : buffer -> view<[%n]xf32>\n"
)
LINES = [
    "%s = scalar.addi %a, %b : i32",
    "%s = scalar.addi<nsw|nuw> %a, %b : i32",
    "%s = scalar.addi<nuw|nsw> %a, %b : i32",
    "%s = scalar.addi<bogus> %a, %b : i32",
    "%s = scalar.addi %a, %b : i64",
    "%s = scalar.addi %a, %q : i32",
    '%s = scalar.addi %a, %b : i32 loc("f.py":3:4)',
    "%s = scalar.addi %a, %b : i32 extra",
    "%s, %t = scalar.addi %a, %b : i32",
    "%a = scalar.addi %a, %b : i32",
    "%7 = scalar.addi %a, %b : i32",
    "%s = index.constant 0x10 : index",
    "%s = index.constant -3 : index",
    "%s = index.constant 12 : index",
    "%s = scalar.cmpi slt, %a, %b : i32",
    "%s = scalar.cmpi lt, %a, %b : i32",
    "%s = view.load %v[%z] : view<[%n]xf32> -> f32",
    "%s = view.load %v[3] : view<[%n]xf32> -> f32",
    "%s = view.load %v[%z] {cache_scope = device} : view<[%n]xf32> -> f32",
    "%s = view.load %v[%z] : view<[%a]xf32> -> f32",
    "%s = view.load %v[%z] : view<[%n]xf32> -> f32 :",
    "view.store %f, %v[%z] : f32, view<[%n]xf32>",
    "%s = kernel.workitem.dispatch.id<y> : index",
    "%s = scalar.clampf<ordered> %f, %f, %f : f32",
    "%s = scalar.clampf<ordered, nnan|nsz> %f, %f, %f : f32",
    "%s = scalar.clampf<ordered,nnan> %f, %f, %f : f32",
    "%s = scalar.clampf<ordered , nnan> %f, %f, %f : f32",
    "%s = scalar.clampf<ordered, > %f, %f, %f : f32",
    "%s = scalar.geluf<erf> %f : f32",
    "%s = scalar.geluf<tanh, afn> %f : f32",
    "%s = kernel.workitem.dispatch.id<w> : index",
]


@pytest.mark.parametrize("line", LINES)
def test_fast_path_declines_what_it_does_not_accept(line: str) -> None:
    assert_same(HEAD + "  " + line + "\n  kernel.return\n}\n")


def test_dynamic_types_are_reused_only_while_their_names_mean_the_same_values() -> None:
    text = HEAD.replace("%f: f32)", "%f: f32, %p: i1)") + (
        "  %w = buffer.view %x[%z] : buffer -> view<[%n]xf32>\n"
        "  scf.if %p {\n"
        "    %n = index.constant 5 : index\n"
        "    %u = buffer.view %x[%z] : buffer -> view<[%n]xf32>\n"
        "  }\n  kernel.return\n}\n"
    )
    for m in both(text):
        assert not isinstance(m, str), m
        body = m.ops[0].regions[1].blocks[0]  # type: ignore[attr-defined]
        n_arg = body.args[0]
        v, w = body.ops[1].results[0], body.ops[2].results[0]
        assert v.type is w.type  # same text, same values: one type object
        inner = body.ops[3].regions[0].blocks[0]
        n_inner = inner.ops[0].results[0]
        u = inner.ops[1].results[0]
        assert v.type.dims[0].value is n_arg
        assert u.type.dims[0].value is n_inner  # the shadowing %n, not the cached one
    assert_same(text)


def _view_dims(module: object) -> list[object]:
    """The value each buffer.view's result type names as its dimension, in text order."""
    return [
        op.results[0].type.dims[0].value
        for op in module.walk()  # type: ignore[attr-defined]
        if op.name == "buffer.view"
    ]


def test_a_reused_type_follows_a_later_shadowing_name() -> None:
    view = "buffer.view %x[%z] : buffer -> view<[%n]xf32>"
    text = HEAD.replace("%f: f32)", "%f: f32, %p: i1)") + (
        f"  %u = {view}\n"
        "  scf.if %p {\n"
        f"    %w = {view}\n"
        "    %n = index.constant 5 : index\n"
        f"    %y = {view}\n"
        "    scf.if %p {\n"
        f"      %q = {view}\n"
        "    }\n"
        "  }\n"
        f"  %t = {view}\n"
        "  kernel.return\n}\n"
    )
    for m in both(text):
        assert not isinstance(m, str), m
        body = m.ops[0].regions[1].blocks[0]  # type: ignore[attr-defined]
        outer_n = body.args[0]
        inner_n = body.ops[3].regions[0].blocks[0].ops[1].results[0]
        # The old view of %z, then %u, %w (outer %n), %y and %q (the shadowing %n), %t.
        assert _view_dims(m)[1:] == [outer_n, outer_n, inner_n, inner_n, outer_n]
    assert_same(text)


def test_a_reused_type_follows_digit_names_that_are_not_ids() -> None:
    text = HEAD.replace("%f: f32)", "%f: f32, %p: i1)") + (
        "  %9 = index.constant 4 : index\n"
        "  %u = buffer.view %x[%z] : buffer -> view<[%9]xf32>\n"
        "  scf.if %p {\n"
        "    %9 = index.constant 5 : index\n"
        "    %w = buffer.view %x[%z] : buffer -> view<[%9]xf32>\n"
        "  }\n"
        "  %t = buffer.view %x[%z] : buffer -> view<[%9]xf32>\n"
        "  kernel.return\n}\n"
    )
    for m in both(text):
        assert not isinstance(m, str), m
        body = m.ops[0].regions[1].blocks[0]  # type: ignore[attr-defined]
        outer, inner = body.ops[2].results[0], body.ops[4].regions[0].blocks[0].ops[0].results[0]
        assert _view_dims(m)[1:] == [outer, inner, outer]
    assert_same(text)


RHEAD = HEAD.replace("%f: f32)", "%f: f32, %p: i1)")
REGION_BODIES = [
    "scf.if %p {\n}",
    "scf.if %p {\n  %s = scalar.addi %a, %b : i32\n}",
    "scf.if %p {\n  scf.if %p {\n    %s = scalar.addi %a, %b : i32\n  }\n"
    "  %t = scalar.addi %a, %b : i32\n}",
    "scf.if %p {\n  %s = scalar.addi %a, %b : i32\n} else {\n  %t = scalar.addi %a, %b : i32\n}",
    "scf.if %p {\n  // a note\n  %s = scalar.addi %a, %b : i32\n}",
    "scf.if %p {\n  %s = scalar.addi %a, %b : i32\n\n  %t = scalar.addi %a, %b : i32\n}",
    "scf.if %p {\n  %s = scalar.addi %a, %b : i32\n} // closed\n%t = scalar.addi %a, %b : i32",
    'scf.if %p {\n  %s = scalar.addi %a, %b : i32 loc("f.py":3:4)\n'
    "  %t = scalar.addi %s, %b : i32\n}",
    "scf.if %p {\n  %s = scalar.addi %a, %b : i32\n}\n%s = scalar.addi %a, %b : i32",
    "scf.if %p {\n  %s = scalar.addi %a, %b : i32\n}\n%u = scalar.addi %s, %b : i32",
    "scf.if %p {\n  %a = scalar.addi %a, %b : i32\n  %u = scalar.addi %a, %b : i32\n}",
    "scf.if %p {\n  %7 = scalar.addi %a, %b : i32\n}",
    "scf.if %p {\n  scf.yield\n}",
    "scf.if %p { // open\n}",
    "scf.if %p {\n}  ",
    'scf.if %p {\n} loc("f.py":9:1)',
    "scf.if %p {\n} else {\n}",
    "scf.if %p {\n} els {\n}",
    "scf.if %q {\n}",
    "scf.if %a {\n}",
    "%r = scf.if %p {\n}",
    "%r = scf.if %p -> (i32) {\n  scf.yield %a : i32\n} else {\n  scf.yield %b : i32\n}",
    "scf.if %p {\n  %s = scalar.addi %a, %b : i32",
    "scf.if %p {\n  scf.if %p {\n    %s = scalar.addi %a, %b : i32\n  }",
]


@pytest.mark.parametrize("body", REGION_BODIES)
def test_region_ops_parse_alike_on_every_path(body: str) -> None:
    lines = "".join("  " + line + "\n" for line in body.split("\n"))
    assert_same(RHEAD + lines + "  kernel.return\n}\n")


def test_the_line_path_opens_regions_it_reads() -> None:
    text = print_module(make_module(200), ops=OPS)
    plan = pf.plan_for(next(d for d in OPS if d.name == "scf.if"))
    assert plan.head_region is not None
    calls = []
    inner = plan.line_fn

    def spy(*args: object) -> object:
        calls.append(args[1])
        return inner(*args)

    plan.line_fn = spy
    try:
        parse_module(text, ops=OPS)
    finally:
        plan.line_fn = inner
    assert len(calls) == text.count("scf.if")


def test_an_unclosed_region_is_reported_at_its_brace() -> None:
    text = RHEAD + "  scf.if %p {\n    %s = scalar.addi %a, %b : i32\n"
    line = text.count("\n") - 1  # the scf.if line; its '{' is in column 13
    for got in both(text):
        assert isinstance(got, str)
        assert got.splitlines()[0] == (
            f"t.loom:{line}:13: error PARSE/013: unbalanced braces: "
            "this '{' is never closed (found end of file)"
        )


def test_regions_nested_past_the_limit_are_reported_alike() -> None:
    from loom.format.text.parser import MAX_DEPTH

    depth = MAX_DEPTH + 1
    opens = "".join("  " * (k + 1) + "scf.if %p {\n" for k in range(depth))
    closes = "".join("  " * (k + 1) + "}\n" for k in reversed(range(depth)))
    text = RHEAD + opens + closes + "  kernel.return\n}\n"
    first, second = both(text)
    assert isinstance(first, str) and "PARSE/015" in first
    assert first == second


def test_deeply_nested_regions_closed_with_comments_parse_alike() -> None:
    from loom.format.text.parser import MAX_DEPTH

    depth = MAX_DEPTH - 2  # the kernel's own regions count too
    opens = "".join("  " * (k + 1) + "scf.if %p {\n" for k in range(depth))
    closes = "".join("  " * (k + 1) + f"}} // closes {k}\n" for k in reversed(range(depth)))
    text = RHEAD + opens + closes + "  kernel.return\n}\n"
    first, second = both(text)
    assert not isinstance(first, str), first
    assert_same(text)


_OLD_ORDER = (4, 5, 0, 6, 7, 8, 1, 9, 10, 11, 12, 2, 3, 13)
_OLD = re.compile("|".join(tokenizer._PATTERNS[k] for k in _OLD_ORDER))


_PIECES = [
    "%a",
    "%0",
    "%a-b",
    "@s",
    "@a.b",
    "^bb",
    "#l",
    "#l<x>",
    '"s"',
    '"u',
    "//c",
    "view<4xf32>",
    "vector<[%n]xi8>",
    "view<",
    ">",
    "<",
    "0x1f",
    "-0x2",
    "12",
    "-3",
    "1.5e3",
    "-inf",
    "inf",
    "nan",
    "->",
    "-",
    "a.b",
    "x",
    "$y",
    "_z",
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    "=",
    ":",
    ",",
    "|",
    "*",
    "?",
    ".",
    "\\",
    "~",
    " ",
    " ",
    "\t",
]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=16).map("".join))
def test_token_order_is_the_documented_one(line: str) -> None:
    # The alternatives were reordered for speed; the tokens must not change.
    assert tokenizer.TOKEN_RE.findall(line) == _OLD.findall(line)


_SAMPLE = (
    HEAD
    + "".join(
        "  " + line + "\n"
        for line in (
            "%s = scalar.addi<nsw> %a, %b : i32",
            "%c = scalar.cmpi slt, %a, %b : i32",
            "%l = view.load %v[%z] : view<[%n]xf32> -> f32",
            "view.store %f, %v[%z] : f32, view<[%n]xf32>",
            "%i = kernel.workitem.dispatch.id<x> : index",
            "%k = index.constant 12 : index",
            "%w = buffer.view %x[%z] : buffer -> view<[%n]xf32>",
        )
    )
    + "  kernel.return\n}\n"
)
_MUTATION_CHARS = list(" ,:%<>[]{}()-=|.0123456789abcnxz\t")


def _mutate(text: str, data: st.DataObject) -> str:
    for _ in range(data.draw(st.integers(1, 3))):
        k = data.draw(st.integers(0, len(text) - 1))
        kind = data.draw(st.sampled_from(["delete", "insert", "replace"]))
        c = data.draw(st.sampled_from(_MUTATION_CHARS))
        if kind == "delete":
            text = text[:k] + text[k + 1 :]
        elif kind == "insert":
            text = text[:k] + c + text[k:]
        else:
            text = text[:k] + c + text[k + 1 :]
    return text


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_mutated_lines_parse_alike_on_every_path(data: st.DataObject) -> None:
    assert_same(_mutate(_SAMPLE, data))


_REGION_SAMPLE = RHEAD + (
    "  scf.if %p {\n"
    "    %s = scalar.addi<nsw> %a, %b : i32\n"
    "    scf.if %p {\n"
    "      view.store %f, %v[%z] : f32, view<[%n]xf32>\n"
    "    }\n"
    "  } else {\n"
    "    %k = index.constant 12 : index\n"
    "  }\n"
    "  %c = scalar.cmpi slt, %a, %b : i32\n"
    "  kernel.return\n}\n"
)


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_mutated_regions_parse_alike_on_every_path(data: st.DataObject) -> None:
    assert_same(_mutate(_REGION_SAMPLE, data))


@pytest.mark.slow
@settings(max_examples=4000, deadline=None)
@given(st.data())
def test_mutated_lines_parse_alike_on_every_path_long(data: st.DataObject) -> None:
    assert_same(_mutate(_SAMPLE, data))
