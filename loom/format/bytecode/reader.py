"""Read Loom bytecode back into a :class:`~loom.ir.Module`, refusing malformed input.

Every problem is a :class:`~loom.errors.BytecodeError` naming the byte offset and what was
expected. Counts are checked against the bytes left before anything is allocated, nesting is
bounded, and every table index is range-checked. Sections of varints are decoded in one
vectorized pass; ops are then rebuilt from a flat list of ints with per-op-name plans.
"""

from __future__ import annotations

import os
import struct
from collections.abc import Iterable
from itertools import repeat
from typing import Any

from loom.diagnostics import count_of
from loom.dsl import OpDef
from loom.errors import BytecodeError
from loom.format.bytecode import layout as L
from loom.format.bytecode.encoding import (
    E_ATTR_KIND,
    E_COUNT,
    E_INDEX,
    E_MAGIC,
    E_SECTION,
    E_SEMANTIC,
    E_STRUCTURE,
    E_TRAILING,
    E_TRUNCATED,
    E_UNKNOWN_OP,
    E_VERSION,
    ByteReader,
    bytecode_error,
    decode_varint_stream,
    in_file,
)
from loom.ir import (
    BUFFER_TYPE,
    PREDICATE_ARITY,
    Block,
    DictAttr,
    DynamicDim,
    FileLocation,
    FloatLiteral,
    FuncRefType,
    FunctionType,
    FusedLocation,
    Module,
    OpaqueLocation,
    Operation,
    Predicate,
    Region,
    ShapedType,
    StaticDim,
    TaggedLocation,
    Type,
    TypedInt,
    TypeKind,
    Value,
    opaque_type,
)
from loom.ir.encoding_spec import SpecError, canonical_spec
from loom.ir.operations import freeze_attributes
from loom.registry import OpRegistry, as_registry
from loom.switches import gc_paused

_F64 = struct.Struct("<d")
_I64_SIGN = 2**63


class _Stream:
    """The ints of one varint section with a cursor; errors map back to byte offsets."""

    __slots__ = ("s", "start", "starts", "name", "end")

    def __init__(self, data: bytes, start: int, end: int, name: str) -> None:
        self.s, self.starts = decode_varint_stream(data, start, end, f"the {name} section")
        self.start = start
        self.end = end
        self.name = name

    def offset(self, k: int) -> int:
        """Byte offset of int ``k`` of the section."""
        if k >= len(self.s):
            return self.end
        return self.start + (int(self.starts[k]) if self.starts is not None else k)

    def error(self, code: int, k: int, message: str) -> BytecodeError:
        """An error about int ``k`` of this section."""
        return bytecode_error(code, self.offset(k), f"{message} (in the {self.name} section)")

    def count(self, k: int, what: str, per_item: int = 1) -> int:
        """Int ``k`` read as a count of items of at least ``per_item`` ints each (checked)."""
        n = self.s[k]
        if n * per_item > len(self.s) - k - 1:
            raise self.error(
                E_COUNT, k, f"{what} {n} exceeds the {count_of(len(self.s) - k - 1, 'entry')} left"
            )
        return n

    def index(self, k: int, limit: int, what: str) -> int:
        """Int ``k`` read as an index below ``limit``."""
        n = self.s[k]
        if n >= limit:
            raise self.error(E_INDEX, k, f"{what} {n} is out of range (table has {limit})")
        return n

    def out_of_range(self, k: int, what: str, n: int, limit: int) -> BytecodeError:
        """Int ``k`` (``what``, value ``n``) is not below ``limit``."""
        return self.error(E_INDEX, k, f"{what} {n} is out of range (table has {limit})")

    def redefined(self, k: int, what: str, vid: int | str) -> BytecodeError:
        """Value ``vid`` named at int ``k`` does not exist or is already defined."""
        return self.error(E_SEMANTIC, k, f"{what} {vid} is out of range or defined twice")

    def truncated(self) -> BytecodeError:
        """The section ended while more was expected."""
        return bytecode_error(
            E_TRUNCATED, self.end, f"expected more data, found the end of the {self.name} section"
        )


