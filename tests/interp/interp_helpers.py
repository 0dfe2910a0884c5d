"""Helpers for the interpreter tests: load corpus kernels, build one-op kernels."""

from __future__ import annotations

from pathlib import Path

from loom.format.text.parser import parse_module
from loom.importers import (
    KernelArgumentSpec,
    KernelLaunchConfigSpec,
    KernelModuleSpec,
    create_kernel_module,
)
from loom.ir import INDEX, OFFSET, Module, view_type

KERNELS = Path(__file__).parent / "kernels"


def load(name: str) -> Module:
    """Parse ``tests/interp/kernels/<name>.loom``."""
    path = KERNELS / f"{name}.loom"
    return parse_module(path.read_text(), filename=str(path))


def elementwise_module(
    op_name: str, in_types: list, out_type, n: int, attrs: dict | None = None
) -> Module:
    """A kernel ``out[i] = op(in0[i], in1[i], ...)`` over ``n`` lanes in one workgroup."""
    args = [KernelArgumentSpec(k, f"in{k}") for k in range(len(in_types))]
    args.append(KernelArgumentSpec(len(in_types), "out"))
    shell = create_kernel_module(
        KernelModuleSpec(
            target_preset="reference",
            export_symbol="k",
            callee="k",
            arguments=tuple(args),
            launch_config=KernelLaunchConfigSpec(workgroup_size=(n, 1, 1)),
        )
    )
    b = shell.builder
    bufs = [shell.body_arguments_by_ordinal[k] for k in range(len(args))]
    with b.insertion_block(shell.body_block):
        zero = b.index.constant(value=0, results=[OFFSET])
        i = b.kernel.workitem_dispatch_id(dimension="x", results=[INDEX])
        ins = []
        for buf, t in zip(bufs, in_types):
            v = b.buffer.view(buffer=buf, byte_offset=zero, results=[view_type(t, n)])
            ins.append(b.view.load(view=v, indices=[i], results=[t]))
        ov = b.buffer.view(buffer=bufs[-1], byte_offset=zero, results=[view_type(out_type, n)])
        decl = b.registry.lookup(op_name)
        kw = {o.name: v for o, v in zip(decl.operands, ins)}
        r = b.build(op_name, **kw, results=[out_type], **(attrs or {}))
        b.view.store(value=r, view=ov, indices=[i])
        b.kernel.return_()
    return shell.module
