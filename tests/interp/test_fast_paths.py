"""The grid engine's fast paths against its general paths: identical memory, findings, errors.

Fast paths: reuse of lane-invariant results across chunks, affine index recognition (slice
loads/stores, all-lanes slices), and the sanitizer's shortcuts (range mode, access bounds,
same-workitems slices). The general paths gather/scatter every access and keep per-granule
shadow state. Each kernel runs both ways, with the default chunk size and with small chunks.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).parent))
from interp_helpers import KERNELS, load  # noqa: E402

from loom.errors import LoomRuntimeError
from loom.format.text.parser import parse_module
from loom.interp import engine, launch, sanitizer


@contextmanager
def paths(fast: bool, chunk_lanes: int | None = None) -> Iterator[None]:
    """Run with the fast paths on or off (and optionally another chunk size)."""
    saved = engine.FAST_PATHS, sanitizer.SHORTCUTS, engine.CHUNK_LANES
    engine.FAST_PATHS = sanitizer.SHORTCUTS = fast
    if chunk_lanes is not None:
        engine.CHUNK_LANES = chunk_lanes
    try:
        yield
    finally:
        engine.FAST_PATHS, sanitizer.SHORTCUTS, engine.CHUNK_LANES = saved


def outcome(module, kernel: str, workload: tuple, make_args: Callable[[], tuple], **kw) -> tuple:
    """(findings or error text, op count, the argument arrays afterwards)."""
    args = make_args()
    try:
        r = launch(module, kernel, workload=workload, args=args, **kw)
        what = (r.render(), r.ops_executed, [d.code for d in r.findings])
    except LoomRuntimeError as e:
        what = ("error", str(e))
    arrays = [a.tobytes() for a in args if isinstance(a, np.ndarray | bytearray)]
    return what, arrays


def assert_same(module, kernel: str, workload: tuple, make_args, chunk_lanes=None, **kw) -> tuple:
    with paths(True, chunk_lanes):
        fast = outcome(module, kernel, workload, make_args, **kw)
    with paths(False, chunk_lanes):
        general = outcome(module, kernel, workload, make_args, **kw)
    assert fast[0] == general[0]
    assert fast[1] == general[1]
    return fast


def _rng_f32(seed: int, n: int) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(n).astype(np.float32)


def _saxpy(n: int):
    return lambda: (n, 1.5, _rng_f32(n, n), _rng_f32(n + 1, n))


def _text(name: str, old: str = "", new: str = "") -> object:
    text = (KERNELS / f"{name}.loom").read_text()
    if old:
        assert old in text
        text = text.replace(old, new)
    return parse_module(text, filename=f"{name}-variant.loom")


_BARRIER = "  kernel.barrier<workgroup> scope(workgroup) ordering(acq_rel)\n"

CASES = {
    "saxpy-1": (lambda: load("saxpy"), "saxpy", (1,), _saxpy(1)),
    "saxpy-1000": (lambda: load("saxpy"), "saxpy", (1000,), _saxpy(1000)),
    "saxpy-4097": (lambda: load("saxpy"), "saxpy", (4097,), _saxpy(4097)),
    "vector-add": (
        lambda: load("vector_add_i32"),
        "vector_add_i32",
        (200,),
        lambda: (
            200,
            np.full(200, 2**31 - 1, np.int32),
            np.arange(200, dtype=np.int32),
            np.zeros(200, np.int32),
        ),
    ),
    "reverse": (
        lambda: load("reverse_blocks_f32"),
        "reverse_blocks_f32",
        (6,),
        lambda: (6, np.arange(192, dtype=np.float32)),
    ),
    "reverse-no-barrier": (
        lambda: _text("reverse_blocks_f32", _BARRIER, ""),
        "reverse_blocks_f32",
        (3,),
        lambda: (3, np.arange(96, dtype=np.float32)),
    ),
    "reduce": (
        lambda: load("reduce_sum"),
        "reduce_sum",
        (9,),
        lambda: (
            9,
            np.random.default_rng(0).integers(-(10**6), 10**6, 64 * 9).astype(np.int32),
            np.zeros(9, np.int32),
        ),
    ),
    "transpose": (
        lambda: load("transpose"),
        "transpose",
        (16, 40),
        lambda: (16, 40, _rng_f32(3, 640).reshape(16, 40), np.zeros((40, 16), np.float32)),
    ),
    "histogram": (
        lambda: load("histogram"),
        "histogram",
        (300,),
        lambda: (
            300,
            np.random.default_rng(2).integers(0, 1000, 300).astype(np.int32),
            np.zeros(16, np.int32),
        ),
    ),
    "oob": (
        lambda: load("oob_read"),
        "shift_left",
        (8,),
        lambda: (8, np.zeros(8, np.float32), np.zeros(8, np.float32)),
    ),
    "divergent-barrier": (
        lambda: load("divergent_barrier"),
        "divergent",
        (),
        lambda: (np.zeros(32, np.int32),),
    ),
    "uninit": (lambda: load("uninit_read"), "uninit", (), lambda: (np.zeros(16, np.int32),)),
    "copy": (
        lambda: load("copy_64_bytes"),
        "copy_64_bytes",
        (),
        lambda: (np.arange(64, dtype=np.uint8), np.zeros(64, np.uint8)),
    ),
    "control": (
        lambda: load("control"),
        "control",
        (45,),
        lambda: (45, np.zeros(45, np.int32), np.zeros(45, np.int32)),
    ),
    "exit-barrier": (
        lambda: load("exit_barrier"),
        "rotate",
        (20,),
        lambda: (20, np.arange(32, dtype=np.int32)),
    ),
    # pure ops under a small box of active lanes run on the box alone: a division by zero on
    # one lane of the box (2 * stride - 3 - lane is 0 on lane 1 of stride 2) names the
    # same lane
    "reduce-tree-div-error": (
        lambda: _text(
            "suite/reduce_tree",
            "      %other = index.add %lane, %stride : index\n",
            "      %other = index.add %lane, %stride : index\n"
            "      %s2 = index.add %stride, %stride : index\n"
            "      %t = index.sub %s2, %lane : index\n"
            "      %t2 = index.sub %t, %c2 : index\n"
            "      %dm = index.sub %t2, %c1 : index\n"
            "      %q = index.div %c8, %dm : index\n",
        ),
        "reduce_tree",
        (6,),
        lambda: (6, np.arange(6 * 256, dtype=np.float32), np.zeros(6, np.float32)),
    ),
}


@pytest.mark.parametrize("chunk_lanes", [None, 64])
@pytest.mark.parametrize("name", sorted(CASES))
def test_corpus_fast_and_general_paths_agree(name: str, chunk_lanes: int | None) -> None:
    make_module, kernel, workload, make_args = CASES[name]
    assert_same(make_module(), kernel, workload, make_args, chunk_lanes)


# A kernel whose slices overlap between workitems: y[i] = x[i], then y[i + 1] is read (written
# by the neighbour: a race inside the chunk, and a write-after-read race across chunks), then
# x[i] is written back by its own reader (no race). Reads outside ``i + 1 < n`` are skipped.
NEIGHBOUR = """target.generic<reference> @reference

