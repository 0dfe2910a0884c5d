"""func.ref types, func.decl and the function-value ops: builder, text, bytecode and errors; the
atomic ``<kind, flags>`` and buffer.pack ``[align(N) %v, ...]`` spellings."""

from __future__ import annotations

import contextlib

import pytest

import loom.dialects  # noqa: F401 - the func dialect declares the func.ref spelling
from loom import module_builder
from loom.errors import BytecodeError, LoomParseError
from loom.format.bytecode.reader import read_module
from loom.format.bytecode.writer import write_module
from loom.format.text.parser import parse_module
from loom.format.text.printer import print_module
from loom.ir import F32, I1, I32, OFFSET, FuncRefType, FunctionType
from loom.ir.compare import module_diff
from loom.verify import verify_module

REF = FuncRefType(FunctionType((I32,), (I32,)))


def test_func_ref_types_compare_by_signature_and_yieldability() -> None:
    same = FuncRefType(FunctionType((I32,), (I32,)))
    assert same == REF and hash(same) == hash(REF)
    assert FuncRefType(FunctionType((I32,), (I32,)), yieldable=True) != REF
    assert FuncRefType(FunctionType((I32,), ())) != REF
    assert str(REF) == "func.ref<(i32) -> (i32)>"
    assert str(FuncRefType(FunctionType((), ()), True)) == "func.ref<yieldable () -> ()>"
    with pytest.raises(TypeError):
        FuncRefType("i32")  # type: ignore[arg-type]


def test_builder_makes_declarations_and_function_values() -> None:
    module, b = module_builder()
    x = b.value("x", I32)
    b.func.decl(
        callee="ext", args=[x], results=[I32], import_module="lib", import_policy="optional"
    )
    f = b.value("f", REF)
    y = b.value("y", I32)
    body = b.region()
    with b.insertion_block(body.blocks[0]):
        g = b.func.address(callee="ext", results=[REF], name="g")
        n = b.func.null(results=[REF], name="n")
        isn = b.func.compare_null(function=n, name="isn")
        w = b.func.ref_cast(source=g, results=[FuncRefType(REF.signature, True)], name="w")
        (r,) = b.func.call_indirect(target=f, operands=[y], results=[I32], name="r")
        ok = b.func.resolved(callee="ext", name="ok")
        b.func.return_(operands=[r, isn, ok])
    b.func.def_(callee="use", args=[f, y], results=[I32, I1, I1], body=body)
    assert isn.type is I1 and ok.type is I1 and w.type.yieldable
    report = verify_module(module)
    assert not report.has_errors, report.render()
    text = print_module(module)
    assert 'func.decl optional import("lib") @ext(%x: i32) -> (i32)' in text
    assert "%w = func.ref.cast %g : func.ref<(i32) -> (i32)> to" in text
    again = parse_module(text)
    assert module_diff(module, again, locations=False) is None
    assert print_module(read_module(write_module(again))) == text


def test_a_declaration_needs_its_import_module_for_an_import_symbol() -> None:
    module, b = module_builder()
    b.func.decl(callee="ext", args=[], import_symbol="other")
    report = verify_module(module)
    assert [d.code for d in report.errors] == ["STRUCTURE/014"]
    assert "import_module" in report.render()


@pytest.mark.parametrize(
    "text, found",
    [
        ("func.ref<(i32) -> (i32)", "expected '>'"),
        ("func.ref(i32)", "'('"),
        ("func.ref<(i32) (i32)>", "'('"),
        ("func.ref<(i32, ) -> ()>", "')'"),
        ("func.ref<yieldable>", "'>'"),
    ],
)
def test_malformed_func_ref_types_are_parse_errors(text: str, found: str) -> None:
    src = f"func.def @f(%x: {text}) {{\n  func.return\n}}\n"
    with pytest.raises(LoomParseError) as info:
        parse_module(src, filename="t.loom")
    d = info.value.diagnostics[0]
    assert d.code in ("PARSE/003", "PARSE/007") and found in d.message
    assert d.range.line == 1


def test_hostile_func_ref_bytecode_is_refused() -> None:
    module = parse_module("func.def @f(%x: func.ref<(i32) -> (i32)>) {\n  func.return\n}\n")
    data = bytearray(write_module(module))
    assert read_module(bytes(data)) is not None
    # flip every byte once: the reader refuses or reads something, never crashes
    for k in range(len(data)):
        bad = bytearray(data)
        bad[k] ^= 0x5A
        with contextlib.suppress(BytecodeError):
            read_module(bytes(bad))


