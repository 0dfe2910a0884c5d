"""func.def / func.decl contract clauses (import and export metadata, ABI and export
dictionaries, typed dictionary values) and calls to functions with dynamic-dim signatures."""

from __future__ import annotations

import pytest

import loom.dialects  # noqa: F401 - registers the func dialect
from loom import module_builder
from loom.errors import BytecodeError, LoomParseError
from loom.format.bytecode.reader import read_module
from loom.format.bytecode.writer import write_module
from loom.format.text.parser import parse_module
from loom.format.text.printer import print_module
from loom.ir import I32, DictAttr, TypedInt
from loom.ir.compare import module_diff
from loom.verify import verify_module

CONTRACTS = (
    'func.decl public import("runtime", "callback") import_metadata({"runtime.optional" = true, '
    '"runtime.revision" = u64(3)}) export_metadata({"help.summary" = "Callback", '
    '"wire.payload" = bytes("00feff")}) @callback(%value: i32) -> (i32)\n'
    "\n"
    'func.def public abi(object_function, {stack = i32(-4), tags = [1, 2]}) export("entry", '
    '{weak = true}) export_metadata({"model.revision" = u64(18446744073709551615)}) '
    "@entry(%value: i32) -> (i32) {\n"
    "  %r = func.call @callback(%value) : (i32) -> (i32)\n"
    "  func.return %r : i32\n"
    "}\n"
)


def _errors(text: str) -> list[str]:
    return [d.code for d in verify_module(parse_module(text, filename="t.loom")).errors]


def test_contract_clauses_round_trip_through_text_and_bytecode() -> None:
    module = parse_module(CONTRACTS)
    assert not verify_module(module).has_errors
    decl, fn = module.body.ops
    meta = decl.attributes["import_metadata"]
    assert meta["runtime.revision"] == TypedInt("u64", 3) and meta["runtime.optional"] is True
    assert decl.attributes["export_metadata"]["wire.payload"] == b"\x00\xfe\xff"
    assert fn.attributes["abi_attrs"] == DictAttr({"stack": TypedInt("i32", -4), "tags": (1, 2)})
    assert fn.attributes["export_attrs"] == DictAttr({"weak": True})
    assert fn.attributes["export_metadata"]["model.revision"].value == 2**64 - 1
    text = print_module(module)
    assert text == CONTRACTS
    again = read_module(write_module(module), verify=True)
    assert module_diff(module, again, locations=False) is None
    assert print_module(again) == text


def test_builder_takes_metadata_as_python_mappings() -> None:
    module, b = module_builder()
    x = b.value("x", I32)
    b.func.decl(
        callee="ext",
        args=[x],
        results=[I32],
        visibility="public",
        import_module="lib",
        import_metadata={"rev": TypedInt("u8", 7), "blob": b"\x01\x02"},
        abi="object_function",
        abi_attrs={"align": 16},
    )
    assert not verify_module(module).has_errors
    text = print_module(module)
    assert 'import("lib") import_metadata({blob = bytes("0102"), rev = u8(7)})' in text
    assert "abi(object_function, {align = 16})" in text
    assert module_diff(module, parse_module(text), locations=False) is None


def test_export_metadata_needs_a_public_or_exported_function() -> None:
    body = " @f() {\n  func.return\n}\n"
    meta = 'export_metadata({"a" = 1, "b" = 2})'
    report = verify_module(parse_module(f"func.def {meta}{body}"))
    assert [d.code for d in report.errors] == ["STRUCTURE/014"]
    assert "export_metadata" in report.render() and "2 entries" in report.render()
    assert "zero entries unless the function is public or explicitly exported" in report.render()
    assert _errors(f"func.def public {meta}{body}") == []
    assert _errors(f'func.def export("f") {meta}{body}') == []
    assert _errors(f'func.decl import("m") {meta} @g()\n') == ["STRUCTURE/014"]