class _Reader:
    """One decoding of one bytecode file."""

    def __init__(self, data: bytes, registry: OpRegistry) -> None:
        self.data = data
        self.registry = registry
        self.module = Module()
        self.strings: list[str] = []
        self.values: list[Value] = []
        self.types: list[Type] = []
        self.nloc = 1
        self.nxt = 0
        self.defined = bytearray()
        self.attr_ok: set[tuple[int, int, int]] = set()
        self.attr_dicts: list[Any] = []

    # ------------------------------------------------------------------ framing

    def run(self) -> Module:
        """Decode the whole file."""
        data = self.data
        if data[:4] != L.MAGIC[: len(data)] or len(data) < 4:
            if len(data) < 4 and data == L.MAGIC[: len(data)]:
                raise bytecode_error(
                    E_TRUNCATED, len(data), "expected the magic 'LOOM', found the end of the data"
                )
            raise bytecode_error(
                E_MAGIC,
                0,
                f"expected the magic 'LOOM', found {data[:4]!r} (not a Loom bytecode file)",
            )
        if len(data) < L.HEADER_SIZE:
            raise bytecode_error(
                E_TRUNCATED, len(data), "expected the 8-byte file header, found the end of the data"
            )
        if data[4] != L.FORMAT_VERSION:
            raise bytecode_error(
                E_VERSION,
                4,
                f"unsupported format version {data[4]} (this "
                f"reader reads version {L.FORMAT_VERSION} only)",
            )
        mode = data[5]
        if mode not in L.LOCATION_MODES:
            raise bytecode_error(E_SECTION, 5, f"expected location mode 0 or 1, found {mode}")
        if data[6] or data[7]:
            raise bytecode_error(E_SECTION, 6, "expected zero reserved header bytes")
        sections = self.directory(mode)
        self.strings = self.string_table(*sections[L.SEC_STRINGS], "STRINGS")
        self.module.sources = self.string_table(*sections[L.SEC_SOURCES], "SOURCES")
        if L.SEC_LOCATIONS in sections:
            self.locations(*sections[L.SEC_LOCATIONS])
        plans = self.opnames(*sections[L.SEC_OPNAMES])
        values = self.stream(sections[L.SEC_VALUES], "VALUES")
        self.value_placeholders(values)
        self.type_table(self.stream(sections[L.SEC_TYPES], "TYPES"))
        self.value_types(values)
        self.attr_table(self.stream(sections[L.SEC_ATTRS], "ATTRS"))
        ir = self.stream(sections[L.SEC_IR], "IR")
        self.plans = plans
        self.ir = ir
        try:
            k = self.block(self.module.body, 0, 0)
        except IndexError:
            raise ir.truncated() from None
        if self.module.body.label is not None or self.module.body.args:
            raise ir.error(E_STRUCTURE, 0, "the module body cannot have a label or arguments")
        if k != len(ir.s):
            raise ir.error(E_TRAILING, k, "expected the end of the section")
        self.meta(self.stream(sections[L.SEC_MODULE], "MODULE"))
        self.module.values = self.values
        return self.module

    def directory(self, mode: int) -> dict[int, tuple[int, int]]:
        """The section directory: kinds strictly increasing, payloads exactly filling the file."""
        r = ByteReader(self.data, L.HEADER_SIZE, what="the section directory")
        n = r.count("section count", 2)
        entries = []
        prev = 0
        for _ in range(n):
            at = r.pos
            kind = r.varint("a section kind")
            if kind not in L.SECTION_NAMES:
                raise bytecode_error(
                    E_SECTION,
                    at,
                    f"unknown section kind {kind} (expected 1..{len(L.SECTION_NAMES)})",
                )
            if kind <= prev:
                raise bytecode_error(
                    E_SECTION,
                    at,
                    f"section {L.SECTION_NAMES[kind]} is out of "
                    "order or repeated (kinds must increase)",
                )
            prev = kind
            entries.append((kind, r.varint(f"the length of section {L.SECTION_NAMES[kind]}")))
        pos = r.pos
        out: dict[int, tuple[int, int]] = {}
        for kind, length in entries:
            if length > len(self.data) - pos:
                raise bytecode_error(
                    E_TRUNCATED,
                    len(self.data),
                    f"section "
                    f"{L.SECTION_NAMES[kind]} at byte {pos} needs {length} "
                    f"bytes, only {len(self.data) - pos} left",
                )
            out[kind] = (pos, pos + length)
            pos += length
        if pos != len(self.data):
            raise bytecode_error(
                E_TRAILING,
                pos,
                f"expected the end of the file, found {len(self.data) - pos} trailing bytes",
            )
        required = set(L.SECTION_NAMES)
        if mode == L.LOCATION_MODE_NONE:
            required.discard(L.SEC_LOCATIONS)
            if L.SEC_LOCATIONS in out:
                raise bytecode_error(
                    E_SECTION,
                    out[L.SEC_LOCATIONS][0],
                    "a file without locations (mode 1) cannot have a LOCATIONS section",
                )
        missing = sorted(required - set(out))
        if missing:
            raise bytecode_error(
                E_SECTION,
                pos,
                "missing section(s) " + ", ".join(L.SECTION_NAMES[k] for k in missing),
            )
        return out

    def stream(self, span: tuple[int, int], name: str) -> _Stream:
        """A varint section."""
        return _Stream(self.data, span[0], span[1], name)

    def string_table(self, start: int, end: int, name: str) -> list[str]:
        """A count, then length-prefixed UTF-8 strings."""
        r = ByteReader(self.data, start, end, f"the {name} section")
        n = r.count("string count")
        out = [r.text(f"string {i}") for i in range(n)]
        r.expect_end()
        return out

    # ------------------------------------------------------------------ tables

    def locations(self, start: int, end: int) -> None:
        """The location table (entry 0, unknown, is implicit)."""
        r = ByteReader(self.data, start, end, "the LOCATIONS section")
        n = r.count("location count")
        module = self.module
        nsrc = len(module.sources)
        table: list[Any] = [None]
        for i in range(1, n + 1):
            at = r.pos
            kind = r.u8("a location kind")
            if kind == L.LOC_FILE:
                flags = r.varint("location flags")
                src = self.loc_source(r, nsrc)
                loc: Any = FileLocation(
                    src,
                    r.varint("start line"),
                    r.varint("start column"),
                    r.varint("end line"),
                    r.varint("end column"),
                    flags,
                )
            elif kind == L.LOC_FUSED:
                m = r.count("fused location child count")
                loc = FusedLocation(tuple(self.loc_child(r, i) for _ in range(m)))
            elif kind == L.LOC_OPAQUE:
                src = self.loc_source(r, nsrc)
                loc = OpaqueLocation(src, r.blob("opaque location data"))
            elif kind == L.LOC_TAGGED:
                tag = r.varint("location tag")
                loc = TaggedLocation(tag, self.loc_child(r, i), r.blob("tagged location data"))
            else:
                raise bytecode_error(
                    E_ATTR_KIND,
                    at,
                    f"unknown location kind {kind} (expected "
                    "1 file, 2 fused, 3 opaque or 4 tagged)",
                )
            table.append(loc)
        r.expect_end()
        module.locations = table
        self.nloc = len(table)

    @staticmethod
    def loc_source(r: ByteReader, nsrc: int) -> int:
        at = r.pos
        src = r.varint("a source index")
        if src >= nsrc:
            raise bytecode_error(
                E_INDEX, at, f"source index {src} is out of range (the SOURCES table has {nsrc})"
            )
        return src

    @staticmethod
    def loc_child(r: ByteReader, own: int) -> int:
        at = r.pos
        c = r.varint("a child location id")
        if c >= own:
            raise bytecode_error(
                E_INDEX,
                at,
                f"child location {c} of location {own} must refer to an earlier location",
            )
        return c

    def opnames(self, start: int, end: int) -> list[tuple[Any, ...]]:
        """The op-name table: name, fixed operand and result counts; every name declared."""
        st = _Stream(self.data, start, end, "OPNAMES")
        s = st.s
        try:
            n = st.count(0, "op name count", 3)
            out: list[tuple[Any, ...]] = []
            unknown: list[str] = []
            first_unknown = None
            seen: set[str] = set()
            k = 1
            for _ in range(n):
                name = self.strings[st.index(k, len(self.strings), "op name string")]
                if name in seen:
                    raise st.error(E_SEMANTIC, k, f"op name '{name}' appears twice")
                seen.add(name)
                decl = self.registry.get(name)
                if decl is None:
                    unknown.append(name)
                    first_unknown = k if first_unknown is None else first_unknown
                elif (s[k + 1], s[k + 2]) != L.op_plan(decl):
                    raise st.error(
                        E_SEMANTIC,
                        k,
                        f"op '{name}' was written with a declaration "
                        "whose operand/result counts differ from this one",
                    )
                out.append(
                    (name, decl, s[k + 1] - 1, s[k + 2] - 1, decl.max_regions if decl else 0)
                )
                k += 3
        except IndexError:
            raise st.truncated() from None
        if unknown:
            raise st.error(
                E_UNKNOWN_OP,
                first_unknown,
                "unknown op name(s) "
                + ", ".join(f"'{u}'" for u in unknown)
                + " (not in the declaration set)",
            )
        if k != len(s):
            raise st.error(E_TRAILING, k, "expected the end of the section")
        return out

    def value_placeholders(self, st: _Stream) -> None:
        """Create the value table (types are filled in once the type table exists)."""
        try:
            n = st.count(0, "value count", 2)
        except IndexError:
            raise st.truncated() from None
        if 1 + 2 * n != len(st.s):
            raise st.error(E_TRAILING, 1 + 2 * n, "expected the end of the section")
        self.values = list(map(Value, range(n), repeat(BUFFER_TYPE, n)))
        self.defined = bytearray(n)

    def value_types(self, st: _Stream) -> None:
        """Types and names of the values."""
        s, strings, types = st.s, self.strings, self.types
        type_ids = s[1::2]
        name_ids = s[2::2]
        if type_ids and max(type_ids) >= len(types):
            i = next(i for i, t in enumerate(type_ids) if t >= len(types))
            raise st.error(
                E_INDEX,
                1 + 2 * i,
                f"type index {type_ids[i]} of value {i} is out of range (table has {len(types)})",
            )
        if name_ids and max(name_ids) > len(strings):
            i = next(i for i, t in enumerate(name_ids) if t > len(strings))
            raise st.error(
                E_INDEX,
                2 + 2 * i,
                f"name string {name_ids[i] - 1} of value {i} is "
                f"out of range (table has {len(strings)})",
            )
        bad = next(
            (n for n in set(name_ids) if n and not L.NAME_RE.fullmatch(strings[n - 1])), None
        )
        if bad is not None:
            i = name_ids.index(bad)
            raise st.error(
                E_SEMANTIC, 2 + 2 * i, f"value name {strings[bad - 1]!r} is not a valid SSA name"
            )
        names = [None, *strings]
        for v, t, name in zip(self.values, type_ids, name_ids):
            v.type = types[t]
            if name:
                v.name = names[name]

    def type_table(self, st: _Stream) -> None:
        """Types; function types refer to earlier entries, dims and layouts to values."""
        try:
            n = st.count(0, "type count")
            k = 1
            for i in range(n):
                t, k = self.one_type(st, k, i)
                self.types.append(t)
        except IndexError:
            raise st.truncated() from None
        if k != len(st.s):
            raise st.error(E_TRAILING, k, "expected the end of the section")

    def one_type(self, st: _Stream, k: int, i: int) -> tuple[Type, int]:
        """Type entry ``i`` starting at int ``k``."""
        kind = st.s[k]
        if kind == L.TYPE_SCALAR:
            return self.scalar(st, k + 1), k + 2
        if kind == L.TYPE_BUFFER:
            return BUFFER_TYPE, k + 1
        if kind == L.TYPE_OPAQUE:
            name = self.strings[st.index(k + 1, len(self.strings), "type name string")]
            t = opaque_type(name)
            if t is None:
                raise st.error(E_STRUCTURE, k, f"unknown type name {name!r}")
            return t, k + 2
        if kind in L.SHAPED_TYPE_KINDS:
            return self.shaped_type(st, k, i)
        if kind == L.TYPE_FUNCTION:
            return self.function_type(st, k, i)
        if kind == L.TYPE_FUNC_REF:
            return self.func_ref_type(st, k, i)
        raise st.error(
            E_STRUCTURE, k, f"unknown type kind {kind} (expected 0..{L.TYPE_KIND_COUNT - 1})"
        )

    def shaped_type(self, st: _Stream, k: int, i: int) -> tuple[Type, int]:
        """Shaped type entry ``i`` (kind, element, rank, dims, layout) starting at ``k``."""
        kind = st.s[k]
        elem = self.scalar(st, k + 1)
        rank = st.count(k + 2, "rank", 2)
        dims, k = self.dims(st, k + 3, rank)
        layout, k = self.layout(st, k, i)
        try:
            t = ShapedType(TypeKind(L.SHAPED_TYPE_KINDS[kind]), elem, dims, layout)
        except (ValueError, TypeError) as e:
            raise st.error(E_SEMANTIC, k, f"invalid type {i}: {e}") from None
        return t, k

    def dims(self, st: _Stream, k: int, rank: int) -> tuple[list[Any], int]:
        """``rank`` tagged dimensions (static, unbound or bound to a value) from ``k``."""
        s = st.s
        dims: list[Any] = []
        for _ in range(rank):
            tag = s[k]
            if tag == L.DIM_STATIC:
                dims.append(StaticDim(s[k + 1]))
                k += 2
            elif tag == L.DIM_UNBOUND:
                dims.append(DynamicDim())
                k += 1
            elif tag == L.DIM_BOUND:
                value = self.values[st.index(k + 1, len(self.values), "dimension value")]
                dims.append(DynamicDim(value))
                k += 2
            else:
                raise st.error(
                    E_STRUCTURE,
                    k,
                    f"unknown dimension tag {tag} (expected 0 static, 1 unbound or 2 bound)",
                )
        return dims, k

    def layout(self, st: _Stream, k: int, i: int) -> tuple[Any, int]:
        """A shaped type's tagged layout (none, a static spec or a layout value) at ``k``."""
        tag = st.s[k]
        if tag == L.LAYOUT_NAMED:
            layout = self.strings[st.index(k + 1, len(self.strings), "layout string")]
            try:
                ok = canonical_spec(layout) == layout
            except SpecError:
                ok = False
            if not ok:
                raise st.error(E_SEMANTIC, k, f"invalid type {i}: layout {layout!r} is not a spec")
            return layout, k + 2
        if tag == L.LAYOUT_VALUE:
            return self.values[st.index(k + 1, len(self.values), "layout value")], k + 2
        if tag == L.LAYOUT_NONE:
            return None, k + 1
        raise st.error(E_STRUCTURE, k, f"unknown layout tag {tag} (expected 0, 1 or 2)")

    def function_type(self, st: _Stream, k: int, i: int) -> tuple[Type, int]:
        """Function type entry ``i``: input count and types, result count and types."""
        n = st.count(k + 1, "function input count")
        ins = tuple(self.types[st.index(k + 2 + j, i, "function input type")] for j in range(n))
        k += 2 + n
        n = st.count(k, "function result count")
        outs = tuple(self.types[st.index(k + 1 + j, i, "function result type")] for j in range(n))
        try:
            return FunctionType(ins, outs), k + 1 + n
        except ValueError as e:
            raise st.error(E_SEMANTIC, k, f"invalid type {i}: {e}") from None

    def func_ref_type(self, st: _Stream, k: int, i: int) -> tuple[Type, int]:
        """``func.ref`` type entry ``i``: yieldability flag and signature type."""
        flag = st.s[k + 1]
        if flag not in (0, 1):
            raise st.error(E_STRUCTURE, k + 1, f"func.ref yieldability {flag} (expected 0 or 1)")
        signature = self.types[st.index(k + 2, i, "func.ref signature type")]
        try:
            return FuncRefType(signature, bool(flag)), k + 3
        except ValueError as e:
            raise st.error(E_SEMANTIC, k, f"invalid type {i}: {e}") from None

    @staticmethod
    def scalar(st: _Stream, k: int) -> Any:
        o = st.s[k]
        t = L.SCALAR_BY_ORDINAL[o] if o < len(L.SCALAR_BY_ORDINAL) else None
        if t is None:
            raise st.error(E_STRUCTURE, k, f"unsupported scalar type ordinal {o}")
        return t

    def meta(self, st: _Stream) -> None:
        """Module name, file header comments and the symbol table."""
        s, strings, ns = st.s, self.strings, len(self.strings)
        module = self.module
        try:
            module.name = strings[st.index(0, ns, "module name string")]
            module.file_header, k = self.comments(st, 1)
            n = st.count(k, "symbol count", 2)
            k += 1
            top = module.body.ops
            used: set[int] = set()
            for _ in range(n):
                name = strings[st.index(k, ns, "symbol name string")]
                i = st.index(k + 1, len(top), "symbol op index")
                if name in module.symbols or i in used:
                    raise st.error(E_SEMANTIC, k, f"symbol '@{name}' or its op is listed twice")
                used.add(i)
                module.symbols[name] = top[i]
                k += 2
        except IndexError:
            raise st.truncated() from None
        if k != len(s):
            raise st.error(E_TRAILING, k, "expected the end of the section")

    # ------------------------------------------------------------------ IR

    def block(self, block: Block, k: int, depth: int) -> int:
        """Decode one block starting at int ``k``; returns the next position.

        Layout: flags (``BLK_*``), label, comments, trailing comments, argument count and
        (with ``BLK_ARG_IDS``) their zigzag id offsets, op count, ops.
        """
        st = self.ir
        s = st.s
        flags = s[k]
        k += 1
        if flags:
            if flags & ~L.BLK_ALL:
                raise st.error(E_STRUCTURE, k - 1, f"unknown block flags {flags}")
            k = self.block_trivia(block, k, flags)
        if s[k]:
            k = self.block_args(block, k, flags & L.BLK_ARG_IDS)
        else:
            k += 1
        nops = st.count(k, "op count")
        return self.ops(block.ops, k + 1, nops, depth)

    def block_trivia(self, block: Block, k: int, flags: int) -> int:
        """The block's label, blank line and comments as its flags announce them."""
        st = self.ir
        if flags & L.BLK_LABEL:
            label = self.strings[st.index(k, len(self.strings), "block label string")]
            if not L.NAME_RE.fullmatch(label):
                raise st.error(E_SEMANTIC, k, f"block label {label!r} is not a valid label")
            block.label = label
            k += 1
        if flags & L.BLK_BLANK:
            block.leading_blank_line = True
        if flags & L.BLK_COMMENTS:
            block.comments, k = self.comments(st, k)
        if flags & L.BLK_TRAILING:
            block.trailing_comments, k = self.comments(st, k)
            block.trailing_blank_line = flags & L.BLK_TRAILING_BLANK != 0
        elif flags & L.BLK_TRAILING_BLANK:
            raise st.error(E_STRUCTURE, k, "block flags ask for a blank line before no comments")
        return k

    def block_args(self, block: Block, k: int, explicit_ids: int) -> int:
        """The block's arguments: the next value ids, or explicit zigzag offsets from them."""
        st = self.ir
        s, V, defined = st.s, self.values, self.defined  # noqa: N806
        # implicit ids take no ints (a declaration's signature block may end the stream);
        # the loop below stops at the first id past the value table
        n = st.count(k, "block argument count", 1 if explicit_ids else 0)
        k += 1
        nxt, nv = self.nxt, len(V)
        args = []
        for _ in range(n):
            vid = nxt
            if explicit_ids:
                z = s[k]
                vid += (z >> 1) ^ -(z & 1)
                k += 1
            if not 0 <= vid < nv or defined[vid]:
                raise st.error(
                    E_SEMANTIC,
                    k - 1,
                    f"block argument value {vid} is out of range or defined twice",
                )
            defined[vid] = 1
            args.append(V[vid])
            nxt = vid + 1
        self.nxt = nxt
        block.args = tuple(args)
        return k

    def ops(self, out: list[Operation], k: int, nops: int, depth: int) -> int:
        """``nops`` ops from int ``k`` appended to ``out``; returns the next position.

        Per op: ``op_index << OP_SHIFT | OPF_*``, the ``OPX_*`` flags, location, comments,
        counts, operands, results, attribute dictionary and regions, each when its flag (or
        the name's variable counts) asks; the rare parts by the methods named after them."""
        # The layout's names as locals: as fast to test as literal masks in this loop.
        OP_SHIFT, OPF_ATTRS, OPF_LOCATION = L.OP_SHIFT, L.OPF_ATTRS, L.OPF_LOCATION  # noqa: N806
        OPF_EXTENDED, OPX_COUNTS, OPX_REGIONS = L.OPF_EXTENDED, L.OPX_COUNTS, L.OPX_REGIONS  # noqa: N806
        OPX_COMMENTS, OPX_BLANK, OPX_RESULT_IDS = L.OPX_COMMENTS, L.OPX_BLANK, L.OPX_RESULT_IDS  # noqa: N806
        st = self.ir
        s, V, plans, defined = st.s, self.values, self.plans, self.defined  # noqa: N806
        nplans, nloc, nv = len(plans), self.nloc, len(V)
        attr_ok, attr_dicts = self.attr_ok, self.attr_dicts
        append = out.append
        nxt = self.nxt
        for _ in range(nops):
            head = s[k]
            p = head >> OP_SHIFT
            if p >= nplans:
                raise st.out_of_range(k, "op name index", p, nplans)
            k += 1
            name, decl, no, nr, max_regions = plans[p]
            ext = loc = 0
            comments: tuple[str, ...] = ()
            if head & (OPF_LOCATION | OPF_EXTENDED):
                if head & OPF_EXTENDED:
                    ext, k = self.extended_flags(k)
                    if ext & OPX_COUNTS:
                        no = nr = -1
                if head & OPF_LOCATION:
                    loc = s[k]
                    if not 0 < loc < nloc:
                        raise st.out_of_range(k, "location id", loc, nloc)
                    k += 1
                if ext & OPX_COMMENTS:
                    comments, k = self.comments(st, k)
            if no < 0 or nr < 0:
                no, nr, k = self.counts(k, no, nr)
            # Operands: distance back from the next value id (>= 1), or 0 then an absolute id.
            if no == 2 and 0 < (d := s[k]) <= nxt and 0 < (e := s[k + 1]) <= nxt:
                operands: tuple[Value, ...] = (V[nxt - d], V[nxt - e])
                k += 2
            elif no == 1 and 0 < (d := s[k]) <= nxt:
                operands = (V[nxt - d],)
                k += 1
            elif no:
                operands, k = self.operands(k, no, nxt)
            else:
                operands = ()
            if nr == 1 and not ext & OPX_RESULT_IDS:
                if nxt >= nv or defined[nxt]:
                    raise st.redefined(k, "result value", nxt)
                defined[nxt] = 1
                results: tuple[Value, ...] = (V[nxt],)
                nxt += 1
            elif nr:
                results, nxt, k = self.results(k, nr, nxt, ext & OPX_RESULT_IDS)
            else:
                results = ()
            attrs: Any = None
            if head & OPF_ATTRS:
                d = s[k]
                if (p, d, no) not in attr_ok:
                    self.check_attr_dict(k, p, d, no)
                attrs = attr_dicts[d]
                k += 1
            if ext:
                regions: tuple[Region, ...] = ()
                if ext & OPX_REGIONS:
                    self.nxt = nxt
                    regions, k = self.regions(k, name, max_regions, depth)
                    nxt = self.nxt
                blank = ext & OPX_BLANK != 0
                append(Operation(name, operands, results, attrs, regions, loc, comments, blank))
            else:
                append(Operation(name, operands, results, attrs, (), loc))
        self.nxt = nxt
        return k

    def extended_flags(self, k: int) -> tuple[int, int]:
        """The ``OPX_*`` flags at int ``k`` (never empty, no unknown bits)."""
        ext = self.ir.s[k]
        if not ext or ext & ~L.OPX_ALL:
            raise self.ir.error(E_STRUCTURE, k, f"invalid extended op flags {ext}")
        return ext, k + 1

    def counts(self, k: int, no: int, nr: int) -> tuple[int, int, int]:
        """The operand and result counts the op name does not fix (each at most the ints
        left): (operands, results, next position)."""
        st = self.ir
        s = st.s
        if no < 0:
            no = s[k]
            if no > len(s) - k:
                raise st.error(E_COUNT, k, f"operand count {no} exceeds the entries left")
            k += 1
        if nr < 0:
            nr = s[k]
            if nr > len(s) - k:
                raise st.error(E_COUNT, k, f"result count {nr} exceeds the entries left")
            k += 1
        return no, nr, k

    def results(self, k: int, nr: int, nxt: int, explicit_ids: int) -> tuple[Any, int, int]:
        """``nr`` results: the next value ids in sequence, or (with ``OPX_RESULT_IDS``) zigzag
        offsets from the next id. Returns (results, next value id, next position)."""
        st = self.ir
        s, V, defined = st.s, self.values, self.defined  # noqa: N806
        if not explicit_ids:
            end = nxt + nr
            if end > len(V) or defined.find(1, nxt, end) >= 0:
                raise st.redefined(k, "result values", f"{nxt}..{end - 1}")
            defined[nxt:end] = b"\1" * nr
            return tuple(V[nxt:end]), end, k
        out = []
        for _ in range(nr):
            z = s[k]
            a = nxt + ((z >> 1) ^ -(z & 1))
            if not 0 <= a < len(V) or defined[a]:
                raise st.redefined(k, "result value", a)
            defined[a] = 1
            out.append(V[a])
            nxt = a + 1
            k += 1
        return tuple(out), nxt, k

    def check_attr_dict(self, k: int, p: int, d: int, n_operands: int) -> None:
        """Attribute dictionary ``d`` exists and fits op name ``p`` with this many operands
        (each combination is checked once)."""
        st = self.ir
        if d >= len(self.attr_dicts):
            raise st.error(
                E_INDEX,
                k,
                f"attribute dictionary {d} is out of range (table has {len(self.attr_dicts)})",
            )
        name, decl = self.plans[p][:2]
        problem = L.attr_dict_problem(decl, self.attr_dicts[d], n_operands)
        if problem:
            raise st.error(E_SEMANTIC, k, f"'{name}': {problem}")
        self.attr_ok.add((p, d, n_operands))

    def regions(
        self, k: int, name: str, max_regions: int, depth: int
    ) -> tuple[tuple[Region, ...], int]:
        """An op's regions at int ``k``: count, then per region its block count and blocks."""
        st = self.ir
        n = st.s[k]
        if not 0 < n <= max_regions:
            raise st.error(
                E_STRUCTURE,
                k,
                f"'{name}' cannot have {count_of(n, 'region')} (it declares {max_regions})",
            )
        if depth >= L.MAX_NESTING:
            raise st.error(E_STRUCTURE, k, f"regions nest deeper than {L.MAX_NESTING} levels")
        k += 1
        regs = []
        for _ in range(n):
            nb = st.count(k, "block count")
            if not nb:
                raise st.error(E_STRUCTURE, k, "a region needs at least one block")
            k += 1
            blocks = []
            for _ in range(nb):
                b = Block()
                k = self.block(b, k, depth + 1)
                blocks.append(b)
            regs.append(Region(blocks))
        return tuple(regs), k

    def comments(self, st: _Stream, k: int) -> tuple[tuple[str, ...], int]:
        """A comment count and that many single-line comment strings at int ``k``."""
        n = st.count(k, "comment count")
        strings, ns = self.strings, len(self.strings)
        out = []
        for j in range(k + 1, k + 1 + n):
            text = strings[st.index(j, ns, "comment string")]
            if "\n" in text or "\r" in text:
                raise st.error(E_SEMANTIC, j, f"comment {text!r} spans several lines")
            out.append(text)
        return tuple(out), k + 1 + n

    def operands(self, k: int, n: int, nxt: int) -> tuple[tuple[Value, ...], int]:
        """``n`` operand references starting at int ``k`` (the general, checked path)."""
        st = self.ir
        s = st.s
        V = self.values  # noqa: N806
        out = []
        for _ in range(n):
            d = s[k]
            k += 1
            if d:
                if d > nxt:
                    raise st.error(
                        E_INDEX, k - 1, f"operand distance {d} reaches before the first value"
                    )
                out.append(V[nxt - d])
            else:
                a = s[k]
                k += 1
                if a >= len(V):
                    raise st.error(
                        E_INDEX, k - 1, f"operand value {a} is out of range (table has {len(V)})"
                    )
                out.append(V[a])
        return tuple(out), k

    def attr_table(self, st: _Stream) -> None:
        """The attribute dictionaries ops refer to: non-empty, keys sorted and unique."""
        s, strings, ns = st.s, self.strings, len(self.strings)
        table = []
        try:
            n = st.count(0, "attribute dictionary count", 3)
            k = 1
            for _ in range(n):
                m = st.count(k, "attribute count", 2)
                if not m:
                    raise st.error(E_STRUCTURE, k, "an attribute dictionary cannot be empty")
                k += 1
                entries = {}
                prev = None
                for _ in range(m):
                    key = strings[st.index(k, ns, "attribute key string")]
                    if prev is not None and key <= prev:
                        raise st.error(
                            E_STRUCTURE,
                            k,
                            f"attribute key '{key}' is not sorted after '{prev}' (or repeated)",
                        )
                    prev = key
                    entries[key], k = self.attr_value(st, k + 1, 0)
                table.append(freeze_attributes(entries))
        except IndexError:
            raise st.truncated() from None
        if k != len(s):
            raise st.error(E_TRAILING, k, "expected the end of the section")
        self.attr_dicts = table

    def attr_value(self, st: _Stream, k: int, depth: int) -> tuple[Any, int]:
        """One kind-tagged attribute value at int ``k``."""
        s = st.s
        tag = s[k]
        if tag == L.ATTR_INT:
            z = s[k + 1]
            return (z >> 1) ^ -(z & 1), k + 2
        if tag == L.ATTR_STRING:
            return self.strings[st.index(k + 1, len(self.strings), "string")], k + 2
        if tag == L.ATTR_TYPED_INT:
            return self.typed_int(st, k)
        if tag == L.ATTR_BYTES:
            text = self.strings[st.index(k + 1, len(self.strings), "byte string")]
            try:
                return bytes.fromhex(text), k + 2
            except ValueError:
                raise st.error(E_SEMANTIC, k + 1, f"byte string {text!r} is not hex") from None
        if tag == L.ATTR_TRUE:
            return True, k + 1
        if tag == L.ATTR_FALSE:
            return False, k + 1
        if tag == L.ATTR_UINT64:
            v = s[k + 1]
            if v < _I64_SIGN:
                raise st.error(E_STRUCTURE, k, "a 64-bit unsigned attribute must be >= 2**63")
            return v, k + 2
        if tag == L.ATTR_NEG64:
            v = s[k + 1]
            if v <= _I64_SIGN:
                raise st.error(E_STRUCTURE, k, "a large negative attribute must be < -2**63")
            return -v, k + 2
        if tag == L.ATTR_FLOAT:
            return _F64.unpack(s[k + 1].to_bytes(8, "little"))[0], k + 2
        if tag == L.ATTR_FLOAT_LITERAL:
            return self.float_literal(st, k)
        if tag == L.ATTR_I64_ARRAY:
            n = st.count(k + 1, "array length")
            return tuple((z >> 1) ^ -(z & 1) for z in s[k + 2 : k + 2 + n]), k + 2 + n
        if tag == L.ATTR_TYPE_ARRAY:
            n = st.count(k + 1, "array length")
            types = self.types
            return tuple(types[st.index(k + 2 + j, len(types), "type")] for j in range(n)), (
                k + 2 + n
            )
        if tag == L.ATTR_TYPE:
            return self.types[st.index(k + 1, len(self.types), "type")], k + 2
        if tag == L.ATTR_PREDICATES:
            return self.predicates(st, k + 1)
        if tag == L.ATTR_TUPLE:
            return self.tuple_attr(st, k, depth)
        if tag == L.ATTR_DICT:
            return self.dict_attr(st, k, depth)
        raise st.error(
            E_ATTR_KIND, k, f"unknown attribute kind tag {tag} (expected 0..{L.ATTR_TAG_COUNT - 1})"
        )

    def typed_int(self, st: _Stream, k: int) -> tuple[Any, int]:
        """A ``u64(3)``-style typed integer: type name string, then the (zigzag) value."""
        name = self.strings[st.index(k + 1, len(self.strings), "integer type name")]
        z = st.s[k + 2]
        try:
            return TypedInt(name, z if name[:1] == "u" else (z >> 1) ^ -(z & 1)), k + 3
        except (TypeError, ValueError) as e:
            raise st.error(E_SEMANTIC, k + 1, str(e)) from None

    def float_literal(self, st: _Stream, k: int) -> tuple[Any, int]:
        """A float with its source spelling, which must spell the stored value."""
        x = _F64.unpack(st.s[k + 1].to_bytes(8, "little"))[0]
        spelling = self.strings[st.index(k + 2, len(self.strings), "float spelling")]
        if not L.spelling_matches(spelling, x):
            raise st.error(
                E_SEMANTIC, k + 2, f"float spelling {spelling!r} does not spell the value {x!r}"
            )
        return FloatLiteral(x, spelling), k + 3

    def tuple_attr(self, st: _Stream, k: int, depth: int) -> tuple[Any, int]:
        """A tuple of attribute values, nested at most :data:`MAX_ATTR_NESTING` deep."""
        if depth >= L.MAX_ATTR_NESTING:
            raise st.error(
                E_STRUCTURE, k, f"tuple attributes nest deeper than {L.MAX_ATTR_NESTING} levels"
            )
        n = st.count(k + 1, "tuple length")
        k += 2
        items = []
        for _ in range(n):
            x, k = self.attr_value(st, k, depth + 1)
            items.append(x)
        return tuple(items), k

    def dict_attr(self, st: _Stream, k: int, depth: int) -> tuple[Any, int]:
        """A dictionary: sorted unique string keys, each with an attribute value."""
        if depth >= L.MAX_ATTR_NESTING:
            raise st.error(
                E_STRUCTURE, k, f"dictionaries nest deeper than {L.MAX_ATTR_NESTING} levels"
            )
        n = st.count(k + 1, "dictionary length", 2)
        k += 2
        entries = []
        for _ in range(n):
            key = self.strings[st.index(k, len(self.strings), "dictionary key")]
            x, k = self.attr_value(st, k + 1, depth + 1)
            entries.append((key, x))
        keys = [e[0] for e in entries]
        if keys != sorted(set(keys)):
            raise st.error(E_STRUCTURE, k, "dictionary keys are not sorted and unique")
        return DictAttr(entries), k

    def predicates(self, st: _Stream, k: int) -> tuple[Any, int]:
        """A predicate list: kind, arity-checked args (values or ints)."""
        s = st.s
        n = st.count(k, "predicate count", 2)
        k += 1
        out = []
        for _ in range(n):
            kind = self.strings[st.index(k, len(self.strings), "predicate kind string")]
            arity = PREDICATE_ARITY.get(kind)
            if arity is None:
                raise st.error(E_SEMANTIC, k, f"unknown predicate '{kind}'")
            if s[k + 1] != arity:
                raise st.error(
                    E_SEMANTIC,
                    k + 1,
                    f"predicate '{kind}' takes {count_of(arity, 'argument')}, not {s[k + 1]}",
                )
            k += 2
            args: list[Any] = []
            for _ in range(arity):
                tag = s[k]
                if tag == L.PRED_VALUE:
                    args.append(self.values[st.index(k + 1, len(self.values), "value")])
                elif tag == L.PRED_INT:
                    z = s[k + 1]
                    args.append((z >> 1) ^ -(z & 1))
                else:
                    raise st.error(E_ATTR_KIND, k, f"unknown predicate argument tag {tag}")
                k += 2
            out.append(Predicate(kind, tuple(args)))
        return tuple(out), k


