"""cfg.br / cfg.cond_br in both engines: per-lane divergence, reconvergence, loops, barriers."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).parent))
from interp_helpers import load  # noqa: E402

from loom.format.text.parser import parse_module
from loom.interp import Stepper, launch
from loom.verify import verify_module


def _expected() -> tuple[np.ndarray, np.ndarray]:
    i = np.arange(16)
    picked = np.where(i % 2 == 0, 2 * i, i + 100).astype(np.int32)
    tri = (i * (i + 1) // 2).astype(np.int32)
    return picked, tri


def test_divergent_branches_join_and_back_edge_loop_match_numpy() -> None:
    module = load("cfg_branches")
    assert not verify_module(module).has_errors
    picked, tri = np.zeros(16, np.int32), np.zeros(16, np.int32)
    result = launch(module, "cfg_branches", args=[picked, tri])
    want_picked, want_tri = _expected()
    np.testing.assert_array_equal(picked, want_picked)
    np.testing.assert_array_equal(tri, want_tri)
    # the barrier in the join block is reached by every lane: no finding
    assert not result.findings


def test_stepper_agrees_with_grid_engine_on_cfg_kernel() -> None:
    module = load("cfg_branches")
    picked, tri = np.zeros(16, np.int32), np.zeros(16, np.int32)
    s = Stepper(module, "cfg_branches", args=[picked, tri])
    s.run()
    assert s.done and not s.findings
    want_picked, want_tri = _expected()
    np.testing.assert_array_equal(picked, want_picked)
    np.testing.assert_array_equal(tri, want_tri)


def test_stepper_step_back_through_branches_is_exact() -> None:
    module = load("cfg_branches")
    picked, tri = np.zeros(16, np.int32), np.zeros(16, np.int32)
    s = Stepper(module, "cfg_branches", args=[picked, tri])
    n = s.run()
    assert n > 0
    for _ in range(n):
        assert s.step_back()
    assert not picked.any() and not tri.any()


@pytest.mark.parametrize("engine", ["grid", "stepper"])
def test_barrier_in_one_arm_is_a_divergence_finding(engine: str) -> None:
    module = load("cfg_divergent_barrier")
    out = np.zeros(8, np.int32)
    if engine == "grid":
        findings = launch(module, "cfg_divergent", args=[out]).findings
    else:
        s = Stepper(module, "cfg_divergent", args=[out])
        s.run()
        findings = s.findings
    assert [d.code for d in findings] == ["SANITIZE/004"]
    assert findings[0].range.line == 18  # the barrier in ^odd
    np.testing.assert_array_equal(out, np.arange(8, dtype=np.int32))


BARRIER_PER_ARM = """target.generic<reference> @reference

kernel.def target(@reference) export("arms") @arms() {
  %one = index.constant 1 : index
  %lanes = index.constant 4 : index
  kernel.launch.config workgroups(%one, %one, %one) workgroup_size(%lanes, %one, %one) : index
} launch(%out: buffer) {
  %c0 = index.constant 0 : index
  %c2 = index.constant 2 : index
  %i = kernel.workitem.id<x> : index
  %low = index.cmp slt, %i, %c2 : index
  cfg.cond_br %low, ^a, ^b
^a:
  kernel.barrier<workgroup> scope(workgroup) ordering(acq_rel)
  cfg.br ^join
^b:
  kernel.barrier<workgroup> scope(workgroup) ordering(acq_rel)
  cfg.br ^join
^join:
  kernel.return
}
"""


@pytest.mark.parametrize("engine", ["grid", "stepper"])
def test_one_barrier_per_arm_diverges_in_both_engines(engine: str) -> None:
    module = parse_module(BARRIER_PER_ARM, filename="arms.loom")
    out = np.zeros(4, np.int32)
    if engine == "grid":
        findings = launch(module, "arms", args=[out]).findings
    else:
        s = Stepper(module, "arms", args=[out])
        s.run()
        findings = s.findings
    assert findings and {d.code for d in findings} == {"SANITIZE/004"}


FUNC_CFG = """target.generic<reference> @reference

func.def @absdiff(%a: i32, %b: i32) -> (i32) {
  %lt = scalar.cmpi slt, %a, %b : i32
  cfg.cond_br %lt, ^swap, ^keep
^swap:
  %d1 = scalar.subi %b, %a : i32
  cfg.br ^done(%d1: i32)
^keep:
  %d2 = scalar.subi %a, %b : i32
  cfg.br ^done(%d2: i32)
^done(%d: i32):
  func.return %d : i32
}

kernel.def target(@reference) export("k") @k() {
  %one = index.constant 1 : index
  %lanes = index.constant 8 : index
  kernel.launch.config workgroups(%one, %one, %one) workgroup_size(%lanes, %one, %one) : index
} launch(%x: buffer, %y: buffer, %out: buffer) {
  %base = index.constant 0 : offset
  %i = kernel.workitem.id<x> : index
  %xv = buffer.view %x[%base] : buffer -> view<8xi32>
  %yv = buffer.view %y[%base] : buffer -> view<8xi32>
  %ov = buffer.view %out[%base] : buffer -> view<8xi32>
  %a = view.load %xv[%i] : view<8xi32> -> i32
  %b = view.load %yv[%i] : view<8xi32> -> i32
  %d = func.call @absdiff(%a, %b) : (i32, i32) -> (i32)
  view.store %d, %ov[%i] : i32, view<8xi32>
  kernel.return
}
"""


def test_multi_block_function_called_per_lane_matches_numpy() -> None:
    module = parse_module(FUNC_CFG, filename="absdiff.loom")
    assert not verify_module(module).has_errors, verify_module(module).render()
    rng = np.random.default_rng(3)
    x = rng.integers(-50, 50, 8).astype(np.int32)
    y = rng.integers(-50, 50, 8).astype(np.int32)
    grid, step = np.zeros(8, np.int32), np.zeros(8, np.int32)
    launch(module, "k", args=[x, y, grid])
    s = Stepper(module, "k", args=[x, y, step])
    s.run()
    np.testing.assert_array_equal(grid, np.abs(x - y))
    np.testing.assert_array_equal(step, grid)
