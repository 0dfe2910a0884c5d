"""The stepper: same memory as the grid engine, exact step_back, scheduling states."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).parent))
from interp_helpers import load  # noqa: E402

from loom.interp import AT_BARRIER, DONE, RUNNING, Stepper, launch


def _inputs(name: str, size: int, seed: int) -> tuple[tuple, list]:
    rng = np.random.default_rng(seed)
    if name == "saxpy":
        n = size
        return (n,), [
            n,
            1.25,
            rng.standard_normal(n).astype(np.float32),
            rng.standard_normal(n).astype(np.float32),
        ]
    if name == "vector_add_i32":
        n = size
        return (n,), [
            n,
            *(rng.integers(-(2**31), 2**31, n, dtype=np.int64).astype(np.int32) for _ in range(2)),
            np.zeros(n, np.int32),
        ]
    if name == "reverse_blocks_f32":
        b = 1 + size % 3
        return (b,), [b, rng.standard_normal(32 * b).astype(np.float32)]
    if name == "reduce_sum":
        g = 1 + size % 2
        return (g,), [g, rng.integers(-100, 100, 64 * g).astype(np.int32), np.zeros(g, np.int32)]
    if name == "transpose":
        return (8, 16), [
            8,
            16,
            rng.standard_normal((8, 16)).astype(np.float32),
            np.zeros((16, 8), np.float32),
        ]
    if name == "control":
        n = size
        return (n,), [n, np.zeros(n, np.int32), np.zeros(n, np.int32)]
    if name == "exit_barrier":
        n = 1 + size % 32
        return (n,), [n, rng.integers(-9, 9, 32).astype(np.int32)]
    if name == "multiway":
        return (), [np.zeros(16, np.int32) for _ in range(4)]
    if name == "copy_64_bytes":
        return (), [rng.integers(0, 256, 64).astype(np.uint8), np.zeros(64, np.uint8)]
    raise AssertionError(name)


RACE_FREE = [
    "saxpy",
    "vector_add_i32",
    "reverse_blocks_f32",
    "reduce_sum",
    "transpose",
    "copy_64_bytes",
    "control",
    "exit_barrier",
    "multiway",
]
KERNEL_NAME = {"exit_barrier": "rotate"}


@settings(max_examples=16, deadline=None)
@given(name=st.sampled_from(RACE_FREE), size=st.integers(1, 70), seed=st.integers(0, 2**16))
def test_stepper_ends_with_the_grid_engines_memory(name: str, size: int, seed: int) -> None:
    module = load(name)
    workload, grid_args = _inputs(name, size, seed)
    _, step_args = _inputs(name, size, seed)
    kernel = KERNEL_NAME.get(name, name)
    launch(module, kernel, workload=workload, args=grid_args)
    s = Stepper(module, kernel, workload=workload, args=step_args)
    s.run()
    assert s.done and s.current is None
    for a, b in zip(grid_args, step_args):
        if isinstance(a, np.ndarray):
            assert a.tobytes() == b.tobytes()


@pytest.mark.parametrize("name", ["reverse_blocks_f32", "reduce_sum"])
def test_step_back_is_exact_to_the_very_start(name: str) -> None:
    module = load(name)
    workload, args = _inputs(name, 1, 5)
    initial = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    s = Stepper(module, name, workload=workload, args=args)
    trace = []
    while not s.done:
        pos = s.current
        trace.append((pos.workitem, pos.op, dict(s.values())))
        s.step()
    final = [a.copy() for a in args if isinstance(a, np.ndarray)]
    assert s.history_length == len(trace)
    for expected in reversed(trace):
        assert s.step_back()
        pos = s.current
        assert (pos.workitem, pos.op) == expected[:2]
        assert s.values().keys() == expected[2].keys()
    assert not s.step_back() and s.history_length == 0
    for a, b in zip(args, initial):
        if isinstance(a, np.ndarray):
            np.testing.assert_array_equal(a, b)
    s.run()  # replaying after a full rewind gives the same result
    for a, b in zip([a for a in args if isinstance(a, np.ndarray)], final):
        np.testing.assert_array_equal(a, b)


def _depth(x: object) -> int:
    """Nesting depth of tuples (an atom: 0)."""
    return 1 + max(map(_depth, x), default=0) if type(x) is tuple else 0


@pytest.mark.parametrize("name", ["saxpy", "control", "reduce_sum"])
def test_history_records_of_plain_steps_are_flat(name: str) -> None:
    # a record is a tuple of atoms and tuples of atoms (no deeper nesting), so the garbage
    # collector stops tracking it in its young generations; control steps keep a loop's state
    module = load(name)
    workload, args = _inputs(name, 8, 3)
    s = Stepper(module, name, workload=workload, args=args)
    plain = 0
    for _ in range(400):
        if not s.step():
            break
        rec = s._history[-1]
        if type(rec[2]) is not int or rec[7] is not None or len(rec) > 10:
            continue  # a control step, an allocation (keeps its buffer), or one that scheduled
        plain += 1
        assert _depth(rec) <= 2, rec
    assert plain > 50


@pytest.mark.parametrize("name", ["control", "multiway"])
def test_step_back_through_loops_restores_values_and_findings(name: str) -> None:
    module = load(name)
    workload, args = _inputs(name, 6, 2)
    s = Stepper(module, KERNEL_NAME.get(name, name), workload=workload, args=args)
    trace = []
    while not s.done:
        trace.append((s.current.workitem, s.current.op, s.values(), len(s.findings)))
        s.step()
    for workitem, op, values, nfind in reversed(trace):
        assert s.step_back()
        assert (s.current.workitem, s.current.op) == (workitem, op)
        assert repr(s.values()) == repr(values) and len(s.findings) == nfind


def test_barrier_scheduling_and_states() -> None:
    module = load("reverse_blocks_f32")
    s = Stepper(
        module, "reverse_blocks_f32", workload=(1,), args=(1, np.arange(32.0, dtype=np.float32))
    )
    assert s.grid == (1, 1, 1) and s.workgroup_size == (32, 1, 1)
    s.run_to_barrier()
    assert s.current.workitem == (1, 0, 0)
    states = s.workitem_states()
    assert states[(0, 0, 0)] == AT_BARRIER and states[(1, 0, 0)] == RUNNING
    for _ in range(31):
        s.run_workitem()
    # every workitem arrived: released, workitem 0 runs again after the barrier
    assert s.current.workitem == (0, 0, 0)
    assert all(v == RUNNING for v in s.workitem_states().values())
    s.run_workitem()
    assert s.workitem_states()[(0, 0, 0)] == DONE


def test_run_to_line_values_and_memory_views() -> None:
    module = load("reverse_blocks_f32")
    data = np.arange(32.0, dtype=np.float32)
    s = Stepper(module, "reverse_blocks_f32", workload=(1,), args=(1, data))
    s.run_to(21)  # view.store %v, %stage[%lane]
    assert s.current.line == 21 and s.current.workitem == (0, 0, 0)
    vals = s.values()
    assert vals["%lane"] == 0 and vals["%v"] == 0.0 and vals["%i"] == 0
    names = s.buffers()
    assert names[0] == "data" and len(names) == 2
    stage = s.memory(names[1])
    assert stage.uninitialised.all()
    s.step()
    stage = s.memory(names[1])
    assert stage.touched[:4].all() and not stage.touched[4:].any()
    assert not stage.uninitialised[:4].any() and stage.uninitialised[4:].all()
    assert stage.array(np.float32)[0] == 0.0
    s.step_back()
    assert s.memory(names[1]).uninitialised.all()


def test_stepper_reports_uninitialised_reads_and_divergent_barriers() -> None:
    s = Stepper(load("uninit_read"), "uninit", args=(np.zeros(16, np.int32),))
    s.run()
    assert [d.code for d in s.findings][:1] == ["SANITIZE/001"]
    assert s.findings[0].range.line == 22
    s = Stepper(load("divergent_barrier"), "divergent", args=(np.zeros(32, np.int32),))
    s.run()
    assert any(d.code == "SANITIZE/004" for d in s.findings)


def test_history_keeps_the_most_recent_steps_up_to_its_limit() -> None:
    name = "reduce_sum"
    module = load(name)
    workload, args = _inputs(name, 1, 5)
    s = Stepper(module, name, workload=workload, args=args, history_limit=7)
    trace = []
    for _ in range(20):
        trace.append((s.current.workitem, s.current.op))
        s.step()
    after = [a.copy() for a in args if isinstance(a, np.ndarray)]
    assert s.steps_taken == 20 and s.history_length == 7
    for expected in reversed(trace[-7:]):  # the last seven undo exactly, in order
        assert s.step_back()
        assert (s.current.workitem, s.current.op) == expected
    assert not s.step_back()  # older steps are gone
    assert s.steps_taken == 13 and s.history_length == 0
    for _ in range(7):  # and redoing them gives the same memory
        s.step()
    for a, b in zip([a for a in args if isinstance(a, np.ndarray)], after):
        np.testing.assert_array_equal(a, b)
    with pytest.raises(ValueError, match="history_limit"):
        Stepper(module, name, workload=workload, args=args, history_limit=-1)


ATOMIC_MIX = """target.generic<reference> @reference

