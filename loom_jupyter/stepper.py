"""The stepper widget: drive :class:`loom.interp.Stepper` from stock ipywidgets controls.

The widget shows the module with the next op marked, buttons (step, step back, next workitem,
run to barrier, run to line, run, reset), workgroup and workitem selectors, the workitem grid,
the current workitem's values, typed buffer views and the findings. Its MIME bundle also holds a
static HTML snapshot of the same picture, so a saved notebook reads without a kernel.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

import numpy as np

from loom.errors import LoomError
from loom.format.text.printer import Printer
from loom.ir import Module, Operation
from loom_jupyter.display import Ops, place_diagnostics
from loom_jupyter.render import Listing, attrs, esc, wrap
from loom_jupyter.snapshot import (
    SECTIONS,
    BufferPicture,
    Snapshot,
    section_parts,
    snapshot_bundle,
)

FROZEN_NOTE = (
    "This view stays at the state it was shown in; a later output of the same stepper is live."
)
GOTO_LIMIT = 200_000
"""Most steps a selector or run-to-line may take looking for its target."""


def _coords(c: Iterable[int]) -> str:
    return "(" + ",".join(str(x) for x in c) + ")"


def _value_text(v: Any) -> str:
    if isinstance(v, (float, np.floating)):
        return repr(float(v))
    if isinstance(v, (bool, int, np.integer)):
        return str(v)
    kind = type(v).__name__.lower()
    return {"buf": "buffer"}.get(kind, kind)


def _base_name(buffer_name: str) -> str:
    """``%stage@wg(0,0,0)`` -> ``stage``: scratch buffers are named per workgroup."""
    return buffer_name.split("@", 1)[0].lstrip("%")


class StepperModel:
    """A stepper plus what the picture needs: printed module, op lines, buffer dtypes."""

    def __init__(
        self,
        module: Module,
        kernel: str,
        *,
        workload: tuple | list = (),
        args: tuple | list = (),
        ops: Ops = None,
        dtypes: Mapping[str, Any] | None = None,
        max_steps: int | None = None,
        globals: dict | None = None,
        config: dict | None = None,
    ) -> None:
        from loom.interp import Stepper

        self.stepper = Stepper(
            module,
            kernel,
            workload=workload,
            args=args,
            max_steps=max_steps,
            globals=globals,
            config=config,
        )
        self.module = module
        printer = Printer(ops)
        self.text = printer.print_module(module)
        self.op_lines = printer.op_lines
        self.dtypes = self._dtypes(args, dtypes or {})
        self.error: LoomError | None = None

    def _dtypes(self, args: Iterable[Any], given: Mapping[str, Any]) -> dict[str, np.dtype]:
        arrays = [a for a in args if isinstance(a, (np.ndarray, bytearray))]
        names = self.stepper.buffers()
        out = {
            _base_name(n): (a.dtype if isinstance(a, np.ndarray) else np.dtype(np.uint8))
            for n, a in zip(names, arrays)
        }
        out.update({_base_name(n): np.dtype(t) for n, t in given.items()})
        return out

    # ------------------------------------------------------------------ driving

    def act(self, fn: Callable[[], Any]) -> None:
        """Run one stepper action, keeping a runtime error to show instead of raising."""
        self.error = None
        try:
            fn()
        except LoomError as exc:
            self.error = exc

    def reset(self) -> None:
        """Undo every step (exactly, buffers included)."""
        while self.stepper.step_back():
            pass
        self.error = None

    def run_until(self, reached: Callable[[], bool], first_step: bool = True) -> bool:
        """Step until ``reached()``; if it never is, undo those steps and return False."""
        s = self.stepper
        taken = 0
        if first_step and s.step():
            taken = 1
        while not reached():
            if s.done or taken >= GOTO_LIMIT or not s.step():
                for _ in range(taken):
                    s.step_back()
                return False
            taken += 1
        return True

    def run_to_line(self, line: int) -> bool:
        """Run until the next op is the one printed on ``line`` of the listing."""
        ops = {k for k, v in self.op_lines.items() if v == line}

        def reached() -> bool:
            pos = self.stepper.current
            return pos is not None and id(pos.op) in ops

        return self.run_until(reached)

    def goto(
        self, workgroup: tuple[int, ...] | None = None, workitem: tuple[int, ...] | None = None
    ) -> bool:
        """Run until the current workitem is ``workitem`` of ``workgroup`` (either optional)."""

        def reached() -> bool:
            pos = self.stepper.current
            return (
                pos is not None
                and (workgroup is None or pos.workgroup == workgroup)
                and (workitem is None or pos.workitem == workitem)
            )

        return reached() or self.run_until(reached, first_step=False)

    # ------------------------------------------------------------------ picture

    def status(self) -> str:
        """One line: step count, workgroup, workitem, state and line."""
        s = self.stepper
        pos = s.current
        if pos is None:
            shape = " x ".join(str(c) for c in s.grid)
            text = f"done after {s.steps_taken} steps: every workitem of the {shape} grid finished"
        else:
            state = s.workitem_states().get(pos.workitem, "running")
            line = self.op_lines.get(id(pos.op)) if pos.op is not None else None
            where = f", next op on line {line}" if line else ""
            text = (
                f"step {s.steps_taken}: workgroup {_coords(pos.workgroup)} of "
                f"{_coords(s.grid)}, workitem {_coords(pos.workitem)} ({state}){where}"
            )
        if self.error is not None:
            diags = self.error.diagnostics
            what = diags[0].headline() if diags else str(self.error)
            text += f"\nstopped by {type(self.error).__name__} (the failing op did not run): {what}"
        return text

    def listing(self, current: Operation | None) -> Listing:
        """The printed module with the next op marked and findings under their lines."""
        listing = Listing(self.text)
        found = list(self.stepper.findings)
        if self.error is not None:
            found += self.error.diagnostics
        place_diagnostics(listing, self.op_lines, found)
        if current is not None:
            listing.current_line = self.op_lines.get(id(current))
        return listing

    def buffers(self) -> list[BufferPicture]:
        """Typed views of every buffer with touched and unwritten elements."""
        out = []
        for name in self.stepper.buffers():
            mem = self.stepper.memory(name)
            dt = self.dtypes.get(name)
            if dt is None:
                dt = self.dtypes.get(_base_name(name), np.dtype(np.uint8))
            values = mem.array(dt)
            n = values.size * dt.itemsize
            size = dt.itemsize
            touched = mem.touched[:n].reshape(-1, size).any(axis=1)
            uninit = mem.uninitialised[:n].reshape(-1, size).any(axis=1)
            out.append(BufferPicture(name, values.copy(), touched, uninit))
        return out

    def snapshot(self) -> Snapshot:
        """The current picture as data."""
        s = self.stepper
        pos = s.current
        values = [(n, _value_text(v)) for n, v in s.values().items()]
        findings = list(s.findings)
        return Snapshot(
            listing=self.listing(pos.op if pos else None),
            status=self.status(),
            workgroup=pos.workgroup if pos else (0, 0, 0),
            workgroup_shape=tuple(s.workgroup_size),
            states=s.workitem_states() if pos else {},
            current=pos.workitem if pos else None,
            values=values,
            buffers=self.buffers(),
            findings=findings,
            grid=tuple(s.grid),
            done=pos is None,
            lines=self.item_lines() if pos else {},
        )

    def item_lines(self) -> dict[tuple[int, ...], int]:
        """Listing line of every workitem's next op in the current workgroup."""
        out = {}
        for lid, op in self.stepper.workitem_ops().items():
            line = self.op_lines.get(id(op)) if op is not None else None
            if line:
                out[lid] = line
        return out


