"""Scalar op tables versus NumPy: every integer and float binary op, comparisons and casts."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).parent))
from interp_helpers import elementwise_module  # noqa: E402

from loom.interp import launch
from loom.interp.numerics import bf16_round
from loom.ir import BF16, F16, F32, F64, I1, I8, I16, I32, I64

N = 64
INT_TYPES = {I8: np.int8, I16: np.int16, I32: np.int32, I64: np.int64}
FLOAT_TYPES = {F16: np.float16, F32: np.float32, F64: np.float64}


def run(op: str, in_types: list, out_type, inputs: list, out_dtype, **attrs) -> np.ndarray:
    m = elementwise_module(op, in_types, out_type, N, attrs)
    out = np.zeros(N, dtype=out_dtype)
    r = launch(m, "k", args=[*(np.ascontiguousarray(x) for x in inputs), out])
    assert not r.findings
    return out


def int_inputs(dt: type, seed: int) -> tuple[np.ndarray, np.ndarray]:
    info = np.iinfo(dt)
    edges = np.array([info.min, info.max, 0, -1, 1, info.min + 1, info.max - 1, 2], dtype=dt)
    rng = np.random.default_rng(seed)
    a = np.concatenate(
        [
            edges,
            np.repeat(edges, 1)[::-1],
            rng.integers(info.min, info.max, N - 2 * edges.size, dtype=dt, endpoint=True),
        ]
    ).astype(dt)
    b = rng.permutation(a)
    return a, b


def _signed_div(a, b, dt):
    q = np.trunc(a.astype(np.float64) / b.astype(np.float64))
    # exact via Python ints (float64 loses i64 precision)
    qs = [
        int(x) // int(y)
        if (int(x) >= 0) == (int(y) > 0) or int(x) % int(y) == 0
        else int(x) // int(y) + 1
        for x, y in zip(a, b)
    ]
    del q
    return np.array(qs, dtype=np.int64).astype(dt)


def _wrap(vals, dt):
    bits = np.dtype(dt).itemsize * 8
    out = []
    for v in vals:
        v &= (1 << bits) - 1
        out.append(v - (1 << bits) if v >= 1 << (bits - 1) else v)
    return np.array(out, dtype=np.int64).astype(dt)


@pytest.mark.parametrize("t", list(INT_TYPES), ids=str)
def test_integer_binary_ops_match_numpy(t) -> None:
    dt = INT_TYPES[t]
    ut = np.dtype(dt).newbyteorder("=").str.replace("i", "u")
    bits = np.dtype(dt).itemsize * 8
    a, b = int_inputs(dt, bits)
    info = np.iinfo(dt)
    safe_b = np.where((b == 0) | ((a == info.min) & (b == -1)), dt(3), b).astype(dt)
    shift = (b.astype(np.int64) % bits).astype(dt)
    ia, ib = [int(x) for x in a], [int(x) for x in b]
    ua, ub = a.view(ut), b.view(ut)
    usafe = np.where(ub == 0, 3, ub).astype(ut)
    cases = {
        "scalar.addi": (b, _wrap([x + y for x, y in zip(ia, ib)], dt)),
        "scalar.subi": (b, _wrap([x - y for x, y in zip(ia, ib)], dt)),
        "scalar.muli": (b, _wrap([x * y for x, y in zip(ia, ib)], dt)),
        "scalar.divsi": (safe_b, _signed_div(a, safe_b, dt)),
        "scalar.remsi": (safe_b, np.fmod(a, safe_b)),
        "scalar.divui": (usafe.view(dt), (ua // usafe).view(dt)),
        "scalar.remui": (usafe.view(dt), (ua % usafe).view(dt)),
        "scalar.andi": (b, a & b),
        "scalar.ori": (b, a | b),
        "scalar.xori": (b, a ^ b),
        "scalar.shli": (shift, (ua << shift.view(ut)).view(dt)),
        "scalar.shrsi": (shift, a >> shift),
        "scalar.shrui": (shift, (ua >> shift.view(ut)).view(dt)),
        "scalar.minsi": (b, np.minimum(a, b)),
        "scalar.maxsi": (b, np.maximum(a, b)),
        "scalar.minui": (b, np.minimum(ua, ub).view(dt)),
        "scalar.maxui": (b, np.maximum(ua, ub).view(dt)),
    }
    for op, (rhs, want) in cases.items():
        got = run(op, [t, t], t, [a, rhs], dt)
        np.testing.assert_array_equal(got, want, err_msg=op)


def test_integer_compare_all_predicates() -> None:
    a, b = int_inputs(np.int32, 7)
    b[:8] = a[:8]
    ua, ub = a.view(np.uint32), b.view(np.uint32)
    want = {
        "eq": a == b,
        "ne": a != b,
        "slt": a < b,
        "sle": a <= b,
        "sgt": a > b,
        "sge": a >= b,
        "ult": ua < ub,
        "ule": ua <= ub,
        "ugt": ua > ub,
        "uge": ua >= ub,
    }
    for pred, expected in want.items():
        got = run("scalar.cmpi", [I32, I32], I1, [a, b], np.uint8, predicate=pred)
        np.testing.assert_array_equal(got.astype(bool), expected, err_msg=pred)


def float_inputs(dt: type, seed: int) -> tuple[np.ndarray, np.ndarray]:
    edges = np.array(
        [
            np.nan,
            -0.0,
            0.0,
            np.inf,
            -np.inf,
            1.0,
            -1.0,
            0.5,
            np.finfo(dt).max,
            np.finfo(dt).tiny,
            -np.finfo(dt).max,
            3.0,
        ],
        dtype=dt,
    )
    rng = np.random.default_rng(seed)
    rest = (rng.standard_normal(N - 2 * edges.size) * 100).astype(dt)
    a = np.concatenate([edges, edges[::-1], rest]).astype(dt)
    b = np.concatenate([edges[::-1], edges, rng.permutation(rest)]).astype(dt)
    return a, b


def same_floats(got: np.ndarray, want: np.ndarray) -> bool:
    """Bitwise equal, except that any NaN matches any NaN."""
    nan = np.isnan(got) & np.isnan(want)
    bits = got.view(f"u{got.itemsize}") == want.view(f"u{want.itemsize}")
    return bool(np.all(nan | bits))


def _ieee_min(a, b, want_min: bool, propagate: bool):
    out = []
    for x, y in zip(a.tolist(), b.tolist()):
        if np.isnan(x) or np.isnan(y):
            if propagate or (np.isnan(x) and np.isnan(y)):
                out.append(np.nan)
            else:
                out.append(y if np.isnan(x) else x)
        elif x == y:
            neg = np.signbit(x) or np.signbit(y) if want_min else np.signbit(x) and np.signbit(y)
            out.append(-0.0 if (x == 0 and neg) else (0.0 if x == 0 else x))
        else:
            out.append(min(x, y) if want_min else max(x, y))
    return np.array(out, dtype=a.dtype)


@pytest.mark.parametrize("t", list(FLOAT_TYPES), ids=str)
def test_float_binary_ops_match_numpy(t) -> None:
    dt = FLOAT_TYPES[t]
    a, b = float_inputs(dt, 3)
    with np.errstate(all="ignore"):
        cases = {
            "scalar.addf": a + b,
            "scalar.subf": a - b,
            "scalar.mulf": a * b,
            "scalar.divf": a / b,
            "scalar.minimumf": _ieee_min(a, b, True, True),
            "scalar.maximumf": _ieee_min(a, b, False, True),
            "scalar.minnumf": _ieee_min(a, b, True, False),
            "scalar.maxnumf": _ieee_min(a, b, False, False),
        }
    for op, want in cases.items():
        got = run(op, [t, t], t, [a, b], dt)
        assert same_floats(got, want.astype(dt)), (op, got, want)


@pytest.mark.parametrize("t", list(FLOAT_TYPES), ids=str)
def test_float_unary_ops_match_numpy(t) -> None:
    dt = FLOAT_TYPES[t]
    a, _ = float_inputs(dt, 5)
    with np.errstate(all="ignore"):
        cases = {
            "scalar.negf": -a,
            "scalar.absf": np.abs(a),
            "scalar.sqrtf": np.sqrt(a),
            # transcendental functions: evaluated in float64, rounded once to the type
            "scalar.expf": np.exp(a.astype(np.float64)),
            "scalar.logf": np.log(a.astype(np.float64)),
            "scalar.tanhf": np.tanh(a.astype(np.float64)),
            "scalar.floorf": np.floor(a),
            "scalar.ceilf": np.ceil(a),
            "scalar.roundevenf": np.rint(a),
        }
    for op, want in cases.items():
        got = run(op, [t], t, [a], dt)
        with np.errstate(over="ignore"):
            want = want.astype(dt)
        assert same_floats(got, want), op


def test_float_compare_predicates_with_nan() -> None:
    a, b = float_inputs(np.float32, 9)
    nan = np.isnan(a) | np.isnan(b)
    want = {
        "oeq": (a == b) & ~nan,
        "one": (a != b) & ~nan,
        "olt": (a < b) & ~nan,
        "ord": ~nan,
        "uno": nan,
        "ueq": (a == b) | nan,
        "une": (a != b),
        "ult": (a < b) | nan,
        "uge": (a >= b) | nan,
        "ogt": (a > b) & ~nan,
    }
    for pred, expected in want.items():
        got = run("scalar.cmpf", [F32, F32], I1, [a, b], np.uint8, predicate=pred)
        np.testing.assert_array_equal(got.astype(bool), expected, err_msg=pred)


def test_f32_math_is_computed_in_f32_not_f64() -> None:
    a = np.full(N, 16777216.0, dtype=np.float32)  # 2**24: adding 1 is lost in f32
    b = np.ones(N, dtype=np.float32)
    got = run("scalar.addf", [F32, F32], F32, [a, b], np.float32)
    assert np.all(got == np.float32(16777216.0))


def _bf16_reference(x: float) -> int:
    """bf16 bits of a float32 by round-to-nearest-even on the integer bit pattern."""
    bits = int(np.float32(x).view(np.uint32))
    if np.isnan(np.float32(x)):
        return (bits >> 16) | 0x40
    upper, lower = bits >> 16, bits & 0xFFFF
    if lower > 0x8000 or (lower == 0x8000 and upper & 1):
        upper += 1
    return upper & 0xFFFF


def test_bf16_add_rounds_to_nearest_even() -> None:
    rng = np.random.default_rng(1)
    a = bf16_round(rng.standard_normal(N).astype(np.float32))
    b = bf16_round((rng.standard_normal(N) * 1e-2).astype(np.float32))
    a_bits = (a.view(np.uint32) >> 16).astype(np.uint16)
    b_bits = (b.view(np.uint32) >> 16).astype(np.uint16)
    got = run("scalar.addf", [BF16, BF16], BF16, [a_bits, b_bits], np.uint16)
    want = np.array([_bf16_reference(float(x) + float(y)) for x, y in zip(a, b)], dtype=np.uint16)
    np.testing.assert_array_equal(got, want)


def test_casts_match_numpy() -> None:
    a, _ = int_inputs(np.int32, 11)
    np.testing.assert_array_equal(run("scalar.trunci", [I32], I8, [a], np.int8), a.astype(np.int8))
    np.testing.assert_array_equal(
        run("scalar.extsi", [I32], I64, [a], np.int64), a.astype(np.int64)
    )
    np.testing.assert_array_equal(
        run("scalar.extui", [I32], I64, [a], np.int64), a.view(np.uint32).astype(np.int64)
    )
    np.testing.assert_array_equal(
        run("scalar.sitofp", [I32], F32, [a], np.float32), a.astype(np.float32)
    )
    np.testing.assert_array_equal(
        run("scalar.uitofp", [I32], F64, [a], np.float64), a.view(np.uint32).astype(np.float64)
    )
    f = np.linspace(-1000.7, 1000.7, N).astype(np.float32)
    np.testing.assert_array_equal(
        run("scalar.fptosi", [F32], I32, [f], np.int32), np.trunc(f).astype(np.int32)
    )
    np.testing.assert_array_equal(
        run("scalar.bitcast", [F32], I32, [f], np.int32), f.view(np.int32)
    )
    np.testing.assert_array_equal(
        run("scalar.fptrunc", [F32], F16, [f], np.float16), f.astype(np.float16)
    )
    np.testing.assert_array_equal(
        run("scalar.extf", [F16], F32, [f.astype(np.float16)], np.float32),
        f.astype(np.float16).astype(np.float32),
    )


def test_fmaf_single_rounding_f32() -> None:
    a = np.full(N, 1 + 2.0**-12, dtype=np.float32)
    c = np.full(N, -(1 + 2.0**-11), dtype=np.float32)
    got = run("scalar.fmaf", [F32, F32, F32], F32, [a, a, c], np.float32)
    exact = (1 + 2.0**-12) ** 2 - (1 + 2.0**-11)  # 2**-24, lost by a rounded product
    assert np.all(got == np.float32(exact))
