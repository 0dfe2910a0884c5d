"""Varint encodings (unsigned LEB128, zigzag signed) with strict bounds, and byte cursors.

Scalar helpers (:func:`encode_varint`, :func:`decode_varint`...) serve the small byte-oriented
sections; :func:`encode_varint_stream` / :func:`decode_varint_stream` convert whole sections of
varints at once with NumPy, which is what keeps reading a large module fast. Every decoding error
is a :class:`~loom.errors.BytecodeError` naming the byte offset and what was expected.
"""

from __future__ import annotations

import numpy as np

from loom.diagnostics import Diagnostic, DiagnosticSeverity, count_of
from loom.errors import BytecodeError

MAX_VARINT_BYTES = 10
"""A 64-bit value needs at most ten 7-bit groups."""
U64_MAX = 2**64 - 1
I64_MIN = -(2**63)
I64_MAX = 2**63 - 1


def bytecode_error(
    code: int, offset: int | None, message: str, filename: str | None = None
) -> BytecodeError:
    """A :class:`BytecodeError` with one ``BYTECODE/NNN`` diagnostic naming the file (when
    known) and the byte offset."""
    src = f" in {filename}" if filename else ""
    where = f" at byte offset {offset}" if offset is not None else ""
    text = f"invalid Loom bytecode{src}{where}: {message}"
    diag = Diagnostic(DiagnosticSeverity.ERROR, f"BYTECODE/{code:03d}", text)
    err = BytecodeError(text, [diag])
    err.offset, err.detail, err.filename = offset, message, filename
    return err


def in_file(err: BytecodeError, filename: str | None) -> BytecodeError:
    """``err`` again, naming ``filename`` (``err`` itself when there is no name to add)."""
    if not filename or err.filename or not err.diagnostics:
        return err
    code = int(err.diagnostics[0].code.rpartition("/")[2])
    return bytecode_error(code, err.offset, err.detail, filename)


# Diagnostic codes (documented in the package docstring).
E_MAGIC = 1
E_VERSION = 2
E_TRUNCATED = 3
E_VARINT = 4
E_COUNT = 5
E_INDEX = 6
E_UNKNOWN_OP = 7
E_STRUCTURE = 8
E_UTF8 = 9
E_ATTR_KIND = 10
E_TRAILING = 11
E_SECTION = 12
E_SEMANTIC = 13
E_WRITE = 14


# --------------------------------------------------------------------------- scalar varints


def encode_varint(value: int) -> bytes:
    """Unsigned LEB128 of ``0 <= value < 2**64``."""
    if not 0 <= value <= U64_MAX:
        raise bytecode_error(E_WRITE, None, f"cannot encode {value} as an unsigned 64-bit varint")
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def zigzag(value: int) -> int:
    """Map a signed 64-bit int to an unsigned one (0, -1, 1, -2 ... -> 0, 1, 2, 3 ...)."""
    if not I64_MIN <= value <= I64_MAX:
        raise bytecode_error(E_WRITE, None, f"cannot encode {value} as a signed 64-bit varint")
    return (value << 1) ^ (value >> 63)


def unzigzag(value: int) -> int:
    """Inverse of :func:`zigzag`."""
    return (value >> 1) ^ -(value & 1)


def encode_signed_varint(value: int) -> bytes:
    """Zigzag then LEB128 of a signed 64-bit int."""
    return encode_varint(zigzag(value))


def decode_varint(
    data: bytes | bytearray | memoryview, offset: int = 0, end: int | None = None
) -> tuple[int, int]:
    """Decode one unsigned varint at ``offset``; returns ``(value, next_offset)``.

    Rejects truncation, over-long encodings (a final zero group after the first byte) and values
    that do not fit in 64 bits.
    """
    limit = len(data) if end is None else min(end, len(data))
    value = 0
    shift = 0
    pos = offset
    while True:
        if pos >= limit:
            raise bytecode_error(E_TRUNCATED, pos, "expected a varint byte, found end of data")
        byte = data[pos]
        pos += 1
        if shift == 63 and byte > 1:
            raise bytecode_error(E_VARINT, offset, "varint does not fit in 64 bits")
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            if byte == 0 and pos - offset > 1:
                raise bytecode_error(E_VARINT, offset, "over-long varint encoding")
            return value, pos
        shift += 7


