"""View atomics (indivisible, never racing each other) and asynchronous transfers (visible at
the wait) in both engines, plus the pure buffer ops."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from collective_kernels import run_both  # noqa: E402
from interp_helpers import KERNELS  # noqa: E402

from loom.format.text.parser import parse_module  # noqa: E402
from loom.interp import Stepper, launch  # noqa: E402

N, BINS = 64, 4


def _histogram(update: str) -> str:
    return f"""target.generic<reference> @t

kernel.def target(@t) @k() {{
  %c1 = index.constant 1 : index
  %wg = index.constant 32 : index
  %ng = index.constant 2 : index
  kernel.launch.config workgroups(%ng, %c1, %c1) workgroup_size(%wg, %c1, %c1) : index
}} launch(%keys: buffer, %hist: buffer, %old: buffer) {{
  %z = index.constant 0 : offset
  %kv = buffer.view %keys[%z] : buffer -> view<{N}xi32>
  %hv = buffer.view %hist[%z] : buffer -> view<{BINS}xi32>
  %ov = buffer.view %old[%z] : buffer -> view<{N}xi32>
  %gid = kernel.workitem.dispatch.id<x> : index
  %k = view.load %kv[%gid] : view<{N}xi32> -> i32
  %bin = index.cast %k : i32 to index
  %one = scalar.constant 1 : i32
  {update}
  kernel.return
}}
"""


KEYS = (np.arange(N) * 7 % BINS).astype(np.int32)


def test_atomic_histogram_counts_and_old_values_form_one_serialisation() -> None:
    text = _histogram(
        "%prev = view.atomic.rmw<addi> %one, %hv[%bin] {ordering = relaxed, scope = device}"
        " : i32, view<4xi32> -> i32\n"
        f"  view.store %prev, %ov[%gid] : i32, view<{N}xi32>"
    )
    (keys, hist, old), result, stepper = run_both(
        text, [KEYS, np.zeros(BINS, np.int32), np.zeros(N, np.int32)]
    )
    assert not result.findings, result.render()
    assert not stepper.findings
    np.testing.assert_array_equal(hist, np.bincount(KEYS, minlength=BINS))
    for b in range(BINS):
        # the workitems of one bin saw 0, 1, 2, ... in some order: one serialisation
        assert sorted(old[b == KEYS]) == list(range(int((b == KEYS).sum())))


def test_atomic_reduce_kinds_and_cmpxchg_bits() -> None:
    text = _histogram(
        "view.atomic.reduce<maxsi> %k, %hv[0] {ordering = relaxed, scope = device}"
        " : i32, view<4xi32>"
    )
    (_, hist, _), result, _ = run_both(
        text, [KEYS * 3 - 5, np.full(BINS, -100, np.int32), np.zeros(N, np.int32)]
    )
    assert hist[0] == (KEYS * 3 - 5).max() and not result.findings
    # compare-exchange: only the first workitem finds 0 and swaps in its key + 1
    text = _histogram(
        "%k1 = scalar.addi %k, %one : i32\n"
        "  %zero = scalar.constant 0 : i32\n"
        "  %was = view.atomic.cmpxchg %zero, %k1, %hv[1] {failure_ordering = relaxed,"
        " scope = device, success_ordering = acq_rel} : i32, view<4xi32> -> i32\n"
        f"  view.store %was, %ov[%gid] : i32, view<{N}xi32>"
    )
    (_, hist, old), result, _ = run_both(
        text, [KEYS, np.zeros(BINS, np.int32), np.zeros(N, np.int32)]
    )
    assert hist[1] == KEYS[0] + 1 and old[0] == 0 and (old[1:] == KEYS[0] + 1).all()


def test_cmpxchg_compares_float_bits() -> None:
    text = (KERNELS / "cmpxchg_bits.loom").read_text()
    cell = np.array([-0.0], np.float32)
    launch(parse_module(text), "k", args=[cell])
    assert np.signbit(cell[0])  # -0.0 does not match +0.0: nothing swapped
    cell = np.array([0.0], np.float32)
    launch(parse_module(text), "k", args=[cell])
    assert cell[0] == 1.0


def test_race_between_an_atomic_and_a_plain_access_is_reported() -> None:
    text = _histogram(
        "view.atomic.reduce<addi> %one, %hv[0] {ordering = relaxed, scope = device}"
        " : i32, view<4xi32>\n"
        "  %c5 = index.constant 5 : index\n"
        "  %is5 = index.cmp eq, %gid, %c5 : index\n"
        "  scf.if %is5 {\n"
        "    view.store %one, %hv[0] : i32, view<4xi32>\n"
        "  }"
    )
    module = parse_module(text, filename="race.loom")
    line = next(i for i, t in enumerate(text.splitlines(), 1) if "view.store %one" in t)
    r = launch(module, "k", args=[KEYS, np.zeros(BINS, np.int32), np.zeros(N, np.int32)])
    assert ("SANITIZE/002", line) in [(d.code, d.range.line) for d in r.findings]


def _copy_kernel(read_before_wait: bool) -> str:
    return (
        KERNELS / ("async_copy_early.loom" if read_before_wait else "async_copy.loom")
    ).read_text()


def test_async_copy_is_visible_after_the_wait_in_both_engines() -> None:
    src = np.arange(100, 116, dtype=np.int32)
    (_, out), result, stepper = run_both(_copy_kernel(False), [src, np.zeros(16, np.int32)])
    np.testing.assert_array_equal(out, src)
    assert not result.findings, result.render()
    assert not stepper.findings


def test_reading_copied_bytes_before_the_wait_is_a_finding() -> None:
    text = _copy_kernel(True)
    line = next(i for i, t in enumerate(text.splitlines(), 1) if "%early" in t)
    module = parse_module(text, filename="early.loom")
    src = np.arange(16, dtype=np.int32)
    r = launch(module, "k", args=[src, np.zeros(16, np.int32)])
    assert ("SANITIZE/001", line) in [(d.code, d.range.line) for d in r.findings]
    s = Stepper(module, "k", args=[src.copy(), np.zeros(16, np.int32)])
    s.run()
    assert ("SANITIZE/001", line) in [(d.code, d.range.line) for d in s.findings]
    for findings in (r.findings, s.findings):
        early = next(d for d in findings if d.range.line == line)
        assert "asynchronous transfer" in early.message and "after the wait" in early.message


def test_gather_puts_each_lanes_bytes_in_its_slot() -> None:
    text = (KERNELS / "async_gather.loom").read_text()
    src = np.arange(32, dtype=np.uint8)
    (_, out), result, _ = run_both(text, [src, np.zeros(64, np.uint8)])
    np.testing.assert_array_equal(out.reshape(8, 8)[:, 0], src.reshape(8, 4)[:, 0])


def test_pack_lays_ranges_out_at_their_alignments() -> None:
    text = (KERNELS / "buffer_pack.loom").read_text()
    (out,), _, _ = run_both(text, [np.zeros(4, np.int64)])
    np.testing.assert_array_equal(out, [48, 0, 16, 36])
