"""Fast and general paths agree on the rules for masked element accesses, atomics piling onto
few elements, subgroup collectives and divisions by powers of two (issue 16): identical
memory, findings and errors, with the default chunk size and with small chunks."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).parent))
from test_fast_paths import assert_same  # noqa: E402

from loom.format.text.parser import parse_module
from loom.interp import affine as A
from loom.interp import launch
from loom.interp.semantics.index import _by_uniform

SUITE = Path(__file__).parent / "kernels" / "suite"

# Every workitem i < n adds 1 to hist[keys[i]] atomically (rmw: it also stores the old value
# it saw); workitems with i % 8 == 0 (a sparse mask) then read hist[keys[i]] plainly (a race
# with the other workitems' atomic writes) and store it at out[i / 8].
MIXED = """target.generic<reference> @reference

kernel.def target(@reference) export("mixed") @mixed(%n: index, %bins: index) {
  %one = index.constant 1 : index
  %lanes = index.constant 64 : index
  %spare = index.constant 63 : index
  %padded = index.add %n, %spare : index
  %groups = index.div %padded, %lanes : index
  kernel.launch.config workgroups(%groups, %one, %one) workgroup_size(%lanes, %one, %one) : index
} launch(%n: index, %bins: index, %keys: buffer, %hist: buffer, %old: buffer, %out: buffer) {
  %base = index.constant 0 : offset
  %c0 = index.constant 0 : index
  %c8 = index.constant 8 : index
  %i = kernel.workitem.dispatch.id<x> : index
  %inside = index.cmp slt, %i, %n : index
  scf.if %inside {
    %kv = buffer.view %keys[%base] : buffer -> view<[%n]xi32>
    %hv = buffer.view %hist[%base] : buffer -> view<[%bins]xi32>
    %ov = buffer.view %old[%base] : buffer -> view<[%n]xi32>
    %k = view.load %kv[%i] : view<[%n]xi32> -> i32
    %bin = index.cast %k : i32 to index
    %count = scalar.constant 1 : i32
    ATOMIC
    %r = index.rem %i, %c8 : index
    %sparse = index.cmp eq, %r, %c0 : index
    scf.if %sparse {
      %q = index.div %i, %c8 : index
      %uv = buffer.view %out[%base] : buffer -> view<[%n]xi32>
      PLAIN
    }
  }
  kernel.return
}
"""
_REDUCE = (
    "view.atomic.reduce<addi> %count, %hv[%bin] {ordering = relaxed, scope = device}"
    " : i32, view<[%bins]xi32>"
)
_RMW = (
    "%was = view.atomic.rmw<addi> %count, %hv[%bin] {ordering = relaxed, scope = device}"
    " : i32, view<[%bins]xi32> -> i32\n"
    "    view.store %was, %ov[%i] : i32, view<[%n]xi32>"
)
_READ = (
    "%h = view.load %hv[%bin] : view<[%bins]xi32> -> i32\n"
    "      view.store %h, %uv[%q] : i32, view<[%n]xi32>"
)
_WRITE_Q = "view.store %count, %uv[%q] : i32, view<[%n]xi32>"


def _mixed(atomic: str, plain: str) -> object:
    text = MIXED.replace("ATOMIC", atomic).replace("PLAIN", plain)
    return parse_module(text, filename="mixed.loom")


def _mixed_args(n: int, bins: int, keys_hi: int | None = None):
    def make() -> tuple:
        keys = np.random.default_rng(n).integers(0, keys_hi or bins, n).astype(np.int32)
        zeros = np.zeros(n, np.int32)
        return (n, bins, keys, np.zeros(bins, np.int32), zeros, zeros.copy())

    return make


@pytest.mark.parametrize("chunk_lanes", [None, 128])
@pytest.mark.parametrize("atomic", ["reduce", "rmw"])
def test_atomics_onto_few_bins_with_a_racing_plain_read_agree(atomic: str, chunk_lanes) -> None:
    n, bins = 3000, 7
    module = _mixed(_REDUCE if atomic == "reduce" else _RMW, _READ)
    (render, _, codes), arrays = assert_same(
        module, "mixed", (n, bins), _mixed_args(n, bins), chunk_lanes
    )
    assert "SANITIZE/002" in codes, render  # the plain read races with atomic writes
    keys = np.frombuffer(arrays[0], np.int32)
    hist = np.frombuffer(arrays[1], np.int32)
    np.testing.assert_array_equal(hist, np.bincount(keys, minlength=bins))


@pytest.mark.parametrize("chunk_lanes", [None, 128])
def test_atomics_alone_report_nothing_and_count_exactly(chunk_lanes) -> None:
    n, bins = 3000, 5
    module = _mixed(_RMW, _WRITE_Q)
    (render, _, codes), arrays = assert_same(
        module, "mixed", (n, bins), _mixed_args(n, bins), chunk_lanes
    )
    assert not codes, render
    keys, hist, old = (np.frombuffer(a, np.int32) for a in arrays[:3])
    np.testing.assert_array_equal(hist, np.bincount(keys, minlength=bins))
    for b in range(bins):
        # the old values one bin handed out are 0, 1, 2, ...: one serialisation
        assert sorted(old[keys == b]) == list(range(int((keys == b).sum())))


@pytest.mark.parametrize("chunk_lanes", [None, 128])
def test_out_of_bounds_atomic_and_masked_store_fail_alike(chunk_lanes) -> None:
    n, bins = 1000, 4
    # a key past the bins: the atomic's bounds error names the same lane both ways
    what, _ = assert_same(
        _mixed(_REDUCE, _READ), "mixed", (n, bins), _mixed_args(n, bins, bins + 1), chunk_lanes
    )
    assert what[0] == "error" and "RUNTIME/001" in what[1]
    # %q = i / 8 past a view of n / 16 elements: only the sparse lanes store, the late ones
    # fail
    small = MIXED.replace("ATOMIC", _REDUCE).replace(
        "PLAIN",
        "%c16 = index.constant 16 : index\n"
        "      %m = index.div %n, %c16 : index\n"
        "      %sv = buffer.view %out[%base] : buffer -> view<[%m]xi32>\n"
        "      view.store %count, %sv[%q] : i32, view<[%m]xi32>",
    )
    what, _ = assert_same(
        parse_module(small, filename="small.loom"),
        "mixed",
        (n, bins),
        _mixed_args(n, bins),
        chunk_lanes,
    )
    assert what[0] == "error" and "out of bounds" in what[1]


# subgroup_reduce with the reduction inside a branch only some lanes of a subgroup take
_DIVERGENT = (
    "  %total = kernel.subgroup.reduce<addf> %x : f32\n",
    "  %sgl = kernel.subgroup.lane.id : index\n"
    "  %c20 = index.constant 20 : index\n"
    "  %few = index.cmp slt, %sgl, %c20 : index\n"
    "  %total = scf.if %few -> (f32) {\n"
    "    %t = kernel.subgroup.reduce<addf> %x : f32\n"
    "    scf.yield %t : f32\n"
    "  } else {\n"
    "    scf.yield %zero : f32\n"
    "  }\n",
)


@pytest.mark.parametrize("chunk_lanes", [None, 512])
@pytest.mark.parametrize("variant", ["whole", "divergent", "odd-workgroup"])
def test_subgroup_reduce_agrees(variant: str, chunk_lanes) -> None:
    text = (SUITE / "subgroup_reduce.loom").read_text()
    if variant == "divergent":
        assert _DIVERGENT[0] in text
        text = text.replace(*_DIVERGENT)
    if variant == "odd-workgroup":
        # 48 lanes: workgroups of one and a half subgroups (the table is scattered)
        text = text.replace("index.constant 256 : index", "index.constant 48 : index")
        text = text.replace("%per = index.constant 8", "%per = index.constant 1")
    module = parse_module(text, filename="subgroup.loom")
    runs = 37
    data = np.random.default_rng(1).standard_normal(runs * 32).astype(np.float32)
    (render, _, codes), arrays = assert_same(
        module,
        "subgroup_reduce",
        (runs,),
        lambda: (runs, data.copy(), np.zeros(runs, np.float32)),
        chunk_lanes,
    )
    if variant == "divergent":
        assert "SANITIZE/005" in codes, render
        return
    if variant == "odd-workgroup":
        # the kernel's run index assumes whole subgroups: the half subgroups' leaders collide
        assert codes == ["SANITIZE/002"], render
        return
    assert not codes, render
    sums = np.frombuffer(arrays[1], np.float32)
    # folded in lane order, like a loop over the run
    want = np.zeros(runs, np.float32)
    for c in range(32):
        want = want + data.reshape(runs, 32)[:, c]
    np.testing.assert_array_equal(sums, want)


def test_repeated_launches_with_other_workgroup_sizes_keep_lane_ids_right() -> None:
    """Per-shape lane arrays are kept between launches of one workgroup size only."""
    text = (SUITE / "subgroup_reduce.loom").read_text()
    runs = 40
    data = np.random.default_rng(2).standard_normal(runs * 32).astype(np.float32)
    want = data.reshape(runs, 32).sum(axis=1)
    for lanes in (256, 64, 256, 96):
        module = parse_module(
            text.replace("index.constant 256 : index", f"index.constant {lanes} : index").replace(
                "%per = index.constant 8", f"%per = index.constant {lanes // 32}"
            ),
            filename=f"sg{lanes}.loom",
        )
        for _ in range(2):
            sums = np.zeros(runs, np.float32)
            launch(module, "subgroup_reduce", workload=(runs,), args=(runs, data, sums))
            np.testing.assert_allclose(sums, want, rtol=1e-5, atol=1e-5)


def test_division_by_a_power_of_two_is_floor_division_on_every_int64() -> None:
    a = np.array(
        [-(2**63), -(2**63) + 1, -65, -64, -63, -1, 0, 1, 63, 64, 65, 2**63 - 1], dtype=np.int64
    )
    for b in (1, 2, 8, 64, 2**62, 3, 7, 1000):
        d = np.int64(b)
        np.testing.assert_array_equal(_by_uniform(a, d, False), a // d)
        np.testing.assert_array_equal(_by_uniform(a, d, True), a % d)


def test_positions_match_exact_arithmetic_wrapped_to_int64() -> None:
    """Facts filled from cached per-axis terms (any c0, wrapping sums) are exact."""
    rng = np.random.default_rng(0)
    for _ in range(100):
        ext = tuple(int(x) for x in rng.integers(1, 5, 6))
        co = tuple(int(x) for x in rng.integers(-(2**40), 2**40, 6) * rng.integers(0, 2, 6))
        c0 = int(rng.integers(-(2**62), 2**62))
        got = A.positions((c0, co), ext)
        lanes = np.indices(ext).reshape(6, -1).T.tolist()
        want = [
            (c0 + sum(c * i for c, i in zip(co, lane)) + 2**63) % 2**64 - 2**63 for lane in lanes
        ]
        np.testing.assert_array_equal(got, np.array(want, dtype=np.int64))
