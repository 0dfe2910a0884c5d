"""The check-case runner and loom-test on cases of our own."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import loom.check as lc
from loom.check.runner import CheckError
from loom.cli.test import main
from loom.format.text.parser import parse_module

CASES = """\
check.case public @passes {
  %m = check.param.range po2 bounds(1 to 8) name("m") : index
  %s = check.param.seed base(5) count(3) name("seed") : i64
  %a = check.generate.random.uniform seed(%s) range(-1.0 to 1.0) : tensor<8xf32>
  %e = check.oracle.call<reference.copy> callee(@copy) inputs(%a) : ORACLE_TYPE
  check.expect.close actual(%a) expected(%e) atol(0.0) rtol(0.0) nan(same) : tensor<8xf32>
  check.expect.shape value(%a) shape([8]) : tensor<8xf32>
  check.return
}
check.case @fails {
  %a = check.generate.iota offset(0) step(1) : tensor<2x4xi32>
  %b = check.generate.fill value(3) : tensor<2x4xi32>
  check.expect.equal actual(%a) expected(%b) : tensor<2x4xi32>
  check.return
}
check.case @skipped {
  check.skip_if<device.memory> reason("fixture too large")
  check.return
}
""".replace("ORACLE_TYPE", "(tensor<8xf32>) -> (tensor<8xf32>)")


def _module(text: str = CASES, name: str = "cases.loom"):  # noqa: ANN202
    return parse_module(text, filename=name)


def test_param_expansion_first_parameter_fastest() -> None:
    report = lc.run(_module(), case="@passes")
    params = [s.params for s in report.samples]
    assert len(params) == 4 * 3
    assert params[0] == {"m": 1, "seed": 5}
    assert params[1] == {"m": 2, "seed": 5}
    assert params[4] == {"m": 1, "seed": 6}
    assert all(s.passed for s in report.samples)


def test_failure_names_line_with_caret_and_diff() -> None:
    report = lc.run(_module(), case="fails")
    [sample] = report.failed
    [f] = sample.failures
    assert f.kind == "equal"
    assert f.first_index == (0, 0)
    assert (f.got, f.want) == (0, 3)
    text = f.render()
    assert "cases.loom:13:3:" in text
    assert "check.expect.equal actual(%a)" in text
    assert "^~~~" in text
    assert "7 of 8 elements" in text


def test_skipped_case_has_no_samples() -> None:
    report = lc.run(_module())
    [skipped] = report.skipped
    assert skipped.name == "skipped" and skipped.skipped == "fixture too large"
    assert not skipped.samples
    assert len(report.samples) == 13 and len(report.failed) == 1


def test_seeded_inputs_are_reproducible() -> None:
    text = """\
check.case @c {
  %s = check.literal value(9) : i64
  %a = check.generate.random.uniform seed(%s) range(-5 to 5) : tensor<64xi32>
  %b = check.generate.random.uniform seed(%s) range(-5 to 5) : tensor<64xi32>
  check.expect.bitwise actual(%a) expected(%b) : tensor<64xi32>
  check.return
}
"""
    assert lc.run(_module(text)).ok
    want = np.random.default_rng(9).integers(-5, 5, size=(64,), endpoint=True).astype(np.int32)
    assert want.min() >= -5 and want.max() <= 5


@pytest.mark.parametrize(("atol", "ok"), [("0.5", True), ("0.4999", False)])
def test_close_tolerance_edge(atol: str, ok: bool) -> None:
    text = f"""\
check.case @c {{
  %a = check.generate.fill value(1.5) : tensor<4xf64>
  %b = check.generate.fill value(1.0) : tensor<4xf64>
  check.expect.close actual(%a) expected(%b) atol({atol}) rtol(0.0) nan(same) : tensor<4xf64>
  check.return
}}
"""
    report = lc.run(_module(text))
    assert report.ok is ok
    if not ok:
        [f] = report.failed[0].failures
        assert (f.got, f.want, f.atol, f.rtol) == (1.5, 1.0, 0.4999, 0.0)


def test_tensor_view_reinterprets_bytes() -> None:
    text = """\
