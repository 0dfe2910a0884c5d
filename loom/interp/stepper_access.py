"""The stepper's memory accesses: one workitem's read or write, checked and recorded quickly.

The stepper's shadows (:class:`loom.interp.sanitizer.Shadow`) have 1-byte granules from the
start, so their arrays never move; :class:`Access` keeps memoryviews of them and of the
buffer's bytes. An access whose sanitizer check cannot report anything (the quiet case of
:func:`loom.interp.sanitizer.check_item`, decided here granule by granule in Python, atomic
accesses included) updates the shadow through the memoryviews; any other access goes through
:func:`~loom.interp.sanitizer.check_item`, which reports and records. Either way the undo record
is the tuple :meth:`Shadow.save` would give with the buffer's uid in place of the shadow (no
reference the garbage collector must follow), flattened (:mod:`loom.interp.stepper_undo`), so
:meth:`Shadow.restore` undoes it once read back.
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

from loom.interp import sanitizer as san

_ORDER = sys.byteorder


class Access:
    """Fast access paths to one buffer and its granule-1 shadow."""

    __slots__ = ("buf", "sh", "data", "wi", "ri", "wib", "rib", "wob", "rob", "init", "k", "typed")

    def __init__(self, buf: Any) -> None:
        sh = buf.shadow
        self.buf, self.sh = buf, sh
        self.data = memoryview(buf.data).cast("B") if buf.data.flags.c_contiguous else None
        self.wi, self.ri = memoryview(sh.w_item), memoryview(sh.r_item)
        self.wib, self.rib = self.wi.cast("B"), self.ri.cast("B")
        self.wob, self.rob = memoryview(sh.w_op).cast("B"), memoryview(sh.r_op).cast("B")
        self.init = None if sh.init is None else memoryview(sh.init).cast("B")
        self.k = sh.stamp.itemsize
        self.typed: dict[str, np.ndarray] = {}
        """Element views of the buffer by dtype string (for aligned loads)."""

    def load(self, p: int, dtype: np.dtype) -> Any:
        """The element of ``dtype`` at byte ``p`` (a NumPy scalar)."""
        n = dtype.itemsize
        if p % n == 0:
            typed = self.typed.get(dtype.str)
            if typed is None:
                data = self.buf.data
                typed = self.typed[dtype.str] = data[: data.size - data.size % n].view(dtype)
            return typed[p // n]
        return self.buf.data[p : p + n].view(dtype)[0]

    def save(self, kind: str, p: int, q: int) -> tuple:
        """The undo record of an access of ``kind`` to bytes ``p..q-1``, flat (see
        :mod:`loom.interp.stepper_undo`): the tuple Shadow.save would give with the buffer's
        uid in place of the shadow, behind its negated length, with its last-access key
        spliced in behind that key's length (-1 for None)."""
        sh, k = self.sh, self.k
        o = sh.opdt.itemsize
        if kind == "r":
            e, last = sh.r_epoch, sh.last_r
            return (
                -10,
                self.buf.uid,
                "r",
                p,
                q,
                sh.r_lo,
                sh.r_hi,
                -1 if last is None else len(last),
                *(last or ()),
                self.rib[p * k : q * k].tobytes(),
                None if e is None else e[p:q].tobytes(),
                self.rob[p * o : q * o].tobytes(),
            )
        e, init, last = sh.w_epoch, self.init, sh.last_w
        return (
            -11,
            self.buf.uid,
            "w",
            p,
            q,
            sh.w_lo,
            sh.w_hi,
            -1 if last is None else len(last),
            *(last or ()),
            self.wib[p * k : q * k].tobytes(),
            None if e is None else e[p:q].tobytes(),
            self.wob[p * o : q * o].tobytes(),
            None if init is None else init[p:q].tobytes(),
        )

    def quiet(
        self, kind: str, p: int, q: int, raw: bytes, item: int, epoch: int, wg: int, f: Any
    ) -> bool:
        """True when no access of ``kind`` recorded on bytes ``p..q-1`` (stamps ``raw``) races
        with this one by ``item`` in barrier ``epoch`` (``f``: the findings' atomic steps when
        this access is atomic, else None): the rule of :func:`sanitizer._quiet_item`."""
        sh = self.sh
        lo, hi = (sh.w_lo, sh.w_hi) if kind == "w" else (sh.r_lo, sh.r_hi)
        if not (p < hi and lo < q):
            return True
        stamp = item + 1
        k = self.k
        if not raw.strip(b"\0") or raw == stamp.to_bytes(k, _ORDER) * (q - p):
            return True
        stamps = self.wi if kind == "w" else self.ri
        epochs = sh.w_epoch if kind == "w" else sh.r_epoch
        ops = sh.w_op if kind == "w" else sh.r_op
        wgm = self.buf.space == "workgroup"
        group = item // wg
        for j in range(p, q):
            prev = stamps[j]
            if prev == san.NONE or prev == stamp:
                continue
            if (prev - 1) // wg != group:
                if wgm:
                    continue
            elif (0 if epochs is None else int(epochs[j])) != epoch:
                continue
            if f is None or int(ops[j]) not in f:
                return False
        return True

    def record(self, kind: str, p: int, q: int, item: int, epoch: int, index: int) -> None:
        """Record a quiet access of bytes ``p..q-1`` by ``item`` at step ``index``."""
        sh, k = self.sh, self.k
        n = q - p
        stamp = (item + 1).to_bytes(k, _ORDER) * n
        o = sh.opdt.itemsize
        op = index.to_bytes(o, _ORDER)
        key = (p, 1, n, item)
        if kind == "r":
            self.rib[p * k : q * k] = stamp
            if epoch or sh.r_epoch is not None:
                sh.epochs("r")[p:q] = epoch
            self.rob[p * o : q * o] = op * n
            if p < sh.r_lo:
                sh.r_lo = p
            if q > sh.r_hi:
                sh.r_hi = q
            sh.last_r = key
            return
        self.wib[p * k : q * k] = stamp
        if epoch or sh.w_epoch is not None:
            sh.epochs("w")[p:q] = epoch
        self.wob[p * o : q * o] = op * n
        if self.init is not None:
            self.init[p:q] = b"\1" * n
        if p < sh.w_lo:
            sh.w_lo = p
        if q > sh.w_hi:
            sh.w_hi = q
        sh.last_w = key
