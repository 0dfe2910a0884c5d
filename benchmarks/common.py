"""Shared benchmark inputs: generated modules of a requested size, built with the builder."""

from __future__ import annotations

import time
import tracemalloc
from collections.abc import Callable
from typing import Any

from loom.importers import (
    KernelArgumentSpec,
    KernelConfigArgumentSpec,
    KernelModuleSpec,
    create_kernel_module,
    kernel_module_ops,
)
from loom.ir import F32, I1, I32, INDEX, OFFSET, Module, view_type

OPS = kernel_module_ops("reference")


def make_module(op_count: int) -> Module:
    """A valid kernel module of roughly ``op_count`` ops: a realistic mix of index math,
    integer and float arithmetic, view loads/stores, comparisons and scf.if/scf.for blocks."""
    shell = create_kernel_module(
        KernelModuleSpec(
            target_preset="reference",
            export_symbol="bench",
            callee="bench",
            arguments=(
                KernelArgumentSpec(0, "n", INDEX),
                KernelArgumentSpec(1, "x"),
                KernelArgumentSpec(2, "y"),
            ),
            config_arguments=(KernelConfigArgumentSpec(0, "n"),),
        )
    )
    b = shell.builder
    n, x, y = (shell.body_arguments_by_ordinal[i] for i in range(3))
    with b.insertion_block(shell.body_block):
        zero = b.index.constant(value=0, results=[OFFSET], name="base")
        xv = b.buffer.view(buffer=x, byte_offset=zero, results=[view_type(F32, n)], name="xv")
        yv = b.buffer.view(buffer=y, byte_offset=zero, results=[view_type(F32, n)], name="yv")
        i = b.kernel.workitem_dispatch_id(dimension="x", results=[INDEX], name="i")
        one = b.index.constant(value=1, results=[INDEX])
        count = len(shell.body_block.ops) + 7  # ops so far in module, roughly
        while count < op_count:
            j = b.index.add(lhs=i, rhs=one, results=[INDEX])
            k = b.index.rem(lhs=j, rhs=n, results=[INDEX])
            a = b.view.load(view=xv, indices=[k], results=[F32])
            c = b.view.load(view=yv, indices=[i], results=[F32])
            s = b.scalar.mulf(lhs=a, rhs=c, results=[F32])
            t = b.scalar.addf(lhs=s, rhs=c, results=[F32], fastmath="contract")
            q = b.scalar.fptosi(input=t, results=[I32])
            m = b.scalar.constant(value=3, results=[I32])
            r = b.scalar.muli(lhs=q, rhs=m, results=[I32], overflow="nsw")
            p = b.scalar.cmpi(predicate="slt", lhs=r, rhs=m, results=[I1])
            then = b.region()
            with b.insertion_block(then.blocks[0]):
                f = b.scalar.sitofp(input=r, results=[F32])
                b.view.store(value=f, view=yv, indices=[i])
            b.scf.if_(condition=p, results=[], then_region=then)
            count += 13
        b.kernel.return_()
    return shell.module


CLOCK: Callable[[], float] = time.perf_counter
"""The clock :func:`measure` reads (wall time; a script may set ``time.process_time``)."""


def measure(fn: Callable[[], Any], repeat: int = 3) -> tuple[float, Any]:
    """Best time of ``fn`` on :data:`CLOCK` over ``repeat`` runs, and its last result."""
    best, result = float("inf"), None
    for _ in range(repeat):
        t0 = CLOCK()
        result = fn()
        best = min(best, CLOCK() - t0)
    return best, result


def peak_bytes(fn: Callable[[], Any]) -> tuple[int, Any]:
    """Peak traced allocation while running ``fn`` (and its result)."""
    tracemalloc.start()
    try:
        result = fn()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak, result


def count_ops(module: Module) -> int:
    """Number of ops in the module, nested ones included."""
    return sum(1 for _ in module.walk())
