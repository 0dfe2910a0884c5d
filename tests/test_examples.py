"""The sample kernels in examples/kernels do what examples/kernels/README.md says."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from loom.format.text.parser import parse_module
from loom.format.text.printer import print_module
from loom.interp import launch

KERNELS = Path(__file__).resolve().parents[1] / "examples" / "kernels"
BARRIER = "  kernel.barrier<workgroup> {ordering = acq_rel, scope = workgroup}\n"


def load(name: str, edit=lambda t: t):  # noqa: ANN001, ANN201
    text = edit((KERNELS / f"{name}.loom").read_text(encoding="utf-8"))
    return parse_module(text, filename=f"{name}.loom")


def test_samples_are_canonical() -> None:
    for path in KERNELS.glob("*.loom"):
        text = path.read_text(encoding="utf-8")
        assert print_module(parse_module(text, filename=path.name)) == text


def test_vector_add_wraps_and_leaves_lanes_past_n_alone() -> None:
    n = 100  # 2 workgroups of 64: lanes 100..127 do nothing
    a = np.full(n + 5, 2**31 - 1, dtype=np.int32)
    b = np.arange(n + 5, dtype=np.int32)
    c = np.full(n + 5, -7, dtype=np.int32)
    r = launch(load("vector_add_i32"), "vector_add_i32", workload=(n,), args=(n, a, b, c))
    assert r.grid == (2, 1, 1) and r.workgroup == (64, 1, 1) and r.findings == []
    want = (a[:n].astype(np.int64) + b[:n]).astype(np.int32)  # 32-bit wrap-around
    np.testing.assert_array_equal(c[:n], want)
    assert c[0] == 2**31 - 1 and c[1] == -(2**31)
    np.testing.assert_array_equal(c[n:], -7)


def test_reverse_blocks_reverses_each_block_of_32() -> None:
    data = np.arange(32 * 3, dtype=np.float32)
    want = data.reshape(3, 32)[:, ::-1].reshape(-1).copy()
    r = launch(load("reverse_blocks_f32"), "reverse_blocks_f32", workload=(3,), args=(3, data))
    np.testing.assert_array_equal(data, want)
    assert r.findings == []


def test_reverse_blocks_races_without_its_barrier() -> None:
    module = load("reverse_blocks_f32", lambda t: t.replace(BARRIER, "", 1))
    data = np.zeros(64, np.float32)
    r = launch(module, "reverse_blocks_f32", workload=(2,), args=(2, data))
    assert any(d.code == "SANITIZE/002" for d in r.findings)


@pytest.mark.parametrize("sanitize", [True, False])
def test_transpose_is_a_copy_through_two_layouts(sanitize: bool) -> None:
    rows, cols, pitch = 13, 10, 16  # neither extent a multiple of the 8 x 8 workgroup
    a = np.full((rows, pitch), np.nan, dtype=np.float32)  # the padding must never be read
    a[:, :cols] = np.arange(rows * cols, dtype=np.float32).reshape(rows, cols) - 40
    b = np.full((cols, rows), -1, dtype=np.float32)
    r = launch(
        load("transpose_pitched_f32"),
        "transpose_pitched_f32",
        workload=(rows, cols),
        args=(rows, cols, pitch, a, b),
        sanitize=sanitize,
    )
    assert r.grid == (2, 2, 1) and r.findings == []
    np.testing.assert_array_equal(b, a[:, :cols].T)
