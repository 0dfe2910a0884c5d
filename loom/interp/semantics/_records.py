"""Module-level records of one launch: the storage of globals and the values of configs.

Every scalar global is a one-element buffer, so loads and stores of globals go through the
engines' memory paths: the sanitizer sees them (two workitems storing to one global race; a
global without an initializer reads as uninitialised) and the stepper's ``step_back`` undoes
them, with the same findings in both engines. Read-only tables are constant-space buffers of
their bytes. ``launch(..., globals={...})`` supplies values (NumPy arrays are used in place,
numbers are copied in) and receives every value global's final value; ``config={...}``
overrides configs by name.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from loom.dialects.config import CONFIG_KIND, declared_type
from loom.dialects.global_ import GLOBAL_KIND, RODATA_KIND
from loom.errors import LoomRuntimeError
from loom.interp.launch_args import bind_scalar
from loom.interp.memory import Buf, as_bytes
from loom.interp.numerics import constant, from_memory, memory_dtype, to_memory
from loom.ir import BufferType, DynamicDim, Module, ScalarType, ShapedType, StaticDim, TypeKind
from loom.registry import default_registry


class Cell:
    """The storage of one global: its buffer, type and whether it starts initialised."""

    __slots__ = ("name", "type", "buf", "initialised", "owned", "op", "dims")

    def __init__(self, name: str, t: Any, buf: Buf | None, initialised: bool, op: Any) -> None:
        self.name = name
        self.type = t
        self.buf = buf
        self.initialised = initialised
        self.owned = True
        """The storage is ours (the final value is handed back into the caller's dict)."""
        self.op = op
        self.dims: tuple = ()
        """Extents of a view global (from the array the launch supplied)."""


class ModuleRecords:
    """The globals and configs of ``module`` for one launch (see the module docstring)."""

    def __init__(
        self, module: Module, globals: dict | None = None, config: dict | None = None
    ) -> None:
        registry = default_registry()
        self.cells: dict[str, Cell] = {}
        self.configs: dict[str, Any] = {}
        self.config_types: dict[str, Any] = {}
        self.bufs: list[Buf] = []
        decls: dict[str, Any] = {}
        for name, op in module.symbols.items():
            decl = registry.get(op.name)
            kind = decl.symbol_trait.kind if decl is not None and decl.symbol_trait else None
            if kind in (GLOBAL_KIND, RODATA_KIND, CONFIG_KIND):
                decls[name] = (kind, op)
        supplied = _normalised(globals, "globals")
        for name in supplied:
            if name not in decls or decls[name][0] == CONFIG_KIND:
                raise LoomRuntimeError(_unknown("global", name, decls, (GLOBAL_KIND, RODATA_KIND)))
        for name, (kind, op) in decls.items():
            if kind == GLOBAL_KIND:
                self._value_global(name, op, supplied)
            elif kind == RODATA_KIND:
                self._rodata(name, op, supplied)
            else:
                t = declared_type(op)
                self.config_types[name] = t
                if "value" in op.attributes and isinstance(t, ScalarType):
                    self.configs[name] = constant(t, op.attributes["value"])
        for name, value in _normalised(config, "config").items():
            if name not in decls or decls[name][0] != CONFIG_KIND:
                raise LoomRuntimeError(_unknown("config", name, decls, (CONFIG_KIND,)))
            t = self.config_types[name]
            if not isinstance(t, ScalarType):
                raise LoomRuntimeError(f"config @{name} has type {t}, which launches cannot set")
            bound = bind_scalar(value, t, f"config @{name}")
            _check_stated_facts(name, decls[name][1], bound)
            self.configs[name] = bound

    # ------------------------------------------------------------------ binding

    def _value_global(self, name: str, op: Any, supplied: dict) -> None:
        t = declared_type(op)
        given = supplied.get(name)
        if isinstance(t, BufferType):
            buf = None
            if given is not None:
                buf = Buf(_bytes_of(given, name), name)
                self.bufs.append(buf)
            cell = Cell(name, t, buf, True, op)
            cell.owned = False
            self.cells[name] = cell
            return
        if isinstance(t, ShapedType) and t.kind is TypeKind.VIEW:
            cell = Cell(name, t, None, True, op)
            cell.owned = False
            if given is not None:
                cell.buf, cell.dims = Buf(_bytes_of(given, name), name), _view_dims(name, t, given)
                self.bufs.append(cell.buf)
            self.cells[name] = cell
            return
        if not isinstance(t, ScalarType):
            self.cells[name] = Cell(name, t, None, False, op)  # not modelled: loads refuse
            return
        dtype = memory_dtype(t)
        if isinstance(given, np.ndarray):
            data = _bytes_of(given, name)
            if data.size != dtype.itemsize:
                raise LoomRuntimeError(
                    f"global @{name} of type {t} takes {dtype.itemsize} bytes, the array given "
                    f"has {data.size}"
                )
            cell = Cell(name, t, Buf(data, name), True, op)
            cell.owned = False
        else:
            data = np.zeros(dtype.itemsize, dtype=np.uint8)
            initialised = True
            if given is not None:
                value = bind_scalar(given, t, f"global @{name}")
            elif "initializer" in op.attributes:
                value = constant(t, op.attributes["initializer"])
            else:
                value, initialised = None, False
            if value is not None:
                data[:] = to_memory(t, value).view(np.uint8)
            cell = Cell(name, t, Buf(data, name), initialised, op)
        self.cells[name] = cell
        self.bufs.append(cell.buf)

    def _rodata(self, name: str, op: Any, supplied: dict) -> None:
        given = supplied.get(name)
        if given is not None:
            data = _bytes_of(given, name)
        elif "contents" in op.attributes:
            data = np.frombuffer(bytes.fromhex(op.attributes["contents"]), np.uint8).copy()
        else:
            data = None
        buf = None if data is None else Buf(data, name, "constant")
        cell = Cell(name, BufferType(), buf, True, op)
        cell.owned = False
        self.cells[name] = cell
        if buf is not None:
            self.bufs.append(buf)

    def initialised(self, buf: Buf) -> bool:
        """Whether ``buf`` (one of :attr:`bufs`) starts initialised (for its shadow state)."""
        for c in self.cells.values():
            if c.buf is buf:
                return c.initialised
        return True

    # ------------------------------------------------------------------ after the launch

    def hand_back(self, globals: dict | None) -> None:
        """Write every scalar global's final value into ``globals`` (when a dict was given;
        a global that never had a value is left out)."""
        if globals is None:
            return
        for name, c in self.cells.items():
            shadow = c.buf.shadow if c.buf is not None else None
            if not c.initialised and shadow is not None and shadow.w_hi < 0:
                continue  # never given a value: nothing to hand back
            if c.owned and c.buf is not None and isinstance(c.type, ScalarType):
                raw = c.buf.data.view(memory_dtype(c.type))
                globals[name] = from_memory(c.type, raw)[0]


def _check_stated_facts(name: str, op: Any, value: Any) -> None:
    """A supplied config value must satisfy the predicates its declaration states about it."""
    from loom.interp.semantics.sanitizer import holds, predicate_text

    args = op.regions[0].blocks[0].args if op.regions and op.regions[0].blocks else ()
    own = args[-1] if args else None
    for p in op.attributes.get("predicates", ()):
        if own is None or not all(a is own or isinstance(a, int) for a in p.args):
            continue
        vals = [value if a is own else np.int64(a) for a in p.args]
        if not bool(np.all(holds(p, vals))):
            raise LoomRuntimeError(
                f"config @{name} = {value} breaks the fact its declaration states: "
                f"{predicate_text(p)}"
            )


def _normalised(given: dict | None, what: str) -> dict:
    if given is None:
        return {}
    if not isinstance(given, dict):
        raise LoomRuntimeError(f"{what}= takes a dict of names to values, got {given!r}")
    out = {}
    for key, value in given.items():
        if not isinstance(key, str):
            raise LoomRuntimeError(f"{what}= keys are symbol names, got {key!r}")
        name = key.strip()
        name = name[1:] if name.startswith("@") else name
        if name in out:
            raise LoomRuntimeError(f"{what}= names @{name} twice")
        out[name] = value
    return out


def _unknown(what: str, name: str, decls: dict, kinds: tuple) -> str:
    known = sorted(n for n, (k, _) in decls.items() if k in kinds)
    listing = ", ".join("@" + n for n in known) if known else "none"
    return f"unknown {what} name '@{name}'; the module declares {what}s: {listing}"


def _view_dims(name: str, t: ShapedType, array: Any) -> tuple:
    """The extents of the array supplied for view global ``name``, checked against its type."""
    if not isinstance(array, np.ndarray):
        raise LoomRuntimeError(f"global @{name} of type {t} takes a NumPy array")
    want = memory_dtype(t.element_type)
    if array.ndim != t.rank or array.dtype.itemsize != want.itemsize:
        raise LoomRuntimeError(
            f"global @{name} of type {t} takes a {t.rank}-d array of {want.itemsize}-byte "
            f"elements, got shape {array.shape} of {array.dtype}"
        )
    seen: dict[int, int] = {}
    for k, (d, n) in enumerate(zip(t.dims, array.shape)):
        if isinstance(d, StaticDim) and d.size != n:
            raise LoomRuntimeError(f"global @{name}: extent {k} of {t} is {d.size}, not {n}")
        dynamic = isinstance(d, DynamicDim) and d.value is not None
        if dynamic and seen.setdefault(id(d.value), n) != n:
            raise LoomRuntimeError(
                f"global @{name}: {t} repeats an extent, the array's shape {array.shape} does not"
            )
    return tuple(np.int64(n) for n in array.shape)


def _bytes_of(value: Any, name: str) -> np.ndarray:
    try:
        return as_bytes(value, name)
    except TypeError as e:
        raise LoomRuntimeError(f"global @{name}: {e}") from None


def records_of(ctx: Any) -> ModuleRecords:
    """The launch's records (made from the module's declarations when the engine gave none)."""
    records = getattr(ctx, "records", None)
    if records is None:
        records = ctx.records = ModuleRecords(ctx.plan.program.module)
    return records