class SnapshotView:
    """A fixed static picture (no live widget)."""

    def __init__(self, bundle: dict[str, str]) -> None:
        self.bundle = bundle

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        return self.bundle


class StepperWidget:
    """Step a kernel one workitem and one op at a time, with a live picture of the grid."""

    def __init__(
        self,
        module: Module,
        kernel: str,
        *,
        workload: tuple | list = (),
        args: tuple | list = (),
        ops: Ops = None,
        dtypes: Mapping[str, Any] | None = None,
        max_steps: int | None = None,
        globals: dict | None = None,
        config: dict | None = None,
    ) -> None:
        self.model = StepperModel(
            module,
            kernel,
            workload=workload,
            args=args,
            ops=ops,
            dtypes=dtypes,
            max_steps=max_steps,
            globals=globals,
            config=config,
        )
        self._view: Any = None
        self._syncing = False

    @property
    def stepper(self) -> Any:
        """The underlying :class:`loom.interp.Stepper`."""
        return self.model.stepper

    # ------------------------------------------------------------------ actions (also API)

    def step(self, n: int = 1) -> StepperWidget:
        """Run ``n`` ops of the current workitem(s)."""

        def go() -> None:
            for _ in range(n):
                if not self.stepper.step():
                    break

        return self._do(go)

    def step_back(self, n: int = 1) -> StepperWidget:
        """Undo ``n`` steps."""

        def go() -> None:
            for _ in range(n):
                if not self.stepper.step_back():
                    break

        return self._do(go)

    def next_workitem(self) -> StepperWidget:
        """Run the current workitem until it waits, exits or finishes."""
        return self._do(self.stepper.run_workitem)

    def run_to_barrier(self) -> StepperWidget:
        """Run until the current workitem reaches a barrier."""
        return self._do(self.stepper.run_to_barrier)

    def run_to_line(self, line: int) -> StepperWidget:
        """Run until the next op is the one on ``line`` of the shown listing."""
        return self._do(lambda: self.model.run_to_line(line))

    def run(self) -> StepperWidget:
        """Run to the end."""
        return self._do(self.stepper.run)

    def reset(self) -> StepperWidget:
        """Back to the very start (buffers restored)."""
        return self._do(self.model.reset)

    def select(
        self, workgroup: tuple[int, ...] | None = None, workitem: tuple[int, ...] | None = None
    ) -> StepperWidget:
        """Run forward until ``workitem`` of ``workgroup`` is the one about to run."""
        return self._do(lambda: self.model.goto(workgroup, workitem))

    def _do(self, fn: Callable[[], Any]) -> StepperWidget:
        self.model.act(fn)
        self.refresh()
        return self

    # ------------------------------------------------------------------ output

    def snapshot_bundle(self) -> dict[str, str]:
        """The static picture: ``text/plain`` and ``text/html``."""
        return snapshot_bundle(self.model.snapshot())

    def show(self, *sections: str) -> SnapshotView:
        """A static picture of only some sections (``"status"``, ``"code"``, ``"grid"``,
        ``"values"``, ``"buffers"``, ``"findings"``), e.g. to follow a few steps compactly."""
        unknown = [s for s in sections if s not in SECTIONS]
        if unknown:
            raise ValueError(f"unknown section(s) {unknown}; choose from {', '.join(SECTIONS)}")
        return SnapshotView(snapshot_bundle(self.model.snapshot(), sections or SECTIONS))

    def picture(self, kind: str = "grid") -> Any:
        """A picture of the current state: ``"grid"`` (each workitem's state and next line),
        ``"histogram"`` (values of every buffer, unwritten elements left out)."""
        from loom_jupyter import pictures

        snap = self.model.snapshot()
        if kind == "grid":
            return pictures.grid_picture(snap)
        if kind == "histogram":
            return pictures.histogram_picture(
                {b.name: b.values for b in snap.buffers},
                masks={b.name: b.uninit for b in snap.buffers},
            )
        raise ValueError(f"unknown picture {kind!r}; choose 'grid' or 'histogram'")

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        # A widget view shown earlier would follow this stepper to its later states while the
        # cells around it describe the state it was shown in: freeze it there, show a new one.
        if self._view is not None:
            self._freeze()
        bundle: dict[str, Any] = {}
        view = self.widget()
        if view is not None:
            bundle.update(view._repr_mimebundle_(include=include, exclude=exclude) or {})
        bundle.update(self.snapshot_bundle())
        return bundle

    def widget(self) -> Any:
        """The ipywidgets view (built on first use; None when ipywidgets is unavailable)."""
        if self._view is None:
            try:
                import ipywidgets  # noqa: F401
            except ImportError:
                return None
            self._build()
        return self._view

    def _build(self) -> None:
        import ipywidgets as w

        s = self.stepper
        buttons = [
            ("step", "step one op", lambda _: self.step()),
            ("step back", "undo one step", lambda _: self.step_back()),
            (
                "next workitem",
                "run this workitem until it waits or ends",
                lambda _: self.next_workitem(),
            ),
            (
                "run to barrier",
                "run this workitem to its next barrier",
                lambda _: self.run_to_barrier(),
            ),
            ("run", "run to the end", lambda _: self.run()),
            ("reset", "undo every step", lambda _: self.reset()),
        ]
        row = []
        for label, tip, cb in buttons:
            b = w.Button(description=label, tooltip=tip, layout=w.Layout(width="auto"))
            b.on_click(cb)
            row.append(b)
        self._line = w.BoundedIntText(
            value=1,
            min=1,
            max=max(1, len(self.model.text.splitlines())),
            description="line",
            # room for 4 digits and the spin buttons beside the short label
            style={"description_width": "2.5em"},
            layout=w.Layout(width="11em"),
        )
        to_line = w.Button(description="run to line", layout=w.Layout(width="auto"))
        to_line.on_click(lambda _: self.run_to_line(self._line.value))
        groups = [
            (x, y, z) for z in range(s.grid[2]) for y in range(s.grid[1]) for x in range(s.grid[0])
        ]
        items = [
            (x, y, z)
            for z in range(s.workgroup_size[2])
            for y in range(s.workgroup_size[1])
            for x in range(s.workgroup_size[0])
        ]
        self._wg = w.Dropdown(options=[(_coords(g), g) for g in groups], description="workgroup")
        self._wi = w.Dropdown(options=[(_coords(i), i) for i in items], description="workitem")
        self._wg.observe(lambda ch: self._selected(workgroup=ch["new"]), names="value")
        self._wi.observe(lambda ch: self._selected(workitem=ch["new"]), names="value")
        self._controls = [*row, to_line, self._line, self._wg, self._wi]
        # Every part may shrink below its content and scrolls instead of being clipped; the
        # grid and values move under the code when the output is too narrow for both.
        fit = {"overflow": "auto", "min_width": "0", "max_width": "100%"}
        self._html = {name: w.HTML(layout=w.Layout(**fit)) for name in SECTIONS}
        self._html["code"].layout = w.Layout(flex="1 1 36em", **fit)
        side = w.VBox(
            [self._html["grid"], self._html["values"]], layout=w.Layout(flex="0 1 auto", **fit)
        )
        wrap_row = {"flex_flow": "row wrap", "max_width": "100%"}
        self._view = w.VBox(
            [
                w.HBox(row, layout=w.Layout(**wrap_row)),
                w.HBox([self._wg, self._wi, self._line, to_line], layout=w.Layout(**wrap_row)),
                self._html["status"],
                w.HBox(
                    [self._html["code"], side],
                    layout=w.Layout(align_items="flex-start", **wrap_row),
                ),
                self._html["buffers"],
                self._html["findings"],
            ],
            layout=w.Layout(max_width="100%", overflow="hidden"),
        )
        self._view.add_class("loom-stepper-widget")
        self.refresh()

    def _freeze(self) -> None:
        """Stop the shown view at its state: controls disabled, a note saying so."""
        import ipywidgets as w

        for c in self._controls:
            c.disabled = True
        note = w.HTML(
            wrap(
                f"<div {attrs('loom-note')}>{esc(FROZEN_NOTE)}</div>\n",
                "stepper-frozen",
            )
        )
        self._view.children = (note, *self._view.children)
        self._view = None

    def _selected(self, workgroup: Any = None, workitem: Any = None) -> None:
        if self._syncing:
            return
        pos = self.stepper.current
        if workgroup is not None:
            self.select(workgroup=tuple(workgroup))
        elif workitem is not None:
            self.select(workgroup=pos.workgroup if pos else None, workitem=tuple(workitem))

    def refresh(self) -> None:
        """Redraw every section of the live view from the stepper."""
        if self._view is None:
            return
        snap = self.model.snapshot()
        # The status line goes last: once it reads the new step, every other section already
        # shows that step (the browser applies widget updates in the order they are sent).
        for name in sorted(self._html, key=lambda n: n == "status"):
            _, html = section_parts(snap, name)
            self._html[name].value = wrap(html, f"stepper-{name}")
        pos = self.stepper.current
        self._syncing = True
        try:
            if pos is not None:
                self._wg.value = pos.workgroup
                self._wi.value = pos.workitem
        finally:
            self._syncing = False

    def __repr__(self) -> str:
        return self.snapshot_bundle()["text/plain"]