def read_module(
    source: bytes | bytearray | memoryview | str | os.PathLike[str],
    *,
    op_decls: OpRegistry | Iterable[OpDef] | None = None,
    verify: bool = False,
    filename: str | None = None,
) -> Module:
    """Decode Loom bytecode (bytes, or the path of a ``.loombc`` file) into a module.

    Raises :class:`BytecodeError` on malformed input, naming the file (the path, or
    ``filename`` for bytes read elsewhere) and the byte offset. ``op_decls`` is the declaration
    set (``ops=``): ops outside it are refused. With ``verify=True`` the module is also
    verified (raising ``LoomDiagnosticError``).
    """
    if isinstance(source, (str, os.PathLike)):
        filename = filename or os.fspath(source)
        data = _read_file(os.fspath(source))
    elif isinstance(source, (bytes, bytearray, memoryview)):
        data = bytes(source)
    else:
        raise TypeError(f"read_module expects bytes or a path, got {type(source).__name__}")
    registry = as_registry(op_decls)
    try:
        with gc_paused():  # many new objects, no garbage cycles: collecting would only cost
            module = _Reader(data, registry).run()
    except BytecodeError as e:
        raise in_file(e, filename) from None
    if verify:
        from loom.verify import verify_module

        verify_module(module, ops=registry).raise_if_errors()
    return module


def _read_file(path: str) -> bytes:
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError as e:
        raise BytecodeError(f"cannot read {path}: {e.strerror or e}") from None


def is_bytecode(data: bytes) -> bool:
    """True when ``data`` starts with the Loom bytecode magic."""
    return bytes(data[:4]) == L.MAGIC


__all__ = ["is_bytecode", "read_module"]
