"""The ``tile<...>`` shaped type (text, fast path, bytecode, builder, highlighting, verifier,
interpreter) and the encoding-valued records it comes with (config values, global co-results)."""

from __future__ import annotations

import numpy as np
import pytest
from pygments.token import Keyword, Name

from loom.builder import module_builder
from loom.dialects.encoding import ENCODING, SCHEMA
from loom.errors import LoomBuilderError, LoomParseError, LoomRuntimeError
from loom.format.bytecode.reader import read_module
from loom.format.bytecode.writer import write_module
from loom.format.text import parse_format as pf
from loom.format.text.parser import parse_module
from loom.format.text.printer import print_module
from loom.highlight import LoomLexer
from loom.interp import Stepper, launch
from loom.ir import F32, I8, INDEX, DynamicDim, ShapedType, TypeKind, tile_type
from loom.ir.compare import module_diff
from loom.ir.types import is_encoding_type
from loom.registry import default_registry
from loom.verify import verify_module

KERNEL = """kernel.def @k(%n: index) {{
  %one = index.constant 1 : index
  kernel.launch.config workgroups(%one, %one, %one) workgroup_size(%n, %one, %one) : index
}} launch(%n: index, %out: buffer) {{
{body}
  kernel.return
}}
"""


def kernel(records: str, body: str) -> str:
    """A one-workitem kernel running ``body`` after module-level ``records``."""
    return records + "\n" + KERNEL.format(body=body)


TILE_FUNCS = (
    "func.def @f(%m: index, %k: index, %e: encoding<schema>, "
    "%a: tile<[%m]x[%k]xf32>, %b: tile<16x32xi8, #q8_0<block=32>>, "
    "%c: tile<[%m]xi8, %e>, %d: tile<f32>) {\n"
    "  test.use %a, %b, %c, %d : tile<[%m]x[%k]xf32>, tile<16x32xi8, #q8_0<block=32>>, "
    "tile<[%m]xi8, %e>, tile<f32>\n"
    "  func.return\n"
    "}\n"
)


def _codes(text: str) -> list[str]:
    return [d.code for d in verify_module(parse_module(text)).diagnostics]


def test_tile_types_round_trip_through_text_and_bytecode() -> None:
    m = parse_module(TILE_FUNCS)
    assert print_module(m) == TILE_FUNCS
    assert not verify_module(m).diagnostics
    f = m.ops[0]
    m_arg, _, e, a, b, c, d = f.regions[0].blocks[0].args
    assert a.type.kind is TypeKind.TILE and a.type.dims[0].value is m_arg
    assert b.type.encoding == "#q8_0<block=32>" and b.type.static_shape == (16, 32)
    assert c.type.encoding is e and d.type.rank == 0
    back = read_module(write_module(m), verify=True)
    assert print_module(back) == TILE_FUNCS
    assert module_diff(m, back, locations=False) is None


def test_static_attachments_are_kept_canonical() -> None:
    text = (
        "func.def @f(%t: tile<4xi8, #ggml_q4_0<storage_bytes=18,block_elems=32>>) {\n"
        "  func.return\n}\n"
    )
    t = parse_module(text).ops[0].regions[0].blocks[0].args[0].type
    assert t.encoding == "#ggml_q4_0<block_elems=32, storage_bytes=18>"
    assert str(t) == "tile<4xi8, #ggml_q4_0<block_elems=32, storage_bytes=18>>"
    with pytest.raises(LoomParseError, match="PARSE/004"):
        parse_module("func.def @f(%t: tile<4xi8, #q<a=>>) {\n  func.return\n}\n")


def test_tile_type_convenience_and_construction_rules() -> None:
    m, b = module_builder()
    n = b.value("n", INDEX)
    t = tile_type(I8, n, 4, encoding="#q8_0<block=32>")
    assert str(t) == "tile<[%n]x4xi8, #q8_0<block=32>>"
    assert isinstance(t.dims[0], DynamicDim) and t.dims[0].value is n
    assert tile_type(F32) == ShapedType(TypeKind.TILE, F32, ())
    assert tile_type(F32, 2) != ShapedType(TypeKind.TENSOR, F32, (2,))
    with pytest.raises(ValueError, match="tensor type has no layout"):
        ShapedType(TypeKind.TENSOR, F32, (4,), "#dense")


@pytest.mark.parametrize(
    ("spelling", "fragment"),
    [
        ("tile<4xq32>", "unknown element type 'q32'"),
        ("tile<4x>", "expected dimensions"),
        ("tensor<4xf32, #dense>", "a tensor has no layout"),
        ("tilde<4xf32>", "or tile<...>"),
    ],
)
def test_bad_tile_spellings_are_parse_errors(spelling: str, fragment: str) -> None:
    with pytest.raises(LoomParseError, match=fragment):
        parse_module(f"func.def @f(%t: {spelling}) {{\n  func.return\n}}\n")


def test_the_line_fast_path_reads_tile_types() -> None:
    body = "".join(
        f"  %t{k} = test.constant {k} : tile<16x32xi8, #q8_0<block=32>>\n" for k in range(4)
    )
    text = f"func.def @f() {{\n{body}  func.return\n}}\n"
    plan = pf.plan_for(default_registry().get("test.constant"))
    inner, calls = plan.line_fn, []

    def spy(*args):  # noqa: ANN002, ANN202
        calls.append(args)
        return inner(*args)

    plan.line_fn = spy
    try:
        m = parse_module(text)
    finally:
        plan.line_fn = inner
    assert len(calls) == 4
    ops = m.ops[0].regions[0].blocks[0].ops
    want = tile_type(I8, 16, 32, encoding="#q8_0<block=32>")
    assert all(o.results[0].type == want for o in ops[:4])
    assert print_module(m) == text


