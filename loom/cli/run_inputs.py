"""What ``loom-run`` checks before a launch: ``.npy`` files, scalar values and view uses.

Every problem is a :class:`RunInputError` carrying one line for the user; nothing here runs
the kernel.
"""

from __future__ import annotations

import math
import os
import stat
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.lib import format as npy_format

from loom.diagnostics import a_or_an
from loom.dialects.buffer import VIEW_OP
from loom.dialects.index import CONSTANT
from loom.interp.numerics import memory_dtype
from loom.ir import DynamicDim, Module, Operation, Region, ScalarType, ShapedType, Value
from loom.opview import operand_groups

_NPY_READERS = {
    (1, 0): npy_format.read_array_header_1_0,
    (2, 0): npy_format.read_array_header_2_0,
}


class RunInputError(Exception):
    """A bad input to ``loom-run``, reported as one line and exit status 2."""


# ---------------------------------------------------------------------- .npy files


def load_npy(path: str, limit: int) -> np.ndarray:
    """A writable, C-ordered, little-endian array from ``path``, its header checked first.

    The header's shape must fit in ``limit`` bytes and in the bytes the file actually holds,
    so a crafted header cannot make us allocate memory the file does not back. Object and
    structured dtypes are refused (a ``.npy`` file never runs code here).
    """
    try:
        with open(path, "rb") as f:
            st = os.fstat(f.fileno())
            if not stat.S_ISREG(st.st_mode):
                raise RunInputError(f"{path} is not a regular file")
            try:
                version = npy_format.read_magic(f)
                reader = _NPY_READERS.get(version)
                if reader is None:
                    raise RunInputError(f"{path}: .npy format version {version} is not supported")
                shape, fortran, dtype = reader(f)
            except (ValueError, SyntaxError, TypeError) as e:
                raise RunInputError(f"{path} is not a valid .npy file: {e}") from None
            if dtype.hasobject or dtype.fields is not None or dtype.subdtype is not None:
                raise RunInputError(
                    f"{path}: dtype {dtype} is not supported (plain numeric arrays only)"
                )
            if any(d < 0 for d in shape):
                raise RunInputError(f"{path}: the header's shape {shape} has a negative extent")
            nbytes = math.prod(shape) * dtype.itemsize
            available = st.st_size - f.tell()
            if nbytes > limit:
                raise RunInputError(
                    f"{path}: the header's shape {shape} of {dtype} needs {nbytes} bytes, more "
                    f"than the limit of {limit} bytes (raise it with --max-input-size)"
                )
            if nbytes > available:
                raise RunInputError(
                    f"{path}: the header's shape {shape} of {dtype} needs {nbytes} bytes, but "
                    f"the file holds {available} bytes after its header"
                )
            data = bytearray(nbytes)
            if f.readinto(data) != nbytes:
                raise RunInputError(f"{path}: the file ended before its {nbytes} data bytes")
    except OSError as e:
        raise RunInputError(f"cannot read {path}: {e.strerror or e}") from None
    arr = np.frombuffer(data, dtype=dtype)
    try:
        arr = arr.reshape(shape, order="F" if fortran else "C")
    except ValueError as e:  # e.g. (0, 2**61): no data, but an extent NumPy cannot index
        raise RunInputError(f"{path}: the header's shape {shape} is not usable: {e}") from None
    if dtype.byteorder == ">" or (dtype.byteorder == "=" and sys.byteorder == "big"):
        arr = arr.astype(dtype.newbyteorder("<"), order="C")  # buffers are little-endian bytes
    # (not np.ascontiguousarray: it turns a 0-d array into shape (1,))
    return arr if arr.flags.c_contiguous else arr.copy(order="C")


# ---------------------------------------------------------------------- scalars


def parse_scalar(text: str, t: ScalarType) -> Any:
    """The Python number ``text`` spells for a value of type ``t`` (range checked later)."""
    try:
        if t.is_float:
            return float(text)
        if t.bit_width == 1 and text in ("true", "false"):
            return text == "true"
        return int(text, 0)
    except ValueError:
        raise RunInputError(f"{text[:40]!r} is not {a_or_an(f'{t} value')}") from None


# ---------------------------------------------------------------------- view uses


@dataclass(frozen=True)
class ViewUse:
    """One view the kernel body makes directly from a buffer argument."""

    type: ShapedType
    where: str
    """``file:line`` of the op, or the op's name when it has no location."""
    extents: tuple[int | None, ...]
    """Each extent when known before the launch (static, a constant or a launch argument)."""
    at_start: bool
    """True when the view starts at byte 0 (a constant offset of 0)."""


