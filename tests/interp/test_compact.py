"""Lane compaction (loom.interp.compact): a region whose active lanes are one box of the chunk
runs over that box alone. Every variant must give the same memory, findings and errors as the
general paths, with the default chunks and with small ones."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).parent))
from interp_helpers import KERNELS  # noqa: E402
from test_fast_paths import assert_same, paths  # noqa: E402

from loom.format.text.parser import parse_module
from loom.interp import engine, launch

_OTHER = "      %other = index.add %lane, %stride : index\n"
_INNER_BARRIER = "    kernel.barrier<workgroup> scope(workgroup) ordering(acq_rel)\n    %half"
_STORE_SUM = "      view.store %sum, %scratch[%lane] : f32, view<256xf32>\n"
_FIRST_STORE = "  view.store %v, %scratch[%lane] : f32, view<256xf32>\n"

VARIANTS = {
    "plain": ("", ""),
    # lanes 120..127 of the first pass read past the 256 elements: the same lane is named
    "out-of-bounds": (
        _OTHER,
        "      %other0 = index.add %lane, %stride : index\n"
        "      %other = index.add %other0, %c8 : index\n",
    ),
    # no barrier between passes: each pass reads what the previous one wrote
    "race": (_INNER_BARRIER, "    %half"),
    # only the low half of the scratch is written before the first pass reads the high half
    "uninitialised": (
        _FIRST_STORE,
        "  %low = index.cmp slt, %lane, %c128 : index\n"
        "  scf.if %low {\n"
        "    view.store %v, %scratch[%lane] : f32, view<256xf32>\n"
        "  }\n",
    ),
    # a guard nested in the compacted one (a box of the box) with results, and a loop with a
    # lane-varying carried value
    "nested": (
        _STORE_SUM,
        "      %few = index.cmp slt, %lane, %c8 : index\n"
        "      %w = scf.if %few -> (f32) {\n"
        "        %d = scalar.addf %sum, %mine : f32\n"
        "        scf.yield %d : f32\n"
        "      } else {\n"
        "        scf.yield %sum : f32\n"
        "      }\n"
        "      %acc = scf.for %j = [%c0 to %c2 step %c1](%a = %w : f32) -> (f32) {\n"
        "        %a2 = scalar.addf %a, %theirs : f32\n"
        "        scf.yield %a2 : f32\n"
        "      }\n"
        "      view.store %acc, %scratch[%lane] : f32, view<256xf32>\n",
    ),
    # a value yielded out of the compacted region, merged with the other lanes' value and
    # stored by every lane after the region
    "yield": (
        _INNER_BARRIER,
        "    %got = scf.if %active -> (f32) {\n"
        "      %h = view.load %scratch[%lane] : view<256xf32> -> f32\n"
        "      scf.yield %h : f32\n"
        "    } else {\n"
        "      %z = scalar.constant 0.0 : f32\n"
        "      scf.yield %z : f32\n"
        "    }\n"
        "    kernel.barrier<workgroup> scope(workgroup) ordering(acq_rel)\n"
        "    view.store %got, %scratch[%lane] : f32, view<256xf32>\n" + _INNER_BARRIER,
    ),
    # every workitem's private scratch, written and read back inside the guard
    "private": (
        _STORE_SUM,
        "      view.store %sum, %mine_v[%c0] : f32, view<4xf32>\n"
        "      %back = view.load %mine_v[%c0] : view<4xf32> -> f32\n"
        "      view.store %back, %scratch[%lane] : f32, view<256xf32>\n",
    ),
}
_PRIVATE_ALLOCA = (
    "  %scratch_root = buffer.alloca<workgroup> align(16) %bytes : buffer\n",
    "  %scratch_root = buffer.alloca<workgroup> align(16) %bytes : buffer\n"
    "  %p16 = index.constant 16 : offset\n"
    "  %mine_root = buffer.alloca<private> align(16) %p16 : buffer\n"
    "  %mine_v = buffer.view %mine_root[%base] : buffer -> view<4xf32>\n",
)


_PRIVATE = VARIANTS["private"]
_GUARD = "    scf.if %active {\n"
_LATE = "    %late = index.cmp sgt, %group, %c1 : index\n    scf.if %late {\n" + _GUARD
_HIGH = "%active = index.cmp slt, %lane, %stride : index"
# the box's corner is not lane 0 of the chunk: workgroups 2.. only (the guard on the
# workgroup id holds a nested guard computed outside it), or workitems >= stride (their
# partner is below them: the passes race)
COMBINED = {
    "late-groups": [
        _PRIVATE,
        (_GUARD, _LATE),
        (_PRIVATE[1] + "    }\n", _PRIVATE[1] + "    }\n    }\n"),
    ],
    "high-lanes": [
        _PRIVATE,
        (_HIGH, _HIGH.replace("slt", "sge")),
        (_OTHER, _OTHER.replace("index.add", "index.sub")),
    ],
}


def _module(name: str):
    text = (KERNELS / "suite" / "reduce_tree.loom").read_text()
    edits = COMBINED.get(name) or [VARIANTS[name]]
    if name in COMBINED or name == "private":
        edits = [_PRIVATE_ALLOCA, *edits]
    for old, new in edits:
        if old:
            assert text.count(old) == 1, old
            text = text.replace(old, new)
    return parse_module(text, filename=f"reduce_tree-{name}.loom")


def _args(groups: int):
    data = np.random.default_rng(groups).standard_normal(groups * 256).astype(np.float32)
    return lambda: (groups, data.copy(), np.zeros(groups, np.float32))


@pytest.mark.parametrize("chunk_lanes", [None, 512])
@pytest.mark.parametrize("name", sorted(VARIANTS) + sorted(COMBINED))
def test_compacted_guards_agree_with_the_general_paths(name: str, chunk_lanes) -> None:
    what, _ = assert_same(_module(name), "reduce_tree", (5,), _args(5), chunk_lanes)
    if name == "out-of-bounds":
        assert what[0] == "error" and "RUNTIME/001" in what[1], what
        return
    render, _, codes = what
    expected = {
        "race": "SANITIZE/002",
        "high-lanes": "SANITIZE/002",
        "uninitialised": "SANITIZE/001",
    }.get(name)
    if expected is not None:
        assert expected in codes, render
    else:
        assert codes == [], render


def test_out_of_bounds_in_a_compacted_guard_names_the_lane() -> None:
    with paths(True):
        with pytest.raises(engine.LoomRuntimeError) as e:
            _, data, out = _args(3)()
            launch(_module("out-of-bounds"), "reduce_tree", workload=(3,), args=(3, data, out))
    assert "(120, 0, 0)" in str(e.value)  # workitem 120 of workgroup 0: the first lane past


def test_the_guard_is_compacted() -> None:
    """The rule fires on the tree's guard (lane < stride with a loop-carried stride)."""
    ran = []
    real = engine.GridContext.compacted

    def spy(self, region, args, mask):
        out = real(self, region, args, mask)
        ran.append(out is not None)
        return out

    engine.GridContext.compacted = spy
    try:
        with paths(True):
            _, data, out = _args(4)()
            r = launch(_module("plain"), "reduce_tree", workload=(4,), args=(4, data, out))
    finally:
        engine.GridContext.compacted = real
    assert r.findings == []
    np.testing.assert_allclose(out, data.reshape(4, 256).sum(axis=1), rtol=1e-5)
    assert ran.count(True) >= 7  # every pass but possibly the last single-lane one


