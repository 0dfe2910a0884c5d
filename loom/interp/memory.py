"""Runtime storage objects: buffers (little-endian byte arrays) and typed views over them."""

from __future__ import annotations

from typing import Any

import numpy as np

from loom.interp.numerics import memory_dtype
from loom.ir import ScalarType


class Buf:
    """A storage root: a ``uint8`` array (the user's array viewed as bytes, modified in place).

    ``group_bytes`` > 0 marks workgroup memory of several workgroups run together: workgroup
    ``g`` of the chunk owns bytes ``[g * group_bytes, (g + 1) * group_bytes)`` and addresses are
    relative to that slice. ``shadow`` holds the sanitizer's per-byte state (or None).
    """

    __slots__ = (
        "data",
        "name",
        "space",
        "group_bytes",
        "shadow",
        "uid",
        "length",
        "slack",
        "__weakref__",
    )
    _next = 0

    def __init__(
        self, data: np.ndarray, name: str, space: str = "global", group_bytes: int = 0
    ) -> None:
        self.data = data
        self.name = name
        self.space = space
        self.group_bytes = group_bytes
        self.length = group_bytes or int(data.size)
        """Byte length seen by one workitem."""
        self.slack = 0
        """Zero bytes owned past ``data`` (strided reads of masked-off lanes may touch them)."""
        self.shadow: Any = None
        Buf._next += 1
        self.uid = Buf._next

    def __repr__(self) -> str:
        return f"<buffer {self.name}: {self.length} bytes, {self.space}>"


class Gathered:
    """Per-lane values of the active lanes only (the grid engine's element addresses under a
    mask): ``values[k]`` belongs to lane ``lanes[k]``, ``mask`` is the run mask they were
    gathered under."""

    __slots__ = ("mask", "lanes", "values")

    def __init__(self, mask: Any, lanes: np.ndarray, values: Any) -> None:
        self.mask, self.lanes, self.values = mask, lanes, values

    def expand(self, n: int) -> np.ndarray:
        """Every lane's value (masked-off lanes 0)."""
        out = np.zeros(n, dtype=np.asarray(self.values).dtype)
        out[self.lanes] = self.values
        return out


CODED = ("bf16", "i1")
"""Element types whose memory holds an encoding of the value (bf16 bits, i1 bytes)."""


class View:
    """A typed window: element (i0..in) is at ``base + sum(i_k * strides[k]) * size`` bytes."""

    __slots__ = ("buf", "base", "dims", "strides", "etype", "mdtype", "size", "static", "coded")

    def __init__(self, buf: Buf, base: Any, dims: tuple, strides: tuple, etype: ScalarType) -> None:
        self.buf = buf
        self.base = base
        self.dims = dims
        self.strides = strides
        self.etype = etype
        self.mdtype = memory_dtype(etype)
        self.size = self.mdtype.itemsize
        self.coded = etype.spelling in CODED
        """True when memory holds an encoding of the value (bf16 bits, i1 bytes)."""
        self.static: tuple | None = None
        """(base, dims, strides) as Python ints when they are lane-uniform (fast access paths)."""
        if not np.ndim(base) and not any(np.ndim(d) for d in (*dims, *strides)):
            self.static = (int(base), tuple(int(d) for d in dims), tuple(int(s) for s in strides))

    def __repr__(self) -> str:
        shape = "x".join(str(d) if np.ndim(d) == 0 else "?" for d in self.dims)
        return f"<view {shape}x{self.etype} of {self.buf.name} at byte {self.base}>"


class Layout:
    """A runtime address layout (the value of ``encoding<layout>``): ``strides`` None is dense
    row-major, else one element stride per axis (ints or per-lane arrays)."""

    __slots__ = ("strides", "rank")

    def __init__(self, strides: tuple | None = None, rank: int | None = None) -> None:
        self.strides = strides
        self.rank = rank if strides is None else len(strides)
        """The rank promised (strided assumptions) or given by the strides; None: any."""

    @property
    def kind(self) -> str:
        """``dense`` or ``strided``."""
        return "dense" if self.strides is None else "strided"

    def strides_for(self, dims: tuple) -> tuple:
        """Element strides of a view of extents ``dims`` under this layout."""
        if self.strides is None:
            return dense_strides(dims)
        if len(self.strides) != len(dims):
            raise ValueError(
                f"a strided layout of rank {len(self.strides)} addresses a view of rank {len(dims)}"
            )
        return self.strides

    def __repr__(self) -> str:
        if self.strides is None:
            return "<layout dense>"
        return "<layout strided [" + ", ".join(str(s) for s in self.strides) + "]>"


def dense_strides(dims: tuple) -> tuple:
    """Row-major strides (in elements) for ``dims``."""
    strides = []
    acc: Any = np.int64(1)
    for d in reversed(dims):
        strides.append(acc)
        acc = acc * d
    return tuple(reversed(strides))


def as_bytes(array: Any, name: str) -> np.ndarray:
    """A writable ``uint8`` view of a user buffer (C-contiguous array or bytearray)."""
    if isinstance(array, bytearray | memoryview):
        out = np.frombuffer(array, dtype=np.uint8)
        if not out.flags.writeable:
            raise TypeError(f"buffer argument '{name}' is read-only")
        return out
    if not isinstance(array, np.ndarray):
        raise TypeError(
            f"buffer argument '{name}' must be a NumPy array or a bytearray, got "
            f"{type(array).__name__}"
        )
    if not array.flags.c_contiguous:
        raise TypeError(f"buffer argument '{name}' must be C-contiguous (use np.ascontiguousarray)")
    if not array.flags.writeable:
        raise TypeError(f"buffer argument '{name}' is read-only")
    return array.reshape(-1).view(np.uint8)