def view_uses(module: Module, body: Region, scalars: dict[int, int]) -> dict[int, list[ViewUse]]:
    """Views made from each body parameter, keyed by the parameter's value id.

    ``scalars`` maps the value ids of scalar parameters to the values they are launched with.
    """
    params = {p.id for p in body.entry.args}
    constants: dict[int, int] = {}
    uses: dict[int, list[ViewUse]] = {}
    value_attr = CONSTANT.attrs[0].name
    for op in body.walk():
        if op.name == CONSTANT.name and op.results:
            v = op.attributes.get(value_attr)
            if isinstance(v, int):
                constants[op.results[0].id] = v
        if op.name != VIEW_OP.name:
            continue
        try:
            groups = operand_groups(op, VIEW_OP)
        except ValueError:
            continue
        (buf,) = groups["buffer"]
        (offset,) = groups["byte_offset"]
        t = op.results[0].type if op.results else None
        if buf.id not in params or not isinstance(t, ShapedType):
            continue
        known = {**constants, **scalars}
        extents = tuple(_extent(d, known) for d in t.dims)
        uses.setdefault(buf.id, []).append(
            ViewUse(t, _where(module, op), extents, constants.get(offset.id) == 0)
        )
    return uses


def _extent(d: Any, known: dict[int, int]) -> int | None:
    if isinstance(d, DynamicDim):
        v: Value | None = d.value
        return known.get(v.id) if v is not None else None
    return int(d.size)


def _where(module: Module, op: Operation) -> str:
    loc = module.location(op.location_id)
    line = getattr(loc, "start_line", None)
    if line is None:
        return op.name
    sid = getattr(loc, "source_id", None)
    sources = getattr(module, "sources", ())
    name = sources[sid] if isinstance(sid, int) and 0 <= sid < len(sources) else "line"
    return f"{name}:{line}"


def check_array(name: str, path: str, arr: np.ndarray, uses: list[ViewUse]) -> None:
    """Refuse an array whose dtype or shape does not match a view the kernel reads it through."""
    for use in uses:
        et = use.type.element_type
        dtype_ok = _dtype_fits(arr.dtype, et)
        rank_ok = len(use.extents) == arr.ndim
        extents_ok = rank_ok and (
            not use.at_start
            or use.type.encoding is not None
            or all(e is None or e == n for e, n in zip(use.extents, arr.shape))
        )
        if dtype_ok and extents_ok:
            continue
        shape = "(" + ", ".join("?" if e is None else str(e) for e in use.extents)
        shape += ",)" if len(use.extents) == 1 else ")"
        wanted = f"dtype {_dtype_name(et)}" if not dtype_ok else ""
        if not extents_ok:
            wanted += (" and " if wanted else "") + f"shape {shape}"
        raise RunInputError(
            f"argument {name}: {path} holds {arr.dtype} values of shape {arr.shape}, but the "
            f"kernel reads it as {use.type} ({use.where}), which needs {wanted}; save it so, "
            "or pass --reinterpret to use its bytes as they are"
        )


def _dtype_fits(dtype: np.dtype, t: ScalarType) -> bool:
    want = memory_dtype(t)
    if want.kind == "f":
        return dtype.kind == "f" and dtype.itemsize == want.itemsize
    kinds = "biu" if want.itemsize == 1 and t.bit_width == 1 else "iu"
    if t.spelling == "bf16":  # bfloat16 bits: NumPy has no such dtype
        kinds = "iu"
    return dtype.kind in kinds and dtype.itemsize == want.itemsize


def _dtype_name(t: ScalarType) -> str:
    want = memory_dtype(t)
    if t.bit_width == 1 and want.itemsize == 1:
        return "bool or uint8"
    if t.spelling == "bf16":
        return "uint16 (bfloat16 bits)"
    if want.kind in "iu":
        return f"int{want.itemsize * 8} or uint{want.itemsize * 8}"
    return str(want.newbyteorder("="))


def output_targets(folder: Path, names: list[str], force: bool) -> list[Path]:
    """The ``.npy`` files a run will write; refuses to overwrite files unless ``force``."""
    if folder.exists() and not folder.is_dir():
        raise RunInputError(
            f"-o {folder}: not a folder (loom-run writes one NAME.npy per buffer into a folder)"
        )
    targets = [folder / f"{n}.npy" for n in names]
    if not force:
        taken = [str(t) for t in targets if t.exists() or t.is_symlink()]
        if taken:
            raise RunInputError(
                f"would overwrite {', '.join(taken)}: pass --force to replace, "
                "or choose another -o folder"
            )
    for t in targets:
        if t.is_dir():
            raise RunInputError(f"cannot write {t}: it is a directory")
    return targets
