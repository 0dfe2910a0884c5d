"""Varint encodings: exact round trips, canonical form, strict bounds, stream/scalar agreement."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from loom.errors import BytecodeError
from loom.format.bytecode.encoding import (
    ByteBuffer,
    ByteReader,
    decode_signed_varint,
    decode_varint,
    decode_varint_stream,
    encode_signed_varint,
    encode_varint,
    encode_varint_stream,
)

U64 = st.integers(min_value=0, max_value=2**64 - 1)
I64 = st.integers(min_value=-(2**63), max_value=2**63 - 1)


def code_of(err: pytest.ExceptionInfo[BytecodeError]) -> str:
    return err.value.diagnostics[0].code


@pytest.mark.parametrize(
    ("value", "encoded"),
    [
        (0, b"\x00"),
        (1, b"\x01"),
        (127, b"\x7f"),
        (128, b"\x80\x01"),
        (300, b"\xac\x02"),
        (2**64 - 1, b"\xff" * 9 + b"\x01"),
    ],
)
def test_known_unsigned_encodings(value: int, encoded: bytes) -> None:
    assert encode_varint(value) == encoded
    assert decode_varint(encoded) == (value, len(encoded))


@pytest.mark.parametrize(
    ("value", "zz"),
    [(0, 0), (-1, 1), (1, 2), (-2, 3), (2**63 - 1, 2**64 - 2), (-(2**63), 2**64 - 1)],
)
def test_zigzag_mapping(value: int, zz: int) -> None:
    assert encode_signed_varint(value) == encode_varint(zz)
    assert decode_signed_varint(encode_varint(zz))[0] == value


@given(U64)
def test_unsigned_round_trip(value: int) -> None:
    data = encode_varint(value)
    assert decode_varint(data + b"\x55", 0) == (value, len(data))
    assert len(data) == max(1, -(-value.bit_length() // 7))


@given(I64)
def test_signed_round_trip(value: int) -> None:
    data = encode_signed_varint(value)
    assert decode_signed_varint(data) == (value, len(data))


@pytest.mark.parametrize("value", [-1, 2**64, 2**70])
def test_out_of_range_values_are_refused_by_the_encoder(value: int) -> None:
    with pytest.raises(BytecodeError):
        encode_varint(value)


@pytest.mark.parametrize("value", [2**63, -(2**63) - 1])
def test_signed_encoder_refuses_values_beyond_64_bits(value: int) -> None:
    with pytest.raises(BytecodeError):
        encode_signed_varint(value)


@pytest.mark.parametrize(
    ("data", "code", "offset"),
    [
        (b"", "BYTECODE/003", 0),
        (b"\x80", "BYTECODE/003", 1),
        (b"\x05\xff\xff", "BYTECODE/003", 3),
        (b"\x80\x00", "BYTECODE/004", 0),  # over-long zero
        (b"\xff\x00", "BYTECODE/004", 0),  # over-long 127
        (b"\xff" * 9 + b"\x02", "BYTECODE/004", 0),  # 65 bits
        (b"\xff" * 10 + b"\x01", "BYTECODE/004", 0),  # 11 bytes
    ],
)
def test_bad_scalar_varints_name_their_offset(data: bytes, code: str, offset: int) -> None:
    start = 1 if data.startswith(b"\x05") else 0
    with pytest.raises(BytecodeError) as err:
        decode_varint(data, start)
    assert code_of(err) == code
    assert f"at byte offset {offset}" in str(err.value)


@given(st.lists(U64, max_size=200))
def test_stream_matches_scalar_encoding(values: list[int]) -> None:
    data = encode_varint_stream(values)
    assert data == b"".join(encode_varint(v) for v in values)
    decoded, _ = decode_varint_stream(b"xy" + data, 2, 2 + len(data), "test")
    assert decoded == values


@given(st.lists(U64, min_size=1, max_size=50), st.data())
def test_stream_offsets_point_at_each_varint(values: list[int], data: st.DataObject) -> None:
    encoded = encode_varint_stream(values)
    decoded, starts = decode_varint_stream(encoded, 0, len(encoded), "test")
    k = data.draw(st.integers(0, len(values) - 1))
    at = k if starts is None else int(starts[k])
    assert decode_varint(encoded, at)[0] == values[k]


@pytest.mark.parametrize(
    ("data", "code", "offset"),
    [
        (b"\x01\x80", "BYTECODE/003", 1),
        (b"\x01\x80\x80\x00", "BYTECODE/004", 1),
        (b"\x01" + b"\xff" * 9 + b"\x7f", "BYTECODE/004", 1),
        (b"\x01\x02" + b"\xff" * 12 + b"\x01", "BYTECODE/004", 2),
    ],
)
def test_bad_streams_name_their_offset(data: bytes, code: str, offset: int) -> None:
    with pytest.raises(BytecodeError) as err:
        decode_varint_stream(b"HDR" + data, 3, 3 + len(data), "test")
    assert code_of(err) == code
    assert f"at byte offset {offset + 3}" in str(err.value)


@given(st.binary(max_size=64))
def test_stream_decoder_agrees_with_scalar_decoder(data: bytes) -> None:
    """On any bytes, the vectorized decoder accepts exactly what repeated scalar decoding does."""
    scalar: list[int] | None = []
    pos = 0
    try:
        while pos < len(data):
            v, pos = decode_varint(data, pos)
            scalar.append(v)
    except BytecodeError:
        scalar = None
    try:
        stream = decode_varint_stream(data, 0, len(data), "test")[0]
    except BytecodeError:
        stream = None
    assert stream == scalar


def test_byte_reader_checks_counts_before_allocating() -> None:
    buf = ByteBuffer()
    buf.varint(2**40)  # a count no input of this size can hold
    buf.raw(b"abc")
    r = ByteReader(buf.getvalue(), what="the test section")
    with pytest.raises(BytecodeError) as err:
        r.count("string count")
    assert code_of(err) == "BYTECODE/005"
    assert "at byte offset 0" in str(err.value)


def test_byte_reader_text_and_utf8_errors() -> None:
    buf = ByteBuffer()
    buf.text("héllo")
    buf.blob(b"\xff\xfe")
    r = ByteReader(buf.getvalue(), what="the test section")
    assert r.text("a string") == "héllo"
    at = r.pos
    with pytest.raises(BytecodeError) as err:
        r.text("a string")
    assert code_of(err) == "BYTECODE/009"
    assert f"at byte offset {at}" in str(err.value)
    r.expect_end()


def test_byte_reader_refuses_leftovers_and_truncation() -> None:
    r = ByteReader(b"\x01\x02", what="the test section")
    assert r.u8("a byte") == 1
    with pytest.raises(BytecodeError) as err:
        r.expect_end()
    assert code_of(err) == "BYTECODE/011"
    r.u8("a byte")
    with pytest.raises(BytecodeError) as err:
        r.u8("a kind byte")
    assert code_of(err) == "BYTECODE/003"
    assert "expected a kind byte" in str(err.value)
