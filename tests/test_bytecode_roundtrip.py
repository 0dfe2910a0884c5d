"""Bytecode round trips: text -> bytecode -> text is byte-identical, bytes are deterministic."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from loom.errors import BytecodeError
from loom.format.bytecode import FORMAT_VERSION, MAGIC, is_bytecode, read_module, write_module
from loom.format.text.parser import parse_module
from loom.format.text.printer import print_module
from loom.ir import (
    F32,
    I32,
    INDEX,
    FileLocation,
    FloatLiteral,
    FusedLocation,
    Module,
    OpaqueLocation,
    Operation,
    Predicate,
    TaggedLocation,
)
from loom.ir.compare import module_diff
from loom.registry import default_ops

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT / "tests" / "corpus"))

from common import OPS, make_module  # noqa: E402
from conftest import split_cases  # noqa: E402

KERNELS = sorted((EXAMPLES / "kernels").glob("*.loom"))
CORPUS = sorted((ROOT / "tests" / "corpus").rglob("*.loom-test"))


def roundtrip_cases() -> list[pytest.param]:
    """Every round-trip corpus case, its input text with RUN line and expectation stripped."""
    out = []
    for path in CORPUS:
        mode, cases = split_cases(path.read_text(encoding="utf-8"))
        if mode != "roundtrip":
            continue
        for case in cases:
            text = "\n".join(case.input_lines) + "\n"
            out.append(pytest.param(text, id=f"{path.stem}-line{case.first_line}"))
    return out


def assert_exact(module: Module, ops: object = None) -> bytes:
    """Write, read back and compare text (with and without locations), bytes and structure."""
    data = write_module(module, op_decls=ops)
    back = read_module(data, op_decls=ops, verify=True)
    assert print_module(back, ops=ops) == print_module(module, ops=ops)
    assert print_module(back, ops=ops, print_locations=True) == print_module(
        module, ops=ops, print_locations=True
    )
    assert module_diff(module, back) is None
    assert [v.id for v in back.values] == list(range(len(module.values)))
    assert [(v.name, str(v.type)) for v in back.values] == [
        (v.name, str(v.type)) for v in module.values
    ]
    assert back.name == module.name
    assert back.sources == module.sources
    assert back.locations == module.locations
    assert list(back.symbols) == list(module.symbols)
    assert write_module(back, op_decls=ops) == data, "re-writing the read module changed bytes"
    return data


def test_header_magic_and_version() -> None:
    data = write_module(make_module(50), op_decls=OPS)
    assert data[:4] == MAGIC == b"LOOM"
    assert data[4] == FORMAT_VERSION
    assert is_bytecode(data)
    assert not is_bytecode(b"target.generic")


def test_generated_module_round_trips() -> None:
    assert_exact(make_module(500), OPS)


def test_identical_modules_give_identical_bytes() -> None:
    a = write_module(make_module(400), op_decls=OPS)
    b = write_module(make_module(400), op_decls=OPS)
    assert a == b
    assert write_module(make_module(413), op_decls=OPS) != a


def test_parsed_twice_gives_identical_bytes() -> None:
    text = KERNELS[0].read_text(encoding="utf-8")
    a = write_module(parse_module(text, filename="k.loom"))
    b = write_module(parse_module(text, filename="k.loom"))
    assert a == b


def _load_importer():  # noqa: ANN202
    path = EXAMPLES / "python-importer" / "importer.py"
    spec = importlib.util.spec_from_file_location("loom_headline_importer", path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_headline_example_reads_back_verified_and_prints_the_golden_text() -> None:
    importer = _load_importer()
    module = importer.build_copy_module()
    data = write_module(module, op_decls=importer.MODULE_OPS)
    back = read_module(data, op_decls=importer.MODULE_OPS, verify=True)
    golden = (EXAMPLES / "python-importer" / "copy_64_bytes.loom").read_text(encoding="utf-8")
    assert print_module(back, ops=importer.MODULE_OPS) == golden
    assert_exact(module, importer.MODULE_OPS)


@pytest.mark.parametrize("path", KERNELS, ids=[p.name for p in KERNELS])
def test_example_kernels_round_trip_exactly(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    module = parse_module(text, filename=path.name)
    data = assert_exact(module)
    assert print_module(read_module(data)) == text


@pytest.mark.parametrize("text", roundtrip_cases())
def test_corpus_case_round_trips_exactly(text: str) -> None:
    module = parse_module(text, filename="case.loom")
    assert_exact(module)


def test_no_location_mode_drops_locations_only() -> None:
    text = KERNELS[-1].read_text(encoding="utf-8")
    module = parse_module(text, filename="k.loom")
    assert any(op.location_id for op in module.walk())
    data = write_module(module, location_mode=1)
    assert data[5] == 1
    back = read_module(data, verify=True)
    assert print_module(back) == text
    assert back.locations == [None]
    assert all(op.location_id == 0 for op in back.walk())
    assert module_diff(module, back, locations=False) is None
    assert len(data) < len(write_module(module))


def _module_with_every_feature() -> Module:
    text = """// header line one
//header two

