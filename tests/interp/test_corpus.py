"""The kernel corpus: expected results computed with NumPy, and sanitizer findings."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).parent))
from interp_helpers import load  # noqa: E402

from loom.diagnostics import DiagnosticSeverity
from loom.errors import LoomRuntimeError
from loom.interp import launch


def codes(result) -> list[str]:
    return [d.code for d in result.findings]


@pytest.mark.parametrize("n", [1, 255, 256, 1000, 4097])
def test_saxpy_n_not_multiple_of_workgroup(n: int) -> None:
    rng = np.random.default_rng(n)
    x = rng.standard_normal(n).astype(np.float32)
    y = rng.standard_normal(n).astype(np.float32)
    want = np.float32(1.5) * x + y
    r = launch(load("saxpy"), "saxpy", workload=(n,), args=(n, 1.5, x, y))
    np.testing.assert_array_equal(y, want)
    assert r.grid == (-(-n // 256), 1, 1) and r.workgroup == (256, 1, 1)
    assert r.workitems == r.grid[0] * 256 and r.findings == []


def test_saxpy_sanitizer_off_gives_same_result() -> None:
    n = 3000
    x = np.arange(n, dtype=np.float32)
    y1, y2 = np.ones(n, np.float32), np.ones(n, np.float32)
    launch(load("saxpy"), "@saxpy", workload=(n,), args=(n, 2.0, x, y1), sanitize=False)
    launch(load("saxpy"), "saxpy", workload=(n,), args=(n, 2.0, x, y2))
    np.testing.assert_array_equal(y1, y2)
    np.testing.assert_array_equal(y1, 2 * x + 1)


def test_vector_add_i32_wraps() -> None:
    n = 200
    a = np.full(n, 2**31 - 1, dtype=np.int32)
    b = np.arange(n, dtype=np.int32)
    c = np.zeros(n, dtype=np.int32)
    r = launch(load("vector_add_i32"), "vector_add_i32", workload=(n,), args=(n, a, b, c))
    np.testing.assert_array_equal(c, a + b)
    assert r.findings == []


def test_reverse_blocks_in_place() -> None:
    data = np.arange(32 * 6, dtype=np.float32)
    want = data.reshape(6, 32)[:, ::-1].reshape(-1).copy()
    r = launch(load("reverse_blocks_f32"), "reverse_blocks_f32", workload=(6,), args=(6, data))
    np.testing.assert_array_equal(data, want)
    assert r.findings == []


def test_reverse_blocks_without_barrier_races() -> None:
    path = Path(__file__).parent / "kernels" / "reverse_blocks_f32.loom"
    text = path.read_text().replace(
        "  kernel.barrier<workgroup> scope(workgroup) ordering(acq_rel)\n", ""
    )
    from loom.format.text.parser import parse_module

    m = parse_module(text, filename="no_barrier.loom")
    r = launch(m, "reverse_blocks_f32", workload=(2,), args=(2, np.zeros(64, np.float32)))
    races = [d for d in r.findings if d.code == "SANITIZE/002"]
    assert races and races[0].range.line == 23  # the mirrored read
    assert races[0].notes and races[0].notes[0].range.line == 21  # the write to the stage


def test_workgroup_reduction_with_barriers() -> None:
    groups = 9
    data = np.random.default_rng(0).integers(-(10**6), 10**6, 64 * groups).astype(np.int32)
    sums = np.zeros(groups, dtype=np.int32)
    r = launch(load("reduce_sum"), "reduce_sum", workload=(groups,), args=(groups, data, sums))
    np.testing.assert_array_equal(sums, data.reshape(groups, 64).sum(axis=1, dtype=np.int32))
    assert r.findings == []


@pytest.mark.parametrize("rows,cols", [(8, 8), (16, 40), (32, 8)])
def test_tiled_transpose(rows: int, cols: int) -> None:
    a = np.random.default_rng(rows).standard_normal((rows, cols)).astype(np.float32)
    out = np.zeros((cols, rows), dtype=np.float32)
    r = launch(load("transpose"), "transpose", workload=(rows, cols), args=(rows, cols, a, out))
    np.testing.assert_array_equal(out, a.T)
    assert r.findings == [] and r.workgroup == (8, 8, 1)


def test_histogram_race_is_flagged() -> None:
    n = 300
    data = np.random.default_rng(2).integers(0, 1000, n).astype(np.int32)
    bins = np.zeros(16, dtype=np.int32)
    r = launch(load("histogram"), "histogram", workload=(n,), args=(n, data, bins))
    errors = [d for d in r.findings if d.is_error]
    assert errors and all(d.code == "SANITIZE/002" for d in errors)
    text = r.render()
    assert "histogram.loom:25:" in text and "data race" in text
    assert "workgroup (" in text and "note:" in text


def test_out_of_bounds_read_at_the_right_line() -> None:
    x = np.zeros(8, dtype=np.float32)
    with pytest.raises(LoomRuntimeError) as info:
        launch(load("oob_read"), "shift_left", workload=(8,), args=(8, x, x.copy()))
    d = info.value.diagnostics[0]
    assert d.code == "RUNTIME/001" and d.range.line == 14
    assert "workitem (7, 0, 0)" in d.message and "out of bounds" in d.message
    assert "oob_read.loom:14:3" in str(info.value)


def test_divergent_barrier_is_flagged() -> None:
    out = np.zeros(32, dtype=np.int32)
    r = launch(load("divergent_barrier"), "divergent", args=(out,))
    assert codes(r) == ["SANITIZE/004"]
    assert r.findings[0].range.line == 15
    assert "workitem (16, 0, 0)" in r.render()


def test_uninitialised_workgroup_read_is_flagged() -> None:
    out = np.zeros(16, dtype=np.int32)
    r = launch(load("uninit_read"), "uninit", args=(out,))
    assert codes(r) == ["SANITIZE/001"]
    d = r.findings[0]
    assert d.range.line == 22 and "workitem (8, 0, 0)" in d.message
    np.testing.assert_array_equal(out[:8], 7)


def test_headline_copy_kernel() -> None:
    src = np.random.default_rng(3).integers(0, 256, 64).astype(np.uint8)
    dst = np.zeros(64, dtype=np.uint8)
    r = launch(load("copy_64_bytes"), "copy_64_bytes", args=(src, dst))
    np.testing.assert_array_equal(dst, src)
    assert r.workitems == 64 and r.ops_executed == 64 * 5


def test_buffers_of_any_dtype_and_bytearrays() -> None:
    src = bytearray(range(64))
    dst = np.zeros(16, dtype=np.float32)  # 64 bytes viewed as bytes
    launch(load("copy_64_bytes"), "copy_64_bytes", args=(src, dst))
    assert dst.tobytes() == bytes(range(64))


def test_equal_value_write_race_is_a_warning() -> None:
    # every workitem of the copy kernel writes its own byte: no race; make them all write byte 0
    path = Path(__file__).parent / "kernels" / "copy_64_bytes.loom"
    text = (
        path.read_text()
        .replace(
            "buffer.store.i8 %value, %target[%byte_offset]",
            "%zero = index.constant 0 : offset\n  buffer.store.i8 %zero_value, %target[%zero]",
        )
        .replace(
            "%value = buffer.load.i8.u %source[%byte_offset]",
            "%value = buffer.load.i8.u %source[%byte_offset]\n"
            "  %zero_value = scalar.constant 5 : i32",
        )
    )
    from loom.format.text.parser import parse_module

    m = parse_module(text, filename="same_value.loom")
    r = launch(m, "copy_64_bytes", args=(np.zeros(64, np.uint8), np.zeros(64, np.uint8)))
    assert r.findings and all(d.severity is DiagnosticSeverity.WARNING for d in r.findings)
    assert r.findings[0].code == "SANITIZE/003"


def _collatz(x: int) -> int:
    k = 0
    while x > 1:
        x = x // 2 if x % 2 == 0 else 3 * x + 1
        k += 1
    return k


def test_divergent_control_flow_calls_and_exit() -> None:
    n = 45
    steps = np.zeros(n, np.int32)
    tri = np.zeros(n, np.int32)
    r = launch(load("control"), "control", workload=(n,), args=(n, steps, tri))
    assert r.findings == []
    assert steps.tolist() == [min(_collatz(i + 1), 100) for i in range(n)]
    assert tri.tolist() == [i * (i - 1) // 2 for i in range(n)]


def test_exited_workitems_leave_the_barrier() -> None:
    data = np.arange(32, dtype=np.int32)
    r = launch(load("exit_barrier"), "rotate", workload=(20,), args=(20, data))
    assert r.findings == []  # no barrier divergence although 12 workitems exited
    assert data.tolist() == [*range(1, 20), 0] + [-1] * 12
