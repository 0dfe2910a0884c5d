"""The stepper: one workitem at a time, one op per step, with exact undo back to the start.

Workitems of a workgroup run in flat order (x fastest); a workitem runs until it reaches a
barrier, exits or finishes, then the next one in flat order runs (round-robin at barriers).
When every live workitem waits at the barrier they are all released. Workgroups run in order.
Each step records undo information (environment slots, memory bytes, sanitizer state, findings,
frame stacks and scheduler state), so :meth:`Stepper.step_back` is exact; the history keeps the
last :data:`HISTORY_LIMIT` steps (about 600 bytes each; older steps cannot be undone).

The stepper checks what the grid engine checks, through the same sanitizer
(:mod:`loom.interp.sanitizer`: shadow state per byte, the same conflict rules and codes): data
races, uninitialised reads and divergent barriers, reported in :attr:`Stepper.findings`.

UI-facing queries: :attr:`Stepper.current` (workitem, op, location), :meth:`Stepper.values`,
:meth:`Stepper.memory` (typed views with masks of bytes touched by the last step and of
uninitialised bytes), :meth:`Stepper.workitem_states`, :attr:`Stepper.grid`,
:attr:`Stepper.workgroup_size`, :attr:`Stepper.history_length`.
"""

from __future__ import annotations

import weakref
from collections import deque
from dataclasses import dataclass
from operator import is_, itemgetter
from typing import Any

import numpy as np

from loom.diagnostics import Diagnostic, DiagnosticSeverity, SourceRange, op_source_range
from loom.errors import LoomRuntimeError, LoomUsageError
from loom.interp import collectives, transfers
from loom.interp import sanitizer as san
from loom.interp.cfg_exec import step_branch
from loom.interp.compile import MAX_DEPTH
from loom.interp.engine import (
    MAX_SCRATCH_BYTES,
    BaseContext,
    KernelPlan,
    _plan,
    depth_message,
    item_coords,
    scratch_bytes,
)
from loom.interp.launch_args import bind_args, bind_functions
from loom.interp.memory import Buf
from loom.interp.numerics import to_python
from loom.interp.report import format_lane, runtime_error
from loom.interp.semantics._records import ModuleRecords
from loom.interp.stepper_access import Access
from loom.interp.stepper_undo import chunk, flat_env_log, misc_entries, seal_misc
from loom.ir import FuncRefType, Module, Operation, ScalarType

RUNNING, AT_BARRIER, EXITED, DONE = "running", "at barrier", "exited", "done"
AT_COLLECTIVE = "at collective"
"""Workitem states (a workitem at a barrier or collective waits for the others of its scope)."""
DEFAULT_MAX_STEPS = 100_000
"""Steps one workitem may take when ``max_steps`` is None (an infinite loop ends with
RUNTIME/009 within seconds at the stepper's speed; pass a larger ``max_steps`` if needed)."""
HISTORY_LIMIT = 250_000
"""Steps :meth:`Stepper.step_back` can undo by default (the most recent ones; a step's record is
about 600 bytes, so the history stays under about 150 MB). Pass ``history_limit`` for more."""
MAX_WORKGROUP_ITEMS = 1 << 16
"""Most workitems in one workgroup the stepper runs (it keeps a record per workitem)."""
_DIMS = {"x": 0, "y": 1, "z": 2}
_BOOLS = (bool, np.bool_)


def _quiet_state() -> tuple | None:
    """(context variable, state) of NumPy's floating-point error handling with every warning
    off, set directly around a step (``np.errstate`` costs a third of a simple step); None
    when this NumPy keeps it elsewhere (then ``np.errstate`` is used)."""
    try:
        from numpy._core._ufunc_config import _extobj_contextvar, _make_extobj

        return _extobj_contextvar, _make_extobj(all="ignore")
    except (ImportError, TypeError):
        return None


_QUIET = _quiet_state()


@dataclass(frozen=True)
class Position:
    """Where the stepper is: the workitem about to run, its next op and that op's location."""

    workgroup: tuple[int, int, int]
    workitem: tuple[int, int, int]
    op: Operation | None
    location: SourceRange | None

    @property
    def line(self) -> int | None:
        """The source line of the next op (None when unknown)."""
        return self.location.line if self.location else None


@dataclass(frozen=True)
class MemoryView:
    """A buffer as seen by the stepper: bytes, typed view, and per-byte masks."""

    name: str
    bytes: np.ndarray
    touched: np.ndarray
    """Bytes read or written by the last step."""
    uninitialised: np.ndarray
    """Bytes never written (workgroup scratch starts uninitialised)."""

    def array(self, dtype: Any) -> np.ndarray:
        """The bytes viewed as ``dtype`` (trailing bytes that do not fill an element dropped)."""
        dt = np.dtype(dtype)
        n = self.bytes.size - self.bytes.size % dt.itemsize
        return self.bytes[:n].view(dt)


class _Item:
    __slots__ = ("wg", "local", "item", "state", "stack", "steps", "allocs")

    def __init__(self, wg: tuple, local: tuple, item: int) -> None:
        self.wg, self.local, self.item = wg, local, item
        self.state = RUNNING
        self.stack: tuple = ()
        self.steps = 0
        self.allocs: dict[int, int] = {}


