"""Module versions: every mutation of a module's IR bumps ``Module.version``.

State derived from a module (interpreter plans, the printed text behind location-less
diagnostics) is cached on the module together with the version it was derived from
(:meth:`~loom.ir.module.Module.derived`), so an edit made in place (renaming an op, replacing
its operands or attributes, inserting or removing ops or blocks, renaming a value) is always
seen by the next use.

How mutations are seen at no cost in memory or speed: a module is *tracked* from the first time
its version is read. Tracking gives each of its IR objects a per-module subclass that adds no
slots, intercepts writes and bumps the module's counter: ops, values, blocks, regions, the op
and block lists and the symbol table. An object finds its module through its class (one weak
reference per module, none per op); reads, and building a module that nobody derives state from
yet, use the plain slotted classes at full speed. Objects attached to a tracked module later
(appended to one of its op lists, set as an op's regions, ...) are tracked as they arrive.

Not tracked: the module's value table list (``module.values``; values are added, never
replaced) and the location table. A list assigned to ``block.ops`` or ``region.blocks`` of a
tracked module is copied into a tracked list.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from loom.ir.operations import Block, BlockList, Operation, OpList, Region, freeze_attributes
from loom.ir.values import Value

if TYPE_CHECKING:
    from loom.ir.module import Module

_osa = object.__setattr__


class SymbolTable(dict):
    """The module's symbol table: a dict whose class a tracked module replaces (no slots)."""

    __slots__ = ()


def _op_setattr(self: Operation, name: str, value: Any) -> None:
    m = self._loom_module()
    if m is None:
        _osa(self, name, value)
        return
    if name == "attributes":
        value = freeze_attributes(value)
    _osa(self, name, value)
    t = m._tracker
    if name == "regions":
        for r in value:
            t.arm_region(r)
    elif name in ("results", "operands"):
        for v in value:
            t.arm_value(v)
    m._bump()


def _block_setattr(self: Block, name: str, value: Any) -> None:
    m = self._loom_module()
    if m is None:
        _osa(self, name, value)
        return
    t = m._tracker
    if name == "ops":
        value = t.arm_oplist(value, True)
    _osa(self, name, value)
    if name == "args":
        for v in value:
            t.arm_value(v)
    m._bump()


def _region_setattr(self: Region, name: str, value: Any) -> None:
    m = self._loom_module()
    if m is None:
        _osa(self, name, value)
        return
    if name == "blocks":
        value = m._tracker.arm_blocklist(value)
    _osa(self, name, value)
    m._bump()


def _value_setattr(self: Value, name: str, value: Any) -> None:
    _osa(self, name, value)
    m = self._loom_module()
    if m is not None:
        m._bump()


def _inserting(base: Callable, arm: str, many: bool) -> Callable:
    """A list method that tracks the items it inserts (``many``: its last argument is many)."""

    def method(self: list, *args: Any) -> Any:
        m = self._loom_module()
        if m is None:
            return base(self, *args)
        if many:
            items = list(args[-1])
            args = (*args[:-1], items)
        else:
            items = [args[-1]]
        result = base(self, *args)
        track = getattr(m._tracker, arm)
        for item in items:
            track(item)
        m._bump()
        return result

    method.__name__ = base.__name__
    method.__doc__ = base.__doc__
    return method


def _setitem(arm: str) -> Callable:
    def __setitem__(self: list, index: Any, value: Any) -> None:
        m = self._loom_module()
        if m is None:
            list.__setitem__(self, index, value)
            return
        items = list(value) if isinstance(index, slice) else [value]
        list.__setitem__(self, index, items if isinstance(index, slice) else value)
        track = getattr(m._tracker, arm)
        for item in items:
            track(item)
        m._bump()

    return __setitem__


def _bumping(base: Callable) -> Callable:
    """A method that changes its container without adding anything new to it."""

    def method(self: Any, *args: Any, **kwargs: Any) -> Any:
        result = base(self, *args, **kwargs)
        m = self._loom_module()
        if m is not None:
            m._bump()
        return result

    method.__name__ = base.__name__
    method.__doc__ = base.__doc__
    return method


def _list_methods(arm: str) -> dict[str, Any]:
    methods: dict[str, Any] = {
        "append": _inserting(list.append, arm, False),
        "insert": _inserting(list.insert, arm, False),
        "extend": _inserting(list.extend, arm, True),
        "__iadd__": _inserting(list.__iadd__, arm, True),
        "__setitem__": _setitem(arm),
    }
    for name in ("pop", "remove", "clear", "__delitem__", "sort", "reverse", "__imul__"):
        methods[name] = _bumping(getattr(list, name))
    return methods


