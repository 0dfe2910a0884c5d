"""View atomics (indivisible, never racing each other) and asynchronous transfers (visible at
the wait) in both engines, plus the pure buffer ops."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from collective_kernels import run_both  # noqa: E402

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
    text = """target.generic<reference> @t

kernel.def target(@t) @k() {
  %c1 = index.constant 1 : index
  kernel.launch.config workgroups(%c1, %c1, %c1) workgroup_size(%c1, %c1, %c1) : index
} launch(%cell: buffer) {
  %z = index.constant 0 : offset
  %v = buffer.view %cell[%z] : buffer -> view<1xf32>
  %pz = scalar.constant 0.0 : f32
  %one = scalar.constant 1.0 : f32
  %old = view.atomic.cmpxchg %pz, %one, %v[0] {failure_ordering = relaxed, scope = device, success_ordering = relaxed} : f32, view<1xf32> -> f32
  kernel.return
}
"""
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
    early = "  %early = view.load %dv[%lane] : view<16xi32> -> i32\n" if read_before_wait else ""
    return f"""target.generic<reference> @t

kernel.def target(@t) @k() {{
  %c1 = index.constant 1 : index
  %wg = index.constant 16 : index
  kernel.launch.config workgroups(%c1, %c1, %c1) workgroup_size(%wg, %c1, %c1) : index
}} launch(%src: buffer, %out: buffer) {{
  %z = index.constant 0 : offset
  %n = index.constant 64 : offset
  %lane = kernel.workitem.id<x> : index
  %s = buffer.alloca %n {{base_alignment = 64, memory_space = workgroup}} : buffer
  %sv = buffer.view %src[%z] : buffer -> view<16xi32>
  %dv = buffer.view %s[%z] : buffer -> view<16xi32>
  %ov = buffer.view %out[%z] : buffer -> view<16xi32>
  %zero = index.constant 0 : index
  %first = index.cmp eq, %lane, %zero : index
  %t = kernel.async.copy.mask %sv to %dv, %first {{cache_scope = cu, cache_temporal = regular, direction = global_to_workgroup}} : view<16xi32> to view<16xi32>, i1 -> kernel.async.token
  %g = kernel.async.group %t : kernel.async.token -> kernel.async.group
{early}  kernel.async.wait %g {{newer_groups = 0}} : kernel.async.group
  kernel.barrier<workgroup> {{ordering = acq_rel, scope = workgroup}}
  %x = view.load %dv[%lane] : view<16xi32> -> i32
  view.store %x, %ov[%lane] : i32, view<16xi32>
  kernel.return
}}
"""


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


def test_gather_puts_each_lanes_bytes_in_its_slot() -> None:
    text = """target.generic<reference> @t {subgroup_size = 8}

kernel.def target(@t) @k() {
  %c1 = index.constant 1 : index
  %wg = index.constant 8 : index
  kernel.launch.config workgroups(%c1, %c1, %c1) workgroup_size(%wg, %c1, %c1) : index
} launch(%src: buffer, %out: buffer) {
  %lane = kernel.workitem.id<x> : index
  %four = index.constant 4 : index
  %b = index.mul %lane, %four : index
  %off = index.cast %b : index to offset
  %z = index.constant 0 : offset
  %sv = buffer.view %src[%off] : buffer -> view<4xi8>
  %n = index.constant 64 : offset
  %s = buffer.alloca %n {base_alignment = 16, memory_space = workgroup} : buffer
  %tile = buffer.view %s[%z] : buffer -> view<8x8xi8>
  %t = kernel.async.gather %sv to %tile {cache_scope = cu, cache_temporal = regular} : view<4xi8> to view<8x8xi8> -> kernel.async.token
  %g = kernel.async.group %t : kernel.async.token -> kernel.async.group
  kernel.async.wait %g {newer_groups = 0} : kernel.async.group
  %ov = buffer.view %out[%z] : buffer -> view<8x8xi8>
  %i = index.constant 0 : index
  %x = view.load %tile[%lane, %i] : view<8x8xi8> -> i8
  view.store %x, %ov[%lane, %i] : i8, view<8x8xi8>
  kernel.return
}
"""
    src = np.arange(32, dtype=np.uint8)
    (_, out), result, _ = run_both(text, [src, np.zeros(64, np.uint8)])
    np.testing.assert_array_equal(out.reshape(8, 8)[:, 0], src.reshape(8, 4)[:, 0])


def test_pack_lays_ranges_out_at_their_alignments() -> None:
    text = """target.generic<reference> @t

kernel.def target(@t) @k() {
  %c1 = index.constant 1 : index
  kernel.launch.config workgroups(%c1, %c1, %c1) workgroup_size(%c1, %c1, %c1) : index
} launch(%out: buffer) {
  %a = index.constant 13 : offset
  %b = index.constant 20 : offset
  %c = index.constant 1 : offset
  %total, %o0, %o1, %o2 = buffer.pack %a, %b, %c {minimum_alignments = [4, 16, 1]} : offset, offset, offset, offset
  %z = index.constant 0 : offset
  %v = buffer.view %out[%z] : buffer -> view<4xoffset>
  view.store %total, %v[0] : offset, view<4xoffset>
  view.store %o0, %v[1] : offset, view<4xoffset>
  view.store %o1, %v[2] : offset, view<4xoffset>
  view.store %o2, %v[3] : offset, view<4xoffset>
  kernel.return
}
"""
    (out,), _, _ = run_both(text, [np.zeros(4, np.int64)])
    np.testing.assert_array_equal(out, [48, 0, 16, 36])
