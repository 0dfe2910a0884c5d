"""Semantics of the kernel dialect: coordinates, barriers, exit, assert, subgroup queries,
collectives (tables in ``_combine``, run by ``loom.interp.collectives``) and async transfers.

``kernel.def`` itself is driven by the engines (config region on the host, then the body for
every workitem); its entry here only documents that.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from loom.errors import LoomRuntimeError
from loom.interp import transfers
from loom.interp.collectives import SUBGROUP, WORKGROUP
from loom.interp.memory import View
from loom.interp.semantics import Control, affine, done, run, semantics
from loom.interp.semantics import _combine as C
from loom.interp.semantics._util import any_true, not_executable
from loom.ir import ScalarType


@semantics("kernel.def")
def _kernel_def(ctx: Any, step: Any, *args: Any) -> Any:
    raise LoomRuntimeError(
        "a kernel definition is launched with loom.interp.launch, not run as a nested op"
    )


@semantics("kernel.launch.config", "kernel.return")
def _pass_on(ctx: Any, step: Any, *values: Any) -> tuple:
    return values


def _coordinate(kind: str) -> Any:
    def sem(ctx: Any, step: Any) -> Any:
        return ctx.coord(kind, step.attrs["dimension"], step)

    def aff(ctx: Any, step: Any, args: tuple, affs: tuple) -> Any:
        return ctx.coord_affine(kind, step.attrs["dimension"])

    return sem, aff


for _kind, _name in (
    ("workitem", "kernel.workitem.id"),
    ("workgroup", "kernel.workgroup.id"),
    ("size", "kernel.workgroup.size"),
    ("count", "kernel.workgroup.count"),
    ("dispatch", "kernel.workitem.dispatch.id"),
):
    _sem, _aff = _coordinate(_kind)
    semantics(_name)(_sem)
    affine(_name)(_aff)


@semantics("kernel.barrier")
def _barrier(ctx: Any, step: Any) -> None:
    ctx.barrier(step)


def _exit_enter(ctx: Any, step: Any, args: tuple) -> tuple:
    leaving = ctx.active(args[0])
    if step.regions and any_true(leaving):
        return leaving, run(0, (), leaving)
    ctx.retire(step, leaving)
    return None, done()


def _exit_resume(ctx: Any, step: Any, leaving: Any, yielded: Any) -> tuple:
    ctx.retire(step, leaving)
    return None, done()


semantics("kernel.exit")(Control(_exit_enter, _exit_resume))


@semantics("kernel.assert")
def _assert(ctx: Any, step: Any, ok: Any) -> None:
    message = step.attrs.get("message")
    text = f"assertion failed: {message}" if message else "assertion failed"
    ctx.check(
        step,
        ~np.asarray(ok, dtype=bool) if np.ndim(ok) else not ok,
        "RUNTIME/008",
        text.replace("{", "{{").replace("}", "}}"),
    )


# ------------------------------------------------------------------ subgroups and clusters


def _subgroup_query(kind: str) -> Any:
    def sem(ctx: Any, step: Any) -> Any:
        sg = ctx.subgroup_width()
        if kind == "size":
            return np.int64(sg)
        if kind == "count":
            return np.int64(-(-ctx.workgroup_items() // sg))

        def make() -> Any:
            flat = ctx.flat_local()
            return flat // sg if kind == "id" else flat % sg

        return ctx.per_shape(("subgroup", kind, sg), make)

    return sem


for _kind, _name in (
    ("id", "kernel.subgroup.id"),
    ("count", "kernel.subgroup.count"),
    ("size", "kernel.subgroup.size"),
    ("lane", "kernel.subgroup.lane.id"),
):
    semantics(_name)(_subgroup_query(_kind))


def _cluster(kind: str) -> Any:
    """Cluster queries: the reference target runs every launch unclustered (clusters of one
    workgroup), so clusters are workgroups."""

    def sem(ctx: Any, step: Any) -> Any:
        if kind == "id":
            return ctx.coord("workgroup", step.attrs["dimension"], step)
        if kind == "count":
            return ctx.coord("count", step.attrs["dimension"], step)
        if kind == "size":
            return np.int64(1)
        return np.int64(0)

    return sem


for _kind, _name in (
    ("id", "kernel.cluster.id"),
    ("workgroup", "kernel.cluster.workgroup.id"),
    ("flat", "kernel.cluster.workgroup.flat_id"),
    ("size", "kernel.cluster.size"),
    ("count", "kernel.cluster.count"),
):
    semantics(_name)(_cluster(_kind))


def _collective(name: str, scope: str, table: Any) -> None:
    def sem(ctx: Any, step: Any, *values: Any) -> Any:
        _scalars_only(ctx, step)
        return ctx.collective(step, scope, table, values)

    semantics(name)(sem)


def _scalars_only(ctx: Any, step: Any) -> None:
    for v in (*step.op.operands, *step.op.results):
        if not isinstance(v.type, ScalarType):
            raise ctx.error(
                step,
                "RUNTIME/013",
                f"'{step.op.name}' on {v.type} is not executable on the reference target: the "
                "interpreter holds scalar lane values only (vectors are not modelled)",
                None,
            )


for _name, _scope, _table in (
    ("kernel.subgroup.shuffle", SUBGROUP, C.shuffle_table),
    ("kernel.subgroup.broadcast", SUBGROUP, C.broadcast_table),
    ("kernel.subgroup.broadcast.first", SUBGROUP, C.first_table),
    ("kernel.subgroup.reduce", SUBGROUP, C.reduce_table),
    ("kernel.subgroup.scan", SUBGROUP, C.scan_table),
    ("kernel.subgroup.vote.any", SUBGROUP, C.vote_table("any")),
    ("kernel.subgroup.vote.all", SUBGROUP, C.vote_table("all")),
    ("kernel.subgroup.vote.ballot", SUBGROUP, C.ballot_table),
    ("kernel.subgroup.active.mask", SUBGROUP, C.active_mask_table),
    ("kernel.subgroup.match.any", SUBGROUP, C.match_any_table),
    ("kernel.subgroup.match.all", SUBGROUP, C.match_all_table),
    ("kernel.workgroup.reduce", WORKGROUP, C.reduce_table),
    ("kernel.workgroup.scan", WORKGROUP, C.scan_table),
    ("kernel.workgroup.vote.any", WORKGROUP, C.vote_table("any")),
    ("kernel.workgroup.vote.all", WORKGROUP, C.vote_table("all")),
    ("kernel.workgroup.vote.count", WORKGROUP, C.vote_table("count")),
):
    _collective(_name, _scope, _table)


@semantics("kernel.workgroup.storage")
def _storage(ctx: Any, step: Any, nbytes: Any) -> Any:
    return ctx.alloca(step, nbytes, "workgroup")


# ------------------------------------------------------------------ not on the reference target


semantics(
    "kernel.tensor.lds.descriptor",
    "kernel.async.tensor.load.to.lds",
    "kernel.async.tensor.store.from.lds",
)(not_executable("AMDGPU tensor descriptors are opaque target bits"))
semantics("kernel.async.cluster.gather", "kernel.async.cluster.gather.mask")(
    not_executable("it runs every launch unclustered, so there is no cluster to gather into")
)
semantics("kernel.decl", "kernel.entry.decl")(
    not_executable("a declaration has no body; launch a module that defines the kernel")
)
semantics("kernel.launch", "kernel.dispatch", "kernel.launch.yield")(
    not_executable("host launch programs are run by loom.interp.launch, one kernel at a time")
)


def _host_enter(ctx: Any, step: Any, args: tuple) -> tuple:
    not_executable("host launch programs are run by loom.interp.launch, one kernel at a time")(
        ctx, step
    )
    return None, done()


semantics("kernel.launch.serial", "kernel.launch.concurrent")(
    Control(_host_enter, lambda ctx, step, state, yielded: (None, done()))
)


# ------------------------------------------------------------------ asynchronous transfers


def _masked(ctx: Any, pred: Any) -> Any:
    """The run mask narrowed to the lanes whose predicate holds (False: no lane)."""
    m = ctx.active(np.asarray(pred, dtype=bool) if np.ndim(pred) else bool(pred))
    if np.ndim(m) == 0:
        return ctx.mask if bool(m) else False
    return m if m.any() else False


def _start(ctx: Any, step: Any, src: Any, dst: Any, pred: Any = True, gather: bool = False) -> Any:
    mask = _masked(ctx, pred)
    if mask is False:
        return transfers.Transfer(dst.buf, (), np.dtype(np.uint8), None)
    saved = ctx.mask
    ctx.mask = mask
    try:
        if not gather:
            return transfers.start(ctx, step, src, dst)
        # lane L of the subgroup fills slot L of the tile's leading axis
        lane = ctx.flat_local() % ctx.subgroup_width()
        slot = View(dst.buf, dst.base, dst.dims[1:], dst.strides[1:], dst.etype)
        _bad_slot(ctx, step, lane, dst)
        extra = lane * dst.strides[0] * dst.size
        return transfers.start(ctx, step, src, slot, extra, _footprint(src))
    finally:
        ctx.mask = saved


def _footprint(view: Any) -> int:
    n = view.size
    for d in view.dims:
        n *= int(d)
    return n


def _bad_slot(ctx: Any, step: Any, lane: Any, dst: Any) -> None:
    ctx.check(
        step,
        np.asarray(lane) >= dst.dims[0],
        "RUNTIME/001",
        "lane {} has no slot in a gather tile of {} lanes",
        lane,
        dst.dims[0],
    )


@semantics("kernel.async.copy")
def _copy(ctx: Any, step: Any, src: Any, dst: Any) -> Any:
    return _start(ctx, step, src, dst)


@semantics("kernel.async.copy.mask")
def _copy_mask(ctx: Any, step: Any, src: Any, dst: Any, pred: Any) -> Any:
    return _start(ctx, step, src, dst, pred)


@semantics("kernel.async.gather")
def _gather(ctx: Any, step: Any, src: Any, dst: Any) -> Any:
    return _start(ctx, step, src, dst, gather=True)


@semantics("kernel.async.gather.mask")
def _gather_mask(ctx: Any, step: Any, src: Any, dst: Any, pred: Any) -> Any:
    return _start(ctx, step, src, dst, pred, gather=True)


@semantics("kernel.async.group")
def _group(ctx: Any, step: Any, *tokens: Any) -> Any:
    return transfers.commit(ctx, tokens)


@semantics("kernel.async.wait")
def _wait(ctx: Any, step: Any, group: Any) -> None:
    transfers.wait(ctx, step, group)