check.case @c {
  %p = check.generate.iota offset(0) step(1) : tensor<8xi32>
  %w = check.tensor.view %p offset(8) : tensor<8xi32> -> tensor<2xi64>
  %e = check.generate.fill value(0) : tensor<2xi64>
  check.expect.equal actual(%w) expected(%e) : tensor<2xi64>
  check.return
}
"""
    [f] = lc.run(_module(text)).failed[0].failures
    assert f.first_index == (0,)
    assert f.got == 2 + (3 << 32)


def test_nan_same_vs_different() -> None:
    tmpl = """\
check.case @c {{
  %a = check.file.read.npy path("nan.npy") : tensor<3xf32>
  check.expect.close actual(%a) expected(%a) atol(0.0) rtol(0.0) nan({p}) : tensor<3xf32>
  check.return
}}
"""
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        np.save(Path(d) / "nan.npy", np.array([1.0, np.nan, 2.0], dtype=np.float32))
        same = lc.run(_module(tmpl.format(p="same")), base_dir=d)
        diff = lc.run(_module(tmpl.format(p="different")), base_dir=d)
    assert same.ok
    [f] = diff.failed[0].failures
    assert f.first_index == (1,)


def test_unknown_case_is_an_error() -> None:
    with pytest.raises(CheckError, match="no check case @nope"):
        lc.run(_module(), case="nope")


def test_loom_test_exit_codes_and_json(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    f = tmp_path / "cases.loom"
    f.write_text(CASES)
    out = tmp_path / "r.json"
    assert main([str(f), f"--json={out}"]) == 1
    report = json.loads(out.read_text())
    assert report["format"] == "loom.test.v0"
    [failed] = [s for s in report["samples"] if not s["passed"]]
    [failure] = failed["expectations"]["failures"]
    assert failure["actual_value_id"] != failure["expected_value_id"]
    assert isinstance(failure["actual_value_id"], int)
    assert (report["case_count"], report["sample_count"]) == (3, 13)
    assert report["failed_sample_count"] == 1 and report["skipped_case_count"] == 1
    assert main([str(f), "--case=@passes"]) == 0
    assert main([str(f), "--case=@passes", "--sample=99"]) == 2
    assert main([str(f), "--list"]) == 0
    assert "@passes 12 samples" in capsys.readouterr().out
    bad = tmp_path / "bad.loom"
    bad.write_text("check.case @x {\n  %y = check.literal value(1.5) : i32\n  check.return\n}\n")
    assert main([str(bad)]) == 2
    assert main([str(tmp_path / "missing.loom")]) == 2


KERNEL = Path(__file__).parents[1] / "examples" / "kernels" / "vector_add_i32.loom"
T = "tensor<128xi32>"
LAUNCH_CASE = f"""
check.case @add {{
  %n = check.param.choice values([128, 100, 200]) name("n") : index
  %a = check.generate.iota offset(0) step(1) : {T}
  %b = check.generate.fill value(5) : {T}
  %c = check.generate.fill value(0) : {T}
  kernel.launch @vector_add_i32[%n](%n, %a, %b, %c) : [index](index, {T}, {T}, {T})
  %e = check.oracle.call<reference.add> callee(@add) inputs(%a, %b) : ({T}, {T}) -> ({T})
  check.expect.equal actual(%c) expected(%e) : {T}
  check.return
}}
"""


def test_kernel_launch_inside_a_case_writes_the_case_tensors() -> None:
    from loom.verify import verify_module

    module = _module(KERNEL.read_text() + LAUNCH_CASE)
    assert not verify_module(module).has_errors  # tensors bind to buffer parameters
    report = lc.run(module, case="add")
    full, short, oob = report.samples
    assert full.passed
    [f] = short.failures
    assert f.first_index == (100,) and (f.got, f.want) == (0, 105)
    assert not oob.failures and oob.issues  # the sanitizer's out-of-bounds finding
    assert "vector_add_i32" in oob.issues[0]


LIB_KERNEL = """\
target.generic<reference> @reference

kernel.def target(@reference) export("fill") @fill(%n: index) {
  %one = index.constant 1 : index
  kernel.launch.config workgroups(%one, %one, %one) workgroup_size(%n, %one, %one) : index
} launch(%n: index, %out: buffer) {
  %base = index.constant 0 : offset
  %i = kernel.workitem.dispatch.id<x> : index
  %v = index.cast %i : index to i32
  %ov = buffer.view %out[%base] : buffer -> view<[%n]xi32>
  view.store %v, %ov[%i] : i32, view<[%n]xi32>
  kernel.return
}
"""
DECLARING = """\
kernel.decl @fill(%n: index) launch(%n: index, %out: buffer)

