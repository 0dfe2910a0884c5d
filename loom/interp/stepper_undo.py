"""Flat undo logs for the stepper's history, so the garbage collector stops tracking them.

CPython stops tracking a tuple at a collection when none of its items is tracked, and it looks
at a step record before the tuples the record holds. A record whose tuples hold only atoms
(ints, strings, bytes, NumPy scalars, None) is therefore untracked by the second young
collection and never reaches the oldest generation, whose full collections walk every tracked
object of the process. So the logs of a step are kept as flat tuples of atoms: the environment
log as ``(slot, old, slot, old, ...)`` and the other undo entries as chunks, each its length
and its items (an access's shadow save, made flat by
:meth:`loom.interp.stepper_access.Access.save`, behind its negated length with its last-access
key spliced in).
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import chain


def flat_env_log(log: list) -> tuple | list:
    """``(slot, old value)`` pairs as one flat tuple; the list itself when some entry names
    another environment (``(env, slot, old value)``)."""
    out: list = []
    for entry in log:
        if len(entry) != 2:
            return log
        out += entry
    return tuple(out)


def chunk(entry: tuple) -> tuple:
    """An undo entry as a flat chunk: its length, then its items."""
    return (len(entry), *entry)


def seal_misc(chunks: list) -> tuple:
    """The history form of a step's undo chunks: one flat tuple."""
    return chunks[0] if len(chunks) == 1 else tuple(chain.from_iterable(chunks))


def misc_entries(flat: tuple) -> Iterator[tuple]:
    """The entries of flat chunks, in order (an access's shadow save as Shadow.save's
    tuple, with the buffer's uid first)."""
    i, end = 0, len(flat)
    while i < end:
        n = flat[i]
        if n < 0:
            k = flat[i + 7]
            if k < 0:
                last, j = None, i + 8
            else:
                j = i + 8 + k
                last = flat[i + 8 : j]
            rest = -n - 7
            yield (*flat[i + 1 : i + 7], last, *flat[j : j + rest])
            i = j + rest
        else:
            yield flat[i + 1 : i + 1 + n]
            i += 1 + n
