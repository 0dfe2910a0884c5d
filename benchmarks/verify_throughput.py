"""Verifier throughput (ops/s) on the generated benchmark modules, with same-run ratios.

Baselines measured in the same run: a bare pre-order walk of the module (the floor any
verifier pays), the printer (another whole-module pass over the same declarations) and, when
``xdsl`` is importable (``pip install .[bench]``), xDSL verifying an equivalent module (the same
op mix in func/arith/memref/scf: loads, float and integer math, a compare and an ``scf.if``
with a store, per 13 ops).
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

TARGET_OPS_PER_S = 600_000


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


def xdsl_module(op_count: int) -> Any:
    """The benchmark module's op mix built in xDSL (None when xDSL is not installed)."""
    try:
        from xdsl.dialects import arith, func, memref, scf
        from xdsl.dialects.builtin import IndexType, MemRefType, ModuleOp, f32, i32
        from xdsl.ir import Block, Region
    except ImportError:
        return None
    idx = IndexType()
    mt = MemRefType(f32, [-1])
    body = Block(arg_types=[idx, mt, mt, idx])
    n, x, y, i = body.args
    one = arith.ConstantOp.from_int_and_width(1, idx)
    body.add_op(one)
    count = 0
    while count < op_count:
        j = arith.AddiOp(i, one.result)
        k = arith.RemSIOp(j.result, n)
        a = memref.LoadOp.get(x, [k.result])
        c = memref.LoadOp.get(y, [i])
        s = arith.MulfOp(a.res, c.res)
        t = arith.AddfOp(s.result, c.res)
        q = arith.FPToSIOp(t.result, i32)
        m = arith.ConstantOp.from_int_and_width(3, i32)
        r = arith.MuliOp(q.result, m.result)
        p = arith.CmpiOp(r.result, m.result, "slt")
        for o in (j, k, a, c, s, t, q, m, r, p):
            body.add_op(o)
        then = Block()
        f = arith.SIToFPOp(r.result, f32)
        then.add_ops([f, memref.StoreOp.get(f.result, y, [i]), scf.YieldOp()])
        body.add_op(scf.IfOp(p.result, [], Region(then)))
        count += 13
    body.add_op(func.ReturnOp())
    return ModuleOp([func.FuncOp("bench", ([idx, mt, mt, idx], []), Region(body))])


def main(argv: list[str] | None = None) -> int:
    """Print ops/s per size and ratios against the walk and printer baselines."""
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--sizes", default="1000,10000,100000")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--no-xdsl", action="store_true", help="skip the xDSL comparison")
    args = ap.parse_args(argv)
    registry = as_registry(OPS)
    print(
        f"{'ops':>8} {'verify ops/s':>13} {'walk ops/s':>12} {'print ops/s':>12} "
        f"{'xdsl ops/s':>11} {'verify/walk':>12} {'verify/print':>13} {'vs xdsl':>8}"
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
        xmod = xdsl_module(size) if not args.no_xdsl else None
        if xmod is not None:
            xn = sum(1 for _ in xmod.walk())
            xmod.verify()
            x_rate = xn / cpu_best(xmod.verify, max(1, args.repeat // 2))
            x_cols = f"{x_rate:>11,.0f}", f"{last_rate / x_rate:>7.1f}x"
        else:
            x_cols = f"{'-':>11}", f"{'-':>8}"
        print(
            f"{n:>8} {n / t_verify:>13,.0f} {n / t_walk:>12,.0f} {n / t_print:>12,.0f} "
            f"{x_cols[0]} {t_walk / t_verify:>12.2f} {t_print / t_verify:>13.2f} {x_cols[1]}"
        )
    verdict = "meets" if last_rate >= TARGET_OPS_PER_S else "misses"
    print(
        f"largest module: {last_rate:,.0f} ops/s, {verdict} the {TARGET_OPS_PER_S:,} ops/s goal "
        f"({last_rate / TARGET_OPS_PER_S:.2f}x)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
