"""Hostile text input: every class ends in a located Loom diagnostic, within bounded memory.

One regression test per class (issue 11, text input): non-ASCII digits, literals past the
4,300-digit limit, huge hex literals, values that do not fit their type, megabyte lines of
punctuation, and diagnostics about an implicit terminator.
"""

from __future__ import annotations

import tracemalloc

import pytest

from loom.errors import LoomParseError
from loom.format.text.parser import parse_module
from loom.format.text.tokenizer import MAX_HEX_DIGITS, MAX_INT_DIGITS, MAX_LINE_TOKENS
from loom.verify import verify_module

HEAD = (
    "kernel.def @k() {\n  %c1 = index.constant 1 : index\n"
    "  kernel.launch.config workgroups(%c1, %c1, %c1) workgroup_size(%c1, %c1, %c1)"
    " : index\n} launch(%b: buffer, %o: offset) {\n"
)


def kernel(*lines: str) -> str:
    """A kernel whose body is ``lines`` (the body starts on line 5)."""
    return HEAD + "".join(f"  {x}\n" for x in lines) + "  kernel.return\n}\n"


def parse_error(text: str) -> tuple[str, int, int, str]:
    """(code, line, column, message) of the parse error ``text`` raises."""
    with pytest.raises(LoomParseError) as info:
        parse_module(text, filename="hostile.loom")
    (d,) = info.value.diagnostics
    assert d.range is not None
    assert "hostile.loom:" in str(info.value) and "^" in str(info.value)
    return d.code, d.range.line, d.range.column, d.message


@pytest.mark.parametrize(
    ("line", "column", "code"),
    [
        ("%r = index.constant \u0663 : index", 23, "PARSE/016"),  # ARABIC-INDIC DIGIT THREE
        ("%r = index.constant 1\u0663 : index", 24, "PARSE/016"),
        ("%r = index.constant \u00b2 : index", 23, "PARSE/016"),  # SUPERSCRIPT TWO
        ("%\u0661 = index.constant 1 : index", 4, "PARSE/016"),
        ("%v = buffer.view %b[%o] : buffer -> view<\u0664xf32>", 39, "PARSE/004"),
    ],
)
def test_non_ascii_digits_are_parse_errors(line: str, column: int, code: str) -> None:
    got = parse_error(kernel(line))
    assert got[:3] == (code, 5, column), got


@pytest.mark.parametrize(
    "literal",
    [
        "9" * (MAX_INT_DIGITS + 1),
        "-" + "9" * (MAX_INT_DIGITS + 1),
        "0x" + "f" * (MAX_HEX_DIGITS + 1),
        "0x" + "f" * 100_000,
    ],
)
def test_literals_past_the_digit_limit_are_parse_errors(literal: str) -> None:
    code, line, col, message = parse_error(kernel(f"%r = index.constant {literal} : index"))
    assert (code, line, col) == ("PARSE/009", 5, 23)
    assert f"at most {MAX_HEX_DIGITS if 'x' in literal else MAX_INT_DIGITS}" in message
    assert len(message) < 400  # the literal is clipped, not copied into the message


@pytest.mark.parametrize("literal", ["9" * MAX_INT_DIGITS, "0x" + "f" * MAX_HEX_DIGITS])
def test_the_longest_literal_accepted_reaches_the_verifier(literal: str) -> None:
    # Parsing succeeds (all paths): the verifier says the value does not fit, at its line.
    text = kernel(f"%r = index.constant {literal} : index")
    diags = verify_module(parse_module(text, filename="hostile.loom")).diagnostics
    assert diags and {d.code for d in diags} == {"STRUCTURE/014"}
    assert all(d.range is not None and d.range.line == 5 for d in diags)


@pytest.mark.parametrize(
    ("line", "code"),
    [
        ("%r = index.constant 18446744073709551616 : index", "STRUCTURE/014"),
        ("%r = scalar.constant 4294967296 : i32", "TYPE/005"),
        (f"%s = buffer.alloca<workgroup> align({10**400}) %o : buffer", "STRUCTURE/014"),
        ("%a = buffer.assume.alignment %b {minimum_alignment = 3} : buffer", "STRUCTURE/014"),
    ],
)
def test_values_that_do_not_fit_are_located_diagnostics(line: str, code: str) -> None:
    diags = verify_module(parse_module(kernel(line), filename="hostile.loom")).diagnostics
    assert diags and all(d.code == code for d in diags), [(d.code, d.message) for d in diags]
    assert all(d.range is not None and d.range.line == 5 for d in diags)