kernel.def target(@reference) export("neighbour") @neighbour(%n: index) {
  %one = index.constant 1 : index
  %lanes = index.constant 256 : index
  %spare = index.constant 255 : index
  %padded = index.add %n, %spare : index
  %groups = index.div %padded, %lanes : index
  kernel.launch.config workgroups(%groups, %one, %one) workgroup_size(%lanes, %one, %one) : index
} launch(%n: index, %x: buffer, %y: buffer) {
  %base = index.constant 0 : offset
  %one = index.constant 1 : index
  %i = kernel.workitem.dispatch.id<x> : index
  %j = index.add %i, %one : index
  %inside = index.cmp slt, %j, %n : index
  %xv = buffer.view %x[%base] : buffer -> view<[%n]xf32>
  %yv = buffer.view %y[%base] : buffer -> view<[%n]xf32>
  scf.if %inside {
    %xi = view.load %xv[%i] : view<[%n]xf32> -> f32
    view.store %xi, %yv[%i] : f32, view<[%n]xf32>
    %yj = view.load %yv[%j] : view<[%n]xf32> -> f32
    view.store %yj, %xv[%i] : f32, view<[%n]xf32>
  }
  kernel.return
}
"""


@pytest.mark.parametrize("chunk_lanes", [None, 256, 512])
def test_overlapping_slices_race_identically(chunk_lanes: int | None) -> None:
    n = 1500
    m = parse_module(NEIGHBOUR, filename="neighbour.loom")
    (render, _, codes), _ = assert_same(
        m, "neighbour", (n,), lambda: (n, _rng_f32(5, n), np.zeros(n, np.float32)), chunk_lanes
    )
    assert "SANITIZE/002" in codes
    assert "neighbour.loom:21:" in render  # the read of the neighbour's element


@pytest.mark.parametrize("name", ["saxpy", "neighbour"])
def test_dispatch_ids_computed_per_chunk_agree(name: str) -> None:
    """Above SHARED_IDS workitems, dispatch ids are computed per chunk into recycled arrays."""
    n = 2500
    m = load("saxpy") if name == "saxpy" else parse_module(NEIGHBOUR, filename="neighbour.loom")

    def make_args():
        return (
            (n, 1.5, _rng_f32(1, n), _rng_f32(2, n))
            if name == "saxpy"
            else (
                n,
                _rng_f32(1, n),
                np.zeros(n, np.float32),
            )
        )

    saved = engine.SHARED_IDS
    engine.SHARED_IDS = 0
    try:
        assert_same(m, name, (n,), make_args, 512)
    finally:
        engine.SHARED_IDS = saved


def test_without_sanitizer_fast_and_general_paths_agree() -> None:
    n = 3000
    m = load("saxpy")
    assert_same(m, "saxpy", (n,), _saxpy(n), 512, sanitize=False)


def test_range_mode_leaves_no_trace_on_a_streaming_kernel() -> None:
    """Saxpy never needs per-granule sanitizer state: every access is a fresh or repeated slice."""
    n = 5000
    x, y = _rng_f32(1, n), _rng_f32(2, n)
    seen = []
    real = sanitizer.Shadow.materialise

    def spy(self):
        seen.append(self.nbytes)
        real(self)

    sanitizer.Shadow.materialise = spy
    try:
        with paths(True, 1024):
            r = launch(load("saxpy"), "saxpy", workload=(n,), args=(n, 2.0, x, y.copy()))
    finally:
        sanitizer.Shadow.materialise = real
    assert r.findings == [] and seen == []


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    kernel=st.sampled_from(["saxpy", "neighbour"]),
    n=st.integers(1, 2000),
    chunk_lanes=st.sampled_from([256, 512, 1024, 1 << 17]),
    sanitize=st.booleans(),
)
def test_random_sizes_and_chunks_agree(kernel: str, n: int, chunk_lanes: int, sanitize: bool):
    if kernel == "saxpy":
        assert_same(load("saxpy"), "saxpy", (n,), _saxpy(n), chunk_lanes, sanitize=sanitize)
    else:
        m = parse_module(NEIGHBOUR, filename="neighbour.loom")

        def make_args():
            return (n, _rng_f32(n, n), np.zeros(n, np.float32))

        assert_same(m, "neighbour", (n,), make_args, chunk_lanes, sanitize=sanitize)


def test_repeated_launches_reuse_arrays_correctly() -> None:
    """Launches of one compiled kernel write into the previous launch's dead arrays."""
    m = parse_module(NEIGHBOUR, filename="neighbour.loom")
    saxpy = load("saxpy")
    for k, n in enumerate([3000, 3000, 700, 3000, 1, 3000]):
        x, y = _rng_f32(k, n), _rng_f32(k + 100, n)
        want = np.float32(0.5) * x + y
        with paths(True, 1024):
            r = launch(saxpy, "saxpy", workload=(n,), args=(n, 0.5, x, y))
        np.testing.assert_array_equal(y, want)
        assert r.findings == []
        assert_same(
            m, "neighbour", (n,), lambda n=n, k=k: (n, _rng_f32(k, n), np.zeros(n, np.float32))
        )
    assert engine._plan(saxpy, "saxpy").spares  # the reuse really happened