@pytest.mark.parametrize(
    "value, found",
    [
        ('bytes("0")', "pairs of hex digits"),
        ('bytes("zz")', "pairs of hex digits"),
        ("u8(256)", "does not fit in u8"),
        ("u64(-1)", "does not fit in u64"),
        ("i8(-129)", "does not fit in i8"),
        ("u64(3", "')'"),
    ],
)
def test_bad_typed_dictionary_values_are_parse_errors(value: str, found: str) -> None:
    src = f"func.def public export_metadata({{k = {value}}}) @f() {{\n  func.return\n}}\n"
    with pytest.raises(LoomParseError) as info:
        parse_module(src, filename="t.loom")
    d = info.value.diagnostics[0]
    assert found in d.message and d.range.line == 1


def test_typed_ints_check_their_range_when_made() -> None:
    assert str(TypedInt("i16", -32768)) == "i16(-32768)"
    with pytest.raises(ValueError, match="does not fit"):
        TypedInt("u16", 65536)
    with pytest.raises(ValueError, match="one of"):
        TypedInt("f32", 1)
    with pytest.raises(TypeError):
        TypedInt("i32", True)


def test_bytecode_with_a_bad_typed_int_is_refused() -> None:
    module = parse_module(
        "func.def public export_metadata({k = u8(200)}) @f() {\n  func.return\n}\n"
    )
    data = write_module(module)
    # the value is the varint of 200 (two bytes); rewrite it as 400
    z200, z400 = bytes([0xC8, 0x01]), bytes([0x90, 0x03])
    assert data.count(z200) == 1
    with pytest.raises(BytecodeError, match="does not fit in u8"):
        read_module(data.replace(z200, z400))


DYN = (
    "func.def @scale(%n: index, %x: tensor<[%n]xf32>) -> (tensor<[%n]xf32>) {{\n"
    "  func.return %x : tensor<[%n]xf32>\n"
    "}}\n\n"
    "func.def @caller(%m: index, %k: index, %t: tensor<[%m]xf32>) -> ({ret}) {{\n"
    "  %r = func.call @scale({args}) : (index, tensor<[%m]xf32>) -> ({ret})\n"
    "  func.return %r : {ret}\n"
    "}}\n"
)


def test_signature_result_types_may_name_arguments() -> None:
    text = DYN.format(args="%m, %t", ret="tensor<[%m]xf32>")
    module = parse_module(text)
    scale = module.body.ops[0]
    (result,) = scale.attributes["result_types"]
    assert result.dims[0].value is scale.regions[0].blocks[0].args[0]
    assert print_module(module) == text
    assert print_module(read_module(write_module(module), verify=True)) == text


def test_calls_bind_the_callee_dynamic_dims_to_the_passed_values() -> None:
    assert _errors(DYN.format(args="%m, %t", ret="tensor<[%m]xf32>")) == []
    report = verify_module(parse_module(DYN.format(args="%k, %t", ret="tensor<[%m]xf32>")))
    assert [d.code for d in report.errors] == ["TYPE/001"]
    assert "argument 1" in report.render() and "%n bound to %k" in report.render()
    # the arguments bind, but the result claims the other extent
    report = verify_module(parse_module(DYN.format(args="%m, %t", ret="tensor<[%k]xf32>")))
    assert [d.code for d in report.errors] == ["TYPE/001"]
    assert "call result types (tensor<[%k]xf32>)" in report.render()


def test_empty_dictionaries_are_absent_ones() -> None:
    module, b = module_builder()
    b.func.decl(
        callee="e", args=[], visibility="public", export_metadata={}, abi="hal_kernel", abi_attrs={}
    )
    (decl,) = module.body.ops
    assert "export_metadata" not in decl.attributes and "abi_attrs" not in decl.attributes
    text = print_module(module)
    assert text == "func.decl public abi(hal_kernel) @e()\n"
    assert module_diff(module, parse_module(text), locations=False) is None
    parsed = parse_module("func.decl public abi(hal_kernel, {}) export_metadata({}) @e()\n")
    assert print_module(parsed) == text