class _ItemContext(BaseContext):
    """Semantics context for one workitem (all values are scalars)."""

    affs: tuple = ()

    def __init__(self, stepper: Stepper) -> None:
        super().__init__(stepper.plan)
        # a proxy: no reference cycle, so a stepper and its history are freed when dropped
        # (not at a later full garbage collection)
        self.s = weakref.proxy(stepper)

    def coord(self, kind: str, dim: str, step: Any = None) -> Any:
        d = _DIMS[dim]
        s = self.s
        if kind == "size":
            return s._sizes[d]
        if kind == "count":
            return s._counts[d]
        it = s._items[s._cur]
        if kind == "workitem":
            return np.int64(it.local[d])
        if kind == "workgroup":
            return np.int64(it.wg[d])
        return np.int64(it.wg[d] * s.workgroup_size[d] + it.local[d])

    def coord_affine(self, kind: str, dim: str) -> Any:
        return None

    def value_of(self, v: Any) -> Any:
        frame = self.s._item.stack[-1]
        return frame[2][frame[0].func.slots[v.id]]

    def check(self, step: Any, bad: Any, code: str, fmt: str, *values: Any) -> None:
        if bad if isinstance(bad, bool | np.bool_) else bool(np.any(bad)):
            raise self.error(step, code, format_lane(fmt, values, None), None)

    def error(self, step: Any, code: str, message: str, lane: int | None) -> LoomRuntimeError:
        it = self.s._item
        return runtime_error(step, code, message, (it.wg, it.local))

    def active_lanes(self) -> list[int]:
        return [0]

    def barrier(self, step: Any) -> None:
        self.s._arrive(step, collectives.WORKGROUP, None, ())
        self.s._pending_state = AT_BARRIER

    def collective(self, step: Any, scope: str, fn: Any, values: tuple) -> Any:
        # the results are handed out when the scope's live workitems have all arrived
        self.s._arrive(step, scope, fn, values)
        self.s._pending_state = AT_COLLECTIVE
        return None if len(step.outs) == 1 else (None,) * len(step.outs)

    def subgroup_width(self) -> int:
        return self.s._subgroup

    def workgroup_items(self) -> int:
        return self.s._wg

    def flat_local(self) -> Any:
        return np.int64(self.s._cur)

    def async_queue(self) -> Any:
        return self.s._queues.setdefault(self.s._item.item, transfers.AsyncQueue())

    def async_replace(self, queue: Any, state: tuple) -> None:
        self.s._log((queue, queue.state))
        queue.state = state

    def in_flight(self, step: Any, buf: Buf, addrs: list, size: int) -> None:
        sh = buf.shadow
        if sh is None:
            return
        for a in addrs:
            p = int(a)
            if p >= 0 and p + size <= buf.length:
                self.s._log(sh.save("w", p, p + size))
                transfers.mark_in_flight(sh, np.arange(p, p + size))
                self.s._findings.in_flight.setdefault(buf.uid, set()).update(range(p, p + size))

    def retire(self, step: Any, leaving: Any) -> None:
        if bool(leaving):
            self.s._pending_state = EXITED

    def alloca(self, step: Any, nbytes: Any, space: str) -> Buf:
        return self.s._alloca(step, nbytes, space)

    def load(self, step: Any, buf: Buf, addr: Any, dtype: np.dtype, contig: Any) -> Any:
        p = self._range(step, buf, int(addr), dtype.itemsize)
        return self.s._read(step, buf, p, dtype.itemsize).load(p, dtype)

    def store(
        self, step: Any, buf: Buf, addr: Any, value: Any, dtype: np.dtype, contig: Any
    ) -> None:
        p = self._range(step, buf, int(addr), dtype.itemsize)
        raw = value if type(value) is dtype.type else np.asarray(value, dtype=dtype)
        self.s._write(step, buf, p, raw.tobytes())

    def observe(
        self, step: Any, buf: Buf, addr: Any, dtype: np.dtype, write: bool, atomic: bool = False
    ) -> None:
        p = self._range(step, buf, int(addr), dtype.itemsize)
        if write:
            self.s._observe_write(step, buf, p, dtype.itemsize, atomic)
        else:
            self.s._read(step, buf, p, dtype.itemsize, atomic)

    def atomic(
        self, step: Any, buf: Buf, addr: Any, dtype: np.dtype, update: Any, fold: Any = None
    ) -> Any:
        # one workitem at a time: every read-modify-write is indivisible
        if fold is not None:
            ufunc, value = fold

            def update(old: Any, lanes: Any) -> Any:
                return ufunc(old, np.asarray(value, dtype))

        p = self._range(step, buf, int(addr), dtype.itemsize)
        self.s._read(step, buf, p, dtype.itemsize, atomic=True)
        old = buf.data[p : p + dtype.itemsize].view(dtype).copy()
        new = np.asarray(update(old, np.zeros(1, dtype=np.int64)), dtype=dtype).reshape(1)
        self.s._write(step, buf, p, new.view(np.uint8), atomic=True)
        return old[0]

    def load_bytes(self, step: Any, buf: Buf, lane: int, start: int, count: int) -> np.ndarray:
        p = self._range(step, buf, start, count)
        self.s._read(step, buf, p, count)
        return buf.data[p : p + count].copy()

    def store_bytes(self, step: Any, buf: Buf, lane: int, start: int, data: np.ndarray) -> None:
        p = self._range(step, buf, start, data.size)
        self.s._write(step, buf, p, data)

    def _range(self, step: Any, buf: Buf, start: int, count: int) -> int:
        if start < 0 or start > buf.length - count:
            raise self.error(
                step,
                "RUNTIME/001",
                f"accesses bytes {start}..{start + count - 1}"
                f" outside buffer {buf.name} of {buf.length} bytes",
                None,
            )
        return start


