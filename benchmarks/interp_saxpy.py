"""Interpreter throughput on saxpy (from Loom text), with ratios to NumPy ``a*x+y``.

Run: ``python benchmarks/interp_saxpy.py``. Prints elements/s for the grid engine with the
sanitizer off and on at 2^16 and 2^20 f32 elements (workgroup 256), the ratio to NumPy in the
same run, the sanitizer overhead, and the stepper's steps/s, with the machine's load average.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from common import measure  # noqa: E402

from loom.format.text.parser import parse_module  # noqa: E402
from loom.interp import Stepper, launch  # noqa: E402

SAXPY = Path(__file__).parent.parent / "tests" / "interp" / "kernels" / "saxpy.loom"
REPEAT = 15
"""Launches per figure (best of): enough to see through other processes' load."""


def main() -> None:
    """Print the figures."""
    module = parse_module(SAXPY.read_text(), filename=str(SAXPY))
    a = np.float32(2.5)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"load average {load:.2f} on {os.cpu_count()} CPUs; best of {REPEAT} launches")
    print(f"{'n':>8} {'mode':<14} {'time ms':>9} {'elements/s':>12} {'x NumPy':>9}")
    for exp in (16, 20):
        n = 1 << exp
        rng = np.random.default_rng(exp)
        x = rng.standard_normal(n).astype(np.float32)
        y0 = rng.standard_normal(n).astype(np.float32)
        t_np, _ = measure(lambda x=x, y0=y0: a * x + y0, repeat=20)
        print(f"{n:>8} {'numpy a*x+y':<14} {t_np * 1e3:>9.3f} {n / t_np:>12.3e} {1.0:>9.1f}")
        times = {}
        for sanitize in (False, True):
            y = y0.copy()

            def go(y=y, sanitize=sanitize, x=x, n=n, y0=y0) -> None:
                y[:] = y0
                launch(module, "saxpy", workload=(n,), args=(n, a, x, y), sanitize=sanitize)

            t, _ = measure(go, repeat=REPEAT)
            assert np.array_equal(y, a * x + y0)
            times[sanitize] = t
            mode = "sanitize on" if sanitize else "sanitize off"
            print(f"{n:>8} {mode:<14} {t * 1e3:>9.3f} {n / t:>12.3e} {t / t_np:>9.1f}")
        print(f"{n:>8} sanitizer overhead: {times[True] / times[False]:.2f}x")
    n = 1 << 16  # enough workitems that 100k steps never reach the end
    x = np.ones(n, np.float32)
    y = np.ones(n, np.float32)
    stepper = Stepper(module, "saxpy", workload=(n,), args=(n, a, x, y))
    best_wall = best_cpu = float("inf")
    steps = 20_000
    for _ in range(5):
        t0, c0 = time.perf_counter(), time.process_time()
        for _ in range(steps):
            stepper.step()
        best_wall = min(best_wall, time.perf_counter() - t0)
        best_cpu = min(best_cpu, time.process_time() - c0)
    print(
        f"stepper: {steps / best_wall:,.0f} steps/s wall, {steps / best_cpu:,.0f} steps/s of "
        f"CPU time (best of 5 x {steps} steps; history {stepper.history_length})"
    )
    infinite_loop()


SPIN = """target.generic<reference> @reference

kernel.def target(@reference) @spin() {
  %one = index.constant 1 : index
  kernel.launch.config workgroups(%one, %one, %one) workgroup_size(%one, %one, %one) : index
} launch(%out: buffer) {
  %t = scalar.constant true : i1
  scf.while {
    scf.condition %t : i1
  } do {
    scf.yield
  }
  kernel.return
}
"""


def infinite_loop() -> None:
    """How long an infinite loop takes to end with RUNTIME/009 under the default budget."""
    from loom.errors import LoomRuntimeError
    from loom.interp import engine, stepper

    module = parse_module(SPIN, filename="spin.loom")
    out = np.zeros(1, np.int32)
    for name, run, budget in (
        ("grid engine", lambda: launch(module, "spin", args=(out,)), engine.DEFAULT_MAX_STEPS),
        ("stepper", lambda: Stepper(module, "spin", args=(out,)).run(), stepper.DEFAULT_MAX_STEPS),
    ):
        t0 = time.perf_counter()
        try:
            run()
        except LoomRuntimeError as e:
            assert e.diagnostics[0].code == "RUNTIME/009"
        else:
            raise AssertionError("the infinite loop ended")
        print(
            f"infinite loop, {name}: step budget {budget:,} reached in "
            f"{time.perf_counter() - t0:.1f} s"
        )


if __name__ == "__main__":
    main()