_DICT_METHODS = {
    name: _bumping(getattr(dict, name))
    for name in (
        "__setitem__",
        "__delitem__",
        "pop",
        "popitem",
        "clear",
        "update",
        "setdefault",
        "__ior__",
    )
}


class Tracker:
    """The tracked subclasses of one module and the walks that move objects into them."""

    __slots__ = ("op", "value", "block", "region", "ops", "blocks", "symbols", "__weakref__")

    def __init__(self, module: Module) -> None:
        ref = weakref.ref(module)

        def sub(base: type, extra: dict[str, Any]) -> Any:
            ns = {"__slots__": (), "_loom_module": ref, "__module__": base.__module__, **extra}
            cls = type(base.__name__, (base,), ns)
            cls.__qualname__ = base.__qualname__
            return cls

        self.op = sub(Operation, {"__setattr__": _op_setattr})
        self.value = sub(Value, {"__setattr__": _value_setattr})
        self.block = sub(Block, {"__setattr__": _block_setattr})
        self.region = sub(Region, {"__setattr__": _region_setattr})
        self.ops = sub(OpList, _list_methods("arm_op"))
        self.blocks = sub(BlockList, _list_methods("arm_block"))
        self.symbols = sub(SymbolTable, dict(_DICT_METHODS))

    # ------------------------------------------------------------------ arming

    def arm_value(self, v: Any) -> None:
        """Track value ``v`` (its renames and retypes bump the module)."""
        cls = type(v)
        if cls is not self.value and _trackable(cls, Value):
            v.__class__ = self.value

    def arm_op(self, op: Any) -> None:
        """Track ``op`` and everything nested in it."""
        if type(op) is self.op:
            return  # an op already tracked here has its whole subtree tracked
        todo = [op]
        while todo:
            o = todo.pop()
            cls = type(o)
            if cls is self.op or not _trackable(cls, Operation):
                continue
            o.__class__ = self.op
            for v in o.results:
                self.arm_value(v)
            for r in o.regions:
                todo.extend(self._region(r))

    def arm_region(self, r: Any) -> None:
        """Track region ``r`` and everything nested in it."""
        for op in self._region(r):
            self.arm_op(op)

    def arm_block(self, b: Any) -> None:
        """Track block ``b`` and everything nested in it."""
        for op in self._block(b):
            self.arm_op(op)

    def _region(self, r: Any) -> list:
        """Track ``r`` and its blocks; returns their ops (for the caller to track)."""
        if _trackable(type(r), Region):
            r.__class__ = self.region
        blocks = self.arm_blocklist(r.blocks, track_items=False)
        if blocks is not r.blocks:
            _osa(r, "blocks", blocks)
        out: list = []
        for b in blocks:
            out.extend(self._block(b))
        return out

    def _block(self, b: Any) -> list:
        if _trackable(type(b), Block):
            b.__class__ = self.block
        for v in b.args:
            self.arm_value(v)
        ops = self.arm_oplist(b.ops, False)
        if ops is not b.ops:
            _osa(b, "ops", ops)
        return list(ops)

    def arm_oplist(self, ops: Iterable, track_items: bool) -> Any:
        """``ops`` as this module's tracked op list (the same list object when possible)."""
        if type(ops) is not self.ops:
            if isinstance(ops, OpList):
                ops.__class__ = self.ops
            else:
                fresh = list.__new__(self.ops)
                list.extend(fresh, ops)
                ops = fresh
        if track_items:
            for op in ops:
                self.arm_op(op)
        return ops

    def arm_blocklist(self, blocks: Iterable, track_items: bool = True) -> Any:
        """``blocks`` as this module's tracked block list (the same object when possible)."""
        if type(blocks) is not self.blocks:
            if isinstance(blocks, BlockList):
                blocks.__class__ = self.blocks
            else:
                fresh = list.__new__(self.blocks)
                list.extend(fresh, blocks)
                blocks = fresh
        if track_items:
            for b in blocks:
                self.arm_block(b)
        return blocks

    def arm_symbols(self, symbols: dict) -> Any:
        """The symbol table as this module's tracked dict (the same object when possible)."""
        if type(symbols) is self.symbols:
            return symbols
        if isinstance(symbols, SymbolTable):
            symbols.__class__ = self.symbols
            return symbols
        fresh = dict.__new__(self.symbols)
        dict.update(fresh, symbols)
        return fresh

    def arm_module(self, module: Module) -> None:
        """Track every object of ``module``."""
        _osa(module, "symbols", self.arm_symbols(module.symbols))
        self.arm_block(module.body)
        for v in module.values:
            self.arm_value(v)


def _trackable(cls: type, base: type) -> bool:
    """A plain IR class or another module's tracked subclass of it (never a user subclass)."""
    return cls is base or (cls.__base__ is base and "_loom_module" in cls.__dict__)