check.case @c {
  %n = check.literal value(8) : index
  %out = check.generate.fill value(-1) : tensor<8xi32>
  kernel.launch @fill[%n](%n, %out) : [index](index, tensor<8xi32>)
  %want = check.generate.iota offset(0) step(1) : tensor<8xi32>
  check.expect.equal actual(%out) expected(%want) : tensor<8xi32>
  check.return
}
"""


def test_declared_kernel_runs_from_a_linked_library(tmp_path: Path) -> None:
    from loom.format.bytecode import write_module

    lib = _module(LIB_KERNEL, "lib.loom")
    report = lc.run(_module(DECLARING), libraries=[lib])
    assert report.ok and len(report.samples) == 1
    unlinked = lc.run(_module(DECLARING))
    [issue] = unlinked.failed[0].issues
    assert "@fill is only declared ('kernel.decl')" in issue and "--library" in issue
    # loom-test --library accepts text and bytecode libraries
    (tmp_path / "cases.loom").write_text(DECLARING)
    (tmp_path / "lib.loombc").write_bytes(write_module(lib))
    (tmp_path / "lib.loom").write_text(LIB_KERNEL)
    for name in ("lib.loombc", "lib.loom"):
        assert main([str(tmp_path / "cases.loom"), f"--library={tmp_path / name}"]) == 0
    assert main([str(tmp_path / "cases.loom")]) == 1


FUNC_CASES = """\
func.def @square(%x: i32) -> (i32) {
  %y = scalar.muli %x, %x : i32
  func.return %y : i32
}

func.def @wrong_square(%x: i32) -> (i32) {
  %y = scalar.addi %x, %x : i32
  func.return %y : i32
}

check.case @c {
  %x = check.param.choice values([2, 3]) name("x") : i32
  %y = func.call @square(%x) : (i32) -> (i32)
  %w = func.call @wrong_square(%x) : (i32) -> (i32)
  %e = check.oracle.call<reference.scalar> callee(@square) inputs(%x) : (i32) -> (i32)
  check.expect.equal actual(%y) expected(%e) : i32
  check.expect.equal actual(%w) expected(%e) : i32
  check.return
}
"""


def test_func_call_reference_implementations() -> None:
    two, three = lc.run(_module(FUNC_CASES)).samples
    # 2 + 2 == 2 * 2, but 3 + 3 != 3 * 3: only the second expectation of sample 1 fails
    assert two.passed and two.expectation_count == 2
    [f] = three.failures
    assert (f.index, f.got, f.want) == (1, 6, 9)


RACE = (Path(__file__).parent / "check" / "sanitizer.loom").read_text()


def test_sanitizer_categories_select_findings() -> None:
    m = _module(RACE, "sanitizer.loom")
    assert not lc.run(m, case="race_fails").ok
    assert lc.run(m, case="race_fails", sanitize="access").ok  # races are not 'access'
    assert not lc.run(m, case="race_fails", sanitize="tsan|asan").ok
    assert lc.run(m, case="race_fails", sanitize="none").ok
    # the captured race passes only while the race category is on
    assert lc.run(m, case="race_captured").ok
    assert not lc.run(m, case="race_captured", sanitize="access").ok
    with pytest.raises(CheckError, match="unknown sanitizer category 'memory'"):
        lc.run(m, sanitize="memory")


def test_planning_issues_and_skip_codes_in_the_json_report(tmp_path: Path) -> None:
    text = """\