_SHARED_READ = """target.generic<reference> @reference

kernel.def target(@reference) @shared_read(%groups: index) {
  %one = index.constant 1 : index
  %lanes = index.constant 16 : index
  kernel.launch.config workgroups(%groups, %one, %one) workgroup_size(%lanes, %one, %one) : index
} launch(%groups: index, %x: buffer, %y: buffer) {
  %base = index.constant 0 : offset
  %c0 = index.constant 0 : index
  %c1 = index.constant 1 : index
  %g = kernel.workgroup.id<x> : index
  %t = kernel.workitem.id<x> : index
  %xv = buffer.view %x[%base] : buffer -> view<[%groups]xf32>
  %yv = buffer.view %y[%base] : buffer -> view<[%groups]xf32>
  %v = view.load %xv[%g] : view<[%groups]xf32> -> f32
  %first = index.cmp eq, %t, %c0 : index
  %next = index.add %g, %c1 : index
  %inside = index.cmp slt, %next, %groups : index
  %write = scalar.andi %first, %inside : i1
  scf.if %write {
    view.store %v, %xv[%next] : f32, view<[%groups]xf32>
  }
  view.store %v, %yv[%g] : f32, view<[%groups]xf32>
  kernel.return
}
"""


def test_shared_reads_record_the_same_reader_both_ways() -> None:
    # every lane of a workgroup reads one element (an affine read that does not depend on the
    # workitem); the next workgroup's first lane writes it: the race names the same reader
    module = parse_module(_SHARED_READ, filename="shared_read.loom")
    fast = assert_same(
        module,
        "shared_read",
        (8,),
        lambda: (8, np.arange(8, dtype=np.float32), np.zeros(8, np.float32)),
    )
    assert "SANITIZE/002" in fast[0][2], fast[0][0]
    assert "by workgroup" in fast[0][0]
