"""Binding launch arguments: workload values for the config region, device args for the body."""

from __future__ import annotations

from typing import Any

import numpy as np

from loom.errors import LoomRuntimeError
from loom.interp.memory import Buf, as_bytes
from loom.interp.numerics import constant
from loom.ir import BufferType, FuncRefType, ScalarType, Value


def bind_scalar(value: Any, t: ScalarType, what: str) -> Any:
    """A launch scalar checked against its declared type."""
    if t.is_float:
        if isinstance(value, bool) or not isinstance(value, int | float | np.integer | np.floating):
            raise LoomRuntimeError(f"{what} must be a number for type {t}, got {value!r}")
        return constant(t, float(value))
    if isinstance(value, np.bool_ | bool):
        if t.bit_width != 1:
            raise LoomRuntimeError(f"{what} must be an integer for type {t}, got {value!r}")
        return np.bool_(value)
    if not isinstance(value, int | np.integer):
        raise LoomRuntimeError(f"{what} must be an integer for type {t}, got {value!r}")
    v = int(value)
    if t.spelling == "offset":
        lo, hi = 0, 2**63 - 1
    elif t.spelling == "index":
        lo, hi = -(2**63), 2**63 - 1
    elif t.bit_width == 1:
        lo, hi = 0, 1
    else:
        lo, hi = -(2 ** (t.bit_width - 1)), 2**t.bit_width - 1
    if not lo <= v <= hi:
        raise LoomRuntimeError(f"{what} value {v} does not fit in {t} ({lo}..{hi})")
    return constant(t, v)


def bind_args(
    params: tuple[Value, ...], args: tuple, kernel: str, program: Any = None
) -> tuple[list, list[Buf]]:
    """Device argument values for the body's parameters, and the buffers among them (a
    function reference parameter takes a function's name, ``"@f"``, or None for null)."""
    if len(args) != len(params):
        names = ", ".join(f"%{p.display_name}: {p.type}" for p in params)
        raise LoomRuntimeError(
            f"kernel '@{kernel}' takes {len(params)} launch arguments ({names}), got {len(args)}"
        )
    values, bufs = [], []
    for p, a in zip(params, args):
        what = f"launch argument %{p.display_name} of '@{kernel}'"
        if isinstance(p.type, BufferType):
            try:
                data = as_bytes(a, p.display_name)
            except TypeError as e:
                raise LoomRuntimeError(f"{what}: {e}") from None
            b = Buf(data, p.display_name)
            values.append(b)
            bufs.append(b)
        elif isinstance(p.type, ScalarType):
            values.append(bind_scalar(a, p.type, what))
        elif isinstance(p.type, FuncRefType) and program is not None:
            values.append(bind_function_ref(program, a, p.type, what))
        else:
            raise LoomRuntimeError(f"{what} has type {p.type}, which launches cannot pass yet")
    return values, bufs


def bind_functions(program: Any, functions: Any) -> dict:
    """``launch(functions=...)`` checked: each name (``"f"`` or ``"@f"``) is a function
    declaration of the module and each value a Python callable."""
    if not functions:
        return {}
    from loom.dsl import Declaration

    if not hasattr(functions, "items"):
        raise LoomRuntimeError(
            f"functions= maps declaration names to Python callables, got {functions!r}"
        )
    bound: dict = {}
    declared = sorted(
        name
        for name, op in program.module.symbols.items()
        if (d := program.registry.get(op.name)) is not None
        and d.trait(Declaration) is not None
        and d.symbol_trait is not None
        and d.symbol_trait.kind == "func"
    )
    for key, fn in functions.items():
        name = key[1:] if isinstance(key, str) and key.startswith("@") else key
        if name not in declared:
            have = ", ".join(f"@{n}" for n in declared) or "none"
            raise LoomRuntimeError(
                f"functions= binds {key!r}, which is not a function declaration of the module "
                f"(declarations: {have})"
            )
        if not callable(fn):
            raise LoomRuntimeError(f"functions= binds @{name} to {fn!r}, which is not callable")
        bound[name] = fn
    return bound


def bind_function_ref(program: Any, name: Any, t: FuncRefType, what: str) -> np.int64:
    """The reference value of the function named ``name`` (``"f"`` or ``"@f"``; None: null),
    checked against the parameter's signature."""
    if name is None:
        return np.int64(0)
    if not isinstance(name, str):
        raise LoomRuntimeError(f"{what} takes a function name ('@f') or None, got {name!r}")
    from loom.dialects.func import signature_of

    key = name[1:] if name.startswith("@") else name
    op = program.module.symbols.get(key)
    d = program.registry.get(op.name) if op is not None else None
    have = signature_of(op) if op is not None else None
    if d is None or d.symbol_trait is None or d.symbol_trait.kind != "func" or have is None:
        raise LoomRuntimeError(f"{what}: '@{key}' is not a function of the module")
    if have != t.signature:
        raise LoomRuntimeError(f"{what}: '@{key}' has signature {have}, the parameter {t}")
    return np.int64(program.reference(program.function(key)))