check.case @dup {
  %a = check.param.choice values([1]) name("a") : index
  %b = check.param.choice values([2]) name("a") : index
  check.return
}
check.case @unsupported {
  %x = index.constant 1 : index
  check.return
}
check.case @skipped {
  check.requires<target.feature> {feature = "amdgpu.gfx1151"}
  check.return
}
check.case @sweep_case {
  %m = check.param.choice values([8, 16]) name("m") : index
  check.return
}
check.benchmark<@sweep_case> {m = 16}
check.benchmark<@sweep_case> @bad {m = 12}
"""
    f = tmp_path / "plan.loom"
    f.write_text(text)
    out = tmp_path / "r.json"
    assert main([str(f), f"--json={out}"]) == 1
    report = json.loads(out.read_text())
    kinds = [(p["kind"], p["case"]) for p in report["planning_issues"]]
    assert kinds == [
        ("duplicate_parameter_name", "dup"),
        ("unsupported_case_body_op", "unsupported"),
        ("invalid_benchmark_assignment", "sweep_case"),
    ]
    assert report["planning_issues"][2]["benchmark"] == "bad"
    assert report["sample_count"] == 2  # the benchmarked case still runs (m = 8, 16)
    assert report["planning_issues"][1]["fix_hint"] == "use check.literal"
    assert report["planning_issues"][1]["source_location"]["start_line"] == 7
    [skip] = report["skipped_cases"]
    assert (skip["code"], skip["op"], skip["provider"]) == (
        "requirement_not_satisfied",
        "requires",
        "target.feature",
    )


def test_progress_line_only_on_a_terminal() -> None:
    import io

    from loom.cli.test import ProgressLine

    quiet = io.StringIO()
    p = ProgressLine(quiet)
    p(5, 10)
    p.close()
    assert quiet.getvalue() == ""
    forced = io.StringIO()
    p = ProgressLine(forced, force=True)
    p(5, 10)
    p(10, 10)
    p.close()
    text = forced.getvalue()
    assert "5/10 samples" in text and "10/10 samples" in text and text.endswith("\n")


def test_pytest_plugin_items_per_sample_with_readable_failures(tmp_path: Path) -> None:
    import subprocess
    import sys

    (tmp_path / "cases.loom").write_text(CASES)
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", str(tmp_path), "-q", "-p", "no:cacheprovider", "-rs"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=300,
    )
    out = proc.stdout
    assert proc.returncode == 1, out
    assert "1 failed, 12 passed, 1 skipped" in out
    assert "cases.loom::fails[0]" in out
    assert "check.expect.equal actual(%a)" in out and "^~~~" in out
    assert "got:  0" in out and "want: 3" in out
    assert "fixture too large" in out


def test_tensor_type_text_bytecode_and_verifier() -> None:
    from loom.format.bytecode import read_module, write_module
    from loom.format.text.printer import print_module
    from loom.ir import F32, TypeKind, tensor_type
    from loom.verify import verify_module

    text = """\
