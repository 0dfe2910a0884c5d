"""Rebuild a parsed module op by op through the generated builder methods.

Each op is turned back into builder keyword arguments from its declaration alone: operands by
field, attributes by keyword, index lists as mixed int/value lists, ``results=``/``names=``, and
regions recursively (entry arguments made with ``builder.value``). Used by the op-example and
round-trip tests to prove that the builder and the parser build the same thing.
"""

from __future__ import annotations

from typing import Any

from loom.builder import LoomBuilder, module_builder
from loom.dsl import ArgSource, OpDef, python_name
from loom.ir import (
    DYNAMIC_INDEX,
    Block,
    DynamicDim,
    Module,
    Operation,
    Predicate,
    ShapedType,
    Type,
    Value,
)
from loom.opview import SEGMENTS_ATTR, operand_groups, result_groups
from loom.registry import OpRegistry, as_registry


class Rebuilder:
    """Maps values of the source module to values of the rebuilt one."""

    def __init__(self, registry: OpRegistry) -> None:
        self.registry = registry
        self.module, self.b = module_builder(ops=registry)
        self.map: dict[int, Value] = {}

    def value(self, v: Value) -> Value:
        got = self.map.get(id(v))
        if got is None:
            # a result type naming its own op's later results (global.load co-results): any
            # stand-in value, which the builder rebinds to the new results
            got = self.map[id(v)] = self.b.value(None, self.type(v.type))
        return got

    def type(self, t: Type) -> Type:
        if isinstance(t, ShapedType):
            dims = [
                DynamicDim(self.value(d.value))
                if isinstance(d, DynamicDim) and d.value is not None
                else d
                for d in t.dims
            ]
            enc = self.value(t.encoding) if isinstance(t.encoding, Value) else t.encoding
            return ShapedType(t.kind, t.element_type, dims, enc)
        return t

    def attr(self, x: Any) -> Any:
        if isinstance(x, Predicate):
            return Predicate(x.kind, tuple(self.attr(a) for a in x.args))
        if isinstance(x, Value):
            return self.value(x)
        if isinstance(x, tuple):
            return tuple(self.attr(a) for a in x)
        if isinstance(x, Type):
            return self.type(x)
        return x

    def new_value(self, old: Value) -> Value:
        v = self.b.value(
            old.name if old.name and not old.name.isdigit() else None, self.type(old.type)
        )
        self.map[id(old)] = v
        return v

    def block_ops(self, src: Block, dst: Block) -> None:
        with self.b.insertion_block(dst):
            for op in src.ops:
                self.op(op)

    def op(self, op: Operation) -> None:
        decl = self.registry.lookup(op.name)
        kw: dict[str, Any] = {}
        index_lists = decl.index_lists
        groups = operand_groups(op, decl)
        for o in decl.operands:
            vals = [self.value(v) for v in groups[o.name]]
            key = python_name(o.name)
            static_attr = index_lists.get(o.name)
            if static_attr is not None:
                static = op.attributes.get(static_attr)
                if static is None:
                    kw[key] = vals
                else:
                    it = iter(vals)
                    kw[key] = [next(it) if s == DYNAMIC_INDEX else s for s in static]
            elif o.variadic:
                kw[key] = vals
            elif vals:
                kw[key] = vals[0]
        # entry arguments first: attributes may name them (a declaration's local names)
        entry_args = [[self.new_value(a) for a in r.blocks[0].args] for r in op.regions]
        hidden = set(index_lists.values()) | {SEGMENTS_ATTR}
        for a in decl.attrs:
            if a.name in op.attributes and a.name not in hidden:
                kw[a.keyword] = self.attr(op.attributes[a.name])
        if decl.results:
            kw["results"] = [self.type(v.type) for v in op.results]
            kw["names"] = [v.name if v.name and not v.name.isdigit() else None for v in op.results]
        _ = result_groups(op, decl)
        for k, (region, new_args) in enumerate(zip(op.regions, entry_args)):
            rd = decl.region_def_at(k)
            entry = region.blocks[0]
            new_region = self.b.region()
            if rd.arg_source == ArgSource.VALUES:
                kw[rd.arg_keyword] = new_args
            else:
                new_region.blocks[0].args = tuple(new_args)
            blocks = [
                self.b.block(
                    new_region,
                    blk.label,
                    [
                        (a.name if a.name and not a.name.isdigit() else None, self.type(a.type))
                        for a in blk.args
                    ],
                )
                for blk in region.blocks[1:]
            ]
            for blk, new_blk in zip(region.blocks[1:], blocks):
                for a, na in zip(blk.args, new_blk.args):
                    self.map[id(a)] = na
            self.block_ops(entry, new_region.blocks[0])
            for blk, new_blk in zip(region.blocks[1:], blocks):
                self.block_ops(blk, new_blk)
            if rd.variadic:
                kw.setdefault(python_name(rd.name), []).append(new_region)
            else:
                kw[python_name(rd.name)] = new_region
        getattr(getattr(self.b, _namespace(self.b, decl)), self.registry.builder_name(decl))(**kw)
        new_op = self.b.last_op
        for old, new in zip(op.results, new_op.results):
            self.map[id(old)] = new
        new_op.comments = op.comments
        if op.leading_blank_line or new_op in self.module.ops:
            new_op.leading_blank_line = op.leading_blank_line


def _namespace(b: LoomBuilder, decl: OpDef) -> str:
    return decl.dialect if hasattr(b, decl.dialect) else decl.dialect + "_"


def rebuild(module: Module, ops: Any = None) -> Module:
    """A new module built op by op through the builder, equal to ``module``."""
    r = Rebuilder(as_registry(ops))
    r.module.file_header = module.file_header
    for op in module.ops:
        r.op(op)
    return r.module