def test_tile_is_highlighted_as_a_shaped_type() -> None:
    toks = [(t, v) for t, v in LoomLexer().get_tokens("%t = test.constant 0 : tile<[%n]xf32>\n")]
    assert (Keyword.Type, "tile") in toks and (Name.Variable, "%n") in toks
    assert (Keyword.Type, "f32") in toks


GLOBALS = (
    "global.constant @w : tile<[%m]x[%k]xi8, %enc> where [mul(%m, 16)]\n\n"
    "func.def @g() -> (encoding) {\n"
    "  %t, %m, %k, %enc = global.load @w : tile<[%m]x[%k]xi8, %enc>\n"
    "  test.use %t, %m, %enc : tile<[%m]x[%k]xi8, %enc>, index, encoding\n"
    "  func.return %enc : encoding\n"
    "}\n"
)


def test_encoding_attachments_name_encoding_values() -> None:
    m = parse_module(GLOBALS)
    assert print_module(m) == GLOBALS and not verify_module(m).diagnostics
    m_local, k_local, enc_local = m.ops[0].regions[0].blocks[0].args
    assert (m_local.type, k_local.type, enc_local.type) == (INDEX, INDEX, ENCODING)
    load = m.ops[1].regions[0].blocks[0].ops[0]
    assert [r.type for r in load.results[1:]] == [INDEX, INDEX, ENCODING]
    assert load.results[0].type.encoding is load.results[3]
    assert print_module(read_module(write_module(m), verify=True)) == GLOBALS


def test_global_load_builder_refuses_a_non_encoding_attachment_result() -> None:
    m, b = module_builder()
    body = b.region()
    with b.insertion_block(body.blocks[0]):
        e = b.value(None, ENCODING)
        with pytest.raises(LoomBuilderError, match="must be an encoding"):
            b.global_.load(global_="w", results=[tile_type(F32, 4, encoding=e), INDEX])
        t, enc = b.global_.load(global_="w", results=[tile_type(F32, 4, encoding=e), ENCODING])
    assert t.type.encoding is enc and is_encoding_type(enc.type)
    assert is_encoding_type(SCHEMA) and not is_encoding_type(F32)


@pytest.mark.parametrize(
    ("text", "codes"),
    [
        ("config.decl @s : encoding<schema>\n", []),
        ("config.def @s = #q8_0<block=32> : encoding<schema>\n", []),
        ("config.def @l = #dense : encoding<layout>\n", []),
        ("config.def @s = 1 : encoding<schema>\n", ["TYPE/005"]),
        ("config.def @s = #dense : encoding<schema>\n", ["TYPE/005"]),
        ("config.def @n = #q8_0<block=32> : index\n", ["TYPE/005"]),
        ("config.decl @t : tile<4xf32>\n", ["TYPE/004"]),
        ("global.constant @w : tile<4xf32> = [1, 2, 3, 4]\n", ["TYPE/004"]),
        ("global.constant @w : f32 = [1.0]\n", ["TYPE/005"]),
        ("func.def @f() {\n  %t = test.constant 0 : tile<4xi8>\n  func.return\n}\n", []),
        (
            "func.def @f() {\n  %t = test.constant 0 : view<4xi8>\n  func.return\n}\n",
            ["TYPE/004"],
        ),
    ],
)
def test_record_values_and_types(text: str, codes: list[str]) -> None:
    assert _codes(text) == codes


def test_an_encoding_config_reads_and_round_trips() -> None:
    text = (
        "config.def @s = #q8_0<block=32> : encoding<schema>\n\n"
        "func.def @r() -> (encoding<schema>) {\n"
        "  %s = config.get @s : encoding<schema>\n"
        "  func.return %s : encoding<schema>\n"
        "}\n"
    )
    m = parse_module(text)
    assert print_module(m) == text and not verify_module(m).diagnostics
    assert m.ops[0].attributes["value"] == "#q8_0<block=32>"
    assert print_module(read_module(write_module(m), verify=True)) == text
    m2, b = module_builder()
    b.config.def_(symbol="s", value="#q8_0< block = 32 >", results=[SCHEMA])
    assert print_module(m2) == "config.def @s = #q8_0<block=32> : encoding<schema>\n"


@pytest.mark.parametrize(
    ("records", "body", "fragment"),
    [
        ("", "  %t = test.constant 0.0 : tile<4xf32>", "scalar lane values only"),
        (
            "global.variable @w : tile<[%m]xf32>\n",
            "  %t, %m = global.load @w : tile<[%m]xf32>",
            "tile globals are not modelled",
        ),
        (
            "config.def @s = #q8_0<block=32> : encoding<schema>\n",
            "  %s = config.get @s : encoding<schema>",
            "encoding types are compile-time values only",
        ),
    ],
)
def test_tile_values_are_not_executable_on_the_reference_target(
    records: str, body: str, fragment: str
) -> None:
    m = parse_module(kernel(records, body))
    for run in (
        lambda: launch(m, "k", workload=(1,), args=(1, np.zeros(1, np.int64))),
        lambda: Stepper(m, "k", workload=(1,), args=(1, np.zeros(1, np.int64))).run(),
    ):
        with pytest.raises(LoomRuntimeError, match=fragment) as info:
            run()
        assert info.value.diagnostics[0].code == "RUNTIME/013"
