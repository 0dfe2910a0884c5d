"""Bytecode throughput: write and read ops/s on a generated module, and size versus text.

Run: ``python benchmarks/bytecode_throughput.py [op_count]`` (default 100000). Every figure is
measured in the same run; ratios compare against printing the same module as text.
Targets (issues 5 and 12): read >= 400k ops/s, bytecode size <= 35% of the text.
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
from loom.format.text.parser import parse_module
from loom.format.text.printer import print_module


def best_time(fn: Callable[[], Any], repeat: int = 5) -> tuple[float, float, Any]:
    """Best wall and CPU time of ``fn``; the previous result is freed outside the timing."""
    wall = cpu = float("inf")
    result = None
    for _ in range(repeat):
        result = None  # free the last module before timing, not inside the measurement
        w0, c0 = time.perf_counter(), time.process_time()
        result = fn()
        cpu = min(cpu, time.process_time() - c0)
        wall = min(wall, time.perf_counter() - w0)
    return wall, cpu, result


def line(what: str, ops: int, wall: float, cpu: float, base: tuple[str, float] | None) -> str:
    """One figure: wall and CPU milliseconds, ops/s, and the ratio to a baseline."""
    ratio = f"  {base[1] / wall:5.2f}x {base[0]}" if base else ""
    return (
        f"{what:<14} {wall * 1e3:8.1f} ms wall {ops / wall / 1e3:6.0f}k ops/s | "
        f"{cpu * 1e3:8.1f} ms CPU {ops / cpu / 1e3:6.0f}k ops/s{ratio}"
    )


def main(argv: list[str]) -> int:
    """Measure and print the figures."""
    n = int(argv[1]) if len(argv) > 1 else 100_000
    module = make_module(n)
    ops = count_ops(module)
    p_wall, p_cpu, text = best_time(lambda: print_module(module, ops=OPS), 3)
    w_wall, w_cpu, data = best_time(lambda: write_module(module, op_decls=OPS))
    r_wall, r_cpu, back = best_time(lambda: read_module(data, op_decls=OPS))
    assert print_module(back, ops=OPS) == text, "round trip is not exact"
    back = None
    t_wall, t_cpu, _ = best_time(lambda: parse_module(text, ops=OPS), 2)
    text_bytes = len(text.encode("utf-8"))
    print(f"module: {ops} ops, {len(module.values)} values")
    print(
        f"size: text {text_bytes} bytes, bytecode {len(data)} bytes = "
        f"{len(data) / text_bytes:.1%} of the text (target <= 35%)"
    )
    print(line("print text", ops, p_wall, p_cpu, None))
    print(line("parse text", ops, t_wall, t_cpu, None))
    print(line("write bc", ops, w_wall, w_cpu, ("faster than printing", p_wall)))
    print(line("read bc", ops, r_wall, r_cpu, ("faster than parsing", t_wall)))
    print("target: read >= 400k ops/s")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
