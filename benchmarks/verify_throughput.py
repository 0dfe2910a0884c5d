"""Verifier throughput (ops/s) on the generated benchmark modules, with same-run ratios.

Baselines measured in the same run: a bare pre-order walk of the module (the floor any
verifier pays), and the printer (another whole-module pass over the same declarations).
Run: ``python benchmarks/verify_throughput.py [--sizes 1000,10000,100000] [--repeat 5]``.
Times are CPU times (``time.process_time``), best of ``--repeat`` runs, so other processes
on a shared machine disturb them less.
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(1, str(Path(__file__).resolve().parent.parent))

from common import OPS, count_ops, make_module

from loom.format.text.printer import Printer
from loom.registry import as_registry
from loom.verify import verify_module

TARGET_OPS_PER_S = 500_000


def cpu_best(fn: Callable[[], Any], repeat: int) -> float:
    """Best CPU time of ``fn`` over ``repeat`` runs (garbage collector paused)."""
    best = float("inf")
    gc.collect()
    gc.disable()
    try:
        for _ in range(repeat):
            t0 = time.process_time()
            fn()
            best = min(best, time.process_time() - t0)
    finally:
        gc.enable()
    return max(best, 1e-9)


def main(argv: list[str] | None = None) -> int:
    """Print ops/s per size and ratios against the walk and printer baselines."""
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--sizes", default="1000,10000,100000")
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args(argv)
    registry = as_registry(OPS)
    print(
        f"{'ops':>8} {'verify ops/s':>13} {'walk ops/s':>12} {'print ops/s':>12} "
        f"{'verify/walk':>12} {'verify/print':>13}"
    )
    last_rate = 0.0
    for size in (int(s) for s in args.sizes.split(",")):
        module = make_module(size)
        n = count_ops(module)
        diags = verify_module(module, ops=registry)
        if diags.has_errors:
            print(diags.render())
            return 1
        t_verify = cpu_best(lambda m=module: verify_module(m, ops=registry), args.repeat)
        t_walk = cpu_best(lambda m=module: sum(1 for _ in m.walk()), args.repeat)
        t_print = cpu_best(
            lambda m=module: Printer(registry).print_module(m), max(1, args.repeat // 2)
        )
        last_rate = n / t_verify
        print(
            f"{n:>8} {n / t_verify:>13,.0f} {n / t_walk:>12,.0f} {n / t_print:>12,.0f} "
            f"{t_walk / t_verify:>12.2f} {t_print / t_verify:>13.2f}"
        )
    verdict = "meets" if last_rate >= TARGET_OPS_PER_S else "misses"
    print(
        f"largest module: {last_rate:,.0f} ops/s, {verdict} the {TARGET_OPS_PER_S:,} ops/s goal "
        f"({last_rate / TARGET_OPS_PER_S:.2f}x)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