def test_a_guard_made_outside_is_compacted_inside_a_compacted_region() -> None:
    """``lane < stride`` computed outside the guard on the workgroup id keeps its boxes inside
    it: the inner region runs over a box of the box (its corner composes)."""
    corners = []
    real = engine.GridContext.compacted

    def spy(self, region, args, mask):
        corner = self.corner
        out = real(self, region, args, mask)
        if out is not None:
            corners.append(corner)
        return out

    engine.GridContext.compacted = spy
    try:
        with paths(True):
            _, data, out = _args(5)()
            launch(_module("late-groups"), "reduce_tree", workload=(5,), args=(5, data, out))
    finally:
        engine.GridContext.compacted = real
    assert (0, 0, 2, 0, 0, 0) in corners  # the inner guard ran inside the box of groups 2..4


def _chunk_sizes(monkeypatch) -> list[int]:
    """The workgroup counts of the chunks the grid engine runs from now on (in order)."""
    sizes: list[int] = []
    real = engine.GridContext.run_chunk

    def spy(self: engine.GridContext, start: int, count: int, values: list, box: tuple) -> None:
        sizes.append(count)
        return real(self, start, count, values, box)

    monkeypatch.setattr(engine.GridContext, "run_chunk", spy)
    return sizes


def test_chunks_grow_after_a_sparse_first_chunk(monkeypatch) -> None:
    """A first chunk whose ops ran over few of its lanes (compacted boxes) makes the rest of the
    grid run in bigger chunks; memory and the op count are those of the general paths."""
    sizes = _chunk_sizes(monkeypatch)
    what, (_, out) = assert_same(
        _module("plain"), "reduce_tree", (40,), _args(40), 512, sanitize=False
    )
    assert what[2] == []
    # with the fast paths: 2 workgroups, then 16 at a time; with the general ones: 2 at a time
    grown = sizes[: len(sizes) - 20]
    assert grown == [2, 16, 16, 6] and sizes[len(grown) :] == [2] * 20, sizes
    _, data, _ = _args(40)()
    np.testing.assert_allclose(
        np.frombuffer(out, np.float32), data.reshape(40, 256).sum(axis=1), rtol=1e-5
    )


