"""The stepper widget: actions drive loom.interp.Stepper; the static snapshot is stable."""

from __future__ import annotations

import numpy as np
import pytest

from loom.format.text.parser import parse_module
from loom_jupyter.stepper import StepperWidget
from tests.test_jupyter_display import check_html_hygiene

REVERSE = """\
target.generic<reference> @reference

kernel.def target(@reference) export("rev") @rev(%blocks: index) {
  %one = index.constant 1 : index
  %lanes = index.constant 4 : index
  kernel.launch.config workgroups(%blocks, %one, %one) workgroup_size(%lanes, %one, %one) : index
} launch(%blocks: index, %data: buffer) {
  %c3 = index.constant 3 : index
  %c4 = index.constant 4 : index
  %base = index.constant 0 : offset
  %stage_bytes = index.constant 16 : offset
  %block = kernel.workgroup.id<x> : index
  %lane = kernel.workitem.id<x> : index
  %count = index.mul %blocks, %c4 : index
  %all = buffer.view %data[%base] : buffer -> view<[%count]xf32>
  %stage_root = buffer.alloca<workgroup> align(16) %stage_bytes : buffer
  %stage = buffer.view %stage_root[%base] : buffer -> view<4xf32>
  %i = index.madd %block, %c4, %lane : index
  %v = view.load %all[%i] : view<[%count]xf32> -> f32
  view.store %v, %stage[%lane] : f32, view<4xf32>
  kernel.barrier<workgroup> scope(workgroup) ordering(acq_rel)
  %mirror = index.sub %c3, %lane : index
  %w = view.load %stage[%mirror] : view<4xf32> -> f32
  view.store %w, %all[%i] : f32, view<[%count]xf32>
  kernel.return
}
"""
STORE_LINE = 20  # view.store %v, %stage[%lane]
BARRIER_LINE = 21


def make(data: np.ndarray | None = None) -> tuple[StepperWidget, np.ndarray]:
    data = np.arange(8, dtype=np.float32) if data is None else data
    module = parse_module(REVERSE, filename="rev.loom")
    w = StepperWidget(module, "rev", workload=(2,), args=(2, data), dtypes={"stage_root": "f4"})
    return w, data


def test_actions_and_exact_reset() -> None:
    w, data = make()
    w.run_to_line(STORE_LINE)
    assert w.stepper.current.workitem == (0, 0, 0)
    assert "next op on line 20" in w.model.status()
    w.step()
    plain = w.snapshot_bundle()["text/plain"]
    assert "%stage_root@wg(0,0,0): 4 x float32" in plain
    assert "[0]*0.0 [1] ? [2] ? [3] ?" in plain, plain
    w.run_to_barrier()
    assert w.stepper.workitem_states()[(0, 0, 0)] == "at barrier"
    w.next_workitem()
    assert w.stepper.current.workitem == (2, 0, 0)
    w.step_back()
    assert w.stepper.current.workitem == (1, 0, 0)
    w.run()
    assert w.stepper.done
    assert data.tolist() == [3, 2, 1, 0, 7, 6, 5, 4]
    assert w.model.status().startswith("done after ")
    w.reset()
    assert w.stepper.history_length == 0
    assert data.tolist() == list(range(8))


def test_select_runs_forward_to_the_workitem() -> None:
    w, _ = make()
    w.select(workgroup=(1, 0, 0), workitem=(2, 0, 0))
    pos = w.stepper.current
    assert (pos.workgroup, pos.workitem) == ((1, 0, 0), (2, 0, 0))
    n = w.stepper.history_length
    w.select(workgroup=(0, 0, 0))  # behind us: not reachable forward, nothing changes
    assert w.stepper.history_length == n


def test_snapshot_is_deterministic_and_class_based() -> None:
    w1, _ = make()
    w2, _ = make()
    w1.run_to_barrier()
    w2.run_to_barrier()
    b1, b2 = w1.snapshot_bundle(), w2.snapshot_bundle()
    assert b1 == b2
    html = b1["text/html"]
    check_html_hygiene(html)
    assert '<mark class="loom-current"' in html
    assert 'class="loom-cell loom-state-barrier loom-state-current"' not in html
    assert "loom-state-barrier" in html and "loom-state-running" in html
    assert "x 0-3: B R*R R" in b1["text/plain"]


def test_mimebundle_has_widget_view_and_static_snapshot() -> None:
    pytest.importorskip("ipywidgets")
    w, _ = make()
    w.step(3)
    bundle = w._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle
    snap = w.snapshot_bundle()
    assert bundle["text/html"] == snap["text/html"]
    assert bundle["text/plain"] == snap["text/plain"]
    # The live view shows the same sections.
    assert w._html["code"].value.count('<mark class="loom-current"') == 1
    w._wi.value = (3, 0, 0)  # the selector drives the stepper
    assert w.stepper.current.workitem == (3, 0, 0)


def test_runtime_error_is_shown_not_raised() -> None:
    w, data = make()
    bad = parse_module(
        REVERSE.replace("%mirror = index.sub %c3, %lane", "%mirror = index.add %c4, %lane"),
        filename="bad.loom",
    )
    w = StepperWidget(bad, "rev", workload=(2,), args=(2, data))
    w.run()
    assert w.model.error is not None
    plain = w.snapshot_bundle()["text/plain"]
    assert "stopped by LoomRuntimeError (the failing op did not run): bad.loom:" in plain
    assert not w.stepper.done


def test_race_finding_listed() -> None:
    racy = REVERSE.replace("  kernel.barrier<workgroup> scope(workgroup) ordering(acq_rel)\n", "")
    data = np.arange(8, dtype=np.float32)
    w = StepperWidget(
        parse_module(racy, filename="racy.loom"), "rev", workload=(2,), args=(2, data)
    )
    w.run()
    snap = w.model.snapshot()
    assert snap.findings, "the sanitizer reports the missing barrier"
    assert "findings: " in w.snapshot_bundle()["text/plain"]


def test_show_selects_sections() -> None:
    w, _ = make()
    w.run_to_barrier()
    view = w.show("status", "grid")
    plain = view._repr_mimebundle_()["text/plain"]
    assert plain.startswith("step ")
    assert "x 0-3: B R*R R" in plain
    assert "values:" not in plain and "data:" not in plain
    with pytest.raises(ValueError, match="unknown section"):
        w.show("nope")


def test_titles_and_values_describe_the_state_shown() -> None:
    w, _ = make()
    plain = w.snapshot_bundle()["text/plain"]
    assert "workgroup (0,0,0) of 2 x 1 x 1: R running" in plain
    assert "values of workitem (0,0,0)" in plain
    w.run()
    plain = w.snapshot_bundle()["text/plain"]
    assert "grid of 2 x 1 x 1 workgroups: every workitem done" in plain
    assert "workgroup (1,1,1)" not in plain and "values: none yet" not in plain
    assert "values: none (every workitem has finished)" in plain
    assert "x 0-3: D D D D" in plain


def test_showing_again_freezes_the_earlier_view() -> None:
    pytest.importorskip("ipywidgets")
    w, _ = make()
    w.step(2)
    first = w._repr_mimebundle_()
    old_view, old_status = w._view, w._html["status"].value
    w._repr_mimebundle_()
    assert w._view is not old_view
    w.step(5)
    assert old_view.children[0].value.count("stays at the state it was shown in") == 1
    frozen_status = [c for c in old_view.children if getattr(c, "value", None) == old_status]
    assert frozen_status, "the earlier view still shows step 2"
    assert "step 2:" in first["text/plain"]