target.generic<reference> @t
// a kernel
kernel.def target(@t) export("k") @k(%n: index) {
  %c1 = index.constant 1 : index
  kernel.launch.config workgroups(%n, %c1, %c1) workgroup_size(%c1, %c1, %c1) : index
} launch(%n: index, %x: buffer, %p: i1) {
  %zero = index.constant 0 : offset
  %v = buffer.view %x[%zero] : buffer -> view<[%n]xf32>
  %f = scalar.constant 1.50 : f32

  //   spaced comment
  %g = scalar.constant 2.5e-3 : f32
  %t = scalar.constant true : i1
  %big = scalar.constant 18446744073709551615 : i64
  %neg = scalar.constant -9223372036854775808 : i64
  scf.if %p {
    %h = scalar.addf<fast> %f, %g : f32
  }
  kernel.return
}
"""
    module = parse_module(text, filename="features.loom")
    module.name = "features"
    src = module.add_source("frontend.py")
    tag_src = module.add_source("torch")
    file_loc = module.add_location(FileLocation(src, 3, 4, 3, 20, flags=1))
    fused = module.add_location(FusedLocation((file_loc, 1)))
    opaque = module.add_location(OpaqueLocation(tag_src, b"node_id=42"))
    tagged = module.add_location(TaggedLocation(7, fused, b"\x00\xff"))
    ops = list(module.walk())
    ops[2].location_id = fused
    ops[3].location_id = opaque
    ops[4].location_id = tagged
    return module


def test_every_feature_round_trips() -> None:
    module = _module_with_every_feature()
    data = assert_exact(module)
    back = read_module(data)
    assert back.file_header == module.file_header
    assert (
        back.locations[-1] == TaggedLocation(7, 7, b"\x00\xff")
        or back.locations[-1] == (module.locations[-1])
    )
    floats = [op.attributes["value"] for op in back.walk() if "value" in op.attributes]
    spelled = [x for x in floats if isinstance(x, FloatLiteral)]
    assert [x.spelling for x in spelled] == ["1.50", "2.5e-3"]
    ints = [x for x in floats if type(x) is int]
    assert 2**64 - 1 in ints and -(2**63) in ints
    assert True in [x for x in floats if type(x) is bool]


def _target_op(module: Module) -> Operation:
    return module.ops[0]


def test_attribute_kinds_without_a_declared_home_round_trip() -> None:
    """Undeclared dictionary entries keep their Python kind: floats, big ints, tuples, types."""
    module = parse_module(KERNELS[0].read_text(encoding="utf-8"), filename="k.loom")
    op = _target_op(module)
    value = module.values[0]
    op.attributes = {
        **op.attributes,
        "a_float": 0.1,
        "b_neg": -(2**64) + 1,
        "c_nested": ((1, 2), ("x", True), ()),
        "d_types": (F32, I32),
        "e_preds": (Predicate("range", (value, 0, 16)), Predicate("pow2", (value,))),
        "f_type": INDEX,
        "g_false": False,
    }
    data = write_module(module)
    back = read_module(data)
    got = dict(_target_op(back).attributes)
    assert got["a_float"] == 0.1 and type(got["a_float"]) is float
    assert got["b_neg"] == -(2**64) + 1
    assert got["c_nested"] == ((1, 2), ("x", True), ())
    assert got["d_types"] == (F32, I32)
    preds = got["e_preds"]
    assert [p.kind for p in preds] == ["range", "pow2"]
    assert preds[0].args[0] is back.values[0] and preds[0].args[1:] == (0, 16)
    assert got["f_type"] is INDEX and got["g_false"] is False
    assert write_module(back) == data


def test_writer_refuses_ops_outside_the_declaration_set() -> None:
    module = make_module(60)
    kernel_only = [d for d in default_ops() if not d.name.startswith("scf.")]
    with pytest.raises(BytecodeError) as err:
        write_module(module, op_decls=kernel_only)
    assert "'scf.if'" in str(err.value)
    assert err.value.diagnostics[0].code == "BYTECODE/014"


def test_reader_lists_every_unknown_op_name() -> None:
    data = write_module(make_module(60), op_decls=OPS)
    allowed = [d for d in OPS if d.name not in ("scf.if", "scalar.mulf")]
    with pytest.raises(BytecodeError) as err:
        read_module(data, op_decls=allowed)
    message = str(err.value)
    assert "'scf.if'" in message and "'scalar.mulf'" in message
    assert err.value.diagnostics[0].code == "BYTECODE/007"
    assert "at byte offset" in message


def test_writer_refuses_values_outside_the_table() -> None:
    module = make_module(60)
    stray = Module().add_value(INDEX, "stray")
    op = next(op for op in module.walk() if op.operands)
    op.operands = (stray, *op.operands[1:])
    with pytest.raises(BytecodeError, match="not in the module's value table"):
        write_module(module, op_decls=OPS)


def test_writer_refuses_bad_location_ids_and_modes() -> None:
    module = make_module(60)
    module.ops[0].location_id = 99
    with pytest.raises(BytecodeError, match="location id 99"):
        write_module(module, op_decls=OPS)
    assert write_module(module, op_decls=OPS, location_mode=1)
    with pytest.raises(BytecodeError, match="location_mode"):
        write_module(module, op_decls=OPS, location_mode=2)


def test_writer_refuses_invalid_enum_values() -> None:
    module = make_module(60)
    op = next(op for op in module.walk() if "predicate" in op.attributes)
    op.attributes = {**op.attributes, "predicate": "sideways"}
    with pytest.raises(BytecodeError, match="sideways"):
        write_module(module, op_decls=OPS)


def test_verify_flag_reports_semantic_errors_as_diagnostics() -> None:
    from loom.diagnostics import LoomDiagnosticError

    module = make_module(60)
    ret = module.ops[-1].regions[1].blocks[0].ops.pop()  # drop kernel.return
    assert ret.name == "kernel.return"
    data = write_module(module, op_decls=OPS)
    read_module(data, op_decls=OPS)  # representable, so it reads
    with pytest.raises(LoomDiagnosticError):
        read_module(data, op_decls=OPS, verify=True)