check.case @c {
  %m = check.param.choice values([2, 3]) name("m") : index
  %a = check.generate.fill value(0.0) : tensor<[%m]x4xf32>
  %s = check.generate.fill value(1) : tensor<i32>
  check.expect.shape value(%a) shape([%m, 4]) : tensor<[%m]x4xf32>
  check.return
}
"""
    m = _module(text)
    assert print_module(m) == text
    assert print_module(read_module(write_module(m))) == text
    a = m.ops[0].regions[0].blocks[0].ops[1].results[0]
    assert a.type.kind is TypeKind.TENSOR and str(a.type) == "tensor<[%m]x4xf32>"
    assert str(tensor_type(F32, 2, 8)) == "tensor<2x8xf32>"
    assert [s.params for s in lc.run(m).samples] == [{"m": 2}, {"m": 3}]
    # generators make tensors: a vector result is a type error
    bad = _module(text.replace("tensor<i32>", "vector<4xi32>"))
    [d] = [d for d in verify_module(bad) if d.is_error]
    assert d.code.startswith("TYPE/") and "a tensor type" in d.message
    with pytest.raises(ValueError, match="a tensor type has no layout"):
        from loom.ir import ShapedType

        ShapedType(TypeKind.TENSOR, F32, (4,), "#dense")


def test_dictionary_attributes_round_trip() -> None:
    from loom.format.bytecode import read_module, write_module
    from loom.format.text.printer import print_module
    from loom.ir import DictAttr

    text = (
        "check.case @c {\n"
        '  check.expect.event<device> {count = 2, "odd key" = "x", tsan = {check = "data_race",'
        ' deep = {n = [1, 2]}}, type = "tsan_report", z = -1.5}\n'
        "  check.return\n"
        "}\n"
    )
    m = _module(text)
    assert print_module(m) == text
    assert print_module(read_module(write_module(m))) == text
    ev = m.ops[0].regions[0].blocks[0].ops[0]
    attrs = ev.attributes["attrs"]
    assert isinstance(attrs, DictAttr) and attrs["tsan"]["deep"]["n"] == (1, 2)
    assert list(attrs) == ["count", "odd key", "tsan", "type", "z"]
    # keys print sorted however they were written; {} is accepted and elided
    shuffled = text.replace('count = 2, "odd key" = "x", ', "").replace(
        'type = "tsan_report", z = -1.5',
        'z = -1.5, type = "tsan_report", "odd key" = "x", count = 2',
    )
    assert print_module(_module(shuffled)) == text
    empty = "check.case @e {\n  check.return\n}\ncheck.benchmark<@e> @b {}\n"
    assert print_module(_module(empty)) == empty.replace(" {}", "")


def test_dictionary_parse_errors() -> None:
    from loom.errors import LoomParseError

    for body, code in (
        ("{k = 1, k = 2}", "PARSE/020"),
        ("{k 1}", "PARSE/003"),
        ("{k = }", "PARSE/003"),
        ("{k = 1", "PARSE/003"),
    ):
        text = f"check.case @c {{\n  check.expect.event<device> {body}\n  check.return\n}}\n"
        with pytest.raises(LoomParseError) as e:
            _module(text)
        assert e.value.diagnostics[0].code == code, (body, e.value)


def test_dask_local_cluster_gives_the_serial_report() -> None:
    distributed = pytest.importorskip("dask.distributed")
    from loom.check.distributed import run_on_dask

    path = Path(__file__).parent / "check" / "kinds.loom"
    module = _module(path.read_text(), str(path))
    serial = lc.run(module, base_dir=path.parent, write_files=False)
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        seen = []
        fanned = run_on_dask(
            module,
            client,
            base_dir=path.parent,
            write_files=False,
            chunk_size=7,
            progress=lambda done, total: seen.append((done, total)),
        )
    assert fanned.to_json() == serial.to_json()
    assert fanned.render() == serial.render()
    assert len(serial.samples) == 119 and len(serial.failed) == 3
    chunks = sum(-(-len(c.samples) // 7) for c in serial.cases)
    assert seen[-1] == (119, 119) and len(seen) == chunks  # one update per chunk of 7


def test_report_verdict_table_bundle() -> None:
    from loom_jupyter.display import check_report_bundle, check_report_rows

    report = lc.run(_module())
    rows = check_report_rows(report)
    verdicts = [r[3] for r in rows]
    assert verdicts.count("passed") == 12 and verdicts.count("failed") == 1
    assert ("@skipped", "-", "", "skipped", "fixture too large") in rows
    bundle = check_report_bundle(report)
    html = bundle["text/html"]
    assert "3 cases, 13 samples: 12 passed, 1 failed, 1 skipped" in bundle["text/plain"]
    assert html.count("<tr>") == len(rows) + 1
    assert "loom-error" in html and "^~~~" in html and "m=1, seed=5" in html


def test_builder_takes_plain_dicts_for_dictionary_attributes() -> None:
    from loom.builder import module_builder
    from loom.format.text.printer import print_module
    from loom.ir import DictAttr

    module, b = module_builder()
    body = b.region()
    with b.insertion_block(body.blocks[0]):
        b.check.requires(provider="target.feature", attrs={"feature": "loom.reference"})
        b.check.event(provider="device", attrs={"count": 0, "tsan": {"check": "data_race"}})
        b.check.return_()
    b.check.case(case_symbol="c", body=body)
    text = print_module(module)
    assert 'check.requires<target.feature> {feature = "loom.reference"}' in text
    assert 'check.expect.event<device> {count = 0, tsan = {check = "data_race"}}' in text
    ev = module.ops[0].regions[0].blocks[0].ops[1]
    assert isinstance(ev.attributes["attrs"]["tsan"], DictAttr)
    assert lc.run(module).ok


def test_file_write_npy_after_the_expectations(tmp_path: Path) -> None:
    text = """\
