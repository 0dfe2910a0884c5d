"""The encoding dialect: encoding types, static specs, layout-typed views in the builder, text,
bytecode and the verifier."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from loom import module_builder
from loom.dialects.encoding import ENCODING, LAYOUT, SCHEMA, STORAGE, TRANSFORM, spec_problems
from loom.errors import BytecodeError, LoomParseError
from loom.format.bytecode import read_module, write_module
from loom.format.text.parser import parse_module
from loom.format.text.printer import print_module
from loom.interp import Stepper, launch
from loom.ir import BUFFER_TYPE, F32, INDEX, OFFSET, opaque_type, view_type
from loom.ir.encoding_spec import Quoted, SpecError, parse_spec
from loom.verify import verify_module


def test_encoding_types_are_interned_names() -> None:
    for t, text in [
        (ENCODING, "encoding"),
        (LAYOUT, "encoding<layout>"),
        (SCHEMA, "encoding<schema>"),
        (STORAGE, "encoding<storage>"),
        (TRANSFORM, "encoding<transform>"),
    ]:
        assert str(t) == text
        assert opaque_type(text) is t
    assert opaque_type("encoding<nonsense>") is None


def test_unknown_encoding_role_is_a_parse_error() -> None:
    with pytest.raises(LoomParseError) as e:
        parse_module("func.def @f(%e: encoding<nonsense>) {\n  func.return\n}\n")
    assert e.value.diagnostics[0].code == "PARSE/007"
    assert "encoding<nonsense>" in e.value.diagnostics[0].render()


def test_spec_parsing_is_canonical_and_typed() -> None:
    spec = parse_spec(
        "#physical_storage< schema = #ggml_q4_0<storage_bytes=18,block_elems=32>, "
        "layout=#strided<stride=0x40> >"
    )
    assert spec.family == "physical_storage"
    assert spec.names == ("layout", "schema")
    assert spec.get("layout").get("stride") == 64
    assert spec.text() == (
        "#physical_storage<layout=#strided<stride=64>, "
        "schema=#ggml_q4_0<block_elems=32, storage_bytes=18>>"
    )
    t = parse_spec('#numeric_transform<family="jl_dense", input_elems=128, output_elems=64>')
    assert isinstance(t.get("family"), Quoted) and t.get("family") == "jl_dense"
    words = parse_spec("#matrix_operand<element_format=i8, zero_scale_fallback=true>")
    assert words.get("zero_scale_fallback") is True
    assert not isinstance(words.get("element_format"), Quoted)
    assert parse_spec("#encoding.layout.strided<strides=[64, 1]>").get("strides") == (64, 1)


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("#q8_0<group_size=%g>", "PARSE/028"),
        ("#q8_0<block=32", "PARSE/004"),
        ("#q8_0<block=32, block=64>", "PARSE/004"),
        ("#q8_0<=32>", "PARSE/004"),
        ("q8_0", "PARSE/004"),
    ],
)
def test_malformed_specs_are_reported(text: str, code: str) -> None:
    with pytest.raises(SpecError) as e:
        parse_spec(text)
    assert e.value.code == code


_WORDS = st.sampled_from(["i8", "f16", "dense_lanes", "block_1d", "true", "false"])
_VALUES = st.recursive(
    st.one_of(
        st.integers(-(2**40), 2**40),
        st.text("abc_ -", max_size=6).map(Quoted),
        _WORDS,
        st.lists(st.integers(0, 99), max_size=3).map(tuple),
    ),
    lambda inner: st.dictionaries(st.from_regex(r"[a-z]{1,5}", fullmatch=True), inner, max_size=3),
    max_leaves=6,
)


def _spec_text(family: str, params: dict, shuffle: bool) -> str:
    items = sorted(params.items(), reverse=shuffle)
    if not items:
        return f"#{family}"
    parts = []
    for k, v in items:
        if isinstance(v, dict):
            v = _spec_text("inner", v, shuffle)
        elif isinstance(v, Quoted):
            v = '"' + v + '"'
        elif isinstance(v, tuple):
            v = "[" + ",".join(str(x) for x in v) + "]"
        parts.append(f"{k} = {v}")
    return f"#{family}<" + " ,".join(parts) + ">"


@settings(max_examples=60, deadline=None)
@given(st.dictionaries(st.from_regex(r"[a-z]{1,5}", fullmatch=True), _VALUES, max_size=4))
def test_any_spelling_reads_to_one_canonical_text(params: dict) -> None:
    a = parse_spec(_spec_text("fam", params, False))
    b = parse_spec(_spec_text("fam", params, True))
    assert a == b
    assert parse_spec(a.text()) == a
    assert parse_spec(a.text()).text() == a.text()


def test_family_table_checks_kinds_and_roles() -> None:
    codes = [v.code for v in spec_problems(parse_spec("#matrix_operand<element_format=7>"))]
    assert codes == ["ENCODING/010", "ENCODING/007"]
    nested = parse_spec("#physical_storage<layout=#dense, schema=#dense>")
    assert [v.code for v in spec_problems(nested)] == ["ENCODING/011"]
    assert spec_problems(parse_spec("#physical_storage<layout=#dense, schema=#q8_0>")) == []
    assert spec_problems(parse_spec("#some_future_family<x=1>")) == []  # unknown: no opinion


def _builder_module():
    module, b = module_builder()
    b.target.generic(symbol="t", kind="reference")
    pitch = b.value("pitch", INDEX)
    src = b.value("src", BUFFER_TYPE)
    out = b.value("out", BUFFER_TYPE)
    config = b.region()
    with b.insertion_block(config.blocks[0]):
        one = b.index.constant(value=1, results=[INDEX], name="one")
        four = b.index.constant(value=4, results=[INDEX], name="four")
        b.kernel.config(
            workgroup_count_x=one,
            workgroup_count_y=one,
            workgroup_count_z=one,
            workgroup_size_x=four,
            workgroup_size_y=one,
            workgroup_size_z=one,
        )
    body = b.region()
    with b.insertion_block(body.blocks[0]):
        zero = b.index.constant(value=0, results=[OFFSET], name="zero")
        layout = b.encoding.layout_strided(strides=[1, pitch], results=[LAYOUT], name="cols")
        vt = view_type(F32, 4, 3, layout=layout)
        v = b.buffer.view(buffer=src, byte_offset=zero, results=[vt], name="v")
        w = b.buffer.view(buffer=out, byte_offset=zero, results=[view_type(F32, 4, 3)], name="w")
        x = b.kernel.workitem_id(dimension="x", results=[INDEX], name="x")
        for j in range(3):
            a = b.view.load(view=v, indices=[x, j], results=[F32])
            b.view.store(value=a, view=w, indices=[x, j])
        b.kernel.return_()
    b.kernel.def_(target="t", callee="k", args=[src, out, pitch], config=config, body=body)
    return module


def test_builder_attaches_layout_values_to_view_types() -> None:
    module = _builder_module()
    assert not verify_module(module).errors
    text = print_module(module)
    assert "%cols = encoding.layout.strided [1, %pitch] : encoding<layout>" in text
    assert "buffer -> view<4x3xf32, %cols>" in text
    assert "view.load %v[%x, 2] : view<4x3xf32, %cols> -> f32" in text
    assert print_module(parse_module(text)) == text


def test_layout_typed_views_survive_bytecode() -> None:
    module = _builder_module()
    back = read_module(write_module(module), verify=True)
    assert print_module(back) == print_module(module)
    view_types = [v.type for v in back.values if getattr(v.type, "encoding", None) is not None]
    assert view_types and all(t.encoding.type is LAYOUT for t in view_types)
    # the attached layout is the very value the layout op defines
    layout_values = {id(v) for v in back.values if v.type is LAYOUT}
    assert all(id(t.encoding) in layout_values for t in view_types)


def test_built_kernel_reads_through_the_layout_in_both_engines() -> None:
    module = _builder_module()
    src = np.arange(4 * 5, dtype=np.float32)
    i, j = np.meshgrid(np.arange(4), np.arange(3), indexing="ij")
    expected = src[i + 5 * j]  # element (i, j) of the column-major layout is at i + 5 j
    grid_out = np.zeros(12, np.float32)
    launch(module, "k", args=[src, grid_out, np.int64(5)])
    step_out = np.zeros(12, np.float32)
    Stepper(module, "k", args=[src, step_out, np.int64(5)]).run()
    for out in (grid_out, step_out):
        np.testing.assert_array_equal(out.reshape(4, 3), expected)


def test_spec_error_points_at_the_spec() -> None:
    src = "func.def @f(%g: index) {\n  %e = encoding.define #q8_0<group_size=%g> : encoding\n}\n"
    with pytest.raises(LoomParseError) as e:
        parse_module(src)
    d = e.value.diagnostics[0]
    assert d.code == "PARSE/028"
    assert (d.range.line, d.range.column) == (2, 24)  # the caret is on the spec


def test_bytecode_refuses_a_layout_that_is_not_a_spec() -> None:
    module = parse_module(
        "func.def @f(%b: buffer, %o: offset) {\n"
        "  %v = buffer.view %b[%o] : buffer -> view<4xf32, #dense>\n"
        "  func.return\n}\n"
    )
    v = next(v for v in module.values if getattr(v.type, "encoding", None) == "#dense")
    v.type = view_type(F32, 4, layout="#d se")  # what no parser makes: a hostile file
    with pytest.raises(BytecodeError) as e:
        read_module(write_module(module))
    assert e.value.diagnostics[0].code == "BYTECODE/013"
    assert "'#d se' is not a spec" in e.value.diagnostics[0].message
