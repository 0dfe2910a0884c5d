"""Write a :class:`~loom.ir.Module` as Loom bytecode (see :mod:`loom.format.bytecode`)."""

from __future__ import annotations

import struct
from collections.abc import Iterable
from typing import Any

from loom.diagnostics import count_of
from loom.dsl import OpDef
from loom.errors import BytecodeError
from loom.format.bytecode import layout as L
from loom.format.bytecode.encoding import (
    E_WRITE,
    I64_MAX,
    I64_MIN,
    U64_MAX,
    ByteBuffer,
    bytecode_error,
    encode_varint_stream,
)
from loom.ir import (
    Block,
    BufferType,
    DictAttr,
    DynamicDim,
    FileLocation,
    FloatLiteral,
    FuncRefType,
    FunctionType,
    FusedLocation,
    Module,
    OpaqueLocation,
    OpaqueType,
    Operation,
    Predicate,
    ScalarType,
    ShapedType,
    TaggedLocation,
    Type,
    TypedInt,
    TypeKind,
    Value,
)
from loom.registry import OpRegistry, as_registry

_F64 = struct.Struct("<d")
_SHAPED_TAG = {TypeKind(v): k for k, v in L.SHAPED_TYPE_KINDS.items()}


def _fail(message: str) -> BytecodeError:
    return bytecode_error(E_WRITE, None, f"cannot write: {message}")


def _zig(v: int) -> int:
    return (v << 1) ^ (v >> 63)


