"""The parser never fails with anything but LoomParseError, never hangs, and what it accepts
prints and re-parses to the same text."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from loom.errors import LoomParseError
from loom.format.text.parser import parse_module
from loom.format.text.printer import print_module

CORPUS = Path(__file__).parent / "corpus"
EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
SEEDS = [p.read_text() for p in sorted(EXAMPLES.glob("*/*.loom"))]
SEEDS += [p.read_text().split("// ====")[1] for p in sorted((CORPUS / "roundtrip").glob("*"))]
ALPHABET = st.sampled_from(
    list('%@^#{}()[]<>=:,|-."\\/ \n\tx0123456789abfi_')
    + [
        "kernel.def",
        "scf.for",
        "index.add",
        "view<",
        "vector<4x",
        "[%n]x",
        "//",
        "loc(",
        " : ",
        "\u00e9",
        "\x00",
        "\ud800",
        "->",
        "0x",
        "1e9",
        "inf",
        "{\n",
        "\n}",
        "scf.yield",
    ]
)
SOUP = st.lists(ALPHABET, max_size=120).map("".join)
QUICK = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
LONG = settings(max_examples=5000, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def check(text: str) -> None:
    """Parse; if accepted, the printed text must be a fixed point of parse+print."""
    try:
        module = parse_module(text, filename="fuzz.loom")
    except LoomParseError as e:
        assert e.diagnostics and e.diagnostics[0].code.startswith("PARSE/")
        assert "fuzz.loom:" in str(e)
        return
    printed = print_module(module)
    again = parse_module(printed, filename="again.loom")
    assert print_module(again) == printed


def mutations() -> st.SearchStrategy[str]:
    @st.composite
    def mutate(draw: st.DrawFn) -> str:
        text = draw(st.sampled_from(SEEDS))
        for _ in range(draw(st.integers(1, 4))):
            kind = draw(st.sampled_from(["insert", "delete", "replace", "duplicate"]))
            pos = draw(st.integers(0, len(text)))
            if kind == "insert":
                text = text[:pos] + "".join(draw(st.lists(ALPHABET, max_size=3))) + text[pos:]
            elif kind == "delete":
                text = text[:pos] + text[pos + draw(st.integers(1, 12)) :]
            elif kind == "replace":
                text = text[:pos] + draw(ALPHABET) + text[pos + 1 :]
            else:
                end = min(len(text), pos + draw(st.integers(1, 80)))
                text = text[:end] + text[pos:end] + text[end:]
        return text

    return mutate()


@QUICK
@given(SOUP)
def test_random_token_soup(text: str) -> None:
    check(text)


@QUICK
@given(st.binary(max_size=200))
def test_random_bytes(data: bytes) -> None:
    check(data.decode("utf-8", errors="surrogateescape"))


@QUICK
@given(mutations())
def test_mutated_valid_files(text: str) -> None:
    check(text)


# Hostile classes (issue 11): digits that are not ASCII, literals past the digit limit, deep
# nesting and sizes that do not fit their type, each spliced into a valid kernel.
UNICODE_DIGITS = st.characters(categories=("Nd", "No", "Nl")).filter(lambda c: not c.isascii())
HUGE_INTS = st.one_of(
    st.integers(4290, 4400).map(lambda n: "9" * n),
    st.integers(4290, 4400).map(lambda n: "-" + "1" * n),
    st.integers(1, 20_000).map(lambda n: "0x" + "f" * n),
    st.integers(0, 80).map(lambda k: str(10**k * 7)),
)
SLOT_LINES = [
    "%r = index.constant {} : index",
    "%r = scalar.constant {} : i32",
    "%r = scalar.constant {} : f32",
    "%v = buffer.view %b[%o] : buffer -> view<{}xf32>",
    "%v = buffer.view %b[%o] : buffer -> view<4x{}xi8>",
    "%s = buffer.alloca<workgroup> align({}) %o : buffer",
    "%w = buffer.view %b[%o] : buffer -> view<4xf32>\n  %x = view.load %w[{}] : f32",
]
KERNEL = (
    "kernel.def @k() {{\n  %c1 = index.constant 1 : index\n"
    "  kernel.launch.config workgroups(%c1, %c1, %c1) workgroup_size(%c1, %c1, %c1)"
    " : index\n}} launch(%b: buffer, %o: offset, %p: i1) {{\n  {}\n  kernel.return\n}}\n"
)


@st.composite
def hostile_literals(draw: st.DrawFn) -> str:
    line = draw(st.sampled_from(SLOT_LINES))
    pieces = st.one_of(
        HUGE_INTS,
        UNICODE_DIGITS,
        st.lists(UNICODE_DIGITS, max_size=3).map(lambda cs: "1" + "".join(cs)),
    )
    return KERNEL.format(line.format(draw(pieces)))


@st.composite
def deep_nesting(draw: st.DrawFn) -> str:
    depth = draw(st.integers(200, 400))
    opener = draw(st.sampled_from(["scf.if %p {\n", "{\n", "{", "scf.if %p {"]))
    closed = draw(st.booleans())
    body = opener * depth + ("}\n" * depth if closed else "")
    return KERNEL.format(body)


@QUICK
@given(hostile_literals())
def test_hostile_literals(text: str) -> None:
    check(text)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(deep_nesting())
def test_deep_nesting(text: str) -> None:
    check(text)


@pytest.mark.slow
@LONG
@given(mutations())
def test_mutated_valid_files_long(text: str) -> None:
    check(text)


@pytest.mark.slow
@LONG
@given(st.lists(ALPHABET, max_size=1500).map("".join))
def test_random_token_soup_long(text: str) -> None:
    check(text)


def test_deep_nesting_is_reported_not_crashing() -> None:
    depth = 2000
    body = "".join("  " * k + "scf.if %p {\n" for k in range(depth))
    text = (
        "kernel.def @k() {\n  %c1 = index.constant 1 : index\n"
        "  kernel.launch.config workgroups(%c1, %c1, %c1) workgroup_size(%c1, %c1, %c1)"
        " : index\n} launch(%p: i1) {\n" + body
    )
    with pytest.raises(LoomParseError) as info:
        parse_module(text)
    assert info.value.diagnostics[0].code == "PARSE/015"


def test_nesting_within_the_limit_round_trips() -> None:
    depth = 100
    opens = "".join("  " * (k + 1) + "scf.if %p {\n" for k in range(depth))
    closes = "".join("  " * (k + 1) + "}\n" for k in reversed(range(depth)))
    text = (
        "kernel.def @k() {\n  %c1 = index.constant 1 : index\n"
        "  kernel.launch.config workgroups(%c1, %c1, %c1) workgroup_size(%c1, %c1, %c1)"
        " : index\n} launch(%p: i1) {\n" + opens + closes + "  kernel.return\n}\n"
    )
    assert print_module(parse_module(text)) == text
