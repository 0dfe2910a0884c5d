"""Kernel text for the collective, atomic and transfer tests, and a runner for both engines."""

from __future__ import annotations

import numpy as np

from loom.format.text.parser import parse_module
from loom.interp import Stepper, launch

SUBGROUP = 8


def unary_kernel(body: str, t: str, r: str, n: int, wg: int, subgroup: int = SUBGROUP) -> str:
    """``out[gid] = BODY(in[gid])``: BODY uses ``%x: t`` and defines ``%r: r``."""
    lines = "\n".join("  " + line for line in body.strip().splitlines())
    return f"""target.generic<reference> @t {{subgroup_size = {subgroup}}}

kernel.def target(@t) @k() {{
  %c1 = index.constant 1 : index
  %wg = index.constant {wg} : index
  %ng = index.constant {n // wg} : index
  kernel.launch.config workgroups(%ng, %c1, %c1) workgroup_size(%wg, %c1, %c1) : index
}} launch(%in: buffer, %out: buffer) {{
  %z = index.constant 0 : offset
  %vi = buffer.view %in[%z] : buffer -> view<{n}x{t}>
  %vo = buffer.view %out[%z] : buffer -> view<{n}x{r}>
  %gid = kernel.workitem.dispatch.id<x> : index
  %x = view.load %vi[%gid] : view<{n}x{t}> -> {t}
{lines}
  view.store %r, %vo[%gid] : {r}, view<{n}x{r}>
  kernel.return
}}
"""


def run_both(text: str, args: list[np.ndarray]) -> tuple[list[np.ndarray], object, object]:
    """Run the kernel ``k`` in the grid engine and in the stepper on copies of ``args``;
    returns the grid engine's arrays, its result and the finished stepper (whose arrays must
    equal the grid engine's: checked here)."""
    module = parse_module(text, filename="collective.loom")
    grid = [a.copy() for a in args]
    result = launch(module, "k", args=grid)
    stepped = [a.copy() for a in args]
    s = Stepper(module, "k", args=stepped)
    s.run()
    for g, st in zip(grid, stepped):
        np.testing.assert_array_equal(g.view(np.uint8), st.view(np.uint8))
    return grid, result, s