class _Writer:
    """One serialization of one module (all tables are built in a deterministic walk)."""

    def __init__(self, module: Module, registry: OpRegistry, location_mode: int) -> None:
        self.module = module
        self.registry = registry
        self.with_locations = location_mode == L.LOCATION_MODE_FULL
        self.strings: dict[str, int] = {}
        self.type_entries: list[list[int]] = []
        self.type_ids: dict[tuple[int, ...], int] = {}
        self.type_memo: dict[Type, int] = {}
        self.op_ids: dict[str, int] = {}
        self.op_plans: list[tuple[int, int]] = []
        self.op_decls: list[OpDef] = []
        self.values = module.values
        self.members: set[int] = set()
        """``id()`` of every value of the (validated) table: membership only, never order."""
        self.defined = bytearray(len(module.values))
        self.nxt = 0
        self.ir: list[int] = []
        self.location_count = len(module.locations)
        self.attr_ids: dict[tuple[int, ...], int] = {}
        self.attr_memo: dict[int, tuple[Any, int]] = {}
        self.attr_checked: set[tuple[str, int, int]] = set()

    # ------------------------------------------------------------------ tables

    def name_sid(self, name: str, what: str) -> int:
        """The string id of a value name or block label (which must print back as text)."""
        if not isinstance(name, str) or not L.NAME_RE.fullmatch(name):
            raise _fail(f"{what} {name!r} is not a valid name")
        return self.sid(name)

    def comment_ids(self, comments: tuple[str, ...]) -> list[int]:
        """The count and string ids of single-line comments."""
        for c in comments:
            if not isinstance(c, str) or "\n" in c or "\r" in c:
                raise _fail(f"comment {c!r} is not a single line")
        return [len(comments), *(self.sid(c) for c in comments)]

    def sid(self, text: str) -> int:
        """The string-table id of ``text``."""
        i = self.strings.get(text)
        if i is None:
            if not isinstance(text, str):
                raise _fail(f"expected a string, got {text!r}")
            i = self.strings[text] = len(self.strings)
        return i

    def vid(self, v: Value, what: str) -> int:
        """The id of a value of this module's value table."""
        i = getattr(v, "id", None)
        if (
            not isinstance(v, Value)
            or not isinstance(i, int)
            or not (0 <= i < len(self.values))
            or self.values[i] is not v
        ):
            raise _fail(f"{what} {v!r} is not in the module's value table")
        return i

    def vids(self, values: tuple[Value, ...], what: str) -> list[int]:
        """Ids of values of this module's table (fast path: identity set membership)."""
        members = self.members
        try:
            if all(id(v) in members for v in values):
                return [v.id for v in values]
        except TypeError:
            pass
        return [self.vid(v, what) for v in values]

    def tid(self, t: Type) -> int:
        """The type-table id of ``t`` (structurally deduplicated)."""
        i = self.type_memo.get(t)
        if i is not None:
            return i
        if isinstance(t, ScalarType):
            entry = [L.TYPE_SCALAR, L.ORDINAL_OF_SCALAR[t]]
        elif isinstance(t, BufferType):
            entry = [L.TYPE_BUFFER]
        elif isinstance(t, OpaqueType):
            entry = [L.TYPE_OPAQUE, self.sid(t.name)]
        elif isinstance(t, ShapedType):
            entry = [
                _SHAPED_TAG[t.kind],
                L.ORDINAL_OF_SCALAR[t.element_type],
                len(t.dims),
            ]
            for d in t.dims:
                if isinstance(d, DynamicDim):
                    if d.value is None:
                        entry.append(L.DIM_UNBOUND)
                    else:
                        entry += (L.DIM_BOUND, self.vid(d.value, "dynamic dimension value"))
                else:
                    entry += (L.DIM_STATIC, d.size)
            enc = t.encoding
            if enc is None:
                entry.append(L.LAYOUT_NONE)
            elif isinstance(enc, str):
                entry += (L.LAYOUT_NAMED, self.sid(enc))
            else:
                entry += (L.LAYOUT_VALUE, self.vid(enc, "layout value"))
        elif isinstance(t, FunctionType):
            ins = [self.tid(x) for x in t.inputs]
            outs = [self.tid(x) for x in t.results]
            entry = [L.TYPE_FUNCTION, len(ins), *ins, len(outs), *outs]
        elif isinstance(t, FuncRefType):
            entry = [L.TYPE_FUNC_REF, int(t.yieldable), self.tid(t.signature)]
        else:
            raise _fail(f"{t!r} is not a Loom type")
        key = tuple(entry)
        i = self.type_ids.get(key)
        if i is None:
            i = self.type_ids[key] = len(self.type_entries)
            self.type_entries.append(entry)
        self.type_memo[t] = i
        return i

    def op_index(self, op: Operation) -> int:
        """The op-name table index of ``op``'s name."""
        i = self.op_ids.get(op.name)
        if i is None:
            decl = self.registry.get(op.name)
            if decl is None:
                unknown = sorted(
                    {o.name for o in self.module.walk() if o.name not in self.registry}
                )
                raise _fail(
                    "op(s) outside the declaration set: " + ", ".join(f"'{n}'" for n in unknown)
                )
            i = self.op_ids[op.name] = len(self.op_plans)
            self.op_plans.append(L.op_plan(decl))
            self.op_decls.append(decl)
            self.sid(op.name)
        return i

    # ------------------------------------------------------------------ IR

    def block(self, block: Block, depth: int) -> None:
        """Flags, label, trivia, arguments and ops of one block."""
        out = self.ir
        flags = 0
        if block.label is not None:
            flags |= L.BLK_LABEL
        if block.leading_blank_line:
            flags |= L.BLK_BLANK
        if block.comments:
            flags |= L.BLK_COMMENTS
        if block.trailing_comments:
            flags |= L.BLK_TRAILING
            if block.trailing_blank_line:
                flags |= L.BLK_TRAILING_BLANK
        ids = self.vids(block.args, "block argument")
        nxt = self.nxt
        if ids != list(range(nxt, nxt + len(ids))):
            flags |= L.BLK_ARG_IDS
        out.append(flags)
        if block.label is not None:
            out.append(self.name_sid(block.label, "block label"))
        if block.comments:
            out += self.comment_ids(block.comments)
        if block.trailing_comments:
            out += self.comment_ids(block.trailing_comments)
        out.append(len(ids))
        if flags & L.BLK_ARG_IDS:
            for i in ids:
                out.append(_zig(i - self.nxt))
                self.define(i)
        else:
            for i in ids:
                self.define(i)
        out.append(len(block.ops))
        for op in block.ops:
            self.op(op, depth)

    def define(self, i: int) -> None:
        """Record the definition of value ``i`` (each value is defined at most once)."""
        if self.defined[i]:
            raise _fail(f"value %{self.values[i].display_name} (id {i}) is defined twice")
        self.defined[i] = 1
        self.nxt = i + 1

    def op(self, op: Operation, depth: int) -> None:
        """One op and its regions."""
        out = self.ir
        k = self.op_index(op)
        plan_o, plan_r = self.op_plans[k]
        flags = 0
        ext = 0
        attrs = op.attributes
        if attrs:
            flags |= L.OPF_ATTRS
        loc = op.location_id if self.with_locations else 0
        if loc:
            if not isinstance(loc, int) or not 0 < loc < self.location_count:
                raise _fail(
                    f"'{op.name}' has location id {loc!r}, outside the module's "
                    f"{self.location_count} locations"
                )
            flags |= L.OPF_LOCATION
        trivia = op.trivia
        if trivia is not None:
            if trivia.comments:
                ext |= L.OPX_COMMENTS
            if trivia.leading_blank_line:
                ext |= L.OPX_BLANK
        if (plan_o and len(op.operands) != plan_o - 1) or (
            plan_r and len(op.results) != plan_r - 1
        ):
            ext |= L.OPX_COUNTS
        operand_ids = self.vids(op.operands, f"operand of '{op.name}'")
        result_ids = self.vids(op.results, f"result of '{op.name}'")
        nxt = self.nxt
        if result_ids and (
            result_ids[0] != nxt or result_ids != list(range(nxt, nxt + len(result_ids)))
        ):
            ext |= L.OPX_RESULT_IDS
        if op.regions:
            ext |= L.OPX_REGIONS
            if depth >= L.MAX_NESTING:
                raise _fail(f"regions nest deeper than {L.MAX_NESTING} levels")
        if ext:
            flags |= L.OPF_EXTENDED
        out.append(k << L.OP_SHIFT | flags)
        if ext:
            out.append(ext)
        if loc:
            out.append(loc)
        if trivia is not None and trivia.comments:
            out += self.comment_ids(trivia.comments)
        if ext & L.OPX_COUNTS or not plan_o:
            out.append(len(operand_ids))
        if ext & L.OPX_COUNTS or not plan_r:
            out.append(len(result_ids))
        for i in operand_ids:
            if i < nxt:
                out.append(nxt - i)
            else:
                out += (0, i)
        if ext & L.OPX_RESULT_IDS:
            for i in result_ids:
                out.append(_zig(i - self.nxt))
                self.define(i)
        elif result_ids:
            defined = self.defined
            for i in result_ids:
                if defined[i]:
                    self.define(i)  # raises
                defined[i] = 1
            self.nxt = result_ids[-1] + 1
        if attrs:
            index = self.attributes(op, self.op_decls[k])
            self.check_attributes(op, self.op_decls[k], index)
            out.append(index)
        if op.regions:
            self.regions(op, self.op_decls[k], depth)

    def regions(self, op: Operation, decl: OpDef, depth: int) -> None:
        """The op's regions: count, then per region its block count and blocks."""
        out = self.ir
        if len(op.regions) > decl.max_regions:
            raise _fail(
                f"'{op.name}' has {count_of(len(op.regions), 'region')}, its declaration "
                f"{decl.max_regions}"
            )
        out.append(len(op.regions))
        for region in op.regions:
            if not region.blocks:
                raise _fail(f"a region of '{op.name}' has no blocks")
            out.append(len(region.blocks))
            for b in region.blocks:
                self.block(b, depth + 1)

    def attributes(self, op: Operation, decl: OpDef) -> int:
        """The index of the op's attribute dictionary in the ATTRS table (deduplicated)."""
        attrs = op.attributes
        memo = self.attr_memo.get(id(attrs))
        if memo is not None and memo[0] is attrs:
            return memo[1]
        keys = sorted(attrs)
        out: list[int] = [len(keys)]
        for key in keys:
            value = attrs[key]
            if not isinstance(key, str):
                raise _fail(f"'{op.name}' has a non-string attribute key {key!r}")
            out.append(self.sid(key))
            self.attr_value(out, value, f"attribute '{key}' of '{op.name}'", 0)
        entry = tuple(out)
        i = self.attr_ids.get(entry)
        if i is None:
            i = self.attr_ids[entry] = len(self.attr_ids)
        self.attr_memo[id(attrs)] = (attrs, i)
        return i

    def check_attributes(self, op: Operation, decl: OpDef, index: int) -> None:
        """Refuse attribute values the declaration does not allow (as the reader would)."""
        key = (decl.name, index, len(op.operands))
        if key in self.attr_checked:
            return
        problem = L.attr_dict_problem(decl, op.attributes, len(op.operands))
        if problem:
            raise _fail(f"'{op.name}': {problem}")
        self.attr_checked.add(key)

    def attr_value(self, out: list[int], value: Any, what: str, depth: int) -> None:  # noqa: C901
        """One kind-tagged attribute value."""
        if isinstance(value, bool):
            out.append(L.ATTR_TRUE if value else L.ATTR_FALSE)
        elif isinstance(value, int):
            if I64_MIN <= value <= I64_MAX:
                out += (L.ATTR_INT, _zig(value))
            elif I64_MAX < value <= U64_MAX:
                out += (L.ATTR_UINT64, value)
            elif -U64_MAX <= value < I64_MIN:
                out += (L.ATTR_NEG64, -value)
            else:
                raise _fail(f"{what}: {value} does not fit in 64 bits")
        elif isinstance(value, FloatLiteral):
            if not isinstance(value.spelling, str) or not L.spelling_matches(value.spelling, value):
                raise _fail(f"{what}: float spelling {value.spelling!r} does not spell {value!r}")
            out += (L.ATTR_FLOAT_LITERAL, _float_bits(value), self.sid(value.spelling))
        elif isinstance(value, float):
            out += (L.ATTR_FLOAT, _float_bits(value))
        elif isinstance(value, str):
            out += (L.ATTR_STRING, self.sid(value))
        elif isinstance(value, TypedInt):
            v = value.value
            out += (L.ATTR_TYPED_INT, self.sid(value.type), v if value.type[0] == "u" else _zig(v))
        elif isinstance(value, bytes):
            out += (L.ATTR_BYTES, self.sid(value.hex()))
        elif isinstance(value, Type):
            out += (L.ATTR_TYPE, self.tid(value))
        elif isinstance(value, tuple):
            self.attr_tuple(out, value, what, depth)
        elif isinstance(value, DictAttr):
            if depth >= L.MAX_ATTR_NESTING:
                raise _fail(f"{what}: dictionaries nest deeper than {L.MAX_ATTR_NESTING} levels")
            out += (L.ATTR_DICT, len(value))
            for key, x in value.items():
                out.append(self.sid(key))
                self.attr_value(out, x, what, depth + 1)
        else:
            raise _fail(f"{what}: cannot encode a value of type {type(value).__name__}")

    def attr_tuple(self, out: list[int], value: tuple[Any, ...], what: str, depth: int) -> None:
        """A tuple attribute: an i64 array, type array, predicate list or nested tuple."""
        if all(
            isinstance(x, int) and not isinstance(x, bool) and I64_MIN <= x <= I64_MAX
            for x in value
        ):
            out += (L.ATTR_I64_ARRAY, len(value))
            out.extend(_zig(x) for x in value)
        elif all(isinstance(x, Type) for x in value):
            out += (L.ATTR_TYPE_ARRAY, len(value))
            out.extend(self.tid(x) for x in value)
        elif all(isinstance(x, Predicate) for x in value):
            out += (L.ATTR_PREDICATES, len(value))
            for p in value:
                out += (self.sid(p.kind), len(p.args))
                for x in p.args:
                    if isinstance(x, Value):
                        out += (L.PRED_VALUE, self.vid(x, f"{what} predicate argument"))
                    elif (
                        isinstance(x, int) and not isinstance(x, bool) and (I64_MIN <= x <= I64_MAX)
                    ):
                        out += (L.PRED_INT, _zig(x))
                    else:
                        raise _fail(
                            f"{what}: predicate argument {x!r} is not a value or a 64-bit int"
                        )
        else:
            if depth >= L.MAX_ATTR_NESTING:
                raise _fail(f"{what}: tuples nest deeper than {L.MAX_ATTR_NESTING} levels")
            out += (L.ATTR_TUPLE, len(value))
            for x in value:
                self.attr_value(out, x, what, depth + 1)

    # ------------------------------------------------------------------ sections

    def run(self) -> bytes:
        """Serialize the module."""
        module = self.module
        value_table: list[int] = [len(self.values)]
        for i, v in enumerate(self.values):
            if not isinstance(v, Value) or v.id != i:
                raise _fail(f"value table entry {i} is {v!r}, whose id is not {i}")
            self.members.add(id(v))
            value_table.append(self.tid(v.type))
            value_table.append(0 if v.name is None else self.name_sid(v.name, "value name") + 1)
        body = module.body
        if body.label is not None or body.args:
            raise _fail("the module body cannot have a label or arguments")
        self.block(body, 0)
        meta = [self.sid(module.name), *self.comment_ids(module.file_header)]
        index_of = {id(op): i for i, op in enumerate(body.ops)}
        meta.append(len(module.symbols))
        for name, op in module.symbols.items():
            i = index_of.get(id(op))
            if i is None:
                raise _fail(f"symbol '@{name}' is not defined by a top-level op")
            meta += (self.sid(name), i)
        opnames = [len(self.op_plans)]
        for name, (plan_o, plan_r) in zip(self.op_ids, self.op_plans):
            opnames += (self.strings[name], plan_o, plan_r)
        types = [len(self.type_entries)]
        for entry in self.type_entries:
            types.extend(entry)

        sections: list[tuple[int, bytes]] = [
            (L.SEC_STRINGS, _string_table(self.strings)),
            (L.SEC_SOURCES, _string_table(module.sources)),
        ]
        if self.with_locations:
            sections.append((L.SEC_LOCATIONS, self.locations()))
        sections += [
            (L.SEC_OPNAMES, encode_varint_stream(opnames)),
            (L.SEC_TYPES, encode_varint_stream(types)),
            (L.SEC_VALUES, encode_varint_stream(value_table)),
            (
                L.SEC_ATTRS,
                encode_varint_stream(
                    [len(self.attr_ids)] + [x for entry in self.attr_ids for x in entry]
                ),
            ),
            (L.SEC_MODULE, encode_varint_stream(meta)),
            (L.SEC_IR, encode_varint_stream(self.ir)),
        ]
        out = ByteBuffer()
        out.raw(L.MAGIC)
        out.u8(L.FORMAT_VERSION)
        out.u8(L.LOCATION_MODE_FULL if self.with_locations else L.LOCATION_MODE_NONE)
        out.raw(b"\0\0")
        out.varint(len(sections))
        for kind, payload in sections:
            out.varint(kind)
            out.varint(len(payload))
        for _, payload in sections:
            out.raw(payload)
        return out.getvalue()

    def locations(self) -> bytes:
        """The LOCATIONS section (entry 0, the unknown location, is implicit)."""
        module = self.module
        nsrc = len(module.sources)
        out = ByteBuffer()
        out.varint(len(module.locations) - 1)
        for i, loc in enumerate(module.locations.file_rows(1), start=1):
            if type(loc) is tuple:  # a packed file span: valid non-negative ints
                _check_source(loc[1], nsrc, i)
                out.u8(L.LOC_FILE)
                for x in loc:
                    out.varint(x)
            elif isinstance(loc, FileLocation):
                _check_source(loc.source_id, nsrc, i)
                out.u8(L.LOC_FILE)
                for x in (
                    loc.flags,
                    loc.source_id,
                    loc.start_line,
                    loc.start_col,
                    loc.end_line,
                    loc.end_col,
                ):
                    out.varint(_loc_int(x, i))
            elif isinstance(loc, FusedLocation):
                out.u8(L.LOC_FUSED)
                out.varint(len(loc.children))
                for c in loc.children:
                    out.varint(_loc_child(c, i))
            elif isinstance(loc, OpaqueLocation):
                _check_source(loc.source_id, nsrc, i)
                out.u8(L.LOC_OPAQUE)
                out.varint(loc.source_id)
                out.blob(_loc_bytes(loc.data, i))
            elif isinstance(loc, TaggedLocation):
                out.u8(L.LOC_TAGGED)
                out.varint(_loc_int(loc.tag, i))
                out.varint(_loc_child(loc.child, i))
                out.blob(_loc_bytes(loc.data, i))
            else:
                raise _fail(f"location {i} is {loc!r}, not a location")
        return out.getvalue()


