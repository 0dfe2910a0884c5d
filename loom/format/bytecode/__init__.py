"""Loom bytecode (``.loombc``): a compact, deterministic, versioned binary form of a module.

Our own format in the spirit of upstream's (reference section 5, decision 8); it does not claim
wire compatibility. Writing then reading gives back a module that prints byte-identically.

Layout (all multi-byte integers are unsigned LEB128 varints; "signed" means zigzag first):

* Header, 8 bytes: magic ``LOOM`` · format version u8 (:data:`FORMAT_VERSION`, currently 1;
  readers refuse any other, never clamp) · location mode u8 (0 = locations kept, 1 = none:
  no LOCATIONS section and every op location id is 0) · two reserved zero bytes.
* Section directory: count, then ``(kind, byte length)`` per section, kinds strictly increasing;
  the payloads follow back to back and must end exactly at the end of the file.
* Sections (kind: content):

  1 STRINGS: count, then length-prefixed UTF-8 strings (names, labels, comments, symbols...).
  2 SOURCES: the module's ``sources`` in the same shape.
  3 LOCATIONS: count (entry 0, unknown, is implicit), then per entry a kind byte and payload:
    1 file (flags, source, start line, start col, end line, end col), 2 fused (children),
    3 opaque (source, length-prefixed bytes), 4 tagged (tag, child, bytes). Children refer to
    earlier entries only, so the table has no cycles.

  The remaining sections are pure varint streams (decoded in one vectorized pass):

  4 OPNAMES: count, then per op name its string id and the fixed operand / result counts of
    its declaration (+1, 0 = variable); the reader refuses names outside its declaration set
    (all listed) and declarations whose counts differ.
  5 TYPES: count, then per type a kind (0 scalar + ordinal, 1 buffer, 2 view / 3 vector:
    element ordinal, rank, per dim 0 static + size | 1 unbound | 2 bound + value id, then
    layout 0 none | 1 named + string | 2 value + value id; 4 function: input and result
    type ids, which must be earlier entries).
  6 VALUES: count, then per value of the module-wide table its type id and name (string
    id + 1, 0 = unnamed). Value ids are table positions, so ``%N`` names round-trip.
  7 ATTRS: the distinct attribute dictionaries: count, then per dictionary its entry count
    and entries sorted by key (unique), each key string id + kind-tagged value: 0 int
    (zigzag), 1 u64 >= 2**63, 2 negative below -2**63 (magnitude), 3 float (IEEE bits),
    4 float bits + authored spelling, 5 string, 6 false, 7 true, 8 i64 array, 9 type array,
    10 predicates (kind, arity-checked args: 0 value id | 1 int), 11 nested tuple, 12 type.
    Enum, flag and symbol values are strings validated against the reader's declarations.
  8 MODULE: module name, file-header comments, symbols (name, top-level op index).
  9 IR: the module body as a block. Block: flags (label, leading blank line, comments,
    explicit arg ids, trailing comments, blank line before them), label, comments, trailing
    comments, args, op count, ops. Op: ``op_index << 3 | flags``
    (attributes, location, extended), extended flags (comments, blank line, explicit counts,
    explicit result ids, regions), location id, comments, counts when not fixed, operands as
    the distance back from the next value id (>= 1; or 0 then an absolute id for forward
    references), results (implicitly the next ids, else explicit zigzag offsets), the index
    of its attribute dictionary in ATTRS, regions (count, then per region its block count
    and blocks).

Not stored: ``Module.source_texts`` (the parsed source text kept for diagnostics).

Limits: regions nest at most :data:`MAX_NESTING` deep, tuple attributes
:data:`MAX_ATTR_NESTING`; every count is checked against the bytes left before allocation;
varints longer than 10 bytes, over-long or beyond 64 bits are refused. Errors are
:class:`~loom.errors.BytecodeError` with ``BYTECODE/NNN`` diagnostics naming the file
(``read_module(path)``, or ``filename=`` for bytes) and the byte offset: 001 bad magic,
002 unsupported version, 003 truncated, 004 bad varint, 005 count too large, 006 index out of
range, 007 unknown op, 008 invalid structure, 009 invalid UTF-8, 010 unknown kind tag,
011 trailing bytes, 012 bad section directory, 013 semantically invalid, 014 cannot write.
"""

from loom.format.bytecode.layout import FORMAT_VERSION, MAGIC, MAX_ATTR_NESTING, MAX_NESTING
from loom.format.bytecode.reader import is_bytecode, read_module
from loom.format.bytecode.writer import write_module

__all__ = [
    "FORMAT_VERSION",
    "MAGIC",
    "MAX_ATTR_NESTING",
    "MAX_NESTING",
    "is_bytecode",
    "read_module",
    "write_module",
]
