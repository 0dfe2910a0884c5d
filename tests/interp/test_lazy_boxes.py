"""Lazy lane-affine index values and the sanitizer's per-box shadow indexing.

Index values with facts are made into lane arrays only when an op reads their lanes
(``affine.Lazy``); accesses under a guard of several boxes check the shadow box by box
(``sanitizer.BoxesIndex``) and still report the lowest workitem. Fast and general paths agree.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).parent))
from interp_helpers import KERNELS  # noqa: E402
from test_fast_paths import assert_same, paths  # noqa: E402

from loom.format.text.parser import parse_module
from loom.interp import affine, launch, sanitizer

_HEAD = """target.generic<reference> @reference

kernel.def target(@reference) export("{name}") @{name}(%n: index) {{
  %one = index.constant 1 : index
  %lanes = index.constant 16 : index
  %spare = index.constant 15 : index
  %padded = index.add %n, %spare : index
  %groups = index.div %padded, %lanes : index
  kernel.launch.config workgroups(%groups, %one, %one) workgroup_size(%lanes, %one, %one) : index
}} launch(%n: index, %a: buffer) {{
  %base = index.constant 0 : offset
  %c1 = index.constant 1 : index
  %c3 = index.constant 3 : index
  %g = kernel.workgroup.id<x> : index
  %s = kernel.workgroup.size<x> : index
  %t = kernel.workitem.id<x> : index
  %i = index.madd %g, %s, %t : index
  %j = index.add %i, %c1 : index
  %lo = index.cmp sge, %i, %c3 : index
  %hi = index.cmp slt, %j, %n : index
"""

# a[i] = i + 1 (as i32) for 3 <= i < n - 1: the index values' lanes are read (made under
# the guards, from a value made outside them)
LANES = (
    _HEAD.format(name="lanes")
    + """  %av = buffer.view %a[%base] : buffer -> view<[%n]xi32>
  scf.if %lo {
    scf.if %hi {
      %v = index.cast %j : index to i32
      view.store %v, %av[%i] : i32, view<[%n]xi32>
    }
  }
  kernel.return
}
"""
)

# lane i reads a[2i], then writes a[2i + 2], which lane i + 1 read without a barrier: a race
# whose lowest workitem (i = 3) is in the last of the guard's boxes (the first box is the
# workgroups from 1 on); every other element: strided accesses, not slices
SHIFT = (
    _HEAD.format(name="shift")
    + """  %c2 = index.constant 2 : index
  %n2 = index.mul %n, %c2 : index
  %k = index.mul %i, %c2 : index
  %k2 = index.add %k, %c2 : index
  %av = buffer.view %a[%base] : buffer -> view<[%n2]xf32>
  scf.if %lo {
    scf.if %hi {
      %x = view.load %av[%k] : view<[%n2]xf32> -> f32
      view.store %x, %av[%k2] : f32, view<[%n2]xf32>
    }
  }
  kernel.return
}
"""
)


@pytest.mark.parametrize("chunk_lanes", [None, 64])
@pytest.mark.parametrize("n", [5, 61, 200])
def test_lazy_index_lanes_read_under_guards(n: int, chunk_lanes: int | None) -> None:
    m = parse_module(LANES, filename="lanes.loom")
    _, (out,) = assert_same(m, "lanes", (n,), lambda: (n, np.zeros(n, np.int32)), chunk_lanes)
    got = np.frombuffer(out, np.int32)
    want = np.zeros(n, np.int32)
    want[3 : n - 1] = np.arange(4, n, dtype=np.int32)
    np.testing.assert_array_equal(got, want)


def test_lazy_values_are_not_made_for_guards_and_addresses() -> None:
    """The suite's add_2d only compares and addresses its indices: no lane array is made."""
    path = KERNELS / "suite" / "add_2d.loom"
    m = parse_module(path.read_text(), filename=str(path))
    rows, cols = 37, 45
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal((rows, cols)).astype(np.float32) for _ in range(2))
    c = np.zeros_like(a)
    made, real = [], affine.Lazy.get

    def spy(self: affine.Lazy) -> np.ndarray:
        made.append(self.fact)
        return real(self)

    affine.Lazy.get = spy  # type: ignore[method-assign]
    try:
        with paths(True):
            r = launch(m, "add_2d", workload=(rows, cols), args=(rows, cols, a, b, c))
    finally:
        affine.Lazy.get = real  # type: ignore[method-assign]
    np.testing.assert_array_equal(c, a + b)
    assert r.findings == [] and made == []


@pytest.mark.parametrize("chunk_lanes", [None, 64])
@pytest.mark.parametrize("n", [61, 200])
def test_race_under_several_boxes_names_the_lowest_workitem(
    n: int, chunk_lanes: int | None
) -> None:
    m = parse_module(SHIFT, filename="shift.loom")
    used, real = [], sanitizer.BoxesIndex.__init__

    def spy(self: sanitizer.BoxesIndex, parts: list) -> None:
        used.append(len(parts))
        real(self, parts)

    sanitizer.BoxesIndex.__init__ = spy  # type: ignore[method-assign]
    try:
        (render, _, codes), _ = assert_same(
            m, "shift", (n,), lambda: (n, np.arange(2 * n, dtype=np.float32)), chunk_lanes
        )
    finally:
        sanitizer.BoxesIndex.__init__ = real  # type: ignore[method-assign]
    assert used and max(used) > 1  # the fast run checked the shadow box by box
    assert "SANITIZE/002" in codes
    assert "workitem 3 " in render or "workitem (3, 0, 0)" in render, render