def _float_bits(x: float) -> int:
    return int.from_bytes(_F64.pack(x), "little")


def _check_source(source_id: Any, count: int, i: int) -> None:
    if not isinstance(source_id, int) or not 0 <= source_id < count:
        raise _fail(f"location {i} refers to source {source_id!r}; the module has {count}")


def _loc_int(x: Any, i: int) -> int:
    if not isinstance(x, int) or isinstance(x, bool) or not 0 <= x <= U64_MAX:
        raise _fail(f"location {i} has field {x!r}, not an unsigned 64-bit int")
    return x


def _loc_child(c: Any, i: int) -> int:
    if not isinstance(c, int) or isinstance(c, bool) or not 0 <= c < i:
        raise _fail(f"location {i} refers to location {c!r}; children must come earlier")
    return c


def _loc_bytes(data: Any, i: int) -> bytes:
    if not isinstance(data, (bytes, bytearray)):
        raise _fail(f"location {i} payload {data!r} is not bytes")
    return bytes(data)


def _string_table(strings: Iterable[str]) -> bytes:
    items = list(strings)
    out = ByteBuffer()
    out.varint(len(items))
    for s in items:
        if not isinstance(s, str):
            raise _fail(f"{s!r} is not a string")
        out.text(s)
    return out.getvalue()


def write_module(
    module: Module,
    *,
    op_decls: OpRegistry | Iterable[OpDef] | None = None,
    location_mode: int = L.LOCATION_MODE_FULL,
) -> bytes:
    """Serialize ``module`` as Loom bytecode; identical modules give identical bytes.

    ``op_decls`` is the declaration set (``ops=``); an op outside it is refused.
    ``location_mode`` 0 keeps the location table and per-op location ids, 1 drops them.
    """
    if location_mode not in L.LOCATION_MODES:
        raise _fail(f"location_mode must be 0 (locations) or 1 (none), not {location_mode!r}")
    if not isinstance(module, Module):
        raise TypeError(f"write_module expects a loom Module, got {type(module).__name__}")
    return _Writer(module, as_registry(op_decls), location_mode).run()


__all__ = ["write_module"]
