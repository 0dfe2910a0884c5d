"""The stepper: one workitem at a time, one op per step, with exact undo back to the start.

Workitems of a workgroup run in flat order (x fastest); a workitem runs until it reaches a
barrier, exits or finishes, then the next one in flat order runs (round-robin at barriers).
When every live workitem waits at the barrier they are all released. Workgroups run in order.
Each step records undo information (environment slots, memory bytes, initialised flags, frame
stacks and scheduler state), so :meth:`Stepper.step_back` is exact all the way to the start.

UI-facing queries: :attr:`Stepper.current` (workitem, op, location), :meth:`Stepper.values`,
:meth:`Stepper.memory` (typed views with masks of bytes touched by the last step and of
uninitialised bytes), :meth:`Stepper.workitem_states`, :attr:`Stepper.grid`,
:attr:`Stepper.workgroup_size`, :attr:`Stepper.history_length`.
"""

from __future__ import annotations

from dataclasses import dataclass
from operator import is_
from typing import Any

import numpy as np

from loom.diagnostics import Diagnostic, DiagnosticSeverity, SourceRange
from loom.errors import LoomRuntimeError
from loom.interp.cfg_exec import step_branch
from loom.interp.engine import DEFAULT_MAX_STEPS, BaseContext, KernelPlan, _plan
from loom.interp.launch_args import bind_args
from loom.interp.memory import Buf
from loom.interp.numerics import to_python
from loom.interp.report import coords_text, format_lane, op_diagnostic, runtime_error
from loom.ir import Module, Operation, ScalarType
from loom.verify import op_source_range

RUNNING, AT_BARRIER, EXITED, DONE = "running", "at barrier", "exited", "done"
"""Workitem states."""
_DIMS = {"x": 0, "y": 1, "z": 2}
_BOOLS = (bool, np.bool_)


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
        self.s = stepper

    def coord(self, kind: str, dim: str, step: Any = None) -> Any:
        d = _DIMS[dim]
        it = self.s._item
        if kind == "size":
            return np.int64(self.s.workgroup_size[d])
        if kind == "count":
            return np.int64(self.s.grid[d])
        if kind == "workitem":
            return np.int64(it.local[d])
        if kind == "workgroup":
            return np.int64(it.wg[d])
        return np.int64(it.wg[d] * self.s.workgroup_size[d] + it.local[d])

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
        self.s._pending_state = AT_BARRIER

    def retire(self, step: Any, leaving: Any) -> None:
        if bool(leaving):
            self.s._pending_state = EXITED

    def alloca(self, step: Any, nbytes: Any, space: str) -> Buf:
        return self.s._alloca(step, int(nbytes), space)

    def load(self, step: Any, buf: Buf, addr: Any, dtype: np.dtype, contig: Any) -> Any:
        p = self._range(step, buf, int(addr), dtype.itemsize)
        self.s._touch_read(step, buf, p, dtype.itemsize)
        return buf.data[p : p + dtype.itemsize].view(dtype)[0]

    def store(
        self, step: Any, buf: Buf, addr: Any, value: Any, dtype: np.dtype, contig: Any
    ) -> None:
        p = self._range(step, buf, int(addr), dtype.itemsize)
        raw = np.asarray(value, dtype=dtype).reshape(1).view(np.uint8)
        self.s._write(buf, p, raw)

    def load_bytes(self, step: Any, buf: Buf, lane: int, start: int, count: int) -> np.ndarray:
        p = self._range(step, buf, start, count)
        self.s._touch_read(step, buf, p, count)
        return buf.data[p : p + count].copy()

    def store_bytes(self, step: Any, buf: Buf, lane: int, start: int, data: np.ndarray) -> None:
        p = self._range(step, buf, start, data.size)
        self.s._write(buf, p, data)

    def _range(self, step: Any, buf: Buf, start: int, count: int) -> int:
        if start < 0 or start + count > buf.length:
            raise self.error(
                step,
                "RUNTIME/001",
                f"accesses bytes {start}..{start + count - 1}"
                f" outside buffer {buf.name} of {buf.length} bytes",
                None,
            )
        return start


