"""Loads that hand out read-only views of memory instead of copies (``compact.view_loads``).

A ``view.load`` whose every use is an elementwise op of ``VIEW_OPERANDS`` later in the same
block, with no op that may write memory in between, may return the strided memory itself.
These kernels load, write the loaded location and use the loaded value afterwards, or yield
the loaded value out of ``scf.for``/``scf.if`` and overwrite it: those loads must be copies.
Each kernel's memory is checked against NumPy and the fast paths against the general ones,
with and without the sanitizer (which turns views off).
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
from loom.interp import engine, launch

_HEAD = """target.generic<reference> @reference

kernel.def target(@reference) @{name}(%n: index) {{
  %one = index.constant 1 : index
  %lanes = index.constant 64 : index
  %spare = index.constant 63 : index
  %padded = index.add %n, %spare : index
  %groups = index.div %padded, %lanes : index
  kernel.launch.config workgroups(%groups, %one, %one) workgroup_size(%lanes, %one, %one) : index
}} launch(%n: index, %x: buffer, %y: buffer) {{
  %base = index.constant 0 : offset
  %c0 = index.constant 0 : index
  %c1 = index.constant 1 : index
  %c2 = index.constant 2 : index
  %c3 = index.constant 3 : index
  %i = kernel.workitem.dispatch.id<x> : index
  %j = index.mul %i, %c2 : index
  %m = index.mul %n, %c2 : index
  %inside = index.cmp slt, %i, %n : index
  %xv = buffer.view %x[%base] : buffer -> view<[%m]xf32>
  %yv = buffer.view %y[%base] : buffer -> view<[%n]xf32>
"""

# %b is used before the store (a view is safe); %a is used after the store to its own
# location (it must be a copy): y[i] = x[2i]^2 with the old x[2i], x[2i] doubled
STORE_BETWEEN = (
    _HEAD.format(name="store_between")
    + """  scf.if %inside {
    %a = view.load %xv[%j] : view<[%m]xf32> -> f32
    %b = view.load %xv[%j] : view<[%m]xf32> -> f32
    %twice = scalar.addf %a, %b : f32
    view.store %twice, %xv[%j] : f32, view<[%m]xf32>
    %square = scalar.mulf %a, %a : f32
    view.store %square, %yv[%i] : f32, view<[%n]xf32>
  }
  kernel.return
}
"""
)

# the loop yields the value it loaded before doubling the element (4 x0 after three rounds,
# the element is then 8 x0); the scf.if yields a loaded value (8 x0) on its first half of the
# lanes, then the element is overwritten with the loop's value: y = u + last
YIELDED = (
    _HEAD.format(name="yielded")
    + """  scf.if %inside {
    %zero = scalar.constant 0.0 : f32
    %last = scf.for %k = [%c0 to %c3 step %c1](%acc = %zero : f32) -> (f32) {
      %v = view.load %xv[%j] : view<[%m]xf32> -> f32
      %w = scalar.addf %v, %v : f32
      view.store %w, %xv[%j] : f32, view<[%m]xf32>
      scf.yield %v : f32
    }
    %half = index.div %n, %c2 : index
    %low = index.cmp slt, %i, %half : index
    %u = scf.if %low -> (f32) {
      %q = view.load %xv[%j] : view<[%m]xf32> -> f32
      scf.yield %q : f32
    } else {
      scf.yield %last : f32
    }
    view.store %last, %xv[%j] : f32, view<[%m]xf32>
    %s = scalar.addf %u, %last : f32
    view.store %s, %yv[%i] : f32, view<[%n]xf32>
  }
  kernel.return
}
"""
)


def _store_between_want(n: int, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    x = x.copy()
    old = x[0 : 2 * n : 2].copy()
    x[0 : 2 * n : 2] = old + old
    return x, old * old


def _yielded_want(n: int, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    x = x.copy()
    x0 = x[0 : 2 * n : 2].copy()
    last = np.float32(4) * x0
    u = np.where(np.arange(n) < n // 2, np.float32(8) * x0, last)
    x[0 : 2 * n : 2] = last
    return x, u + last


CASES = {
    "store_between": (STORE_BETWEEN, _store_between_want),
    "yielded": (YIELDED, _yielded_want),
}


def _args(n: int) -> tuple:
    x = np.random.default_rng(n).standard_normal(2 * n).astype(np.float32)
    return (n, x, np.zeros(n, np.float32))


def _view_load_names(module, kernel: str) -> set[str]:
    plan = engine.KernelPlan(module, kernel)
    return {plan.program.steps[i].op.results[0].display_name for i in plan.view_loads}


def test_only_loads_read_before_any_write_and_not_yielded_may_be_views() -> None:
    assert _view_load_names(parse_module(STORE_BETWEEN), "store_between") == {"b"}
    # every load of this one is yielded, or used after a store
    assert _view_load_names(parse_module(YIELDED), "yielded") == set()
    tree = parse_module((KERNELS / "suite" / "reduce_tree.loom").read_text())
    # the tree's two loads feed one add before the store; the others are stored directly
    assert _view_load_names(tree, "reduce_tree") == {"mine", "theirs"}


@pytest.mark.parametrize("sanitize", [False, True])
@pytest.mark.parametrize("chunk_lanes", [None, 128])
@pytest.mark.parametrize("n", [300, 320])
@pytest.mark.parametrize("name", sorted(CASES))
def test_kernels_with_writes_after_loads_match_numpy_both_ways(
    name: str, n: int, chunk_lanes: int | None, sanitize: bool
) -> None:
    # 320 lanes: every lane active, the guard's region runs unmasked; 300 in chunks of two
    # workgroups: the last chunk's active lanes are one box and the region runs compacted
    text, want_of = CASES[name]
    module = parse_module(text, filename=f"{name}.loom")
    args = _args(n)
    want_x, want_y = want_of(n, args[1])
    with paths(True, chunk_lanes):
        launch(module, name, workload=(n,), args=args, sanitize=sanitize)
    np.testing.assert_array_equal(args[1], want_x)
    np.testing.assert_array_equal(args[2], want_y)
    assert_same(module, name, (n,), lambda: _args(n), chunk_lanes, sanitize=sanitize)


def _loads_seen(monkeypatch: pytest.MonkeyPatch) -> list[np.ndarray]:
    """The lane arrays the grid engine's loads hand out from now on (in order)."""
    seen: list[np.ndarray] = []
    real = engine.GridContext._load_view

    def spy(self, step, view, dtype):
        out = real(self, step, view, dtype)
        seen.append(out)
        return out

    monkeypatch.setattr(engine.GridContext, "_load_view", spy)
    return seen


