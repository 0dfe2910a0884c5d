"""Flat undo logs for the stepper's history, so the garbage collector stops tracking them.

CPython stops tracking a tuple at a collection when none of its items is tracked, and it looks
at a step record before the tuples the record holds. A record whose tuples hold only atoms
(ints, strings, bytes, NumPy scalars, None) is therefore untracked by the second young
collection and never reaches the oldest generation, whose full collections walk every tracked
object of the process. So the logs of a step are kept as flat tuples of atoms: the environment
log as ``(slot, old, slot, old, ...)`` and the other undo entries each as its length and its
items, an access's shadow key (a tuple) spliced in behind a negative length.
"""

from __future__ import annotations

from collections.abc import Iterator


def flat_env_log(log: list) -> tuple | list:
    """``(slot, old value)`` pairs as one flat tuple; the list itself when some entry names
    another environment (``(env, slot, old value)``)."""
    out: list = []
    for entry in log:
        if len(entry) != 2:
            return log
        out += entry
    return tuple(out)


def flat_misc(entries: list) -> tuple:
    """Undo entries as one flat tuple (read back by :func:`misc_entries`)."""
    out: list = []
    for e in entries:
        if type(e[0]) is int and len(e) > 7 and type(e[6]) is tuple:
            # a shadow save: (uid, kind, p, q, lo, hi, last key, saved bytes...)
            last = e[6]
            out.append(-len(e))
            out += e[:6]
            out.append(len(last))
            out += last
            out += e[7:]
        else:
            out.append(len(e))
            out += e
    return tuple(out)


def misc_entries(flat: tuple) -> Iterator[tuple]:
    """The entries :func:`flat_misc` flattened, in order."""
    i, end = 0, len(flat)
    while i < end:
        n = flat[i]
        if n < 0:
            k = flat[i + 7]
            j = i + 8 + k
            rest = -n - 7
            yield (*flat[i + 1 : i + 7], flat[i + 8 : j], *flat[j : j + rest])
            i = j + rest
        else:
            yield flat[i + 1 : i + 1 + n]
            i += 1 + n