def test_atomic_flags_share_the_kind_brackets() -> None:
    src = (
        "func.def @f(%v: view<4xf32>, %x: f32, %i: index) {\n"
        "  view.atomic.reduce<addf, noftz> %x, %v[%i] {ordering = relaxed, scope = device}"
        " : f32, view<4xf32>\n"
        "  %o = view.atomic.rmw<addf> %x, %v[%i] {ordering = relaxed, scope = device}"
        " : f32, view<4xf32> -> f32\n"
        "  func.return\n}\n"
    )
    m = parse_module(src)
    ops = m.ops[0].regions[0].blocks[0].ops
    assert ops[0].attributes["memory_flags"] == "noftz"
    assert "memory_flags" not in ops[1].attributes
    assert print_module(m) == src
    with pytest.raises(LoomParseError, match="noftz|flag"):
        parse_module(src.replace("addf, noftz", "addf, fast"))


def test_buffer_pack_alignment_list() -> None:
    src = (
        "func.def @p(%a: offset, %b: offset) -> (offset, offset, offset) {\n"
        "  %t, %x, %y = buffer.pack [align(16) %a, align(256) %b] : offset\n"
        "  func.return %t, %x, %y : offset, offset, offset\n}\n"
    )
    m = parse_module(src)
    pack = m.ops[0].regions[0].blocks[0].ops[0]
    assert pack.attributes["minimum_alignments"] == (16, 256)
    assert [r.type for r in pack.results] == [OFFSET] * 3
    assert print_module(m) == src
    legacy = src.replace(
        "[align(16) %a, align(256) %b] : offset",
        "%a, %b {minimum_alignments = [16, 256]} : offset, offset, offset",
    )
    assert print_module(parse_module(legacy)) == src
    with pytest.raises(LoomParseError, match="'align\\('"):
        parse_module(src.replace("align(256) %b", "%b"))
    with pytest.raises(LoomParseError, match="3 results but 2 names|defines 3 result"):
        parse_module(src.replace("%t, %x, %y = ", "%t, %x = "))


def test_builder_pack_with_mismatched_alignments_is_a_verify_error() -> None:
    module, b = module_builder()
    a = b.value("a", OFFSET)
    body = b.region()
    with b.insertion_block(body.blocks[0]):
        b.buffer.pack(byte_lengths=[a], minimum_alignments=[8, 8], results=[OFFSET, OFFSET])
        b.func.return_(operands=[])
    b.func.def_(callee="p", args=[a], body=body)
    report = verify_module(module)
    assert [d.code for d in report.errors] == ["STRUCTURE/014"]
    assert "one entry per byte length" in report.render()


def test_calls_to_declarations_check_types_like_definitions() -> None:
    src = (
        "func.decl @ext(%x: f32) -> (f32)\n\n"
        "func.def @f(%x: i32) -> (f32) {\n"
        "  %y = func.call @ext(%x) : (i32) -> (f32)\n"
        "  func.return %y : f32\n}\n"
    )
    report = verify_module(parse_module(src))
    assert [d.code for d in report.errors] == ["TYPE/001"]
    assert F32 is not I32


def test_predicates_must_constrain_signature_values() -> None:
    from loom.ir import INDEX, Predicate

    module, b = module_builder()
    n = b.value("n", INDEX)
    stray = b.value("stray", INDEX)
    b.func.decl(callee="f", args=[n], predicates=[Predicate("eq", (n, stray))])
    report = verify_module(module)
    assert [d.code for d in report.errors] == ["STRUCTURE/032"]
    assert "predicates[0].arg[1]" in report.render()
    assert "a function argument or named result" in report.render()


def test_a_module_may_end_with_a_declaration_in_bytecode() -> None:
    text = (
        'func.def @f() {\n  func.return\n}\n\nfunc.decl import("m") @g(%a: f32, %b: i32) -> (i1)\n'
    )
    module = parse_module(text)
    assert print_module(read_module(write_module(module), verify=True)) == text


def test_function_types_nest_at_most_max_type_nesting_deep() -> None:
    from loom.ir.types import MAX_TYPE_NESTING

    t = I32
    with pytest.raises(ValueError, match="nest more than"):
        for _ in range(MAX_TYPE_NESTING):
            t = FuncRefType(FunctionType((t,), ()))
    deep = "func.ref<(" * 40 + "i32" + ") -> ()>" * 40
    with pytest.raises(LoomParseError) as info:
        parse_module(f"func.def @f(%x: {deep}) {{\n  func.return\n}}\n")
    assert info.value.diagnostics[0].code == "PARSE/004"