def test_a_view_load_hands_out_read_only_memory_that_is_never_recycled(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    module = parse_module(STORE_BETWEEN, filename="store_between.loom")
    n = 320
    args = _args(n)
    seen = _loads_seen(monkeypatch)
    with paths(True):
        launch(module, "store_between", workload=(n,), args=args, sanitize=False)
    views = [v for v in seen if np.shares_memory(v, args[1])]
    assert views and len(views) < len(seen)  # %b is a view, %a a copy
    for v in views:
        assert not v.flags.writeable
        with pytest.raises(ValueError):
            v[...] = 0
    plan = engine._plan(module, "store_between")
    for spare in plan.spares:
        for arr in spare.values():
            assert arr.flags.owndata and not np.shares_memory(arr, args[1])


def test_the_sanitizer_sees_copies(monkeypatch: pytest.MonkeyPatch) -> None:
    module = parse_module(STORE_BETWEEN, filename="store_between.loom")
    n = 320
    args = _args(n)
    seen = _loads_seen(monkeypatch)
    with paths(True):
        r = launch(module, "store_between", workload=(n,), args=args, sanitize=True)
    assert not r.findings, r.render()
    assert seen and not any(np.shares_memory(v, args[1]) for v in seen)


def test_only_arrays_that_own_their_data_are_recycled() -> None:
    # a result that is a window on other memory (a load's view, an operand handed back) is
    # never written into by the step's run in the next chunk
    module = parse_module(STORE_BETWEEN, filename="store_between.loom")
    plan = engine.KernelPlan(module, "store_between")
    ctx = engine.GridContext(plan, (1, 1, 1), (64, 1, 1), False, None, None)
    ctx.n = 64
    step = next(s for s in plan.program.steps if s.op.name == "scalar.mulf")
    memory = np.zeros(128, np.float32)
    for result in (memory[::2], np.empty(64, np.float32)):
        assert ctx.out_array(step, result.dtype) is None  # the step's first run
        assert ctx.produced(step, result) is result
        ctx._recycle, ctx._produced = ctx._produced, {}  # the next chunk
        again = ctx.out_array(step, result.dtype)
        assert (again is result) == result.flags.owndata