class Stepper:
    """Run a kernel one workitem and one op at a time (arguments as for ``launch``)."""

    def __init__(
        self,
        module: Module,
        kernel: str,
        *,
        workload: tuple | list = (),
        args: tuple | list = (),
        max_steps: int | None = None,
    ) -> None:
        self.plan: KernelPlan = _plan(module, kernel)
        self.module = module
        counts, sizes = self.plan.grid(tuple(workload))
        self.grid: tuple[int, int, int] = counts
        self.workgroup_size: tuple[int, int, int] = sizes
        self.values_in, self._bufs = bind_args(self.plan.params, tuple(args), self.plan.name)
        self.max_steps = DEFAULT_MAX_STEPS if max_steps is None else max_steps
        self._init = {b.uid: np.ones(b.data.size, dtype=bool) for b in self._bufs}
        self._scratch: list[Buf] = []
        self._shared: dict[tuple, Buf] = {}
        self.findings: list[Diagnostic] = []
        self._history: list[tuple] = []
        self._rec: list | None = None
        self._touched: list[tuple] = []
        self._pending_state: str | None = None
        self._quiet = False
        self.ctx = _ItemContext(self)
        self._memo: dict[int, tuple] = {}
        self._ngroups = counts[0] * counts[1] * counts[2]
        self._wg = sizes[0] * sizes[1] * sizes[2]
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
    def history_length(self) -> int:
        """Number of steps that :meth:`step_back` can undo."""
        return len(self._history)

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
                return MemoryView(b.name, b.data, touched, ~self._init[b.uid])
        raise KeyError(f"no buffer named {name!r}; buffers: {', '.join(self.buffers())}")

    # ------------------------------------------------------------------ driving

    def step(self) -> bool:
        """Run one op of the current workitem; False when there is nothing left to run."""
        if self._done:
            return False
        it = self._item
        # [workitem, group, stack, state, steps, env log, misc log, alloc log, new buffer]
        rec: list = [self._cur, self._group, it.stack, it.state, it.steps, [], None, None, None]
        self._rec = rec
        self._touched = []
        self._pending_state = None
        try:
            if self._quiet:
                self._execute(it)
            else:
                with np.errstate(all="ignore"):
                    self._execute(it)
            if self._pending_state is not None and it.state == RUNNING:
                self._log((it, it.state))
                it.state = self._pending_state
            if it.state != RUNNING:
                self._schedule(rec)
        except LoomRuntimeError:
            self._undo(rec)
            raise
        finally:
            self._rec = None
        self._history.append(tuple(rec))
        return True

    def step_back(self) -> bool:
        """Undo the last step exactly; False at the very start."""
        if not self._history:
            return False
        self._undo(list(self._history.pop()))
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
        if step.ctrl is not None:
            state, action = step.ctrl.enter(ctx, step, tuple([env[i] for i in step.ins]))
            self._act(it, step, state, action)
            return
        if step.invariant:
            # lane-invariant op: every workitem with the same operand objects gets the same result
            key = [env[i] for i in step.keys]
            hit = self._memo.get(step.index)
            if hit is not None and all(map(is_, hit[0], key)):
                res = hit[1]
            else:
                res = step.fn(ctx, step, *key[: len(step.ins)])
                self._memo[step.index] = (key, res)
        else:
            res = step.fn(ctx, step, *[env[i] for i in step.ins])
        if step.term:
            if not step_branch(self, it, step, res):
                self._leave(it, res)
            return
        self._set_outs(env, step, res)
        it.stack = it.stack[:-1] + ((region, pc + 1, env, owner),)

    def _set_outs(self, env: list, step: Any, res: Any) -> None:
        outs = step.outs
        log = self._rec[5]
        if len(outs) == 1:
            log.append((env, outs[0], env[outs[0]]))
            env[outs[0]] = res
        else:
            for s, v in zip(outs, res or ()):
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
            env = it.stack[-1][2]
            if r == -1:
                target = step.callee.body
                env = [None] * step.callee.nslots
            else:
                target = step.regions[r]
            for s, v in zip(target.args, args):
                self._rec[5].append((env, s, env[s]))
                env[s] = v
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

    def _alloca(self, step: Any, nbytes: int, space: str) -> Buf:
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
            name = f"%{step.op.results[0].display_name}"
            owner = (f"wg{it.wg}" if space == "workgroup" else f"wi{it.wg}{it.local}").replace(
                " ", ""
            )
            buf = Buf(
                np.zeros(nbytes, dtype=np.uint8),
                f"{name}@{owner}" + (f"#{k}" if k else ""),
                space if space == "workgroup" else "private",
            )
            self._shared[key] = buf
            self._scratch.append(buf)
            self._init[buf.uid] = np.zeros(nbytes, dtype=bool)
            self._rec[8] = (key, buf)
        return buf

    def _log(self, entry: tuple) -> None:
        """Record undo information other than environment slots."""
        rec = self._rec
        if rec[6] is None:
            rec[6] = []
        rec[6].append(entry)

    def _touch_read(self, step: Any, buf: Buf, p: int, n: int) -> None:
        self._touched.append((buf, p, n))
        init = self._init.get(buf.uid)
        if init is not None and not init[p : p + n].all():
            it = self._item
            d = op_diagnostic(
                step,
                DiagnosticSeverity.ERROR,
                "SANITIZE/001",
                f"reads uninitialised memory (byte {p} of {buf.name}) by "
                f"{coords_text((it.wg, it.local))}",
            )
            self.findings.append(d)
            self._log(("finding", None))

    def _write(self, buf: Buf, p: int, raw: np.ndarray) -> None:
        n = raw.size
        init = self._init[buf.uid]
        self._log((buf, p, buf.data[p : p + n].copy(), init[p : p + n].copy()))
        buf.data[p : p + n] = raw
        init[p : p + n] = True
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

    def _schedule(self, rec: list) -> None:
        """The current workitem stopped running: pick the next one (round-robin)."""
        rec.append(("sched", self._items, self._cur, self._group, self._done))
        n = len(self._items)
        for k in range(1, n + 1):
            j = (self._cur + k) % n
            if self._items[j].state == RUNNING:
                self._cur = j
                return
        waiting = [it for it in self._items if it.state == AT_BARRIER]
        if waiting:
            finished = [it for it in self._items if it.state == DONE]
            if finished:
                self._barrier_divergence(waiting[0], finished[0])
            else:
                # workitems waiting at different barriers (e.g. one per cfg arm) diverged too
                at = waiting[0].stack[-1][:2]
                other = next((w for w in waiting if w.stack[-1][:2] != at), None)
                if other is not None:
                    self._barrier_divergence(waiting[0], other)
            for it in waiting:
                self._log((it, it.state))
                it.state = RUNNING
            self._cur = self._items.index(waiting[0])
            return
        self._enter_group(self._group + 1)

    def _barrier_divergence(self, waiting: _Item, finished: _Item) -> None:
        region, pc, _, _ = waiting.stack[-1]
        step = region.steps[pc - 1] if pc else region.steps[0]
        d = op_diagnostic(
            step,
            DiagnosticSeverity.ERROR,
            "SANITIZE/004",
            "barrier divergence: not every live workitem of the workgroup reaches "
            f"this barrier; reached by {coords_text((waiting.wg, waiting.local))}",
            [(f"not reached by {coords_text((finished.wg, finished.local))}", None)],
        )
        self.findings.append(d)
        self._log(("finding", None))

    # ------------------------------------------------------------------ undo

    def _undo(self, rec: list) -> None:
        cur, group, stack, state, steps, env_log, misc, allocs, new_buf = rec[:9]
        for extra in reversed(rec[9:]):
            _, items, c, g, done = extra
            self._items, self._cur, self._group, self._done = items, c, g, done
        for entry in reversed(misc or ()):
            if entry[0] == "finding":
                self.findings.pop()
            elif isinstance(entry[0], Buf):
                buf, p, old, old_init = entry
                buf.data[p : p + old.size] = old
                self._init[buf.uid][p : p + old.size] = old_init
            else:
                entry[0].state = entry[1]
        for env, s, old in reversed(env_log):
            env[s] = old
        for it, idx, k in reversed(allocs or ()):
            if k:
                it.allocs[idx] = k
            else:
                it.allocs.pop(idx, None)
        if new_buf is not None:
            key, buf = new_buf
            self._shared.pop(key, None)
            self._scratch.remove(buf)
            self._init.pop(buf.uid, None)
        self._cur, self._group = cur, group
        it = self._items[cur]
        it.stack, it.state, it.steps = stack, state, steps