def test_a_static_dimension_past_64_bits_is_a_parse_error() -> None:
    big = "1" + "0" * 400
    code, line, col, message = parse_error(
        kernel(f"%v = buffer.view %b[%o] : buffer -> view<{big}xf32>")
    )
    assert (code, line, col) == ("PARSE/004", 5, 39)
    assert "does not fit in 64 bits" in message


@pytest.mark.parametrize("unit", ["{", "%", "a "])
def test_megabyte_lines_are_refused_in_memory_bounded_by_the_input(unit: str) -> None:
    text = unit * (3 * MAX_LINE_TOKENS // 2)
    tracemalloc.start()
    try:
        with pytest.raises(LoomParseError) as info:
            parse_module(text, filename="hostile.loom")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert info.value.diagnostics[0].range is not None
    assert peak < 6 * len(text) + (16 << 20), peak


def test_a_line_with_too_many_tokens_is_refused_before_it_is_read() -> None:
    text = kernel("%r = index.constant 1 : index " + "," * MAX_LINE_TOKENS)
    code, line, col, message = parse_error(text)
    assert (code, line, col) == ("PARSE/021", 5, 3)
    assert str(MAX_LINE_TOKENS) in message


def test_deep_nesting_is_refused_in_memory_bounded_by_the_input() -> None:
    text = HEAD.replace("launch(%b: buffer, %o: offset)", "launch(%p: i1)") + (
        "scf.if %p {\n" * 200_000
    )
    tracemalloc.start()
    try:
        with pytest.raises(LoomParseError) as info:
            parse_module(text)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert info.value.diagnostics[0].code == "PARSE/015"
    # The parser stops at depth 256 holding little; most of the peak is rendering the
    # diagnostic, which splits the whole source into lines.
    assert peak < 8 * len(text), peak


def test_a_diagnostic_about_an_elided_terminator_points_at_the_closing_brace() -> None:
    text = (
        "func.def @f(%c: i1) -> (index) {\n"
        "  %r = scf.if %c -> (index) {\n"
        "  }\n"
        "  func.return %r : index\n"
        "}\n"
    )
    diags = verify_module(parse_module(text, filename="t.loom")).diagnostics
    yields = [d for d in diags if "scf.yield" in d.message]
    assert [d.code for d in yields] == ["STRUCTURE/013"]
    rng = yields[0].range
    assert rng is not None and (rng.filename, rng.line, rng.column) == ("t.loom", 3, 3)
    assert all(d.range is not None for d in diags)


def test_a_location_less_op_is_reported_at_its_enclosing_op() -> None:
    text = (
        "func.def @f(%c: i1) -> (index) {\n"
        "  %r = scf.if %c -> (index) {\n"
        "  }\n"
        "  func.return %r : index\n"
        "}\n"
    )
    module = parse_module(text, filename="t.loom")
    for op in module.walk():
        if op.name.endswith(".yield"):
            op.location_id = 0  # as the builder leaves an implicit terminator
    diags = verify_module(module).diagnostics
    yields = [d for d in diags if "scf.yield" in d.message]
    assert yields and all(d.range is not None and d.range.line == 2 for d in yields)


def test_an_integer_too_long_to_print_is_a_print_error() -> None:
    from loom.errors import LoomPrintError
    from loom.format.text.printer import print_module

    module = parse_module(kernel("%r = index.constant 1 : index"))
    op = next(o for o in module.walk() if o.name.endswith("constant") and o.results[0].name)
    op.attributes = {**op.attributes, "value": 10**5000}
    with pytest.raises(LoomPrintError, match="too long to print"):
        print_module(module)


def test_tokens_after_a_region_opening_brace_are_located() -> None:
    text = kernel(
        "%t = index.constant 1 : index",
        "%c = index.cmp slt, %t, %t : index",
        "scf.if %c { index.constant 2 : index",
        "}",
    )
    assert parse_error(text) == (
        "PARSE/003",
        7,
        15,
        "expected end of line, found 'index.constant'",
    )
