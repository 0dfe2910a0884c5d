"""Layout-typed views address memory exactly as their layout says, in both engines.

A kernel reads every element of ``view<D0x...xf32, %layout>`` over a source buffer and writes
it to a dense output; the output must equal NumPy's ``as_strided`` of the source with the
layout's strides (in bytes) from the view's base offset. Layouts are random: rank 1-3, strides
in any order, with padding, zero (broadcast) and overlapping strides, static or from operands.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from loom.errors import LoomRuntimeError
from loom.format.text.parser import parse_module
from loom.interp import Stepper, launch
from loom.verify import verify_module


def _kernel(
    dims: tuple[int, ...],
    strides: tuple[int, ...],
    dynamic: tuple[bool, ...],
    base: int,
    layout: str = "strided",
) -> str:
    shape = "x".join(str(d) for d in dims) + "xf32"
    params = "".join(f", %s{k}: index" for k, dyn in enumerate(dynamic) if dyn)
    lines = [
        "target.generic<reference> @t",
        "",
        "kernel.def target(@t) @k() {",
        "  %c1 = index.constant 1 : index",
        f"  %n = index.constant {dims[0]} : index",
        "  kernel.launch.config workgroups(%c1, %c1, %c1) workgroup_size(%n, %c1, %c1) : index",
        f"}} launch(%src: buffer, %out: buffer{params}) {{",
        f"  %base = index.constant {base * 4} : offset",
        "  %z = index.constant 0 : offset",
    ]
    if layout == "strided":
        entries = ", ".join(
            f"%s{k}" if dyn else str(s) for k, (s, dyn) in enumerate(zip(strides, dynamic))
        )
        lines.append(f"  %layout = encoding.layout.strided [{entries}] : encoding<layout>")
        attach = "%layout"
    elif layout == "dense-value":
        lines.append("  %layout = encoding.layout.dense : encoding<layout>")
        attach = "%layout"
    else:
        attach = layout  # a static spec such as #dense
    vt = f"view<{shape}, {attach}>"
    lines += [
        f"  %v = buffer.view %src[%base] : buffer -> {vt}",
        f"  %w = buffer.view %out[%z] : buffer -> view<{shape}>",
        "  %x = kernel.workitem.id<x> : index",
    ]
    for k, rest in enumerate(itertools.product(*(range(d) for d in dims[1:]))):
        idx = ", ".join(["%x", *(str(i) for i in rest)])
        lines.append(f"  %a{k} = view.load %v[{idx}] : {vt} -> f32")
        lines.append(f"  view.store %a{k}, %w[{idx}] : f32, view<{shape}>")
    lines += ["  kernel.return", "}", ""]
    return "\n".join(lines)


def _run_both(text: str, src: np.ndarray, n_out: int, scalars: list) -> tuple:
    module = parse_module(text)
    assert not verify_module(module).errors
    outs = []
    grid_out = np.zeros(n_out, np.float32)
    launch(module, "k", args=[src.copy(), grid_out, *scalars])
    step_out = np.zeros(n_out, np.float32)
    s = Stepper(module, "k", args=[src.copy(), step_out, *scalars])
    s.run()
    outs = (grid_out, step_out)
    return outs


@st.composite
def layouts(draw: st.DrawFn) -> tuple:
    rank = draw(st.integers(1, 3))
    dims = tuple(draw(st.lists(st.integers(1, 4), min_size=rank, max_size=rank)))
    strides = tuple(draw(st.lists(st.integers(0, 13), min_size=rank, max_size=rank)))
    dynamic = tuple(draw(st.lists(st.booleans(), min_size=rank, max_size=rank)))
    base = draw(st.integers(0, 5))
    return dims, strides, dynamic, base


@settings(max_examples=30, deadline=None)
@given(layouts())
def test_strided_layout_matches_as_strided(layout: tuple) -> None:
    dims, strides, dynamic, base = layout
    footprint = base + sum((d - 1) * s for d, s in zip(dims, strides)) + 1
    src = np.arange(footprint, dtype=np.float32) * 1.5 - 3  # exactly as long as the layout reaches
    scalars = [np.int64(s) for s, dyn in zip(strides, dynamic) if dyn]
    expected = np.lib.stride_tricks.as_strided(
        src[base:], shape=dims, strides=tuple(4 * s for s in strides)
    )
    for out in _run_both(_kernel(dims, strides, dynamic, base), src, int(np.prod(dims)), scalars):
        np.testing.assert_array_equal(out.reshape(dims), expected)


def _dense_index(idx: tuple, dims: tuple) -> int:
    flat = 0
    for i, d in zip(idx, dims):
        flat = flat * d + i
    return flat


@pytest.mark.parametrize("attach", ["dense-value", "#dense", "#encoding.layout.dense"])
def test_dense_layouts_are_row_major(attach: str) -> None:
    dims = (3, 2, 4)
    src = np.arange(2 + 24, dtype=np.float32)
    for out in _run_both(_kernel(dims, (), (), 2, attach), src, 24, []):
        for idx in itertools.product(*(range(d) for d in dims)):
            assert out.reshape(dims)[idx] == src[2 + _dense_index(idx, dims)]


def test_static_strided_spec_is_a_one_stride_layout() -> None:
    src = np.arange(5 * 3, dtype=np.float32)
    for out in _run_both(_kernel((5,), (), (), 0, "#strided<stride=3>"), src, 5, []):
        np.testing.assert_array_equal(out, src[::3])


def test_static_strided_layout_in_the_type() -> None:
    dims = (4, 3)
    src = np.arange(1 + 3 * 1 + 2 * 5 + 1, dtype=np.float32)
    spec = "#encoding.layout.strided<strides=[1, 5]>"
    for out in _run_both(_kernel(dims, (), (), 1, spec), src, 12, []):
        i, j = np.meshgrid(np.arange(4), np.arange(3), indexing="ij")
        np.testing.assert_array_equal(out.reshape(dims), src[1 + i + 5 * j])


def test_access_beyond_the_layout_extent_is_out_of_bounds() -> None:
    """In range of the logical shape, outside the buffer: strides reach past the end."""
    dims, strides = (2, 3), (1, 4)
    footprint = (2 - 1) * 1 + (3 - 1) * 4 + 1  # 10 elements
    src = np.zeros(footprint - 1, np.float32)  # one element short
    module = parse_module(_kernel(dims, strides, (False, False), 0))
    with pytest.raises(LoomRuntimeError) as grid:
        launch(module, "k", args=[src.copy(), np.zeros(6, np.float32)])
    s = Stepper(module, "k", args=[src.copy(), np.zeros(6, np.float32)])
    with pytest.raises(LoomRuntimeError) as step:
        s.run()
    for e in (grid, step):
        d = e.value.diagnostics[0]
        assert d.code == "RUNTIME/001"
        assert "accesses bytes 36..39 outside buffer" in d.message  # element [1, 2] = 1 + 8
        assert "view.load" in d.render() or "%a2" in d.render()


def test_strided_layout_rank_must_match_the_view() -> None:
    text = _kernel((2, 2), (2, 1), (False, False), 0).replace(
        "encoding.layout.strided [2, 1]", "encoding.layout.strided [2, 1, 1]"
    )
    module = parse_module(text)
    with pytest.raises(LoomRuntimeError) as e:
        launch(module, "k", args=[np.zeros(8, np.float32), np.zeros(4, np.float32)])
    assert e.value.diagnostics[0].code == "RUNTIME/012"
    assert "rank 3 addresses a view of rank 2" in e.value.diagnostics[0].message


def test_a_schema_is_no_layout_at_run_time() -> None:
    """Unverified IR may attach a schema value to a view: the run stops with a Loom error."""
    text = _kernel((2,), (1,), (False,), 0).replace(
        "encoding.layout.strided [1] : encoding<layout>",
        "encoding.define #q8_0<block=32> : encoding<layout>",
    )
    module = parse_module(text)
    with pytest.raises(LoomRuntimeError) as e:
        launch(module, "k", args=[np.zeros(2, np.float32), np.zeros(2, np.float32)])
    assert e.value.diagnostics[0].code == "RUNTIME/012"
    assert "#q8_0 is not an address layout" in e.value.diagnostics[0].message