def test_a_sparse_grid_starts_with_big_chunks_next_time(monkeypatch) -> None:
    """The next fast launch of a grid that ran sparse starts with the bigger chunks (the plan
    remembers it); the general paths never do; both agree on memory and findings."""
    sizes = _chunk_sizes(monkeypatch)
    module = _module("plain")
    with paths(True, 512):
        launch(module, "reduce_tree", workload=(40,), args=_args(40)(), sanitize=False)
        first = list(sizes)
        sizes.clear()
        launch(module, "reduce_tree", workload=(40,), args=_args(40)(), sanitize=False)
    assert first == [2, 16, 16, 6] and sizes == [16, 16, 8], (first, sizes)
    sizes.clear()
    what, _ = assert_same(module, "reduce_tree", (40,), _args(40), 512, sanitize=False)
    assert what[2] == [] and sizes[-20:] == [2] * 20


def _context(ext: tuple) -> engine.GridContext:
    plan = engine._plan(_module("plain"), "reduce_tree")
    ctx = engine.GridContext(plan, (4, 1, 1), (256, 1, 1), False, None, None)
    ctx.n, ctx.extents = int(np.prod(ext)), ext
    return ctx


def test_reused_box_masks_hold_exactly_their_boxes() -> None:
    """A guard mask written from boxes into a reused array (only the old boxes cleared, or only
    the lanes between the old and new ranges when one axis changed) is true exactly on the new
    boxes, whatever the old ones were."""
    ext = (1, 1, 4, 1, 1, 256)
    ctx = _context(ext)
    rng = np.random.default_rng(3)
    g0, g1 = 0, 3
    for k in range(60):
        lo, hi = sorted(rng.integers(0, 256, 2))
        if k % 2:  # every other round: the same groups, another lane range (one axis)
            g0, g1 = sorted(rng.integers(0, 4, 2))
        boxes = [((0, 0), (0, 0), (g0, g1), (0, 0), (0, 0), (lo, hi))]
        mask = ctx._box_mask(boxes)
        want = np.zeros(ext, bool)
        want[0, 0, g0 : g1 + 1, 0, 0, lo : hi + 1] = True
        assert np.array_equal(mask, want.reshape(-1))
        ctx._note(mask, (), boxes)  # counted from the boxes
        assert ctx.count_active(mask) == np.count_nonzero(want)
        del mask  # free again: the next round reuses it


def test_reused_scratch_memory_is_zero() -> None:
    """Scratch memory handed out again after its buffer died is cleared, as fresh memory is."""
    ctx = _context((1, 1, 4, 1, 1, 256))
    with paths(True):
        first = ctx.zeroed_bytes(4096)
        first[:] = 7
        ident = id(first)
        del first
        again = ctx.zeroed_bytes(4096)
    assert id(again) == ident and not again.any()
