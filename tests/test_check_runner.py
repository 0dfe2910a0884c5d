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
    # The verifier still rejects tensors passed for buffer arguments (no tensor<...> type
    # yet), so the runner is driven directly on the parsed module.
    report = lc.run(_module(KERNEL.read_text() + LAUNCH_CASE), case="add")
    full, short, oob = report.samples
    assert full.passed
    [f] = short.failures
    assert f.first_index == (100,) and (f.got, f.want) == (0, 105)
    assert not oob.failures and oob.issues  # the sanitizer's out-of-bounds finding
    assert "vector_add_i32" in oob.issues[0]
