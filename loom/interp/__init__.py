"""The reference interpreter: run Loom kernels on NumPy data (grid engine, sanitizer, stepper).

- :func:`launch` runs a kernel over its whole grid, lanes in lockstep, and returns a
  :class:`LaunchResult` with counts, wall time and sanitizer ``findings``.
- :class:`Stepper` runs one workitem at a time, one op per step, with exact ``step_back``;
  it reports the same sanitizer findings (races, uninitialised reads, divergent barriers).
- Limits, refused with a :class:`~loom.errors.LoomRuntimeError` rather than run out of time or
  memory: ``max_steps`` per workitem (``engine.DEFAULT_MAX_STEPS``,
  ``stepper.DEFAULT_MAX_STEPS``), workgroup and grid sizes (``engine.MAX_WORKGROUP_ITEMS``,
  ``engine.MAX_WORKITEMS``, ``stepper.MAX_WORKGROUP_ITEMS``), scratch memory
  (``engine.MAX_SCRATCH_BYTES``) and region/call nesting (``compile.MAX_DEPTH``).
- Compiled plans are cached on the module and rebuilt after any edit (``Module.version``).
- ``loom.interp.semantics.SEMANTICS`` is the one semantics table both engines use.
"""

from loom.interp.engine import LaunchResult, launch
from loom.interp.semantics import SEMANTICS

__all__ = ["SEMANTICS", "LaunchResult", "launch"]

from loom.interp.stepper import (  # noqa: E402
    AT_BARRIER,
    DONE,
    EXITED,
    RUNNING,
    MemoryView,
    Position,
    Stepper,
)

__all__ += ["AT_BARRIER", "DONE", "EXITED", "RUNNING", "MemoryView", "Position", "Stepper"]
