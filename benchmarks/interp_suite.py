"""Grid-engine speed on kernels written the way people write them, against NumPy.

Run: ``python benchmarks/interp_suite.py [--quick] [--only NAME] [--cpu]``. Each kernel of
``tests/interp/kernels/suite/`` runs at about 2^20 elements (``--quick``: 2^16) with the
sanitizer off and on; the script checks the result against the NumPy code a user would write
for the same job and prints the times, the ratio to that NumPy code and the sanitizer overhead,
then the geometric means. Goals (issue 16): every kernel within 25x of NumPy, geometric mean
within 10x, sanitizer geometric mean within 3x. ``--cpu`` times CPU seconds of this process
instead of wall time (steadier on a loaded machine; NumPy's threads all count).
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
import common  # noqa: E402

from loom.format.text.parser import parse_module  # noqa: E402
from loom.interp import launch  # noqa: E402

SUITE = Path(__file__).parent.parent / "tests" / "interp" / "kernels" / "suite"


@dataclass
class Case:
    """One suite kernel: its inputs, its launch and the NumPy code for the same job."""

    name: str
    make: Callable[[int, np.random.Generator], dict]
    """``make(n, rng)`` -> {"workload", "args", "numpy", "check"} for about ``n`` elements."""


def _saxpy(n: int, rng: np.random.Generator) -> dict:
    a = np.float32(1.5)
    x = rng.standard_normal(n).astype(np.float32)
    y0 = rng.standard_normal(n).astype(np.float32)
    y = y0.copy()
    return {
        "workload": (n,),
        "args": (n, a, x, y),
        "reset": lambda: y.__setitem__(slice(None), y0),
        "numpy": lambda: np.add(a * x, y0, dtype=np.float32),
        "check": lambda want: np.allclose(y, want, rtol=1e-6, atol=1e-6),
    }


def _square(n: int) -> int:
    side = 1 << (int(math.log2(n)) // 2)
    return side


def _add_2d(n: int, rng: np.random.Generator) -> dict:
    rows = _square(n) - 3  # not a multiple of the tile: exercises both guards
    cols = n // (rows + 3) + 5
    a = rng.standard_normal((rows, cols)).astype(np.float32)
    b = rng.standard_normal((rows, cols)).astype(np.float32)
    c = np.zeros_like(a)
    return {
        "workload": (rows, cols),
        "args": (rows, cols, a, b, c),
        "numpy": lambda: a + b,
        "check": lambda want: np.array_equal(c, want),
    }


def _transpose(n: int, rng: np.random.Generator) -> dict:
    side = _square(n)
    a = rng.standard_normal((side, side * 2)).astype(np.float32)
    out = np.zeros((side * 2, side), np.float32)
    return {
        "workload": a.shape,
        "args": (*a.shape, a, out),
        "numpy": lambda: np.ascontiguousarray(a.T),
        "check": lambda want: np.array_equal(out, want),
    }


def _reduce(n: int, rng: np.random.Generator) -> dict:
    groups = n // 256
    data = rng.standard_normal(groups * 256).astype(np.float32)
    partial = np.zeros(groups, np.float32)
    return {
        "workload": (groups,),
        "args": (groups, data, partial),
        "numpy": lambda: data.reshape(groups, 256).sum(axis=1, dtype=np.float32),
        "check": lambda want: np.allclose(partial, want, rtol=1e-4, atol=1e-4),
    }


def _stencil(n: int, rng: np.random.Generator) -> dict:
    x = rng.standard_normal(n).astype(np.float32)
    out = np.zeros_like(x)

    def numpy_stencil() -> np.ndarray:
        r = x.copy()
        r[1:-1] = np.float32(0.25) * (x[:-2] + x[2:]) + np.float32(0.5) * x[1:-1]
        return r

    return {
        "workload": (n,),
        "args": (n, x, out),
        "numpy": numpy_stencil,
        "check": lambda want: np.allclose(out, want, rtol=1e-6, atol=1e-6),
    }


def _matmul(n: int, rng: np.random.Generator) -> dict:
    side = _square(n) // 2  # the output has n/4 elements, each a k-long dot product
    k = 64
    a = rng.standard_normal((side, k)).astype(np.float32)
    b = rng.standard_normal((k, side)).astype(np.float32)
    c = np.zeros((side, side), np.float32)
    return {
        "workload": (side, side, k),
        "args": (side, side, k, a, b, c),
        "numpy": lambda: a @ b,
        "check": lambda want: np.allclose(c, want, rtol=1e-4, atol=1e-4),
    }


def _collatz(n: int, rng: np.random.Generator) -> dict:
    seed = rng.integers(1, 64, n).astype(np.int32)
    steps = np.zeros(n, np.int32)

    def numpy_collatz() -> np.ndarray:
        x = seed.astype(np.int64)
        count = np.zeros(n, np.int32)
        more = x > 1
        while more.any():
            x = np.where(more, np.where(x % 2 == 0, x // 2, 3 * x + 1), x)
            count += more
            more = x > 1
        return count

    return {
        "workload": (n,),
        "args": (n, seed, steps),
        "numpy": numpy_collatz,
        "check": lambda want: np.array_equal(steps, want),
    }


def _gather(n: int, rng: np.random.Generator) -> dict:
    rows = 4096
    table = rng.standard_normal(rows).astype(np.float32)
    idx = rng.integers(0, rows, n).astype(np.int32)
    out = np.zeros(n, np.float32)
    return {
        "workload": (n, rows),
        "args": (n, rows, table, idx, out),
        "numpy": lambda: table[idx],
        "check": lambda want: np.array_equal(out, want),
    }


def _histogram(n: int, rng: np.random.Generator) -> dict:
    bins = 256
    keys = rng.integers(0, bins, n).astype(np.int32)
    hist = np.zeros(bins, np.int32)
    return {
        "workload": (n, bins),
        "args": (n, bins, keys, hist),
        "reset": lambda: hist.fill(0),
        "numpy": lambda: np.bincount(keys, minlength=bins).astype(np.int32),
        "check": lambda want: np.array_equal(hist, want),
    }


def _subgroup_sums(n: int, rng: np.random.Generator) -> dict:
    runs = n // 32
    data = rng.standard_normal(runs * 32).astype(np.float32)
    sums = np.zeros(runs, np.float32)
    return {
        "workload": (runs,),
        "args": (runs, data, sums),
        "numpy": lambda: data.reshape(runs, 32).sum(axis=1, dtype=np.float32),
        "check": lambda want: np.allclose(sums, want, rtol=1e-4, atol=1e-4),
    }


CASES = [
    Case("saxpy_madd", _saxpy),
    Case("add_2d", _add_2d),
    Case("transpose_tiled", _transpose),
    Case("reduce_tree", _reduce),
    Case("stencil_halo", _stencil),
    Case("matmul_kloop", _matmul),
    Case("divergent_while", _collatz),
    Case("gather_rows", _gather),
    Case("histogram_atomic", _histogram),
    Case("subgroup_reduce", _subgroup_sums),
]


def geomean(xs: list[float]) -> float:
    """Geometric mean."""
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def run_case(case: Case, n: int, repeat: int) -> tuple[float, float, float]:
    """(NumPy seconds, engine seconds, engine seconds with the sanitizer) for one kernel."""
    path = SUITE / f"{case.name}.loom"
    module = parse_module(path.read_text(), filename=str(path))
    job = case.make(n, np.random.default_rng(len(case.name)))
    t_np, want = common.measure(job["numpy"], repeat=repeat)
    reset = job.get("reset", lambda: None)
    times = []
    for sanitize in (False, True):

        def go(sanitize: bool = sanitize) -> None:
            reset()
            launch(module, case.name, workload=job["workload"], args=job["args"], sanitize=sanitize)

        t, _ = common.measure(go, repeat=repeat)
        if not job["check"](want):
            raise SystemExit(f"{case.name}: wrong result (sanitize={sanitize})")
        times.append(t)
    return t_np, times[0], times[1]


def main(argv: list[str] | None = None) -> None:
    """Print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="2^16 elements instead of 2^20")
    parser.add_argument("--only", action="append", help="run only this kernel (repeatable)")
    parser.add_argument("--repeat", type=int, default=3, help="best of this many runs")
    parser.add_argument("--cpu", action="store_true", help="CPU time instead of wall time")
    args = parser.parse_args(argv)
    if args.cpu:
        common.CLOCK = time.process_time
    n = 1 << (16 if args.quick else 20)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    clock = "CPU" if args.cpu else "wall"
    print(
        f"load average {load:.2f} on {os.cpu_count()} CPUs; n = {n}; best of {args.repeat} "
        f"({clock} time)"
    )
    head = (
        f"{'kernel':<16} {'numpy ms':>9} {'loom ms':>9} {'x numpy':>8} {'sanit ms':>9} {'x san':>6}"
    )
    print(head)
    ratios, overheads = [], []
    for case in CASES:
        if args.only and case.name not in args.only:
            continue
        t_np, t, t_san = run_case(case, n, args.repeat)
        ratios.append(t / t_np)
        overheads.append(t_san / t)
        print(
            f"{case.name:<16} {t_np * 1e3:>9.3f} {t * 1e3:>9.2f} {t / t_np:>8.1f} "
            f"{t_san * 1e3:>9.2f} {t_san / t:>6.2f}"
        )
    print(f"geometric mean: {geomean(ratios):.1f}x NumPy; sanitizer {geomean(overheads):.2f}x")
    print(f"worst: {max(ratios):.1f}x NumPy (goal: each <= 25x, mean <= 10x, sanitizer <= 3x)")


if __name__ == "__main__":
    main()
