"""The semantics table: one function per op, registered by op name.

This package (with ``loom.dialects``) is the only place where op names are spelled. A plain op's
semantics is ``fn(ctx, step, *operands)`` returning its result (a tuple when it has several, a
tuple of passed-on values for terminators, ``None`` when it has none). Operands are NumPy arrays
over the lanes being run or NumPy scalars for lane-uniform values; ``ctx`` is the engine context
(grid engine: many lanes with an active mask; stepper: one workitem). Ops with regions register a
:class:`Control`: ``enter``/``resume`` return ``(state, action)`` where the action is
:func:`run` (execute one of the step's regions for some lanes) or :func:`done` (results).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

SEMANTICS: dict[str, Any] = {}
"""Op name -> semantics function or :class:`Control`."""

LANE_LOCAL: set[str] = set()
"""Names of impure or region-holding ops whose effect on a lane depends only on that lane's
operands (structured control under per-lane masks, one-element accesses): with the ``Pure``
ops without ``Uniformity`` they may run over a compacted box of lanes
(:mod:`loom.interp.compact`)."""

AFFINE_RULES: dict[str, Callable[..., Any]] = {}
"""Op name -> ``rule(args, affs) -> (start, stride) | None`` describing lane-affine results."""

VIEW_RESULTS: set[str] = set()
"""Names of element loads whose one result the grid engine may hand out as a read-only view
of the memory instead of a copy, when every use allows it (see
:func:`loom.interp.compact.view_loads`)."""

VIEW_OPERANDS: set[str] = set()
"""Names of elementwise ops whose semantics also take a lane operand shaped like the lane
extents (``ctx.extents``: a read-only strided view of memory made by ``view.load``, see
:func:`loom.interp.compact.view_loads`) and still return an ordinary lane array of their own
(never the view, never written into it)."""

LAZY_OPERANDS: dict[str, int] = {}
"""Op name -> position of its first operand that may be an unmade lane array
(:class:`loom.interp.affine.Lazy`; the semantics make it with ``affine.values`` where they
read its lanes)."""


@dataclass(frozen=True)
class Control:
    """Semantics of an op with regions, driven by the engine one region run at a time."""

    enter: Callable[..., tuple[Any, tuple]]
    resume: Callable[..., tuple[Any, tuple]]


def run(region: int, args: tuple, mask: Any) -> tuple:
    """Action: run region ``region`` with entry ``args`` for the lanes in ``mask``."""
    return ("run", region, args, mask)


def call(func: Any, args: tuple, mask: Any) -> tuple:
    """Action: run the compiled function ``func`` with ``args`` for the lanes in ``mask``."""
    return ("run", func, args, mask)


def done(results: tuple = ()) -> tuple:
    """Action: the op is finished and produces ``results``."""
    return ("done", results)


def semantics(*names: str) -> Callable[[Any], Any]:
    """Register a semantics function (or Control) for one or more op names."""

    def register(fn: Any) -> Any:
        for name in names:
            if name in SEMANTICS:
                raise ValueError(f"semantics for '{name}' registered twice")
            SEMANTICS[name] = fn
        return fn

    return register


def lane_local(*names: str) -> None:
    """Declare ops lane-local (see :data:`LANE_LOCAL`)."""
    LANE_LOCAL.update(names)


def view_results(*names: str) -> None:
    """Declare element loads whose result may be a view of memory (see :data:`VIEW_RESULTS`)."""
    VIEW_RESULTS.update(names)


def view_operands(*names: str) -> None:
    """Declare ops that take lane operands shaped like the lane extents (see
    :data:`VIEW_OPERANDS`)."""
    VIEW_OPERANDS.update(names)


def affine(*names: str) -> Callable[[Any], Any]:
    """Register an affine-propagation rule (lets loads/stores become slices)."""

    def register(fn: Any) -> Any:
        for name in names:
            AFFINE_RULES[name] = fn
        return fn

    return register


def lazy_operands(first: int, *names: str) -> None:
    """Let the operands from position ``first`` of these ops be :class:`~loom.interp.affine.Lazy`
    (their semantics answer from the operands' facts when they can)."""
    for name in names:
        LAZY_OPERANDS[name] = first


def _load_all() -> None:
    """Import the semantics module of every dialect ``loom.dialects`` declares."""
    from loom.dialects import DIALECT_MODULES

    for name in DIALECT_MODULES:
        importlib.import_module(f"loom.interp.semantics.{name}")


_load_all()
