"""Stepper throughput: steps per second on the saxpy kernel and on the suite kernels.

Run: ``python benchmarks/interp_stepper.py [--steps N] [--profile]``. Each kernel runs in the
stepper (one workitem, one op per step, with undo history) for ``--steps`` steps, best of 5,
and prints steps/s of wall and CPU time with the machine's load average; ``--profile KERNEL`` prints
a cProfile of that kernel's stepping instead. Goal (issue 16): at least 100k steps/s.
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from interp_suite import CASES, SUITE  # noqa: E402

from loom.format.text.parser import parse_module  # noqa: E402
from loom.interp import Stepper  # noqa: E402

SAXPY = Path(__file__).parent.parent / "tests" / "interp" / "kernels" / "saxpy.loom"


def _saxpy_stepper() -> Stepper:
    module = parse_module(SAXPY.read_text(), filename=str(SAXPY))
    n = 1 << 16  # enough workitems that the steps never reach the end
    x = np.ones(n, np.float32)
    y = np.ones(n, np.float32)
    return Stepper(module, "saxpy", workload=(n,), args=(n, np.float32(2.5), x, y))


def _suite_stepper(name: str) -> Stepper:
    case = next(c for c in CASES if c.name == name)
    path = SUITE / f"{name}.loom"
    module = parse_module(path.read_text(), filename=str(path))
    job = case.make(1 << 16, np.random.default_rng(1))
    return Stepper(module, name, workload=job["workload"], args=job["args"])


def rate(make: object, steps: int, repeat: int = 5) -> tuple[float, float, int]:
    """(best steps/s of wall time, of CPU time, history length after) over fresh steppers."""
    best_wall = best_cpu = float("inf")
    hist = 0
    for _ in range(repeat):
        s = make()  # type: ignore[operator]
        t0, c0 = time.perf_counter(), time.process_time()
        for _ in range(steps):
            if not s.step():
                break
        best_wall = min(best_wall, time.perf_counter() - t0)
        best_cpu = min(best_cpu, time.process_time() - c0)
        hist = s.history_length
    return steps / best_wall, steps / best_cpu, hist


def main(argv: list[str] | None = None) -> None:
    """Print the table (or the profile)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20_000, help="steps per measurement")
    parser.add_argument("--profile", metavar="KERNEL", help="cProfile stepping this kernel")
    args = parser.parse_args(argv)
    if args.profile:
        s = _saxpy_stepper() if args.profile == "saxpy" else _suite_stepper(args.profile)
        prof = cProfile.Profile()
        prof.enable()
        for _ in range(args.steps):
            s.step()
        prof.disable()
        pstats.Stats(prof).sort_stats("tottime").print_stats(25)
        return
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"load average {load:.2f} on {os.cpu_count()} CPUs; {args.steps} steps, best of 5")
    print(f"{'kernel':<16} {'steps/s wall':>13} {'steps/s CPU':>12} {'history':>8}")
    rows = [("saxpy", _saxpy_stepper)] + [
        (c.name, lambda name=c.name: _suite_stepper(name)) for c in CASES
    ]
    for name, make in rows:
        wall, cpu, hist = rate(make, args.steps)
        print(f"{name:<16} {wall:>13,.0f} {cpu:>12,.0f} {hist:>8}")
    print("goal: at least 100,000 steps/s")


if __name__ == "__main__":
    main()
