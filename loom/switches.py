"""Process-wide interpreter switches (the cyclic garbage collector, the recursion limit), held
for the extent of a ``with`` block and restored on every exit path, errors included.

Both are process-wide, so overlapping holders (nested calls, other threads) share one hold: the
first to enter changes the switch, the last to leave restores what was there before. Code
that needs them never calls ``gc.disable()`` or ``sys.setrecursionlimit()`` directly.
"""

from __future__ import annotations

import gc
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_LOCK = threading.Lock()


class _Hold:
    """One switch: how many holders are inside, and the state to restore after the last."""

    __slots__ = ("holders", "saved", "limit")

    def __init__(self) -> None:
        self.holders = 0
        self.saved: object = None
        self.limit = 0


_GC = _Hold()
_RECURSION = _Hold()


class _GcPause:
    """Pause the cyclic garbage collector (building many objects that form no garbage cycles
    is then faster); it is re-enabled on exit if it was enabled on entry.

    A class rather than a generator: re-enabling is the last thing its exit does, so the
    collection that follows a large build is not run inside the ``with`` block's exit.
    """

    __slots__ = ()

    def __enter__(self) -> None:
        with _LOCK:
            if _GC.holders == 0:
                _GC.saved = gc.isenabled()
                gc.disable()
            _GC.holders += 1

    def __exit__(self, *exc: object) -> None:
        with _LOCK:
            _GC.holders -= 1
            resume = _GC.holders == 0 and _GC.saved
        if resume:
            gc.enable()


def gc_paused() -> _GcPause:
    """``with gc_paused():`` pauses the cyclic garbage collector for the block (see
    :class:`_GcPause`)."""
    return _GcPause()


@contextmanager
def recursion_limit_at_least(limit: int) -> Iterator[None]:
    """Raise the recursion limit to at least ``limit`` (never lower it) for the block."""
    with _LOCK:
        if _RECURSION.holders == 0:
            _RECURSION.saved = sys.getrecursionlimit()
            _RECURSION.limit = int(_RECURSION.saved)  # type: ignore[call-overload]
        if limit > _RECURSION.limit:
            _RECURSION.limit = limit
            sys.setrecursionlimit(limit)
        _RECURSION.holders += 1
    try:
        yield
    finally:
        with _LOCK:
            _RECURSION.holders -= 1
            if _RECURSION.holders == 0:
                sys.setrecursionlimit(_RECURSION.saved)  # type: ignore[arg-type]
