"""Hostile bytecode: every malformed input is a BytecodeError naming the byte offset.

Crafted cases cover each refusal; hypothesis fuzzes truncations, bit flips, spliced sections
and random bytes after a valid header (quick profile by default, a long one marked ``slow``).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from loom.errors import BytecodeError
from loom.format.bytecode import layout as L
from loom.format.bytecode import read_module, write_module
from loom.format.bytecode.encoding import (
    ByteBuffer,
    ByteReader,
    decode_varint_stream,
    encode_varint,
    encode_varint_stream,
)
from loom.format.text.parser import parse_module

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
from common import OPS, make_module  # noqa: E402

KERNEL = (ROOT / "examples" / "kernels" / "vector_add_i32.loom").read_text(encoding="utf-8")
SMALL = write_module(parse_module(KERNEL, filename="vector_add_i32.loom"))
GENERATED = write_module(make_module(120), op_decls=OPS)
QUICK = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
LONG = settings(max_examples=5000, deadline=None, suppress_health_check=[HealthCheck.too_slow])


# --------------------------------------------------------------------------- helpers


def sections(data: bytes) -> tuple[bytes, list[tuple[int, bytes]]]:
    """The 8-byte header and the ``(kind, payload)`` sections of a valid file."""
    r = ByteReader(data, L.HEADER_SIZE)
    n = r.varint("count")
    entries = [(r.varint("kind"), r.varint("length")) for _ in range(n)]
    out = []
    for kind, length in entries:
        out.append((kind, r.raw(length, "payload")))
    return data[: L.HEADER_SIZE], out


def assemble(header: bytes, parts: list[tuple[int, bytes]]) -> bytes:
    """A file from a header and sections (directory recomputed)."""
    buf = ByteBuffer()
    buf.raw(header)
    buf.varint(len(parts))
    for kind, payload in parts:
        buf.varint(kind)
        buf.varint(len(payload))
    for _, payload in parts:
        buf.raw(payload)
    return buf.getvalue()


def replace_section(data: bytes, kind: int, payload: bytes) -> bytes:
    header, parts = sections(data)
    return assemble(header, [(k, payload if k == kind else p) for k, p in parts])


def section_ints(data: bytes, kind: int) -> list[int]:
    payload = dict(sections(data)[1])[kind]
    return decode_varint_stream(payload, 0, len(payload), "test")[0]


def with_ints(data: bytes, kind: int, ints: list[int]) -> bytes:
    return replace_section(data, kind, encode_varint_stream(ints))


def refused(data: bytes, code: str | None = None, *, ops: object = None) -> BytecodeError:
    """Reading ``data`` raises BytecodeError (with ``code``) naming an offset inside the file."""
    with pytest.raises(BytecodeError) as err:
        read_module(data, op_decls=ops)
    e = err.value
    assert e.diagnostics and e.diagnostics[0].code.startswith("BYTECODE/")
    if code is not None:
        assert e.diagnostics[0].code == code, str(e)
    assert "at byte offset" in str(e)
    offset = int(str(e).split("at byte offset ")[1].split(":")[0])
    assert 0 <= offset <= len(data)
    return e


def only_bytecode_errors(data: bytes) -> None:
    """Reading may succeed or raise BytecodeError; nothing else may escape."""
    try:
        read_module(data)
    except BytecodeError as e:
        assert e.diagnostics[0].code.startswith("BYTECODE/")


# --------------------------------------------------------------------------- framing


def test_the_fixture_files_are_valid() -> None:
    read_module(SMALL, verify=True)
    read_module(GENERATED, op_decls=OPS, verify=True)


@pytest.mark.parametrize("data", [b"", b"L", b"LOO"])
def test_short_prefixes_of_the_magic_are_truncation(data: bytes) -> None:
    refused(data, "BYTECODE/003")


@pytest.mark.parametrize("data", [b"MLIR\x01\x00\x00\x00\x00", b"loom", b"\x00", b"target.generic"])
def test_bad_magic(data: bytes) -> None:
    e = refused(data, "BYTECODE/001")
    assert "at byte offset 0" in str(e)


@pytest.mark.parametrize("version", [0, 2, 28, 255])
def test_unknown_versions_are_refused_not_clamped(version: int) -> None:
    data = SMALL[:4] + bytes([version]) + SMALL[5:]
    e = refused(data, "BYTECODE/002")
    assert f"version {version}" in str(e) and "at byte offset 4" in str(e)


def test_reserved_location_mode_and_header_bytes() -> None:
    refused(SMALL[:5] + b"\x02" + SMALL[6:], "BYTECODE/012")
    refused(SMALL[:6] + b"\x01" + SMALL[7:], "BYTECODE/012")


def test_truncation_at_every_offset_of_a_real_file() -> None:
    for cut in range(len(SMALL)):
        e = refused(SMALL[:cut])
        assert e.diagnostics[0].code in ("BYTECODE/003", "BYTECODE/005", "BYTECODE/012"), (
            cut,
            str(e),
        )


def test_trailing_garbage_is_refused() -> None:
    e = refused(SMALL + b"\x00", "BYTECODE/011")
    assert f"at byte offset {len(SMALL)}" in str(e)


def test_sections_must_be_known_sorted_unique_and_present() -> None:
    header, parts = sections(SMALL)
    refused(assemble(header, parts[::-1]), "BYTECODE/012")
    refused(assemble(header, parts + [parts[-1]]), "BYTECODE/012")
    refused(assemble(header, parts + [(42, b"")]), "BYTECODE/012")
    e = refused(assemble(header, [p for p in parts if p[0] != L.SEC_TYPES]), "BYTECODE/012")
    assert "TYPES" in str(e)
    no_locations = header[:5] + b"\x01" + header[6:]
    refused(assemble(no_locations, parts), "BYTECODE/012")  # mode 1 with a LOCATIONS section
    refused(assemble(header, [p for p in parts if p[0] != L.SEC_LOCATIONS]), "BYTECODE/012")


def test_section_length_beyond_the_file_is_truncation() -> None:
    header, parts = sections(SMALL)
    buf = ByteBuffer()
    buf.raw(header)
    buf.varint(1)
    buf.varint(L.SEC_STRINGS)
    buf.varint(2**40)
    refused(buf.getvalue() + b"\x00", "BYTECODE/003")


# --------------------------------------------------------------------------- tables


def test_huge_counts_are_refused_before_allocating() -> None:
    huge = encode_varint(2**62)
    refused(replace_section(SMALL, L.SEC_STRINGS, huge + b"\x00"), "BYTECODE/005")
    for kind in (L.SEC_OPNAMES, L.SEC_TYPES, L.SEC_VALUES, L.SEC_ATTRS):
        ints = section_ints(SMALL, kind)
        refused(with_ints(SMALL, kind, [2**62, *ints[1:]]), "BYTECODE/005")
    ir = section_ints(SMALL, L.SEC_IR)
    # The module body block: flags, arg count, op count.
    assert ir[:2] == [0, 0]
    refused(with_ints(SMALL, L.SEC_IR, [0, 0, 2**63, *ir[3:]]), "BYTECODE/005")


def test_overlong_and_overflowing_varints_inside_sections() -> None:
    payload = dict(sections(SMALL)[1])[L.SEC_IR]
    refused(replace_section(SMALL, L.SEC_IR, b"\x80\x00" + payload[1:]), "BYTECODE/004")
    refused(replace_section(SMALL, L.SEC_IR, b"\xff" * 10 + b"\x01" + payload), "BYTECODE/004")


def test_invalid_utf8_in_the_string_table() -> None:
    buf = ByteBuffer()
    buf.varint(1)
    buf.blob(b"\xc3\x28")
    refused(replace_section(SMALL, L.SEC_STRINGS, buf.getvalue()), "BYTECODE/009")


def test_unknown_op_names_are_listed() -> None:
    header, parts = sections(SMALL)
    strings = ByteReader(dict(parts)[L.SEC_STRINGS])
    names = [strings.text("s") for _ in range(strings.varint("n"))]
    names = [
        n.replace("index.constant", "index.konstant").replace("scf.if", "scf.when") for n in names
    ]
    buf = ByteBuffer()
    buf.varint(len(names))
    for n in names:
        buf.text(n)
    e = refused(replace_section(SMALL, L.SEC_STRINGS, buf.getvalue()), "BYTECODE/007")
    assert "'index.konstant'" in str(e) and "'scf.when'" in str(e)


def test_out_of_range_table_indices() -> None:
    opnames = section_ints(SMALL, L.SEC_OPNAMES)
    refused(with_ints(SMALL, L.SEC_OPNAMES, [opnames[0], 10**6, *opnames[2:]]), "BYTECODE/006")
    values = section_ints(SMALL, L.SEC_VALUES)
    refused(with_ints(SMALL, L.SEC_VALUES, [values[0], 10**6, *values[2:]]), "BYTECODE/006")
    refused(
        with_ints(SMALL, L.SEC_VALUES, [values[0], values[1], 10**6, *values[3:]]), "BYTECODE/006"
    )
    meta = section_ints(SMALL, L.SEC_MODULE)
    refused(with_ints(SMALL, L.SEC_MODULE, [10**6, *meta[1:]]), "BYTECODE/006")
    ir = section_ints(SMALL, L.SEC_IR)
    # First top-level op: header varint with an op-name index far beyond the table.
    refused(with_ints(SMALL, L.SEC_IR, [0, 0, ir[2], 500 << L.OP_SHIFT, *ir[4:]]), "BYTECODE/006")


def test_out_of_range_location_references() -> None:
    header, parts = sections(SMALL)
    buf = ByteBuffer()
    buf.varint(1)
    buf.u8(L.LOC_FILE)
    for x in (0, 7, 1, 1, 1, 1):  # source 7 does not exist
        buf.varint(x)
    refused(replace_section(SMALL, L.SEC_LOCATIONS, buf.getvalue()), "BYTECODE/006")
    buf = ByteBuffer()
    buf.varint(1)
    buf.u8(L.LOC_FUSED)
    buf.varint(1)
    buf.varint(1)  # a fused location containing itself
    refused(replace_section(SMALL, L.SEC_LOCATIONS, buf.getvalue()), "BYTECODE/006")
    buf = ByteBuffer()
    buf.varint(1)
    buf.u8(9)
    refused(replace_section(SMALL, L.SEC_LOCATIONS, buf.getvalue()), "BYTECODE/010")


def test_op_location_ids_must_exist() -> None:
    buf = ByteBuffer()
    buf.varint(0)  # an empty location table: every op's location id is now out of range
    e = refused(replace_section(SMALL, L.SEC_LOCATIONS, buf.getvalue()), "BYTECODE/006")
    assert "location id" in str(e)


def if_stream(data: bytes, regions: int, blocks: int) -> bytes:
    """``data`` with its IR replaced by one top-level scf.if with the given region layout."""
    opnames = section_ints(data, L.SEC_OPNAMES)
    strings = ByteReader(dict(sections(data)[1])[L.SEC_STRINGS])
    names = [strings.text("s") for _ in range(strings.varint("n"))]
    index = [names[opnames[1 + 3 * i]] for i in range(opnames[0])].index("scf.if")
    head = [index << L.OP_SHIFT | L.OPF_EXTENDED, L.OPX_REGIONS | L.OPX_COUNTS, 1, 0, 0, 0]
    body = [blocks] + [0, 0, 0] * blocks  # each block: flags 0, no args, no ops
    data = with_ints(data, L.SEC_MODULE, [section_ints(data, L.SEC_MODULE)[0], 0, 0])
    return with_ints(data, L.SEC_IR, [0, 0, 1, *head, regions, *body * regions])


def test_invalid_region_structure() -> None:
    data = write_module(make_module(60), op_decls=OPS)
    e = refused(if_stream(data, 3, 1), "BYTECODE/008", ops=OPS)
    assert "cannot have 3 regions" in str(e)
    e = refused(if_stream(data, 1, 0), "BYTECODE/008", ops=OPS)
    assert "at least one block" in str(e)
    # The same stream with a sound layout decodes (the verifier, not the reader, judges it).
    assert read_module(if_stream(data, 1, 1), op_decls=OPS).ops[0].name == "scf.if"


def test_bad_attribute_kind_tag() -> None:
    ints = section_ints(SMALL, L.SEC_ATTRS)
    # Table: count, then the first dictionary: entry count, key, kind tag, payload...
    assert ints[0] >= 1 and ints[1] >= 1
    e = refused(with_ints(SMALL, L.SEC_ATTRS, [*ints[:3], 99, *ints[4:]]), "BYTECODE/010")
    assert "kind tag 99" in str(e)


def test_unsorted_or_repeated_attribute_keys_are_refused() -> None:
    ints = section_ints(SMALL, L.SEC_ATTRS)
    # The first dictionary (target.generic) has two string entries: n, 2, k1, 5, s1, k2, 5, s2.
    assert ints[1] == 2 and ints[3] == ints[6] == L.ATTR_STRING
    swapped = [ints[0], 2, *ints[5:8], *ints[2:5], *ints[8:]]
    e = refused(with_ints(SMALL, L.SEC_ATTRS, swapped), "BYTECODE/008")
    assert "not sorted" in str(e)
    repeated = [ints[0], 2, *ints[2:5], *ints[2:5], *ints[8:]]
    refused(with_ints(SMALL, L.SEC_ATTRS, repeated), "BYTECODE/008")
    assert read_module(with_ints(SMALL, L.SEC_ATTRS, ints))  # the unmodified table reads


def replace_string(data: bytes, old: str, new: str) -> bytes:
    """``data`` with string-table entry ``old`` replaced by ``new``."""
    strings = ByteReader(dict(sections(data)[1])[L.SEC_STRINGS])
    names = [strings.text("s") for _ in range(strings.varint("n"))]
    assert old in names
    buf = ByteBuffer()
    buf.varint(len(names))
    for n in names:
        buf.text(new if n == old else n)
    return replace_section(data, L.SEC_STRINGS, buf.getvalue())


def test_float_spelling_must_spell_the_value() -> None:
    text = KERNEL.replace(
        "  %base = index.constant 0 : offset\n",
        "  %base = index.constant 0 : offset\n  %h = scalar.constant 1.50 : f32\n",
    )
    module = parse_module(text, filename="f.loom")
    data = write_module(module)
    assert read_module(data, verify=True)
    e = refused(replace_string(data, "1.50", "2.75"), "BYTECODE/013")
    assert "'2.75'" in str(e)
    refused(replace_string(data, "1.50", "1.5\n// injected"), "BYTECODE/013")
    from loom.ir import FloatLiteral

    op = next(op for op in module.walk() if isinstance(op.attributes.get("value"), FloatLiteral))
    op.attributes = {"value": FloatLiteral(1.5, "2.75")}
    with pytest.raises(BytecodeError, match="does not spell"):
        write_module(module)


def test_names_and_comments_that_would_not_print_back_are_refused() -> None:
    e = refused(replace_string(SMALL, "inside", "in side"), "BYTECODE/013")
    assert "'in side'" in str(e)
    header = (
        " c[i] = a[i] + b[i] (i32, wrapping) for a runtime-sized vector, 64 lanes per workgroup."
    )
    e = refused(replace_string(SMALL, header, "x\nkernel.return"), "BYTECODE/013")
    assert "several lines" in str(e)
    module = parse_module(KERNEL, filename="k.loom")
    module.values[0].name = "not a name"
    with pytest.raises(BytecodeError, match="not a valid name"):
        write_module(module)
    module = parse_module(KERNEL, filename="k.loom")
    module.ops[0].comments = ("two\nlines",)
    with pytest.raises(BytecodeError, match="not a single line"):
        write_module(module)


def test_invalid_enum_case_is_refused() -> None:
    data = write_module(make_module(60), op_decls=OPS)
    header, parts = sections(data)
    strings = ByteReader(dict(parts)[L.SEC_STRINGS])
    names = [strings.text("s") for _ in range(strings.varint("n"))]
    names = ["sideways" if n == "slt" else n for n in names]
    buf = ByteBuffer()
    buf.varint(len(names))
    for n in names:
        buf.text(n)
    e = refused(replace_section(data, L.SEC_STRINGS, buf.getvalue()), "BYTECODE/013", ops=OPS)
    assert "sideways" in str(e)


def test_values_defined_twice_are_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    module = make_module(60)
    block = module.ops[-1].regions[1].blocks[0]
    first, second = (op for op in block.ops if op.results and op.name == "index.constant")
    assert read_module(write_module(module, op_decls=OPS), op_decls=OPS)
    second.results = first.results  # the same value defined by two ops
    with pytest.raises(BytecodeError, match="defined twice"):
        write_module(module, op_decls=OPS)
    # Produce the file anyway (writer check disabled): the reader refuses it on its own.
    from loom.format.bytecode import writer

    def define(self, i: int) -> None:
        self.nxt = i + 1

    monkeypatch.setattr(writer._Writer, "define", define)
    e = refused(write_module(module, op_decls=OPS), "BYTECODE/013", ops=OPS)
    assert "defined twice" in str(e)


def test_deep_nesting_is_refused_without_recursion_errors() -> None:
    """A hand-made stream of 10 000 nested scf.if regions stops at the nesting limit."""
    data = write_module(make_module(60), op_decls=OPS)
    opnames = section_ints(data, L.SEC_OPNAMES)
    strings = ByteReader(dict(sections(data)[1])[L.SEC_STRINGS])
    names = [strings.text("s") for _ in range(strings.varint("n"))]
    index = [names[opnames[1 + 3 * i]] for i in range(opnames[0])].index("scf.if")
    # An scf.if with explicit counts (1 operand, 0 results); the operand is "0, then absolute
    # value id 0"; one region of one block; that block has flags 0, no args and one op: the
    # next nested if.
    one_if = [index << L.OP_SHIFT | L.OPF_EXTENDED, L.OPX_REGIONS | L.OPX_COUNTS, 1, 0, 0, 0, 1, 1]
    stream = [0, 0, 1]
    for _ in range(10_000):
        stream += one_if + [0, 0, 1]
    e = refused(with_ints(data, L.SEC_IR, stream), "BYTECODE/008", ops=OPS)
    assert f"deeper than {L.MAX_NESTING}" in str(e)


# --------------------------------------------------------------------------- fuzzing


@QUICK
@given(st.data())
def test_fuzz_bit_flips(data: st.DataObject) -> None:
    base = data.draw(st.sampled_from([SMALL, GENERATED]))
    buf = bytearray(base)
    for _ in range(data.draw(st.integers(1, 4))):
        i = data.draw(st.integers(0, len(buf) - 1))
        buf[i] ^= 1 << data.draw(st.integers(0, 7))
    only_bytecode_errors(bytes(buf))


@QUICK
@given(st.data())
def test_fuzz_truncate_and_append(data: st.DataObject) -> None:
    cut = data.draw(st.integers(0, len(GENERATED)))
    tail = data.draw(st.binary(max_size=16))
    only_bytecode_errors(GENERATED[:cut] + tail)


@QUICK
@given(st.binary(max_size=300))
def test_fuzz_random_bytes_after_a_valid_header(tail: bytes) -> None:
    only_bytecode_errors(SMALL[: L.HEADER_SIZE] + tail)


@QUICK
@given(st.data())
def test_fuzz_spliced_sections(data: st.DataObject) -> None:
    header, small = sections(SMALL)
    _, big = sections(GENERATED)
    donor = dict(big)
    parts = [(k, donor[k] if data.draw(st.booleans(), label=f"swap {k}") else p) for k, p in small]
    if data.draw(st.booleans(), label="mutate a payload"):
        i = data.draw(st.integers(0, len(parts) - 1))
        k, p = parts[i]
        cut = data.draw(st.integers(0, len(p)))
        parts[i] = (k, p[:cut] + data.draw(st.binary(max_size=8)) + p[cut:])
    only_bytecode_errors(assemble(header, parts))


@QUICK
@given(st.data())
def test_fuzz_varint_stream_mutations(data: st.DataObject) -> None:
    """Structured mutation: change, insert or delete ints in one varint section."""
    kind = data.draw(
        st.sampled_from(
            [L.SEC_OPNAMES, L.SEC_TYPES, L.SEC_VALUES, L.SEC_ATTRS, L.SEC_MODULE, L.SEC_IR]
        )
    )
    ints = section_ints(GENERATED, kind)
    for _ in range(data.draw(st.integers(1, 3))):
        i = data.draw(st.integers(0, len(ints)))
        action = data.draw(st.sampled_from(["set", "insert", "delete"]))
        value = data.draw(st.one_of(st.integers(0, 40), st.integers(0, 2**64 - 1)))
        if action == "insert" or i == len(ints):
            ints.insert(i, value)
        elif action == "set":
            ints[i] = value
        else:
            del ints[i]
    only_bytecode_errors(with_ints(GENERATED, kind, ints))


@pytest.mark.slow
@LONG
@given(st.data())
def test_fuzz_long_profile(data: st.DataObject) -> None:
    base = data.draw(st.sampled_from([SMALL, GENERATED]))
    buf = bytearray(base)
    for _ in range(data.draw(st.integers(1, 16))):
        i = data.draw(st.integers(0, len(buf) - 1))
        op = data.draw(st.sampled_from(["flip", "set", "delete", "insert"]))
        if op == "flip":
            buf[i] ^= 1 << data.draw(st.integers(0, 7))
        elif op == "set":
            buf[i] = data.draw(st.integers(0, 255))
        elif op == "delete" and len(buf) > 1:
            del buf[i]
        else:
            buf.insert(i, data.draw(st.integers(0, 255)))
    only_bytecode_errors(bytes(buf))


@pytest.mark.slow
def test_truncation_at_every_offset_of_a_generated_file() -> None:
    for cut in range(len(GENERATED)):
        refused(GENERATED[:cut])