kernel.def target(@reference) @k() {
  %one = index.constant 1 : index
  %groups = index.constant 2 : index
  %size = index.constant 4 : index
  kernel.launch.config workgroups(%groups, %one, %one) workgroup_size(%size, %one, %one) : index
} launch(%out: buffer) {
  %base = index.constant 0 : offset
  %c0 = index.constant 0 : index
  %c1 = index.constant 1 : index
  %lane = kernel.workitem.id<x> : index
  %ov = buffer.view %out[%base] : buffer -> view<64xi32>
  %count = scalar.constant 1 : i32
  view.atomic.reduce<addi> %count, %ov[%c0] {ordering = relaxed, scope = device} : i32, view<64xi32>
  %first = index.cmp eq, %lane, %c0 : index
  scf.if %first {
    view.store %count, %ov[%c1] : i32, view<64xi32>
  }
  view.atomic.reduce<addi> %count, %ov[%c1] {ordering = relaxed, scope = device} : i32, view<64xi32>
  kernel.return
}
"""


def _shadow_state(s: Stepper) -> list:
    out = []
    for b in s._bufs:
        sh = b.shadow
        stamps = [sh.w_item.copy(), sh.r_item.copy()]
        # ops and epochs only mean something where a stamp is recorded
        ops = [np.where(sh.w_item != 0, sh.w_op, -1), np.where(sh.r_item != 0, sh.r_op, -1)]
        out.append((stamps, ops, None if sh.init is None else sh.init.copy()))
    return out


def _same_shadows(a: list, b: list) -> bool:
    return all(
        all(np.array_equal(x, y) for x, y in zip(sa + oa, sb + ob))
        and (ia is None) == (ib is None)
        and (ia is None or np.array_equal(ia, ib))
        for (sa, oa, ia), (sb, ob, ib) in zip(a, b)
    )


def test_atomic_accesses_on_the_quiet_path_report_and_undo_as_the_rules_say(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from loom.format.text.parser import parse_module
    from loom.interp import sanitizer

    module = parse_module(ATOMIC_MIX, filename="atomic_mix.loom")
    runs = []
    for shortcuts in (True, False):
        monkeypatch.setattr(sanitizer, "SHORTCUTS", shortcuts)
        out = np.zeros(64, np.int32)
        s = Stepper(module, "k", args=(out,))
        s.run()
        runs.append(([(d.code, d.message, d.range.line) for d in s.findings], _shadow_state(s)))
        # each workgroup's lane 0 stores 1 before its lanes add 1 each
        assert out[0] == 8 and out[1] == 5
    assert runs[0][0] == runs[1][0]
    # atomics never race with each other; the plain store races with the atomics before it
    assert {code for code, _, _ in runs[0][0]} == {"SANITIZE/002"}
    assert {line for _, _, line in runs[0][0]} == {18}
    assert _same_shadows(runs[0][1], runs[1][1])
    # stepping back to any point and forward again meets the same state and findings
    monkeypatch.setattr(sanitizer, "SHORTCUTS", True)
    s = Stepper(module, "k", args=(np.zeros(64, np.int32),))
    states = [_shadow_state(s)]
    while s.step():
        states.append(_shadow_state(s))
    final = [(d.code, d.message) for d in s.findings]
    for expected in reversed(states[:-1]):
        assert s.step_back()
        assert _same_shadows(_shadow_state(s), expected)
    assert s.findings == []
    s.run()
    assert [(d.code, d.message) for d in s.findings] == final