def decode_signed_varint(
    data: bytes | bytearray | memoryview, offset: int = 0, end: int | None = None
) -> tuple[int, int]:
    """Decode one zigzag varint; returns ``(value, next_offset)``."""
    value, pos = decode_varint(data, offset, end)
    return unzigzag(value), pos


class ByteBuffer:
    """An append-only byte writer."""

    __slots__ = ("_out",)

    def __init__(self) -> None:
        self._out = bytearray()

    def u8(self, value: int) -> None:
        """One byte."""
        self._out.append(value)

    def varint(self, value: int) -> None:
        """An unsigned varint."""
        if 0 <= value < 0x80:
            self._out.append(value)
        else:
            self._out += encode_varint(value)

    def signed(self, value: int) -> None:
        """A zigzag varint."""
        self.varint(zigzag(value))

    def raw(self, data: bytes | bytearray) -> None:
        """Bytes as they are."""
        self._out += data

    def blob(self, data: bytes | bytearray) -> None:
        """A varint length then the bytes."""
        self.varint(len(data))
        self._out += data

    def text(self, value: str) -> None:
        """A UTF-8 string with its length."""
        try:
            self.blob(value.encode("utf-8"))
        except UnicodeEncodeError:
            raise bytecode_error(
                E_WRITE, None, f"string {value!r} is not valid Unicode (lone surrogate)"
            ) from None

    def __len__(self) -> int:
        return len(self._out)

    def getvalue(self) -> bytes:
        """The bytes written so far."""
        return bytes(self._out)


class ByteReader:
    """A bounds-checked cursor over ``data[start:end]``; errors name absolute byte offsets."""

    __slots__ = ("data", "pos", "end", "what")

    def __init__(
        self, data: bytes, start: int = 0, end: int | None = None, what: str = "data"
    ) -> None:
        self.data = data
        self.pos = start
        self.end = len(data) if end is None else end
        self.what = what

    @property
    def remaining(self) -> int:
        """Bytes left before ``end``."""
        return self.end - self.pos

    def u8(self, expected: str) -> int:
        """One byte."""
        if self.pos >= self.end:
            raise bytecode_error(
                E_TRUNCATED, self.pos, f"expected {expected} in {self.what}, found its end"
            )
        b = self.data[self.pos]
        self.pos += 1
        return b

    def varint(self, expected: str) -> int:
        """An unsigned varint."""
        if self.pos >= self.end:
            raise bytecode_error(
                E_TRUNCATED, self.pos, f"expected {expected} in {self.what}, found its end"
            )
        value, self.pos = decode_varint(self.data, self.pos, self.end)
        return value

    def signed(self, expected: str) -> int:
        """A zigzag varint."""
        return unzigzag(self.varint(expected))

    def count(self, expected: str, min_item_size: int = 1) -> int:
        """A count of items that each take at least ``min_item_size`` bytes (checked)."""
        at = self.pos
        n = self.varint(expected)
        if n * min_item_size > self.remaining:
            raise bytecode_error(
                E_COUNT,
                at,
                f"{expected} {n} exceeds the {count_of(self.remaining, 'byte')} left in "
                f"{self.what}",
            )
        return n

    def raw(self, n: int, expected: str) -> bytes:
        """``n`` bytes."""
        if n > self.remaining:
            raise bytecode_error(
                E_TRUNCATED,
                self.pos,
                f"expected {count_of(n, 'byte')} of {expected} in {self.what}, only "
                f"{self.remaining} left",
            )
        out = self.data[self.pos : self.pos + n]
        self.pos += n
        return bytes(out)

    def blob(self, expected: str) -> bytes:
        """A length-prefixed byte string."""
        at = self.pos
        n = self.varint(f"length of {expected}")
        if n > self.remaining:
            raise bytecode_error(
                E_COUNT,
                at,
                f"length {n} of {expected} exceeds the {count_of(self.remaining, 'byte')} left in "
                f"{self.what}",
            )
        return self.raw(n, expected)

    def text(self, expected: str) -> str:
        """A length-prefixed UTF-8 string."""
        at = self.pos
        data = self.blob(expected)
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as e:
            raise bytecode_error(
                E_UTF8,
                at,
                f"{expected} is not valid UTF-8 ({e.reason} at byte {e.start} of the string)",
            ) from None

    def expect_end(self) -> None:
        """Refuse bytes left over."""
        if self.pos != self.end:
            raise bytecode_error(
                E_TRAILING,
                self.pos,
                f"expected the end of {self.what}, found "
                f"{count_of(self.end - self.pos, 'more byte')}",
            )