class Stepper:
    """Run a kernel one workitem and one op at a time (arguments as for ``launch``).

    ``max_steps`` bounds the steps of one workitem (default :data:`DEFAULT_MAX_STEPS`);
    ``history_limit`` the steps :meth:`step_back` can undo (default :data:`HISTORY_LIMIT`);
    ``functions`` binds Python functions to ``func.decl`` declarations as for ``launch``.
    """

    def __init__(
        self,
        module: Module,
        kernel: str,
        *,
        workload: tuple | list = (),
        args: tuple | list = (),
        max_steps: int | None = None,
        history_limit: int = HISTORY_LIMIT,
        functions: dict | None = None,
        globals: dict | None = None,
        config: dict | None = None,
    ) -> None:
        if history_limit < 0:
            raise LoomUsageError(f"history_limit must not be negative (got {history_limit})")
        self.plan: KernelPlan = _plan(module, kernel)
        bound = bind_functions(self.plan.program, functions)
        self.module = module
        counts, sizes = self.plan.grid(tuple(workload), MAX_WORKGROUP_ITEMS)
        self.grid: tuple[int, int, int] = counts
        self.workgroup_size: tuple[int, int, int] = sizes
        self._sizes = tuple(np.int64(v) for v in sizes)
        self._counts = tuple(np.int64(v) for v in counts)
        self.values_in, self._bufs = bind_args(
            self.plan.params, tuple(args), self.plan.name, self.plan.program
        )
        self.records = ModuleRecords(module, globals, config)
        """Globals and configs (``globals=`` / ``config=`` as for :func:`launch`)."""
        self._bufs = self._bufs + self.records.bufs
        self.max_steps = DEFAULT_MAX_STEPS if max_steps is None else max_steps
        self._ngroups = counts[0] * counts[1] * counts[2]
        self._wg = sizes[0] * sizes[1] * sizes[2]
        self._findings = san.Findings(
            self.plan.program, lambda item: item_coords(item, counts, sizes)
        )
        self._findings.journal = self._journal = []
        self._workitems = self._ngroups * self._wg
        for b in self._bufs:
            b.shadow = self._shadow(b.data.size, self.records.initialised(b))
        self._epoch = 0
        """Barrier epoch of the current workgroup (barriers released so far)."""
        self._scratch: list[Buf] = []
        self._scratch_bytes = 0
        self._shared: dict[tuple, Buf] = {}
        self._history: deque[list] = deque(maxlen=history_limit)
        self._taken = 0
        self._rec: list | None = None
        self._touched: list[tuple] = []
        self._pending_state: str | None = None
        self._quiet = False
        self.ctx = _ItemContext(self)
        self.ctx.functions = bound
        self.ctx.records = self.records
        self._memo: dict[int, tuple] = {}
        self._statics: list = []
        self._static_keys: dict[int, int] = {}
        """Regions named by number in undo records (see :meth:`_seal_stack`)."""
        self._acc: dict[int, Access] = {}
        """Fast access paths by buffer uid (undo records name buffers by uid)."""
        self._getters: list = []
        """Per step (by index): the operands' getter from the environment (None: at most one)."""
        self._add_getters()
        self._arrivals: dict[int, tuple] = {}
        """Flat index of a waiting workitem -> (step, scope, table function, operands, env)."""
        self._queues: dict[int, Any] = {}
        self._subgroup = self.plan.subgroup_size()
        self._group = -1
        self._items: list[_Item] = []
        self._cur = 0
        self._done = False
        self._enter_group(0)

    # ------------------------------------------------------------------ public queries

    @property
    def done(self) -> bool:
        """True when every workitem of every workgroup has finished."""
        return self._done

    @property
    def findings(self) -> list[Diagnostic]:
        """Sanitizer findings so far (races, uninitialised reads, divergent barriers), with
        the same codes as the grid engine's."""
        return self._findings.diagnostics()

    def _shadow(self, nbytes: int, initialised: bool) -> san.Shadow:
        return san.Shadow(nbytes, initialised, self._workitems, len(self.plan.program.steps), 1)

    @property
    def history_length(self) -> int:
        """Number of steps that :meth:`step_back` can undo (at most the history limit)."""
        return len(self._history)

    @property
    def steps_taken(self) -> int:
        """Steps from the start to here (steps undone by :meth:`step_back` not counted)."""
        return self._taken

    @property
    def _item(self) -> _Item:
        return self._items[self._cur]

    @property
    def current(self) -> Position | None:
        """The workitem about to run and its next op (None when done)."""
        if self._done:
            return None
        it = self._item
        op = self._next_step(it).op if it.stack else None
        loc = op_source_range(self.module, op) if op is not None else None
        return Position(it.wg, it.local, op, loc)

    def workitem_states(self) -> dict[tuple[int, int, int], str]:
        """State of every workitem of the current workgroup, by local id."""
        return {it.local: it.state for it in self._items}

    def workitem_ops(self) -> dict[tuple[int, int, int], Operation | None]:
        """The next op of every workitem of the current workgroup (None: it has none)."""
        return {it.local: (self._next_step(it).op if it.stack else None) for it in self._items}

    @property
    def workgroup(self) -> tuple[int, int, int] | None:
        """The workgroup being run."""
        return self._items[0].wg if self._items and not self._done else None

    def values(self) -> dict[str, Any]:
        """Values defined so far in the current workitem's innermost function, by SSA name."""
        if self._done or not self._item.stack:
            return {}
        region, _, env, _ = self._item.stack[-1]
        out: dict[str, Any] = {}
        for vid, slot in region.func.slots.items():
            v = env[slot]
            if v is None:
                continue
            value = self.module.values[vid]
            t = value.type
            if isinstance(t, FuncRefType):  # a function reference shows what it names
                f = self.plan.program.referenced(int(v))
                v = "null" if f is None else f"@{f.name}"
            out[f"%{value.display_name}"] = to_python(t, v) if isinstance(t, ScalarType) else v
        return out

    def buffers(self) -> list[str]:
        """Names of the launch buffers and of the scratch buffers allocated so far."""
        return [b.name for b in self._bufs] + [b.name for b in self._scratch]

    def memory(self, name: str) -> MemoryView:
        """A buffer by name (launch argument name, or scratch name as listed by buffers())."""
        for b in [*self._bufs, *self._scratch]:
            if b.name == name:
                touched = np.zeros(b.data.size, dtype=bool)
                for buf, p, n in self._touched:
                    if buf is b:
                        touched[p : p + n] = True
                init = b.shadow.init
                uninit = np.zeros(b.data.size, dtype=bool) if init is None else ~init
                return MemoryView(b.name, b.data, touched, uninit)
        raise KeyError(f"no buffer named {name!r}; buffers: {', '.join(self.buffers())}")

    # ------------------------------------------------------------------ driving

    def step(self) -> bool:
        """Run one op of the current workitem; False when there is nothing left to run."""
        if self._done:
            return False
        cur = self._cur
        it = self._items[cur]
        # [workitem, group, stack, state, steps, env log, misc log, alloc log, new buffer,
        #  findings journal length, scheduler records...]
        rec: list = [
            cur,
            self._group,
            it.stack,
            it.state,
            it.steps,
            [],
            None,
            None,
            None,
            len(self._journal),
        ]
        self._rec = rec
        self._touched = []
        self._pending_state = None
        try:
            if self._quiet:
                self._execute(it)
            elif _QUIET is not None:
                token = _QUIET[0].set(_QUIET[1])
                try:
                    self._execute(it)
                finally:
                    _QUIET[0].reset(token)
            else:
                with np.errstate(all="ignore"):
                    self._execute(it)
            if self._pending_state is not None and it.state == RUNNING:
                self._log((it, it.state))
                it.state = self._pending_state
            if it.state != RUNNING:
                self._schedule(rec)
        except LoomRuntimeError:
            self._undo(self._seal(rec, it))
            raise
        finally:
            self._rec = None
        self._history.append(self._seal(rec, it))
        self._taken += 1
        return True

    def _seal(self, rec: list, it: _Item) -> tuple:
        """The history form of a step's record: for most steps a tuple of ints, bytes, NumPy
        scalars and flat tuples of them, which the garbage collector stops tracking (see
        :mod:`loom.interp.stepper_undo`), so a long history costs no collection time."""
        if type(rec[2]) is not int:
            rec[2] = self._seal_stack(rec[2], it.stack)
        log = rec[5]
        if not log:
            rec[5] = ()
        elif len(log) == 1 and len(log[0]) == 2:
            rec[5] = log[0]
        else:
            rec[5] = flat_env_log(log)
        misc = rec[6]
        if misc is not None:
            rec[6] = misc[0] if len(misc) == 1 else seal_misc(misc)
        return tuple(rec)

    def _static_key(self, obj: Any) -> int:
        """A number standing for a region of the program (kept for the stepper's lifetime)."""
        key = self._static_keys.get(id(obj))
        if key is None:
            key = self._static_keys[id(obj)] = len(self._statics)
            self._statics.append(obj)
        return key

    def _seal_stack(self, old: tuple, new: tuple) -> tuple:
        """The undo form of a control step's stack ``old`` (``new``: the stack after it):
        ``(keep, *frames)`` with the first ``keep`` frames those of ``new`` and the others
        flattened as ``region, pc, env, owner step, owner state`` without references the
        garbage collector must follow where possible (a region by number, an owner step by
        index or -1, an environment as -1 when it is that of ``new``'s frame at the same
        depth, -2 when that of the frame below)."""
        keep = 0
        n = min(len(old), len(new))
        while keep < n and old[keep] is new[keep]:
            keep += 1
        out: list = [keep]
        below = old[keep - 1][2] if keep else None
        for d in range(keep, len(old)):
            region, pc, env, owner = old[d]
            if d < len(new) and env is new[d][2]:
                e: Any = -1
            elif env is below:
                e = -2
            else:
                e = env
            below = env
            if owner is None:
                out += (self._static_key(region), pc, e, -1, None)
            else:
                out += (self._static_key(region), pc, e, owner[0].index, owner[1])
        return tuple(out)

    def _unseal_stack(self, sealed: tuple, new: tuple) -> tuple:
        """The stack :meth:`_seal_stack` encoded, given the stack after the step."""
        keep = sealed[0]
        frames = list(new[:keep])
        steps = self.plan.program.steps
        statics = self._statics
        for j in range(1, len(sealed), 5):
            r, pc, e, o, state = sealed[j : j + 5]
            d = len(frames)
            env = e if type(e) is not int else new[d][2] if e == -1 else frames[d - 1][2]
            frames.append((statics[r], pc, env, None if o < 0 else (steps[o], state)))
        return tuple(frames)

    def step_back(self) -> bool:
        """Undo the last step exactly; False at the very start (or when the steps before
        are older than the history keeps)."""
        if not self._history:
            return False
        self._undo(self._history.pop())
        self._taken -= 1
        self._touched = []
        return True

    def run_workitem(self) -> int:
        """Run the current workitem until it waits at a barrier, exits or finishes."""
        return self._run_while(lambda start: self._same_item(start))

    def run_to_barrier(self) -> int:
        """Run until the current workitem reaches a barrier (or stops running)."""
        return self.run_workitem()

    def run_to(self, line: int) -> int:
        """Run until the next op to execute is on source line ``line`` (or the end)."""

        def keep_going(start: Any) -> bool:
            pos = self.current
            return pos is None or pos.line != line

        n = 0
        if self.step():
            n = 1
        return n + self._run_while(lambda start: keep_going(start))

    def run(self) -> int:
        """Run to the end; returns the number of steps taken."""
        return self._run_while(lambda start: True)

    def _same_item(self, start: tuple) -> bool:
        return (self._cur, self._group) == start and self._item.state == RUNNING

    def _run_while(self, cond: Any) -> int:
        start = (self._cur, self._group)
        n = 0
        with np.errstate(all="ignore"):
            self._quiet = True
            try:
                while not self._done and cond(start):
                    self.step()
                    n += 1
            finally:
                self._quiet = False
        return n

    # ------------------------------------------------------------------ execution

    def _next_step(self, it: _Item) -> Any:
        region, pc, _, _ = it.stack[-1]
        return region.steps[pc]

    def _execute(self, it: _Item) -> None:
        it.steps += 1
        region, pc, env, owner = it.stack[-1]
        step = region.steps[pc]
        if it.steps > self.max_steps:
            raise self.ctx.error(
                step,
                "RUNTIME/009",
                f"exceeded the step budget (max_steps="
                f"{self.max_steps}); is there an infinite loop?",
                None,
            )
        ctx = self.ctx
        ins = step.ins
        try:
            get = self._getters[step.index]
        except IndexError:  # a step compiled after this stepper started
            self._add_getters()
            get = self._getters[step.index]
        args = get(env) if get is not None else (env[ins[0]],) if ins else ()
        if step.ctrl is not None:
            state, action = step.ctrl.enter(ctx, step, args)
            self._act(it, step, state, action)
            return
        if step.invariant:
            # lane-invariant op: every workitem with the same operand objects gets the same result
            keys = step.keys
            key = args if len(keys) == len(ins) else tuple([env[i] for i in keys])
            hit = self._memo.get(step.index)
            if hit is not None and all(map(is_, hit[0], key)):
                res = hit[1]
            else:
                res = step.fn(ctx, step, *args)
                self._memo[step.index] = (key, res)
        else:
            res = step.fn(ctx, step, *args)
        if step.term:
            if not step_branch(self, it, step, res):
                self._leave(it, res)
            return
        # an op without regions: only the innermost frame's pc and slots change, so the record
        # keeps the pc and (slot, old value) pairs instead of the stack and environment
        rec = self._rec
        rec[2] = pc
        log = rec[5]
        outs = step.outs
        if len(outs) == 1:
            o = outs[0]
            log.append((o, env[o]))
            env[o] = res
        else:
            for o, v in zip(outs, res or ()):
                log.append((o, env[o]))
                env[o] = v
        stack = it.stack
        frame = (region, pc + 1, env, owner)
        it.stack = (*stack[:-1], frame) if len(stack) > 1 else (frame,)

    def _add_getters(self) -> None:
        steps = self.plan.program.steps
        self._getters.extend(
            itemgetter(*st.ins) if len(st.ins) > 1 else None for st in steps[len(self._getters) :]
        )

    def _set_outs(self, env: list, step: Any, res: Any) -> None:
        outs = step.outs
        self._set_slots(env, outs, (res,) if len(outs) == 1 else res or ())

    def _set_slots(self, env: list, slots: tuple, values: Any) -> None:
        """Set environment slots of a control step, logged as (slot, old value) when ``env`` is
        the innermost environment when the step began (the record's stack has it)."""
        rec = self._rec
        log = rec[5]
        if env is rec[2][-1][2]:
            for s, v in zip(slots, values):
                log.append((s, env[s]))
                env[s] = v
        else:
            for s, v in zip(slots, values):
                log.append((env, s, env[s]))
                env[s] = v

    def _act(self, it: _Item, step: Any, state: Any, action: tuple) -> None:
        """Follow a control op's actions until it enters a region or finishes."""
        while True:
            if action[0] == "done":
                region, pc, env, owner = it.stack[-1]
                res = action[1]
                self._set_outs(env, step, res[0] if len(step.outs) == 1 else res)
                it.stack = it.stack[:-1] + ((region, pc + 1, env, owner),)
                return
            _, r, args, m = action
            if m is not None and not (m if type(m) in _BOOLS else np.all(m)):
                state, action = step.ctrl.resume(self.ctx, step, state, None)
                continue
            if len(it.stack) > MAX_DEPTH:
                raise self.ctx.error(step, "RUNTIME/011", depth_message(step), None)
            env = it.stack[-1][2]
            if r == -1 or type(r) is not int:  # a call: of step.callee or of r itself
                callee = step.callee if r == -1 else r
                target = callee.body
                env = [None] * callee.nslots
            else:
                target = step.regions[r]
            self._set_slots(env, target.args, args)
            it.stack = it.stack + ((target, 0, env, (step, state)),)
            if not target.steps:
                self._leave(it, ())
            return

    def _leave(self, it: _Item, yielded: Any) -> None:
        """A region's terminator ran: hand the values to the op that owns the region."""
        owner = it.stack[-1][3]
        it.stack = it.stack[:-1]
        if owner is None:
            self._pending_state = DONE if self._pending_state is None else self._pending_state
            return
        step, state = owner
        state, action = step.ctrl.resume(self.ctx, step, state, tuple(yielded or ()))
        self._act(it, step, state, action)

    # ------------------------------------------------------------------ memory

    def _alloca(self, step: Any, nbytes: Any, space: str) -> Buf:
        nbytes = scratch_bytes(self.ctx, step, nbytes, 1, MAX_SCRATCH_BYTES)
        it = self._item
        k = it.allocs.get(step.index, 0)
        rec = self._rec
        if rec[7] is None:
            rec[7] = []
        rec[7].append((it, step.index, k))
        it.allocs[step.index] = k + 1
        key = (self._group if space == "workgroup" else ("item", it.item), step.index, k)
        buf = self._shared.get(key)
        if buf is None:
            # every scratch buffer of the run is kept (for step_back): bound them all together
            scratch_bytes(self.ctx, step, nbytes, 1, MAX_SCRATCH_BYTES - self._scratch_bytes)
            name = f"%{step.op.results[0].display_name}"
            owner = (f"wg{it.wg}" if space == "workgroup" else f"wi{it.wg}{it.local}").replace(
                " ", ""
            )
            buf = Buf(
                np.zeros(nbytes, dtype=np.uint8),
                f"{name}@{owner}" + (f"#{k}" if k else ""),
                space if space == "workgroup" else "private",
            )
            buf.shadow = self._shadow(nbytes, False)
            self._shared[key] = buf
            self._scratch.append(buf)
            self._scratch_bytes += nbytes
            self._rec[8] = (key, buf)
        return buf

    def _log(self, entry: tuple) -> None:
        """Record undo information other than environment slots."""
        rec = self._rec
        if rec[6] is None:
            rec[6] = []
        rec[6].append(chunk(entry))

    def _access(self, buf: Buf) -> Access:
        acc = self._acc.get(buf.uid)
        if acc is None:
            acc = self._acc[buf.uid] = Access(buf)
        return acc

    def _read(self, step: Any, buf: Buf, p: int, n: int, atomic: bool = False) -> Access:
        self._touched.append((buf, p, n))
        acc = self._access(buf)
        q = p + n
        rec = self._rec
        if rec[6] is None:
            rec[6] = []
        rec[6].append(acc.save("r", p, q))
        item = self._items[self._cur].item
        f = self._findings
        if atomic:
            f.atomic_steps.add(step.index)
        sh, k = acc.sh, acc.k
        if (
            san.SHORTCUTS
            and sh.ranges is None
            and (acc.init is None or b"\0" not in acc.init[p:q].tobytes())
            and acc.quiet(
                "w",
                p,
                q,
                acc.wib[p * k : q * k].tobytes(),
                item,
                self._epoch,
                self._wg,
                f.atomic_steps if atomic else None,
            )
        ):
            acc.record("r", p, q, item, self._epoch, step.index)
        else:
            san.check_item(f, step, buf, p, n, item, self._epoch, self._wg, None, atomic)
        return acc

    def _check_write(
        self, step: Any, acc: Access, p: int, n: int, raw: Any, atomic: bool, known: bool
    ) -> None:
        """Check and record a write of bytes ``p..p+n-1`` (``raw``: a callable giving the
        bytes written, only asked for when the sanitizer reports)."""
        q = p + n
        saved = acc.save("w", p, q)
        rec = self._rec
        if rec[6] is None:
            rec[6] = []
        rec[6].append(saved)
        item = self._items[self._cur].item
        f = self._findings
        if atomic:
            f.atomic_steps.add(step.index)
        sh, k = acc.sh, acc.k
        atomics = f.atomic_steps if atomic else None
        epoch, wg = self._epoch, self._wg
        if (
            san.SHORTCUTS
            and sh.ranges is None
            and acc.quiet("w", p, q, saved[-4], item, epoch, wg, atomics)
            and acc.quiet("r", p, q, acc.rib[p * k : q * k].tobytes(), item, epoch, wg, atomics)
        ):
            acc.record("w", p, q, item, epoch, step.index)
        else:
            san.check_item(f, step, acc.buf, p, n, item, epoch, wg, raw(), atomic, known)

    def _observe_write(self, step: Any, buf: Buf, p: int, n: int, atomic: bool) -> None:
        """A race observation of a write: the shadow records it, memory is unchanged (its
        value is unknown, so it never counts as a write of the same value)."""
        acc = self._access(buf)
        self._check_write(step, acc, p, n, lambda: buf.data[p : p + n], atomic, False)
        self._touched.append((buf, p, n))

    def _write(self, step: Any, buf: Buf, p: int, raw: Any, atomic: bool = False) -> None:
        """Write ``raw`` (bytes or a uint8 array) at byte ``p``."""
        if type(raw) is not bytes:
            raw = np.ascontiguousarray(raw, dtype=np.uint8).reshape(-1)
        acc = self._access(buf)
        n = len(raw)
        self._check_write(step, acc, p, n, lambda: np.frombuffer(raw, np.uint8), atomic, True)
        q = p + n
        data = acc.data
        if data is not None:
            self._rec[6].append((4, "data", buf.uid, p, data[p:q].tobytes()))  # listed by the check
            data[p:q] = raw
        else:
            self._log(("data", buf.uid, p, buf.data[p:q].tobytes()))
            buf.data[p:q] = np.frombuffer(raw, np.uint8)  # bytes or a uint8 array
        self._touched.append((buf, p, n))

    # ------------------------------------------------------------------ scheduling

    def _enter_group(self, g: int) -> None:
        if g >= self._ngroups or not self._wg:
            self._done = True
            self._items = []
            self._cur = 0
            return
        gx, gy, _ = self.grid
        sx, sy, _ = self.workgroup_size
        wg = (g % gx, (g // gx) % gy, g // (gx * gy))
        items = []
        for flat in range(self._wg):
            local = (flat % sx, (flat // sx) % sy, flat // (sx * sy))
            it = _Item(wg, local, g * self._wg + flat)
            env = [None] * self.plan.body.nslots
            for s, v in zip(self.plan.body.body.args, self.values_in):
                env[s] = v
            it.stack = ((self.plan.body.body, 0, env, None),)
            items.append(it)
        self._group = g
        self._items = items
        self._cur = 0
        self._done = False
        self._epoch = 0

    def _schedule(self, rec: list) -> None:
        """The current workitem stopped running: pick the next one (round-robin)."""
        rec.append(("sched", self._items, self._cur, self._group, self._done, self._epoch))
        n = len(self._items)
        for k in range(1, n + 1):
            j = (self._cur + k) % n
            if self._items[j].state == RUNNING:
                self._cur = j
                return
        released = self._release()
        if released is not None:
            self._cur = released
            return
        self._enter_group(self._group + 1)

    def _arrive(self, step: Any, scope: str, fn: Any, values: tuple) -> None:
        """The current workitem reached a barrier or collective and waits there."""
        k = self._cur
        env = self._item.stack[-1][2]
        self._arrivals[k] = (step, scope, fn, values, env)
        self._log(("arrive", k))

    def _unit(self, k: int, scope: str) -> int:
        return k // self._subgroup if scope == collectives.SUBGROUP else 0

    def _release(self) -> int | None:
        """Nobody runs: release every barrier/collective that all live workitems of its scope
        reached (or, when none did, the lowest waiting workitem's, as a divergence finding).
        Returns the first released workitem's index, or None when nobody waits."""
        items = self._items
        waiting = [k for k, it in enumerate(items) if it.state in (AT_BARRIER, AT_COLLECTIVE)]
        if not waiting:
            return None
        if all(items[k].state == AT_BARRIER for k in waiting):
            # only barriers: lockstep semantics, as the grid engine meets them
            self._check_barriers([items[k] for k in waiting])
            self._hand_out(waiting)
            return waiting[0]
        points: dict[tuple, list[int]] = {}
        for k in waiting:
            step, scope = self._arrivals[k][:2]
            points.setdefault((self._unit(k, scope), scope, step.index), []).append(k)
        # exited workitems are excused; one that finished without arriving diverged
        live = [k for k, it in enumerate(items) if it.state != EXITED]
        complete = []
        for (unit, scope, _), ks in points.items():
            members = [k for k in live if self._unit(k, scope) == unit]
            if members == ks:
                complete.append(ks)
        if not complete:
            first = min(waiting)
            ks = next(v for v in points.values() if first in v)
            step, scope = self._arrivals[first][:2]
            unit = self._unit(first, scope)
            missing = [k for k in range(len(items)) if self._unit(k, scope) == unit and k not in ks]
            self._divergence(items[first], items[missing[0]], step, scope)
            complete = [ks]
        for ks in complete:
            self._hand_out(ks)
        return min(k for ks in complete for k in ks)

    def _hand_out(self, ks: list[int]) -> None:
        """Release the workitems ``ks`` waiting at one point, giving out collective results."""
        step, scope, fn = self._arrivals[ks[0]][:3]
        if fn is not None:
            width = self._subgroup if scope == collectives.SUBGROUP else self._wg
            col = (lambda k: k % width) if scope == collectives.SUBGROUP else (lambda k: k)
            rows = collectives.table_from_arrivals(
                step, fn, [(col(k), self._arrivals[k][3]) for k in ks], width, self._subgroup
            )
            log = self._rec[5]
            for k in ks:
                env = self._arrivals[k][4]
                for slot, row in zip(step.outs, rows):
                    log.append((env, slot, env[slot]))
                    env[slot] = row[col(k)]
        if fn is None:
            self._epoch += 1  # a barrier ends a phase (restored by the schedule record)
        for k in ks:
            it = self._items[k]
            self._log(("depart", k, self._arrivals.pop(k)))
            self._log((it, it.state))
            it.state = RUNNING

    def _divergence(self, waiting: _Item, other: _Item, step: Any, scope: str) -> None:
        if self._arrivals[self._items.index(waiting)][2] is None:
            san.barrier_divergence(self._findings, step, waiting.item, other.item, count=1)
            return
        self._findings.add(
            "collective",
            DiagnosticSeverity.ERROR,
            collectives.DIVERGENCE_CODE,
            step,
            waiting.item,
            collectives.divergence_message(scope),
            step,
            other.item,
            "not reached",
        )

    def _check_barriers(self, waiting: list[_Item]) -> None:
        """Every live workitem waits: each barrier must be the one all of them wait at."""
        at: dict[int, list[_Item]] = {}
        for it in waiting:
            at.setdefault(self._waiting_at(it).index, []).append(it)
        live = [it for it in self._items if it.state != EXITED]
        if len(at) == 1 and len(live) == len(waiting):
            return
        steps = self.plan.program.steps
        for index in sorted(at):  # program order, as lockstep execution meets them
            here = at[index]
            missing = next(it for it in live if it not in here)
            san.barrier_divergence(
                self._findings, steps[index], here[0].item, missing.item, count=1
            )

    @staticmethod
    def _waiting_at(it: _Item) -> Any:
        """The barrier step a waiting workitem stopped at."""
        region, pc, _, _ = it.stack[-1]
        return region.steps[pc - 1] if pc else region.steps[0]

    # ------------------------------------------------------------------ undo

    def _undo(self, rec: tuple) -> None:
        cur, group, stack, state, steps, env_log, misc, allocs, new_buf, journal = rec[:10]
        for extra in reversed(rec[10:]):
            _, items, c, g, done, epoch = extra
            self._items, self._cur, self._group, self._done = items, c, g, done
            self._epoch = epoch
        it = self._items[cur]
        if type(stack) is not int:
            stack = self._unseal_stack(stack, it.stack)
        self._findings.rewind(journal)
        for entry in reversed(list(misc_entries(misc)) if misc else ()):
            head = entry[0]
            if type(head) is int:
                self._acc[head].sh.restore(entry)
            elif type(head) is san.Shadow:
                head.restore(entry)
            elif head == "data":
                _, uid, p, old = entry
                self._acc[uid].buf.data[p : p + len(old)] = np.frombuffer(old, dtype=np.uint8)
            elif head == "arrive":
                self._arrivals.pop(entry[1], None)
            elif head == "depart":
                self._arrivals[entry[1]] = entry[2]
            else:
                head.state = entry[1]
        # (slot, old value): a slot of the innermost environment when the step began
        top = (it.stack if type(stack) is int else stack)[-1][2]
        if type(env_log) is tuple:
            for j in range(len(env_log) - 2, -1, -2):
                top[env_log[j]] = env_log[j + 1]
            env_log = ()
        for entry in reversed(env_log):
            if len(entry) == 2:
                top[entry[0]] = entry[1]
            else:
                env, s, old = entry
                env[s] = old
        for item, idx, k in reversed(allocs or ()):
            if k:
                item.allocs[idx] = k
            else:
                item.allocs.pop(idx, None)
        if new_buf is not None:
            key, buf = new_buf
            self._shared.pop(key, None)
            self._scratch.remove(buf)
            self._scratch_bytes -= buf.data.size
            self._acc.pop(buf.uid, None)
        self._cur, self._group = cur, group
        if type(stack) is int:  # the pc of the innermost frame before the step
            region, _, env, owner = it.stack[-1]
            stack = (*it.stack[:-1], (region, stack, env, owner))
        it.stack, it.state, it.steps = stack, state, steps
