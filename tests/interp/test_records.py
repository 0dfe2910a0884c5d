"""Globals, configs, sanitizer assertions and fact probes at run time: the grid engine, the
stepper and loom-run agree on values and on how a failed assertion is reported."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from loom.cli.run import main as loom_run
from loom.dialects.global_ import STORE
from loom.errors import LoomRuntimeError
from loom.format.text.parser import parse_module
from loom.interp import Stepper, launch

HEADER = """kernel.def @k(%n: index) {{
  %one = index.constant 1 : index
  kernel.launch.config workgroups(%one, %one, %one) workgroup_size(%n, %one, %one) : index
}} launch(%n: index, %out: buffer) {{
  %base = index.constant 0 : offset
  %i = kernel.workitem.dispatch.id<x> : index
  %v = buffer.view %out[%base] : buffer -> view<[%n]xi64>
{body}
  kernel.return
}}
"""


def kernel(records: str, body: str) -> str:
    return records + "\n" + HEADER.format(body=body)


def run_both(text: str, n: int, **kw) -> tuple[np.ndarray, np.ndarray, dict, dict]:
    """Output of the grid engine and of the stepper, and the globals each handed back."""
    m = parse_module(text)
    grid_out = np.zeros(n, np.int64)
    g1 = dict(kw.pop("globals", {}))
    g2 = dict(g1)
    launch(m, "k", workload=(n,), args=(n, grid_out), globals=g1, **kw)
    step_out = np.zeros(n, np.int64)
    s = Stepper(m, "k", workload=(n,), args=(n, step_out), globals=g2, **kw)
    s.run()
    return grid_out, step_out, g1, s.records


RECORDS = """global.variable @count : index = 5
global.constant @gain : f32 = 2.5
global.rodata.def @table = align(8) bytes("0a0b0c0d")
config.def @tile = 64 : index
config.decl @need : index
"""

READ_ALL = """  %c = global.load @count : index
  %t = config.get @tile : index
  %r = global.load @table : buffer
  %rv = buffer.view %r[%base] : buffer -> view<4xi8>
  %b = view.load %rv[%i] : view<4xi8> -> i8
  %bi = index.cast %b : i8 to index
  %s = index.add %c, %t : index
  %s2 = index.add %s, %bi : index
  %w = index.cast %s2 : index to i64
  view.store %w, %v[%i] : i64, view<[%n]xi64>"""


def test_globals_configs_and_rodata_are_read_by_both_engines() -> None:
    grid, step, _, _ = run_both(kernel(RECORDS, READ_ALL), 4)
    want = 5 + 64 + np.array([10, 11, 12, 13])
    np.testing.assert_array_equal(grid, want)
    np.testing.assert_array_equal(step, want)


def test_launch_overrides_configs_and_supplies_globals() -> None:
    grid, step, _, _ = run_both(
        kernel(RECORDS, READ_ALL), 4, globals={"count": 100}, config={"@tile": 1}
    )
    want = 101 + np.array([10, 11, 12, 13])
    np.testing.assert_array_equal(grid, want)
    np.testing.assert_array_equal(step, want)


def test_a_numpy_global_is_used_in_place_and_scalars_are_handed_back() -> None:
    body = """  %c = global.load @count : index
  %one = index.constant 1 : index
  %c2 = index.add %c, %one : index
  %first = index.cmp eq, %i, %base2 : index
  scf.if %first {
    global.store %c2, @count : index
  }"""
    text = kernel(
        "global.variable @count : index = 5\nglobal.variable @seen : i32\n",
        "  %base2 = index.constant 0 : index\n" + body,
    )
    m = parse_module(text)
    out = np.zeros(2, np.int64)
    handed: dict = {}
    launch(m, "k", workload=(2,), args=(2, out), globals=handed)
    assert handed["count"] == 6 and handed["count"].dtype == np.int64
    assert "seen" not in handed  # never given a value
    cell = np.array([41], np.int64)
    launch(m, "k", workload=(2,), args=(2, out), globals={"count": cell})
    assert cell[0] == 42


def test_reading_a_global_without_value_is_an_uninitialised_read() -> None:
    text = kernel(
        "global.variable @unset : index\n",
        "  %c = global.load @unset : index\n  %w = index.cast %c : index to i64\n"
        "  view.store %w, %v[%i] : i64, view<[%n]xi64>",
    )
    m = parse_module(text)
    result = launch(m, "k", workload=(2,), args=(2, np.zeros(2, np.int64)))
    s = Stepper(m, "k", workload=(2,), args=(2, np.zeros(2, np.int64)))
    s.run()
    codes = {d.code for d in result.findings}
    assert codes and codes == {d.code for d in s.findings}
    assert any("unset" in d.message for d in result.findings)


@pytest.mark.parametrize(
    ("kw", "fragment"),
    [
        ({"config": {"tyle": 3}}, "unknown config name '@tyle'; the module declares configs: "),
        ({"globals": {"cuont": 3}}, "unknown global name '@cuont'"),
        ({"config": {"tile": 1.5}}, "config @tile must be an integer"),
        ({"config": {"tile": 1, "@tile": 2}}, "names @tile twice"),
    ],
)
def test_bad_names_and_values_are_clear_errors(kw: dict, fragment: str) -> None:
    m = parse_module(kernel(RECORDS, READ_ALL))
    with pytest.raises(LoomRuntimeError) as info:
        launch(m, "k", workload=(1,), args=(1, np.zeros(1, np.int64)), **kw)
    assert fragment in str(info.value)


def test_a_declared_config_without_value_is_reported_at_its_read() -> None:
    body = "  %x = config.get @need : index"
    m = parse_module(kernel(RECORDS, body))
    with pytest.raises(LoomRuntimeError) as info:
        launch(m, "k", workload=(1,), args=(1, np.zeros(1, np.int64)))
    d = info.value.diagnostics[0]
    assert d.code == "RUNTIME/032" and "config={'need': ...}" in d.message
    out = np.zeros(1, np.int64)
    launch(m, "k", workload=(1,), args=(1, out), config={"need": 3})


ASSERTING = kernel(
    "config.def @limit = 6 : index\n",
    """  %limit = config.get @limit : index
  sanitizer.assert.access<write> %v[%i] : view<[%n]xi64>
  %ok, %lim = sanitizer.assert.value %i, %limit [lt(%i, %limit)] : index, index
  %x = index.cast %ok : index to i64
  view.store %x, %v[%ok] : i64, view<[%n]xi64>""",
)


def _failure(fn) -> str:
    with pytest.raises(LoomRuntimeError) as info:
        fn()
    (d,) = info.value.diagnostics
    assert d.code == "RUNTIME/030"
    return d.render()


def test_a_failed_assertion_is_reported_identically_by_launch_stepper_and_loom_run(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    path = tmp_path / "assert.loom"
    path.write_text(ASSERTING)
    m = parse_module(ASSERTING, filename=str(path))
    grid = _failure(
        lambda: launch(m, "k", workload=(8,), args=(8, np.zeros(8, np.int64)), config={"limit": 3})
    )
    step = _failure(
        lambda: Stepper(
            m, "k", workload=(8,), args=(8, np.zeros(8, np.int64)), config={"limit": 3}
        ).run()
    )
    assert grid == step
    assert "lt(%i, %limit) does not hold (%i = 3, %limit = 3)" in grid
    assert "workitem (3, 0, 0)" in grid and f"{path}:12:" in grid
    np.save(tmp_path / "out.npy", np.zeros(8, np.int64))
    argv = [str(path), "--kernel", "k", "--workload", "8", "--arg", "n=8"]
    argv += ["--arg", f"out={tmp_path / 'out.npy'}", "--config", "limit=3", "-o", str(tmp_path)]
    capsys.readouterr()
    assert loom_run([*argv, "--force"]) == 1
    assert grid in capsys.readouterr().err
    assert loom_run([*argv[:-4], "--config", "limit=9", "-o", str(tmp_path), "--force"]) == 0


def test_access_assertions_check_the_box_against_the_view() -> None:
    text = kernel(
        "",
        """  %m = index.constant 3 : index
  %w = buffer.view %out[%base] : buffer -> view<[%m]x2xi64>
  %row = index.constant 1 : index
  sanitizer.assert.accesses<write> %w[%row, 0] {FRAGMENT} : view<[%m]x2xi64>
  sanitizer.assert.accesses<write> %w[%i, 0] {FRAGMENT} : view<[%m]x2xi64>""",
    ).replace("FRAGMENT", "static_count = 2, static_extents = [1, 2], static_strides = [1, 0]")
    m = parse_module(text)
    launch(m, "k", workload=(2,), args=(2, np.zeros(6, np.int64)))
    msg = _failure(lambda: launch(m, "k", workload=(3,), args=(3, np.zeros(6, np.int64))))
    assert "workitem (2, 0, 0)" in msg and "2 1x2 boxes from [2, 0]" in msg


def test_layout_assertion_checks_static_extents() -> None:
    text = kernel(
        "",
        """  %w = sanitizer.assert.layout %v : view<[%n]xi64> -> view<4xi64>
  %x = index.cast %i : index to i64
  view.store %x, %w[%i] : i64, view<4xi64>""",
    )
    m = parse_module(text)
    out = np.zeros(4, np.int64)
    launch(m, "k", workload=(4,), args=(4, out))
    np.testing.assert_array_equal(out, np.arange(4))
    msg = _failure(lambda: launch(m, "k", workload=(2,), args=(2, np.zeros(2, np.int64))))
    assert "are not those of view<4xi64>" in msg


def test_race_observations_feed_the_race_detector() -> None:
    # workitem 0 writes element 0, which workitem 1 was observed reading in the same interval
    text = kernel(
        "",
        """  %z = index.constant 0 : index
  sanitizer.race.access<read> %v[%z] : view<[%n]xi64>
  sanitizer.race.sync<global> {ordering = acq_rel, scope = workgroup}
  %x = index.cast %i : index to i64
  %first = index.cmp eq, %i, %z : index
  scf.if %first {
    view.store %x, %v[%z] : i64, view<[%n]xi64>
  }""",
    )
    m = parse_module(text)
    result = launch(m, "k", workload=(2,), args=(2, np.zeros(2, np.int64)))
    assert any(d.code == "SANITIZE/002" for d in result.findings), result.render()
    s = Stepper(m, "k", workload=(2,), args=(2, np.zeros(2, np.int64)))
    s.run()
    assert any(d.code == "SANITIZE/002" for d in s.findings)
    without = parse_module(
        text.replace("  sanitizer.race.access<read> %v[%z] : view<[%n]xi64>\n", "")
    )
    assert not launch(without, "k", workload=(2,), args=(2, np.zeros(2, np.int64))).findings


def test_fact_probes_report_observed_facts_in_both_engines() -> None:
    body = """  %ii = index.cast %i : index to i64
  %lo = test.fact_range_lo %ii : i64 -> i64
  %d = test.fact_divisor %n : index -> i64
  %p = test.fact_power_of_two %i : index -> i1
  %u = test.fact_subgroup_uniform %n : index -> i1
  %lv = test.fact_lane_varying %i : index -> i1
  %len = test.fact_view_byte_length_hi %v : view<[%n]xi64> -> i64
  %same = test.fact_view_root_matches %v, %out : view<[%n]xi64>, buffer -> i1
  %pi = scalar.extui %p : i1 to i64
  %ui = scalar.extui %u : i1 to i64
  %li = scalar.extui %lv : i1 to i64
  %si = scalar.extui %same : i1 to i64
  %a = scalar.muli %lo, %len : i64
  %b = scalar.addi %a, %d : i64
  %ten = scalar.constant 10 : i64
  %c1 = scalar.muli %pi, %ten : i64
  %hundred = scalar.constant 100 : i64
  %c2 = scalar.muli %ui, %hundred : i64
  %thousand = scalar.constant 1000 : i64
  %c3 = scalar.muli %li, %thousand : i64
  %tt = scalar.constant 10000 : i64
  %c4 = scalar.muli %si, %tt : i64
  %e1 = scalar.addi %b, %c1 : i64
  %e2 = scalar.addi %e1, %c2 : i64
  %e3 = scalar.addi %e2, %c3 : i64
  %e4 = scalar.addi %e3, %c4 : i64
  view.store %e4, %v[%i] : i64, view<[%n]xi64>"""
    grid, step, _, _ = run_both(kernel("", body), 4)
    i = np.arange(4)
    pow2 = np.array([0, 1, 1, 0])
    want = i * 32 + 4 + 10 * pow2 + 100 + 1000 + 10000
    np.testing.assert_array_equal(grid, want)
    np.testing.assert_array_equal(step, want)


def test_probes_without_a_runtime_counterpart_are_refused() -> None:
    body = "  %a = test.fact_view_min_alignment %v : view<[%n]xi64> -> i64"
    m = parse_module(kernel("", body))
    with pytest.raises(LoomRuntimeError) as info:
        launch(m, "k", workload=(1,), args=(1, np.zeros(1, np.int64)))
    assert info.value.diagnostics[0].code == "RUNTIME/013"


def test_step_back_undoes_a_global_store() -> None:
    text = kernel(
        "global.variable @count : index = 5\n",
        "  %c = global.load @count : index\n  %one = index.constant 1 : index\n"
        "  %c2 = index.add %c, %one : index\n  global.store %c2, @count : index",
    )
    s = Stepper(parse_module(text), "k", workload=(1,), args=(1, np.zeros(1, np.int64)))
    cell = s.records.cells["count"].buf.data.view(np.int64)
    while s.current is not None and s.current.op.name != STORE.name:
        s.step()
    s.step()
    assert cell[0] == 6
    s.step_back()
    assert cell[0] == 5


def test_a_supplied_config_must_satisfy_its_stated_facts() -> None:
    text = kernel(
        "config.decl @len : %value: index where [range(%value, 1, 64), mul(%value, 4)]\n",
        "  %x = config.get @len : index\n  %w = index.cast %x : index to i64\n"
        "  view.store %w, %v[%i] : i64, view<[%n]xi64>",
    )
    m = parse_module(text)
    out = np.zeros(1, np.int64)
    launch(m, "k", workload=(1,), args=(1, out), config={"len": 8})
    assert out[0] == 8
    for bad, fact in ((0, "range(%value, 1, 64)"), (6, "mul(%value, 4)")):
        with pytest.raises(LoomRuntimeError, match=r"breaks the fact") as info:
            launch(m, "k", workload=(1,), args=(1, out), config={"len": bad})
        assert fact in str(info.value)


def test_a_linked_rodata_table_is_supplied_by_the_launch() -> None:
    text = kernel(
        "global.rodata.decl @lut\n",
        "  %r = global.load @lut : buffer\n"
        "  %rv = buffer.view %r[%base] : buffer -> view<[%n]xi64>\n"
        "  %x = view.load %rv[%i] : view<[%n]xi64> -> i64\n"
        "  view.store %x, %v[%i] : i64, view<[%n]xi64>",
    )
    m = parse_module(text)
    out = np.zeros(3, np.int64)
    lut = np.array([7, 8, 9], np.int64)
    launch(m, "k", workload=(3,), args=(3, out), globals={"lut": lut})
    np.testing.assert_array_equal(out, lut)
    with pytest.raises(LoomRuntimeError) as info:
        launch(m, "k", workload=(3,), args=(3, out))
    assert "globals={'lut': ...}" in str(info.value)


def test_a_view_global_is_the_supplied_array_with_its_extents_as_co_results() -> None:
    text = kernel(
        "global.variable @grid : view<[%r]x[%c]xi64>\nglobal.variable @sq : view<[%s]x[%s]xi64>\n",
        "  %g, %rows, %cols = global.load @grid : view<[%rows]x[%cols]xi64>\n"
        "  %z = index.constant 0 : index\n"
        "  %x = view.load %g[%i, %z] : view<[%rows]x[%cols]xi64> -> i64\n"
        "  %ci = index.cast %cols : index to i64\n"
        "  %y = scalar.addi %x, %ci : i64\n"
        "  view.store %y, %g[%i, %z] : i64, view<[%rows]x[%cols]xi64>",
    )
    m = parse_module(text)
    grid = np.arange(6, dtype=np.int64).reshape(2, 3)
    launch(m, "k", workload=(2,), args=(2, np.zeros(2, np.int64)), globals={"grid": grid})
    np.testing.assert_array_equal(grid[:, 0], [0 + 3, 3 + 3])
    stepped = np.arange(6, dtype=np.int64).reshape(2, 3)
    Stepper(m, "k", workload=(2,), args=(2, np.zeros(2, np.int64)), globals={"grid": stepped}).run()
    np.testing.assert_array_equal(stepped, grid)
    with pytest.raises(LoomRuntimeError, match="takes a 2-d array"):
        launch(m, "k", workload=(2,), args=(2, np.zeros(2, np.int64)), globals={"grid": grid[0]})
    with pytest.raises(LoomRuntimeError, match="repeats an extent"):
        launch(
            m,
            "k",
            workload=(2,),
            args=(2, np.zeros(2, np.int64)),
            globals={"grid": grid, "sq": np.zeros((2, 3), np.int64)},
        )


def test_loom_run_takes_globals_and_prints_scalar_globals(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    text = kernel(
        "global.variable @grid : view<[%r]xi64>\nglobal.variable @calls : index = 0\n",
        "  %g, %r = global.load @grid : view<[%r]xi64>\n"
        "  %x = view.load %g[%i] : view<[%r]xi64> -> i64\n"
        "  view.store %x, %v[%i] : i64, view<[%n]xi64>\n"
        "  %z = index.constant 0 : index\n  %first = index.cmp eq, %i, %z : index\n"
        "  scf.if %first {\n    global.store %n, @calls : index\n  }",
    )
    path = tmp_path / "g.loom"
    path.write_text(text)
    np.save(tmp_path / "grid.npy", np.array([5, 6, 7], np.int64))
    np.save(tmp_path / "out.npy", np.zeros(3, np.int64))
    argv = [str(path), "--kernel", "k", "--workload", "3", "--arg", "n=3"]
    argv += ["--arg", f"out={tmp_path / 'out.npy'}", "-o", str(tmp_path / "o")]
    assert loom_run([*argv, "--global", f"grid={tmp_path / 'grid.npy'}"]) == 0
    assert "global @calls = 3" in capsys.readouterr().out
    np.testing.assert_array_equal(np.load(tmp_path / "o" / "out.npy"), [5, 6, 7])
    assert (tmp_path / "o" / "grid.npy").exists()
    assert loom_run([*argv, "--global", "calls=x", "--force"]) == 2
    assert "--global calls: 'x' is not an index value" in capsys.readouterr().err
    assert loom_run([*argv, "--config", "nope=1", "--force"]) == 2
    assert "unknown config name '@nope'" in capsys.readouterr().err


LAYOUT_KERNEL = """kernel.def @k(%n: index) {
  %one = index.constant 1 : index
  kernel.launch.config workgroups(%one, %one, %one) workgroup_size(%n, %one, %one) : index
} launch(%n: index, %pitch: index, %out: buffer) {
  %base = index.constant 0 : offset
  %i = kernel.workitem.dispatch.id<x> : index
  %z = index.constant 0 : index
  %given = encoding.layout.strided [%pitch, 1] : encoding<layout>
  %v = buffer.view %out[%base] : buffer -> view<4x4xi64, %given>
BODY
  kernel.return
}
"""


def _both(text: str, n: int, pitch: int, size: int) -> list[str]:
    """The rendered RUNTIME/030 failures of the grid engine and the stepper (empty: passed)."""
    m = parse_module(text)
    out = []
    for run in (
        lambda: launch(m, "k", workload=(n,), args=(n, pitch, np.zeros(size, np.int64))),
        lambda: Stepper(m, "k", workload=(n,), args=(n, pitch, np.zeros(size, np.int64))).run(),
    ):
        try:
            run()
        except LoomRuntimeError as e:
            (d,) = e.diagnostics
            assert d.code == "RUNTIME/030"
            out.append(d.render())
    return out


def test_layout_assertion_compares_the_runtime_layout_in_both_engines() -> None:
    body = """  %dense = encoding.layout.dense : encoding<layout>
  %w = sanitizer.assert.layout %v : view<4x4xi64, %given> -> view<4x4xi64, %dense>
  %x = index.cast %i : index to i64
  view.store %x, %w[%i, %z] : i64, view<4x4xi64, %dense>"""
    text = LAYOUT_KERNEL.replace("BODY", body)
    assert _both(text, 4, 4, 16) == []  # pitch 4 is the dense layout of a 4x4 view
    grid, step = _both(text, 4, 8, 32)  # a padded pitch is not
    assert grid == step
    assert "element strides [8, 1] are not those of the layout of" in grid
    assert "([4, 1])" in grid and "workitem (0, 0, 0)" in grid
    # a static layout spec is compared the same way
    static = text.replace("%dense = encoding.layout.dense : encoding<layout>", "")
    static = static.replace("%dense>", "#encoding.layout.strided<strides = [8, 1]>>")
    assert _both(static, 4, 8, 32) == []
    assert len(_both(static, 4, 4, 16)) == 2


def test_access_assertion_checks_the_box_against_the_buffer_under_the_layout() -> None:
    body = (
        "  sanitizer.assert.access<read> %v[%i, 0] {static_extents = [1, 4]}"
        " : view<4x4xi64, %given>"
    )
    text = LAYOUT_KERNEL.replace("BODY", body)
    assert _both(text, 4, 4, 16) == []
    # pitch 8 for 16 elements of storage: row 2 starts past the buffer, inside the 4x4 shape
    grid, step = _both(text, 4, 8, 16)
    assert grid == step
    assert "workitem (2, 0, 0)" in grid
    assert "the read of the 1x4 box at [2, 0] addresses bytes 128..159, outside buffer" in grid
    assert "(element strides [8, 1])" in grid
    assert _both(text, 4, 8, 32) == []


def test_an_observed_write_races_with_a_plain_read_and_leaves_memory_alone() -> None:
    # workitem 1 is observed writing element 0, which workitem 0 reads in the same interval
    text = kernel(
        "",
        """  %z = index.constant 0 : index
  %second = index.cmp eq, %i, %one2 : index
  scf.if %second {
    sanitizer.race.access<write> %v[%z] : view<[%n]xi64>
  }
  %first = index.cmp eq, %i, %z : index
  scf.if %first {
    %x = view.load %v[%z] : view<[%n]xi64> -> i64
    view.store %x, %v[%one2] : i64, view<[%n]xi64>
  }""",
    ).replace(
        "  %z = index.constant 0 : index\n",
        "  %z = index.constant 0 : index\n  %one2 = index.constant 1 : index\n",
    )
    m = parse_module(text)
    out = np.array([7, 0], np.int64)
    result = launch(m, "k", workload=(2,), args=(2, out))
    assert [d.code for d in result.findings] == ["SANITIZE/002"], result.render()
    np.testing.assert_array_equal(out, [7, 7])  # the observed write changed nothing
    step_out = np.array([7, 0], np.int64)
    s = Stepper(m, "k", workload=(2,), args=(2, step_out))
    s.run()
    assert [d.code for d in s.findings] == ["SANITIZE/002"]
    np.testing.assert_array_equal(step_out, [7, 7])
    plain = parse_module(text.replace("<write>", "<read>"))
    assert not launch(plain, "k", workload=(2,), args=(2, np.array([7, 0], np.int64))).findings


def test_atomic_observations_do_not_race_with_each_other() -> None:
    text = kernel(
        "",
        "  %z = index.constant 0 : index\n  sanitizer.race.access<read_write> %v[%z] "
        "{atomic = true, ordering = acq_rel, scope = device} : view<[%n]xi64>",
    )
    plain = text.replace(" {atomic = true, ordering = acq_rel, scope = device}", "")
    for source, codes in ((text, []), (plain, ["SANITIZE/002"])):
        m = parse_module(source)
        out = np.array([5, 6], np.int64)
        result = launch(m, "k", workload=(2,), args=(2, out))
        assert sorted({d.code for d in result.findings}) == codes, result.render()
        s = Stepper(m, "k", workload=(2,), args=(2, np.array([5, 6], np.int64)))
        s.run()
        assert sorted({d.code for d in s.findings}) == codes
        np.testing.assert_array_equal(out, [5, 6])


def test_repeated_access_assertion_checks_every_box_against_the_buffer() -> None:
    body = (
        "  sanitizer.assert.accesses<read> %v[0, 0] {static_count = 3, static_extents = [1, 4],"
        " static_strides = [1, 0]} : view<4x4xi64, %given>"
    )
    text = LAYOUT_KERNEL.replace("BODY", body)
    assert _both(text, 2, 8, 24) == []  # rows 0..2 of pitch 8: elements up to 19
    grid, step = _both(text, 2, 8, 16)
    assert grid == step and "workitem (0, 0, 0)" in grid
    assert "3 1x4 boxes from [0, 0] (strides [1, 0]) addresses bytes 0..159" in grid