# --------------------------------------------------------------------------- varint streams

_SHIFTS = [np.uint64(7 * k) for k in range(MAX_VARINT_BYTES)]
_LIMITS = [np.uint64(1 << (7 * k)) for k in range(1, MAX_VARINT_BYTES)]


def encode_varint_stream(values: list[int]) -> bytes:
    """Unsigned LEB128 of every value, concatenated (vectorized)."""
    if not values:
        return b""
    try:
        arr = np.array(values, dtype=np.uint64)
    except (OverflowError, ValueError, TypeError):
        bad = next((v for v in values if not (isinstance(v, int) and 0 <= v <= U64_MAX)), None)
        raise bytecode_error(
            E_WRITE, None, f"cannot encode {bad!r} as an unsigned 64-bit varint"
        ) from None
    if int(arr.max()) < 0x80:
        return arr.astype(np.uint8).tobytes()
    nbytes = np.ones(len(arr), dtype=np.int64)
    for limit in _LIMITS:
        nbytes += arr >= limit
    offsets = np.cumsum(nbytes) - nbytes
    out = np.zeros(int(nbytes.sum()), dtype=np.uint8)
    for k in range(MAX_VARINT_BYTES):
        mask = nbytes > k
        if not mask.any():
            break
        group = ((arr[mask] >> _SHIFTS[k]) & np.uint64(0x7F)).astype(np.uint8)
        group |= np.where(nbytes[mask] > k + 1, 0x80, 0).astype(np.uint8)
        out[offsets[mask] + k] = group
    return out.tobytes()


def decode_varint_stream(
    data: bytes, start: int, end: int, what: str
) -> tuple[list[int], np.ndarray | None]:
    """Decode ``data[start:end]`` as a sequence of unsigned varints (vectorized).

    Returns the values and the byte offset (relative to ``start``) of each one; the offsets are
    ``None`` when every varint is one byte long (value ``k`` then starts at ``k``).
    """
    n = end - start
    if n <= 0:
        return [], None
    buf = np.frombuffer(data, dtype=np.uint8, count=n, offset=start)
    ends = np.flatnonzero(buf < 0x80)
    if len(ends) == n:
        return buf.tolist(), None
    if len(ends) == 0 or ends[-1] != n - 1:
        last = int(ends[-1]) + 1 if len(ends) else 0
        raise bytecode_error(
            E_TRUNCATED,
            start + last,
            f"expected the final byte of a varint, found the end of {what}",
        )
    starts = np.empty_like(ends)
    starts[0] = 0
    starts[1:] = ends[:-1] + 1
    lengths = ends - starts + 1
    last_bytes = buf[ends]
    bad = (
        (lengths > MAX_VARINT_BYTES)
        | ((lengths > 1) & (last_bytes == 0))
        | ((lengths == MAX_VARINT_BYTES) & (last_bytes > 1))
    )
    if bad.any():
        k = int(np.flatnonzero(bad)[0])
        reason = (
            "over-long varint encoding"
            if lengths[k] < MAX_VARINT_BYTES
            or (lengths[k] == MAX_VARINT_BYTES and last_bytes[k] == 0)
            else "varint does not fit in 64 bits"
        )
        raise bytecode_error(E_VARINT, start + int(starts[k]), f"{reason} in {what}")
    payload = (buf & 0x7F).astype(np.uint64)
    position = np.arange(n, dtype=np.int64) - np.repeat(starts, lengths)
    payload <<= (position * 7).astype(np.uint64)
    values = np.add.reduceat(payload, starts)
    return values.tolist(), starts
