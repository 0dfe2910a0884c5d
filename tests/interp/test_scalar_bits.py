"""Integer forms and bit ops (scalar and index) versus Python-int references, in both engines.

Edge values: 0, +-1, the minimum and maximum of each width, powers of two and shift amounts at
and past the width (rotates take the amount modulo the width; shifts past it are errors).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).parent))
from interp_helpers import elementwise_module  # noqa: E402

from loom.errors import LoomRuntimeError
from loom.format.text.parser import parse_module
from loom.interp import Stepper, launch
from loom.ir import I1, I8, I16, I32, I64

WIDTHS = {8: (I8, np.int8), 16: (I16, np.int16), 32: (I32, np.int32), 64: (I64, np.int64)}


def run_both(op: str, in_types: list, out_type, inputs: list, out_dt, **attrs) -> np.ndarray:
    """``out[i] = op(inputs...)`` in the grid engine and the stepper; they must agree."""
    n = len(inputs[0])
    module = elementwise_module(op, in_types, out_type, n, attrs)
    outs = []
    for engine in (launch, None):
        args = [np.ascontiguousarray(x).copy() for x in inputs] + [np.zeros(n, dtype=out_dt)]
        if engine is launch:
            assert not launch(module, "k", args=args).findings
        else:
            Stepper(module, "k", args=args).run()
        outs.append(args[-1])
    assert outs[0].tobytes() == outs[1].tobytes(), f"{op}: the engines disagree"
    return outs[0]


def edges(bits: int) -> list[int]:
    lo, hi = -(2 ** (bits - 1)), 2 ** (bits - 1) - 1
    vals = [0, 1, -1, 2, -2, 7, -7, lo, hi, lo + 1, hi - 1, 1 << (bits - 2), 3, -3, 100 % hi]
    rng = np.random.default_rng(bits)
    vals += [int(v) for v in rng.integers(lo, hi, 9, endpoint=True)]
    return vals


def wrap(v: int, bits: int) -> int:
    v &= (1 << bits) - 1
    return v - (1 << bits) if v >= 1 << (bits - 1) else v


def signed_div(a: int, b: int, mode: str) -> int:
    q = abs(a) // abs(b)
    exact = q * abs(b) == abs(a)
    neg = (a < 0) != (b < 0)
    if mode == "trunc":
        return -q if neg else q
    if mode == "floor":
        return -q - (0 if exact else 1) if neg else q
    return -q if neg else q + (0 if exact else 1)  # ceil


@pytest.mark.parametrize("bits", list(WIDTHS))
def test_division_forms_round_as_named(bits: int) -> None:
    t, dt = WIDTHS[bits]
    a = edges(bits)
    b = [x if x not in (0,) else 5 for x in a[::-1]]
    # INT_MIN / -1 overflows: replace those divisors
    b = [3 if (x == -(2 ** (bits - 1)) and y == -1) else y for x, y in zip(a, b)]
    args = [np.array(a, dtype=dt), np.array(b, dtype=dt)]
    for op, mode in (("scalar.ceildivsi", "ceil"), ("scalar.floordivsi", "floor")):
        got = run_both(op, [t, t], t, args, dt).tolist()
        assert got == [wrap(signed_div(x, y, mode), bits) for x, y in zip(a, b)], op
    ua = [x % (1 << bits) for x in a]
    ub = [y % (1 << bits) for y in b]
    got = run_both("scalar.ceildivui", [t, t], t, args, dt).tolist()
    assert got == [wrap(-(-x // y), bits) for x, y in zip(ua, ub)]


def test_ceil_and_floor_division_examples() -> None:
    a = np.array([-7, 7, -7, 7, 6, -6], dtype=np.int32)
    b = np.array([2, 2, -2, -2, 3, 3], dtype=np.int32)
    assert run_both("scalar.ceildivsi", [I32, I32], I32, [a, b], np.int32).tolist() == [
        -3, 4, 4, -3, 2, -2,
    ]  # fmt: skip
    assert run_both("scalar.floordivsi", [I32, I32], I32, [a, b], np.int32).tolist() == [
        -4, 3, 3, -4, 2, -2,
    ]  # fmt: skip


@pytest.mark.parametrize("bits", list(WIDTHS))
def test_unary_integer_forms(bits: int) -> None:
    t, dt = WIDTHS[bits]
    a = edges(bits)
    x = [np.array(a, dtype=dt)]
    assert run_both("scalar.negi", [t], t, x, dt).tolist() == [wrap(-v, bits) for v in a]
    assert run_both("scalar.absi", [t], t, x, dt).tolist() == [wrap(abs(v), bits) for v in a]
    assert run_both("scalar.signi", [t], t, x, dt).tolist() == [(v > 0) - (v < 0) for v in a]


@pytest.mark.parametrize("bits", list(WIDTHS))
def test_fmai_wraps(bits: int) -> None:
    t, dt = WIDTHS[bits]
    a = edges(bits)
    b, c = a[::-1], a[5:] + a[:5]
    got = run_both("scalar.fmai", [t, t, t], t, [np.array(v, dtype=dt) for v in (a, b, c)], dt)
    assert got.tolist() == [wrap(x * y + z, bits) for x, y, z in zip(a, b, c)]


def _clz(u: int, bits: int) -> int:
    return bits - u.bit_length()


def _ctz(u: int, bits: int) -> int:
    return bits if u == 0 else (u & -u).bit_length() - 1


@pytest.mark.parametrize("bits", list(WIDTHS))
def test_bit_counts(bits: int) -> None:
    t, dt = WIDTHS[bits]
    a = edges(bits)
    u = [v % (1 << bits) for v in a]
    x = [np.array(a, dtype=dt)]
    assert run_both("scalar.ctlzi", [t], t, x, dt).tolist() == [_clz(v, bits) for v in u]
    assert run_both("scalar.cttzi", [t], t, x, dt).tolist() == [_ctz(v, bits) for v in u]
    assert run_both("scalar.ctpopi", [t], t, x, dt).tolist() == [bin(v).count("1") for v in u]


def test_bit_counts_on_i1() -> None:
    x = [np.array([0, 1], dtype=np.uint8)]
    assert run_both("scalar.ctlzi", [I1], I1, x, np.uint8).tolist() == [1, 0]
    assert run_both("scalar.cttzi", [I1], I1, x, np.uint8).tolist() == [1, 0]
    assert run_both("scalar.ctpopi", [I1], I1, x, np.uint8).tolist() == [0, 1]


def _rotl(u: int, s: int, bits: int) -> int:
    s %= bits
    m = (1 << bits) - 1
    return ((u << s) | (u >> (bits - s))) & m if s else u


@pytest.mark.parametrize("bits", list(WIDTHS))
def test_rotates_take_the_amount_modulo_the_width(bits: int) -> None:
    t, dt = WIDTHS[bits]
    a = edges(bits)
    amounts = [0, 1, bits - 1, bits, bits + 3, 2 * bits, -1, 5] * 4
    amounts = amounts[: len(a)]
    args = [np.array(a, dtype=dt), np.array([wrap(s, bits) for s in amounts], dtype=dt)]
    u = [v % (1 << bits) for v in a]
    s_u = [s % (1 << bits) for s in amounts]
    got_l = run_both("scalar.rotli", [t, t], t, args, dt).tolist()
    got_r = run_both("scalar.rotri", [t, t], t, args, dt).tolist()
    assert got_l == [wrap(_rotl(x, s, bits), bits) for x, s in zip(u, s_u)]
    assert got_r == [wrap(_rotl(x, bits - s % bits, bits), bits) for x, s in zip(u, s_u)]


def test_bitfield_extracts() -> None:
    w = np.array([0x1234, 240, -16, -1, 0x7FFFFFFF, -(2**31)], dtype=np.int32)
    u = run_both("scalar.bitfield.extractu", [I32], I32, [w], np.int32, offset=4, width=8)
    s = run_both("scalar.bitfield.extracts", [I32], I32, [w], np.int32, offset=4, width=4)
    assert u.tolist() == [0x23, 0x0F, 0xFF, 0xFF, 0xFF, 0]
    assert s.tolist() == [3, -1, -1, -1, -1, 0]
    top = run_both("scalar.bitfield.extracts", [I32], I64, [w], np.int64, offset=24, width=8)
    assert top.tolist() == [0, 0, -1, -1, 127, -128]
    whole = run_both("scalar.bitfield.extractu", [I32], I64, [w], np.int64, offset=0, width=32)
    assert whole.tolist() == [v % 2**32 for v in w.tolist()]


def test_bitfield_on_i8_source() -> None:
    w = np.array([-16, 0x7F], dtype=np.int8)
    got = run_both("scalar.bitfield.extractu", [I8], I8, [w], np.int8, offset=4, width=4)
    assert got.tolist() == [15, 7]


def test_shift_past_the_width_is_a_runtime_error() -> None:
    a = np.array([1, 2], dtype=np.int16)
    b = np.array([3, 16], dtype=np.int16)
    m = elementwise_module("scalar.shli", [I16, I16], I16, 2)
    with pytest.raises(LoomRuntimeError, match="RUNTIME/004|shift amount"):
        launch(m, "k", args=[a, b, np.zeros(2, np.int16)])


@pytest.mark.parametrize("op", ["scalar.ceildivsi", "scalar.floordivsi", "scalar.ceildivui"])
def test_division_by_zero_is_a_runtime_error(op: str) -> None:
    m = elementwise_module(op, [I8, I8], I8, 2)
    a, b = np.array([4, 4], dtype=np.int8), np.array([1, 0], dtype=np.int8)
    with pytest.raises(LoomRuntimeError, match="division by zero"):
        launch(m, "k", args=[a, b, np.zeros(2, np.int8)])


def test_min_divided_by_minus_one_is_a_runtime_error() -> None:
    m = elementwise_module("scalar.floordivsi", [I8, I8], I8, 1)
    with pytest.raises(LoomRuntimeError, match="overflow"):
        launch(
            m, "k", args=[np.array([-128], np.int8), np.array([-1], np.int8), np.zeros(1, np.int8)]
        )


# ----------------------------------------------------------------------------- index


def _index_kernel(body: str) -> str:
    return (
        "target.generic<reference> @t\n\n"
        "kernel.def target(@t) @k() {\n"
        "  %c1 = index.constant 1 : index\n"
        "  %n = index.constant 24 : index\n"
        "  kernel.launch.config workgroups(%c1, %c1, %c1) workgroup_size(%n, %c1, %c1) : index\n"
        "} launch(%src: buffer, %dst: buffer) {\n"
        "  %z = index.constant 0 : offset\n"
        "  %i = kernel.workitem.dispatch.id<x> : index\n"
        "  %vs = buffer.view %src[%z] : buffer -> view<24x2xi64>\n"
        "  %vd = buffer.view %dst[%z] : buffer -> view<24xi64>\n"
        "  %xa = view.load %vs[%i, 0] : view<24x2xi64> -> i64\n"
        "  %xb = view.load %vs[%i, 1] : view<24x2xi64> -> i64\n"
        "  %a = index.cast %xa : i64 to index\n"
        "  %b = index.cast %xb : i64 to index\n"
        f"{body}"
        "  %out = index.cast %r : index to i64\n"
        "  view.store %out, %vd[%i] : i64, view<24xi64>\n"
        "  kernel.return\n"
        "}\n"
    )


def run_index(op_line: str, a: list[int], b: list[int]) -> list[int]:
    module = parse_module(_index_kernel(op_line))
    outs = []
    for engine in ("grid", "stepper"):
        src = np.array(list(zip(a, b)), dtype=np.int64).reshape(-1)
        dst = np.zeros(24, dtype=np.int64)
        if engine == "grid":
            assert not launch(module, "k", args=[src, dst]).findings
        else:
            Stepper(module, "k", args=[src, dst]).run()
        outs.append(dst)
    assert outs[0].tobytes() == outs[1].tobytes()
    return outs[0].tolist()


INDEX_A = edges(64)[:24]
INDEX_B = ([0, 1, 63, 64, 65, 127, -1, 8] * 3)[:24]


@pytest.mark.parametrize(
    ("op", "ref"),
    [
        ("andi", lambda a, b: a & b),
        ("ori", lambda a, b: a | b),
        ("xori", lambda a, b: a ^ b),
        ("rotli", lambda a, b: wrap(_rotl(a % 2**64, b % 2**64, 64), 64)),
        ("rotri", lambda a, b: wrap(_rotl(a % 2**64, 64 - b % 64, 64), 64)),
    ],
)
def test_index_bitwise(op: str, ref) -> None:  # noqa: ANN001
    got = run_index(f"  %r = index.{op} %a, %b : index\n", INDEX_A, INDEX_B)
    assert got == [ref(x, y) for x, y in zip(INDEX_A, INDEX_B)]


@pytest.mark.parametrize(
    ("op", "ref"),
    [
        ("ctlzi", lambda a: _clz(a % 2**64, 64)),
        ("cttzi", lambda a: _ctz(a % 2**64, 64)),
        ("ctpopi", lambda a: bin(a % 2**64).count("1")),
    ],
)
def test_index_bit_counts_over_the_64_bit_carrier(op: str, ref) -> None:  # noqa: ANN001
    got = run_index(f"  %r = index.{op} %a : index\n", INDEX_A, INDEX_B)
    assert got == [ref(x) for x in INDEX_A]


def test_index_shifts() -> None:
    a = [1, -8, 3, 2**40, -1, 5] * 4
    b = [0, 1, 2, 3, 63, 1] * 4
    assert run_index("  %r = index.shrsi %a, %b : index\n", a, b) == [x >> y for x, y in zip(a, b)]
    assert run_index("  %r = index.shrui %a, %b : index\n", a, b) == [
        wrap((x % 2**64) >> y, 64) for x, y in zip(a, b)
    ]
    small = [1, -8, 3, 2**40, -1, 5] * 4
    amounts = [0, 1, 2, 3, 4, 10] * 4
    got = run_index("  %r = index.shli %a, %b : index\n", small, amounts)
    assert got == [x << y for x, y in zip(small, amounts)]


def test_index_shift_errors() -> None:
    module = parse_module(_index_kernel("  %r = index.shli %a, %b : index\n"))
    src = np.array([(1, 64)] * 24, dtype=np.int64).reshape(-1)
    with pytest.raises(LoomRuntimeError, match="shift amount"):
        launch(module, "k", args=[src, np.zeros(24, np.int64)])
    src = np.array([(2**62, 2)] * 24, dtype=np.int64).reshape(-1)
    with pytest.raises(LoomRuntimeError, match="outside the index domain"):
        launch(module, "k", args=[src, np.zeros(24, np.int64)])


# ----------------------------------------------------------------------------- overflow promises

PROMISES = [
    # (op, flags, operands that keep the promise, operands that break it)
    ("scalar.addi", "nsw", [(100, 27)], [(100, 28)]),
    ("scalar.addi", "nuw", [(-1, 0), (100, 100)], [(-1, 1)]),
    ("scalar.subi", "nsw", [(-100, 28)], [(-100, 29)]),
    ("scalar.subi", "nuw", [(5, 5)], [(5, 6)]),
    ("scalar.muli", "nsw", [(-16, 8), (11, 11)], [(-16, -8), (12, 11)]),
    ("scalar.muli", "nuw", [(-1, 1), (15, 17)], [(-1, 2), (16, 16)]),
    ("scalar.shli", "nsw", [(-1, 7), (63, 1)], [(64, 1), (-65, 1)]),
    ("scalar.shli", "nuw", [(1, 7), (-1, 0)], [(-128, 1), (3, 7)]),
]


@pytest.mark.parametrize(
    ("op", "flags", "ok", "bad"), PROMISES, ids=[f"{p[0]}<{p[1]}>" for p in PROMISES]
)
def test_broken_overflow_promises_are_runtime_errors(
    op: str, flags: str, ok: list, bad: list
) -> None:
    for pairs, fine in ((ok, True), (bad, False)):
        a = np.array([p[0] for p in pairs], dtype=np.int8)
        b = np.array([p[1] for p in pairs], dtype=np.int8)
        m = elementwise_module(op, [I8, I8], I8, len(pairs), {"overflow": flags})
        out = np.zeros(len(pairs), dtype=np.int8)
        if fine:
            launch(m, "k", args=[a, b, out])
            Stepper(m, "k", args=[a, b, np.zeros(len(pairs), np.int8)]).run()
        else:
            with pytest.raises(LoomRuntimeError, match=f"RUNTIME/041.*{flags} promise"):
                launch(m, "k", args=[a, b, out])
            with pytest.raises(LoomRuntimeError, match=f"{flags} promise"):
                Stepper(m, "k", args=[a, b, np.zeros(len(pairs), np.int8)]).run()


def test_i64_multiply_promise_is_exact_near_the_limit() -> None:
    m = elementwise_module("scalar.muli", [I64, I64], I64, 2, {"overflow": "nsw"})
    a = np.array([2**31, -(2**32)], dtype=np.int64)
    b = np.array([2**31 - 1, 2**31], dtype=np.int64)  # 2^62 - 2^31 and exactly -2^63: both fit
    out = np.zeros(2, dtype=np.int64)
    launch(m, "k", args=[a, b, out])
    assert out.tolist() == [2**62 - 2**31, -(2**63)]
    with pytest.raises(LoomRuntimeError, match="nsw promise"):
        launch(m, "k", args=[np.array([2**32, 1]), np.array([2**31, 1]), out])


def test_fmai_promise_covers_product_and_sum() -> None:
    m = elementwise_module("scalar.fmai", [I8, I8, I8], I8, 1, {"overflow": "nsw"})
    out = np.zeros(1, dtype=np.int8)
    launch(
        m, "k", args=[np.array([10], np.int8), np.array([12], np.int8), np.array([7], np.int8), out]
    )
    assert out.tolist() == [127]
    with pytest.raises(LoomRuntimeError, match="nsw promise"):  # 120 + 8 wraps
        launch(
            m,
            "k",
            args=[np.array([10], np.int8), np.array([12], np.int8), np.array([8], np.int8), out],
        )
    with pytest.raises(LoomRuntimeError, match="nsw promise"):  # 16 * 8 wraps before the sum
        launch(
            m,
            "k",
            args=[np.array([16], np.int8), np.array([8], np.int8), np.array([-100], np.int8), out],
        )