check.case @c {
  %k = check.param.choice values([1, 2]) name("k") : index
  %a = check.generate.fill value(1.5) : tensor<3xf32>
  %b = check.generate.fill value(1.5) : tensor<3xf32>
  check.expect.close actual(%a) expected(%b) atol(0.0) rtol(0.0) nan(same) : tensor<3xf32>
  check.file.write.npy value(%a) path("out/always.npy") mode(always) : tensor<3xf32>
  check.file.write.npy value(%a) path("out/failed.npy") : tensor<3xf32>
  check.return
}
"""
    assert lc.run(_module(text), base_dir=tmp_path).ok
    assert np.array_equal(np.load(tmp_path / "out" / "always.npy"), np.full(3, 1.5, np.float32))
    assert not (tmp_path / "out" / "failed.npy").exists()  # on_failure (the default)
    failing = text.replace(
        "%b = check.generate.fill value(1.5)", "%b = check.generate.fill value(2.5)"
    )
    assert not lc.run(_module(failing), base_dir=tmp_path).ok
    assert (tmp_path / "out" / "failed.npy").exists()
    other = tmp_path / "dry"
    lc.run(_module(failing), base_dir=other, write_files=False)
    assert not other.exists()


def test_dictionary_values_bool_and_quoted_keys() -> None:
    from loom.format.text.printer import print_module

    text = (
        "check.case @c {\n"
        '  check.expect.event<device> {count = 0, "k" = true, "two words" = false}\n'
        "  check.return\n"
        "}\n"
    )
    printed = print_module(_module(text))
    assert '{count = 0, k = true, "two words" = false}' in printed
    [ev] = [o for o in _module(printed).ops[0].regions[0].blocks[0].ops if o.operands == ()][:1]
    assert ev.attributes["attrs"]["k"] is True


def _has_func_decl() -> bool:
    from loom.registry import default_registry

    return default_registry().get("func.decl") is not None


DECL_CASE = """\
func.decl @scale(%input: tensor<4xf32>) -> (tensor<4xf32>)

check.case public @scale_case {
  %seed = check.param.seed base(1282371437) count(4) name("seed") : i64
  %input = check.generate.random.uniform seed(%seed) range(-1.0 to 1.0) : tensor<4xf32>
  %actual = func.call @scale(%input) : (tensor<4xf32>) -> (tensor<4xf32>)
  %expected = check.oracle.call<reference.scalar> callee(@scale) inputs(%input) : ORACLE
  check.expect.close actual(%actual) expected(%expected) atol(0.0) rtol(0.0) nan(same) : T
  check.return
}
""".replace("ORACLE", "(tensor<4xf32>) -> (tensor<4xf32>)").replace(": T\n", ": tensor<4xf32>\n")
DECL_LIB = """\
func.def @scale(%input: tensor<4xf32>) -> (tensor<4xf32>) {
  func.return %input : tensor<4xf32>
}
"""


@pytest.mark.skipif(not _has_func_decl(), reason="func.decl is not declared on this branch")
def test_func_decl_satisfied_by_a_library(tmp_path: Path) -> None:
    (tmp_path / "case.loom").write_text(DECL_CASE)
    (tmp_path / "lib.loom").write_text(DECL_LIB)
    assert main([str(tmp_path / "case.loom"), f"--library={tmp_path / 'lib.loom'}"]) == 0
    report = lc.run(_module(DECL_CASE))
    assert len(report.failed) == 4
    assert "@scale is only declared ('func.decl')" in report.failed[0].issues[0]


def test_writes_through_a_tensor_view_reach_its_source() -> None:
    text = (
        LIB_KERNEL
        + """
check.case @c {
  %n = check.literal value(4) : index
  %packed = check.generate.fill value(-1) : tensor<6xi32>
  %middle = check.tensor.view %packed offset(8) : tensor<6xi32> -> tensor<4xi32>
  kernel.launch @fill[%n](%n, %middle) : [index](index, tensor<4xi32>)
  %want = check.file.read.npy path("want.npy") : tensor<6xi32>
  check.expect.equal actual(%packed) expected(%want) : tensor<6xi32>
  check.return
}
"""
    )
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        np.save(Path(d) / "want.npy", np.array([-1, -1, 0, 1, 2, 3], dtype=np.int32))
        report = lc.run(_module(text), base_dir=d)
    assert report.ok, report.render()
