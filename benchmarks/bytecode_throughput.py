"""Bytecode throughput: write and read ops/s on a generated module, and size versus text.

Run: ``python benchmarks/bytecode_throughput.py [op_count]`` (default 100000). Every figure is
measured in the same run; ratios compare against printing the same module as text.
Targets (issue 5): read >= 300k ops/s, bytecode size <= 35% of the text.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import time
from collections.abc import Callable
from typing import Any

from common import OPS, count_ops, make_module

from loom.format.bytecode import read_module, write_module
from loom.format.text.printer import print_module


def best_time(fn: Callable[[], Any], repeat: int = 5) -> tuple[float, Any]:
    """Best wall time of ``fn``; the previous result is freed outside the timed window."""
    best, result = float("inf"), None
    for _ in range(repeat):
        result = None  # free the last module before timing, not inside the measurement
        t0 = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - t0)
    return best, result


def main(argv: list[str]) -> int:
    """Measure and print the figures."""
    n = int(argv[1]) if len(argv) > 1 else 100_000
    module = make_module(n)
    ops = count_ops(module)
    t_print, text = best_time(lambda: print_module(module, ops=OPS))
    t_write, data = best_time(lambda: write_module(module, op_decls=OPS))
    t_read, back = best_time(lambda: read_module(data, op_decls=OPS))
    assert print_module(back, ops=OPS) == text, "round trip is not exact"
    text_bytes = len(text.encode("utf-8"))
    print(f"module: {ops} ops, {len(module.values)} values")
    print(
        f"text:  {text_bytes:>10} bytes  print {t_print * 1e3:8.1f} ms "
        f"({ops / t_print / 1e3:7.0f}k ops/s)"
    )
    print(
        f"bytes: {len(data):>10} bytes  = {len(data) / text_bytes:6.1%} of the text (target <= 35%)"
    )
    print(
        f"write: {t_write * 1e3:8.1f} ms  {ops / t_write / 1e3:7.0f}k ops/s  "
        f"({t_print / t_write:4.2f}x the printer's speed)"
    )
    print(
        f"read:  {t_read * 1e3:8.1f} ms  {ops / t_read / 1e3:7.0f}k ops/s  "
        f"({t_print / t_read:4.2f}x the printer's speed; target >= 300k ops/s)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
