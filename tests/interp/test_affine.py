"""Lane-affine facts (loom/interp/affine.py) and the accesses they turn into strided views.

The helpers are checked against brute force over every lane of a box; a 3-D kernel with
transposed, shifted and clamped indices over guarded 3-D workgroups must match NumPy and give the
same memory, findings and op counts with the fast paths on and off, at chunk sizes that make
chunks whole planes, whole rows and parts of a row.
"""

from __future__ import annotations

import itertools
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).parent))
from interp_helpers import load  # noqa: E402
from test_fast_paths import assert_same  # noqa: E402

from loom.interp import affine as A
from loom.interp import launch
from loom.interp.compile import Program, lane_invariant
from loom.interp.engine import _next_box

extents = st.lists(st.integers(1, 4), min_size=1, max_size=4).map(tuple)


def _brute(f: tuple, ext: tuple) -> list[int]:
    return [
        f[0] + sum(c * i for c, i in zip(f[1], idx)) for idx in itertools.product(*map(range, ext))
    ]


@given(ext=extents, data=st.data())
def test_span_positions_and_injectivity_agree_with_brute_force(ext: tuple, data) -> None:
    co = tuple(data.draw(st.integers(-9, 9)) for _ in ext)
    c0 = data.draw(st.integers(-50, 50))
    size = data.draw(st.sampled_from([1, 2, 4]))
    values = _brute((c0, co), ext)
    assert A.span((c0, co), ext) == (min(values), max(values))
    assert A.positions((c0, co), ext).tolist() == values
    touched = [v + b for v in values for b in range(size)]
    if A.injective(co, ext, size):
        assert len(set(touched)) == len(touched)
    k = A.flat_stride(co, ext)
    if k is not None:
        assert values == [c0 + k * i for i in range(len(values))]


@pytest.mark.parametrize("counts", [(5, 3, 2), (1, 7, 3), (9, 1, 1)])
@pytest.mark.parametrize("most", [1, 4, 9, 100])
def test_chunk_boxes_cover_the_grid_in_order(counts: tuple, most: int) -> None:
    gx, gy, gz = counts
    start, seen = 0, []
    while start < gx * gy * gz:
        (z, y, x), (kz, ky, kx) = _next_box(start, most, counts)
        assert 1 <= kz * ky * kx <= most
        seen += [
            (zz * gy + yy) * gx + xx
            for zz in range(z, z + kz)
            for yy in range(y, y + ky)
            for xx in range(x, x + kx)
        ]
        start += kz * ky * kx
    assert seen == list(range(gx * gy * gz))


def _grid3d(d: int, n: int):
    def make() -> tuple:
        inp = np.random.default_rng(d * 100 + n).standard_normal((d, n, n)).astype(np.float32)
        return (d, n, inp, np.zeros((d, n, n), np.float32))

    return make


def _want(inp: np.ndarray) -> np.ndarray:
    left = np.concatenate([inp[:, :, :1], inp[:, :, :-1]], axis=2)
    return inp.transpose(0, 2, 1) + left


@pytest.mark.parametrize("d,n", [(3, 8), (4, 10), (1, 5)])
def test_3d_kernel_matches_numpy(d: int, n: int) -> None:
    args = _grid3d(d, n)()
    r = launch(load("grid3d_mix"), "grid3d_mix", workload=(d, n), args=args)
    assert r.findings == []
    assert np.array_equal(args[3], _want(args[2]))


@pytest.mark.parametrize("chunk_lanes", [32, 96, 200, 1 << 17])
@pytest.mark.parametrize("d,n", [(3, 8), (4, 10)])
def test_3d_kernel_fast_and_general_paths_agree(chunk_lanes: int, d: int, n: int) -> None:
    assert_same(load("grid3d_mix"), "grid3d_mix", (d, n), _grid3d(d, n), chunk_lanes=chunk_lanes)


def test_lane_invariance_comes_from_traits() -> None:
    reg = Program(load("grid3d_mix")).registry
    # coordinates carry a Uniformity trait: never reused across chunks; pure index math is
    assert not lane_invariant(reg.lookup("kernel.workitem.id"))
    assert not lane_invariant(reg.lookup("kernel.workgroup.id"))
    assert lane_invariant(reg.lookup("index.madd"))
    assert not lane_invariant(reg.lookup("view.store"))
    steps = Program(load("grid3d_mix")).function("grid3d_mix").body.steps
    assert {s.op.name for s in steps if s.invariant} >= {"buffer.view", "index.constant"}


@given(ext=extents, data=st.data())
def test_separable_facts_map_lanes_to_distinct_index_tuples(ext: tuple, data) -> None:
    k = data.draw(st.integers(1, 3))
    facts = [tuple(data.draw(st.integers(-3, 3)) for _ in ext) for _ in range(k)]
    if A.separable(facts, ext):
        tuples = list(zip(*(_brute((0, f), ext) for f in facts)))
        assert len(set(tuples)) == len(tuples)


@given(ext=extents, data=st.data())
def test_interval_boxes_are_exactly_the_lanes_in_range(ext: tuple, data) -> None:
    # digit coefficients (as group * size + item) and, sometimes, arbitrary ones
    co = [0] * len(ext)
    step = data.draw(st.integers(1, 3))
    for d in reversed(range(len(ext))):
        if data.draw(st.booleans()):
            co[d] = step * data.draw(st.sampled_from([1, -1]))
            step = step * ext[d] + data.draw(st.integers(0, 1))
    if data.draw(st.integers(0, 9)) == 0:
        co = [data.draw(st.integers(-3, 3)) for _ in ext]
    f = (data.draw(st.integers(-9, 9)), tuple(co))
    lo = data.draw(st.none() | st.integers(-20, 60))
    hi = data.draw(st.none() | st.integers(-20, 60))
    boxes = A.interval_boxes(f, ext, lo, hi, most=64)
    axes = sorted(abs(c) for c, e in zip(co, ext) if c and e > 1)
    digits = all(
        axes[k] > sum(abs(c) * (e - 1) for c, e in zip(co, ext) if e > 1 and abs(c) < axes[k])
        for k in range(len(axes))
    )
    assert boxes is None or digits  # boxes only for digit axes
    if boxes is None:
        return
    want = [(lo is None or v >= lo) and (hi is None or v <= hi) for v in _brute(f, ext)]
    got = np.zeros(ext, int)
    for box in boxes:
        assert all(a <= b for a, b in box)
        got[tuple(slice(a, b + 1) for a, b in box)] += 1
    assert got.reshape(-1).tolist() == [int(w) for w in want]
    assert len(boxes) <= max(1, 2 * len(axes) - 1)
