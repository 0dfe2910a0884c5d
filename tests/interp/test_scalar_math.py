"""Scalar math, activation and float arithmetic ops versus a float64 reference rounded once.

The reference rounds with plain Python arithmetic (an exact scaling to the type's quantum and
``round``, which ties to even), independent of the interpreter's own rounding helpers. Every
case runs in the grid engine and the stepper, which must agree bit for bit.
"""

from __future__ import annotations

import math
import sys
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).parent))
from interp_helpers import elementwise_module  # noqa: E402

from loom.interp import Stepper, launch
from loom.ir import BF16, F16, F32, F64, I1

# significand bits, smallest quantum exponent, largest finite value
FORMATS = {
    "f16": (11, -24, 65504.0),
    "bf16": (8, -133, float.fromhex("0x1.fep127")),
    "f32": (24, -149, float.fromhex("0x1.fffffep127")),
}
TYPES = {"f16": F16, "bf16": BF16, "f32": F32, "f64": F64}


def ref_round(x: float, spelling: str) -> float:
    """``x`` rounded to nearest, ties to even, in the format (independent reference)."""
    if spelling == "f64" or math.isnan(x) or math.isinf(x) or x == 0.0:
        return x
    p, qmin, top = FORMATS[spelling]
    q = max(math.frexp(x)[1] - p, qmin)
    r = math.ldexp(round(math.ldexp(x, -q)), q)  # the scaling is exact; round ties to even
    if abs(r) > top:
        return math.copysign(math.inf, x)
    return r if r != 0.0 else math.copysign(0.0, x)


def to_bits(values: list[float], spelling: str) -> np.ndarray:
    """Buffer contents holding ``values`` (already representable) of the type."""
    if spelling == "bf16":
        return (np.array(values, dtype=np.float32).view(np.uint32) >> 16).astype(np.uint16)
    return np.array(
        values, dtype={"f16": np.float16, "f32": np.float32, "f64": np.float64}[spelling]
    )


def from_bits(raw: np.ndarray, spelling: str) -> list[float]:
    """Values of the type from buffer contents."""
    if spelling == "bf16":
        return (raw.astype(np.uint32) << 16).view(np.float32).astype(np.float64).tolist()
    return raw.astype(np.float64).tolist()


def edge_values(spelling: str) -> list[float]:
    """NaN, signed zeros, infinities, the smallest denormal, the largest finite value, halves."""
    p, qmin, top = FORMATS.get(spelling, (53, -1074, sys.float_info.max))
    vals = [math.nan, -0.0, 0.0, math.inf, -math.inf, 2.0**qmin, -(2.0**qmin), top, -top]
    vals += [1.0, -1.0, 0.5, -0.5, 2.5, -2.5, 3.0, 0.1, -0.7, 10.0, -30.0, 100.0, 1e-3]
    rng = np.random.default_rng(len(spelling))
    vals += (rng.standard_normal(11) * 4).tolist()
    return [ref_round(v, spelling) for v in vals]


def run_both(op: str, spellings: list[str], out: str, inputs: list, **attrs) -> np.ndarray:
    """``out[i] = op(inputs...)`` through the grid engine and the stepper (which must agree)."""
    n = len(inputs[0])
    in_types = [TYPES.get(s, I1) for s in spellings]
    out_type = TYPES.get(out, I1)
    module = elementwise_module(op, in_types, out_type, n, attrs)
    out_dt = np.uint8 if out == "i1" else to_bits([0.0], out).dtype
    results = []
    for engine in ("grid", "stepper"):
        args = [np.ascontiguousarray(x).copy() for x in inputs] + [np.zeros(n, dtype=out_dt)]
        if engine == "grid":
            r = launch(module, "k", args=args)
            assert not r.findings
        else:
            Stepper(module, "k", args=args).run()
        results.append(args[-1])
    assert results[0].tobytes() == results[1].tobytes(), f"{op}: the engines disagree"
    return results[0]


def assert_same(got: list[float], want: list[float], op: str, xs: list) -> None:
    for g, w, x in zip(got, want, xs):
        if math.isnan(w):
            assert math.isnan(g), (op, x, g, w)
        else:
            assert g == w and math.copysign(1, g) == math.copysign(1, w), (op, x, g, w)


def _np(fn):  # noqa: ANN001, ANN202
    def f(x: float) -> float:
        with np.errstate(all="ignore"):
            return float(fn(np.float64(x)))

    return f


def _logistic(x: float) -> float:
    with np.errstate(all="ignore"):
        return float(1.0 / (1.0 + np.exp(np.float64(-x))))


def _softplus(x: float) -> float:
    if math.isnan(x):
        return x
    # NumPy's float64 log1p/exp (as for the other references): libm's may differ by an ulp
    with np.errstate(all="ignore"):
        return float(np.log1p(np.exp(np.float64(-abs(x))))) + max(x, 0.0)


UNARY = {
    "scalar.expf": _np(np.exp),
    "scalar.exp2f": _np(np.exp2),
    "scalar.expm1f": _np(np.expm1),
    "scalar.logf": _np(np.log),
    "scalar.log2f": _np(np.log2),
    "scalar.log10f": _np(np.log10),
    "scalar.log1pf": _np(np.log1p),
    "scalar.cbrtf": _np(np.cbrt),
    "scalar.rsqrtf": _np(lambda x: 1.0 / np.sqrt(x)),
    "scalar.sinf": _np(np.sin),
    "scalar.cosf": _np(np.cos),
    "scalar.tanf": _np(np.tan),
    "scalar.asinf": _np(np.arcsin),
    "scalar.acosf": _np(np.arccos),
    "scalar.atanf": _np(np.arctan),
    "scalar.sinhf": _np(np.sinh),
    "scalar.coshf": _np(np.cosh),
    "scalar.tanhf": _np(np.tanh),
    "scalar.asinhf": _np(np.arcsinh),
    "scalar.acoshf": _np(np.arccosh),
    "scalar.atanhf": _np(np.arctanh),
    "scalar.erff": lambda x: x if math.isnan(x) else math.erf(x),
    "scalar.erfcf": lambda x: x if math.isnan(x) else math.erfc(x),
    "scalar.logisticf": _logistic,
    "scalar.siluf": lambda x: x * _logistic(x),
    "scalar.softplusf": _softplus,
    "scalar.truncf": _np(np.trunc),
    "scalar.roundf": lambda x: (
        x
        if not math.isfinite(x)
        else math.copysign(
            math.floor(abs(x) + 0.5) if abs(x) % 1 != 0.5 else math.floor(abs(x)) + 1.0, x
        )
    ),
    "scalar.ceilf": _np(np.ceil),
    "scalar.floorf": _np(np.floor),
    "scalar.roundevenf": _np(np.rint),
    "scalar.sqrtf": _np(np.sqrt),
    "scalar.signf": lambda x: 1.0 if x > 0 else (-1.0 if x < 0 else 0.0),
}


@pytest.mark.parametrize("spelling", ["f16", "bf16", "f32", "f64"])
@pytest.mark.parametrize("op", list(UNARY))
def test_unary_math_is_rounded_once_from_float64(op: str, spelling: str) -> None:
    xs = edge_values(spelling)
    got = from_bits(run_both(op, [spelling], spelling, [to_bits(xs, spelling)]), spelling)
    want = [ref_round(UNARY[op](x), spelling) for x in xs]
    assert_same(got, want, op, xs)


BINARY = {
    "scalar.powf": lambda x, y: float(np.power(np.float64(x), np.float64(y))),
    "scalar.atan2f": math.atan2,
    "scalar.remf": lambda x, y: float(np.fmod(np.float64(x), np.float64(y))),
    "scalar.copysignf": math.copysign,
}


@pytest.mark.parametrize("spelling", ["f16", "bf16", "f32", "f64"])
@pytest.mark.parametrize("op", list(BINARY))
def test_binary_math_matches_the_reference(op: str, spelling: str) -> None:
    xs = edge_values(spelling)
    ys = xs[::-1]
    raw = run_both(
        op, [spelling, spelling], spelling, [to_bits(xs, spelling), to_bits(ys, spelling)]
    )
    with np.errstate(all="ignore"):
        want = [ref_round(BINARY[op](x, y), spelling) for x, y in zip(xs, ys)]
    assert_same(from_bits(raw, spelling), want, op, list(zip(xs, ys)))


def test_remf_and_copysignf_edge_cases() -> None:
    xs = [5.5, -5.5, 1.0, math.inf, 3.0, -0.0, math.nan, 2.0]
    ys = [2.0, 2.0, 0.0, 2.0, math.inf, 1.0, 1.0, -math.nan]
    rem = from_bits(
        run_both("scalar.remf", ["f32", "f32"], "f32", [to_bits(xs, "f32"), to_bits(ys, "f32")]),
        "f32",
    )
    assert rem[:2] == [1.5, -1.5] and math.isnan(rem[2]) and math.isnan(rem[3]) and rem[4] == 3.0
    assert math.copysign(1, rem[5]) == -1  # fmod keeps the dividend's sign, also of zero
    sign = from_bits(
        run_both(
            "scalar.copysignf", ["f32", "f32"], "f32", [to_bits(xs, "f32"), to_bits(ys, "f32")]
        ),
        "f32",
    )
    assert sign[0] == 5.5 and sign[1] == 5.5 and math.copysign(1, sign[5]) == 1
    assert math.isnan(sign[6]) and sign[7] == -2.0  # the sign bit of a negative NaN counts


def test_turns_are_exact_at_quarter_turns() -> None:
    xs = [0.0, 0.25, 0.5, 0.75, 1.0, -0.25, 2.5, 1e6 + 0.25, 0.125, math.inf]
    sin = from_bits(run_both("scalar.sinturnsf", ["f32"], "f32", [to_bits(xs, "f32")]), "f32")
    cos = from_bits(run_both("scalar.costurnsf", ["f32"], "f32", [to_bits(xs, "f32")]), "f32")
    assert sin[:8] == [0.0, 1.0, 0.0, -1.0, 0.0, -1.0, 0.0, 1.0]
    assert cos[:8] == [1.0, 0.0, -1.0, 0.0, 1.0, 0.0, -1.0, 0.0]
    assert sin[8] == ref_round(math.sqrt(0.5), "f32") == cos[8]
    assert math.isnan(sin[9]) and math.isnan(cos[9])


def test_roundf_ties_away_and_roundevenf_ties_to_even() -> None:
    xs = [0.5, 1.5, 2.5, -0.5, -2.5, 0.49999997, -0.2]
    away = from_bits(run_both("scalar.roundf", ["f32"], "f32", [to_bits(xs, "f32")]), "f32")
    even = from_bits(run_both("scalar.roundevenf", ["f32"], "f32", [to_bits(xs, "f32")]), "f32")
    assert away[:6] == [1.0, 2.0, 3.0, -1.0, -3.0, 0.0]
    assert even[:6] == [0.0, 2.0, 2.0, -0.0, -2.0, 0.0]
    assert math.copysign(1, away[3 + 3]) == -1 and math.copysign(1, even[3]) == -1  # -0.0 kept


@pytest.mark.parametrize("variant", ["erf", "tanh", "logistic"])
@pytest.mark.parametrize("spelling", ["f16", "bf16", "f32"])
def test_geluf_variants(variant: str, spelling: str) -> None:
    xs = edge_values(spelling)
    attrs = {"variant": variant}
    if variant == "logistic":
        attrs["scale"] = 1.702
    got = from_bits(
        run_both("scalar.geluf", [spelling], spelling, [to_bits(xs, spelling)], **attrs), spelling
    )

    def gelu(x: float) -> float:
        if math.isnan(x):
            return x
        with np.errstate(all="ignore"):
            if variant == "erf":
                return 0.5 * x * (1.0 + math.erf(x / math.sqrt(2.0)))
            if variant == "tanh":
                inner = math.sqrt(2.0 / math.pi) * (x + 0.044715 * x**3) if math.isfinite(x) else x
                return 0.5 * x * (1.0 + math.tanh(inner))
            return x * _logistic(1.702 * x)

    assert_same(got, [ref_round(gelu(x), spelling) for x in xs], variant, xs)


@pytest.mark.parametrize("mode", ["ordered", "number", "ieee"])
def test_clampf_nan_policies(mode: str) -> None:
    nan = math.nan
    vs = [5.0, -5.0, 0.5, nan, 0.5, 0.5, -0.0]
    los = [0.0, 0.0, 0.0, 0.0, nan, 0.0, 0.0]
    his = [1.0, 1.0, 1.0, 1.0, 1.0, nan, 1.0]
    raw = run_both(
        "scalar.clampf",
        ["f32"] * 3,
        "f32",
        [to_bits(vs, "f32"), to_bits(los, "f32"), to_bits(his, "f32")],
        mode=mode,
    )
    got = from_bits(raw, "f32")
    assert got[:3] == [1.0, 0.0, 0.5]
    if mode == "ordered":  # NaN value passes, NaN bounds are ignored
        assert math.isnan(got[3]) and got[4] == 0.5 and got[5] == 0.5
    elif mode == "number":  # NaNs select the numeric peer
        assert got[3] == 0.0 and got[4] == 0.5 and got[5] == 0.5
    else:  # any NaN propagates
        assert all(math.isnan(g) for g in got[3:6])
    # -0 against a +0 lower bound: ieee orders -0 < +0, so the bound wins
    assert math.copysign(1, got[6]) == (1 if mode in ("number", "ieee") else -1)


def test_fmaf_rounds_once_in_narrow_types() -> None:
    # a*b + c whose exact value lies just above a tie of f32: two roundings would give the tie
    a, b = 1.0 + 2.0**-12, 1.0 + 2.0**-12
    c = -(2.0**-24) * 0.75
    exact = a * b + c  # exact in float64
    got = from_bits(
        run_both(
            "scalar.fmaf",
            ["f32"] * 3,
            "f32",
            [to_bits([a], "f32"), to_bits([b], "f32"), to_bits([c], "f32")],
        ),
        "f32",
    )
    assert got == [ref_round(exact, "f32")]
    for s in ("f16", "bf16"):
        xs = edge_values(s)
        ys, zs = xs[::-1], xs[3:] + xs[:3]
        got = from_bits(
            run_both("scalar.fmaf", [s] * 3, s, [to_bits(xs, s), to_bits(ys, s), to_bits(zs, s)]), s
        )
        from fractions import Fraction

        want = []
        for x, y, z in zip(xs, ys, zs):
            if all(math.isfinite(v) for v in (x, y, z)):
                e = Fraction(x) * Fraction(y) + Fraction(z)
                want.append(ref_round(float(e), s) if e != 0 else ref_round(x * y + z, s))
            else:
                with np.errstate(all="ignore"):
                    want.append(float(np.float64(x) * np.float64(y) + np.float64(z)))
        assert_same(got, want, s, xs)


@pytest.mark.parametrize("spelling", ["f16", "bf16", "f32", "f64"])
def test_classification(spelling: str) -> None:
    xs = edge_values(spelling)
    raw = to_bits(xs, spelling)
    for op, fn in (
        ("scalar.isnanf", math.isnan),
        ("scalar.isinff", math.isinf),
        ("scalar.isfinitef", math.isfinite),
    ):
        got = run_both(op, [spelling], "i1", [raw]).astype(bool).tolist()
        assert got == [fn(x) for x in xs], op


@pytest.mark.parametrize("spelling", ["f32", "f16"])
def test_fmaf_lane_arrays_round_once_with_and_without_ties(spelling: str) -> None:
    # lane arrays take a fast path (one rounding of the float64 sum) unless a lane's sum is a
    # tie of the narrow type or subnormal; both must equal one rounding of the exact value
    from fractions import Fraction

    from loom.interp.numerics import fma_round

    t, dt = (F32, np.float32) if spelling == "f32" else (F16, np.float16)
    rng = np.random.default_rng(7)
    span = (-130, 120) if spelling == "f32" else (-20, 14)
    for crafted in (False, True):
        x = (rng.standard_normal(400) * 2.0 ** rng.integers(*span, 400)).astype(dt)
        y = rng.standard_normal(400).astype(dt)
        z = (rng.standard_normal(400) * 2.0 ** rng.integers(*span, 400)).astype(dt)
        if crafted:  # exact values just off a tie of the narrow type
            x[:3], y[:3] = dt(1 + 2.0**-12), dt(1 + 2.0**-12)
            z[:3] = dt(-(2.0**-24) * 0.75) if spelling == "f32" else dt(2.0**-11)
        with np.errstate(all="ignore"):
            got = np.asarray(fma_round(t, x, y, z), dtype=dt)
            for i in range(x.size):
                e = Fraction(float(x[i])) * Fraction(float(y[i])) + Fraction(float(z[i]))
                want = ref_round(float(e), spelling) if e != 0 else 0.0
                assert float(got[i]) == want or (want == 0 and got[i] == 0), (i, x[i], y[i], z[i])


def _exact_round(e: Fraction, spelling: str) -> float:
    """The exact rational ``e`` rounded once to nearest, ties to even, in the format."""
    p, qmin, top = FORMATS[spelling]
    q = max(math.floor(math.log2(abs(e))) - (p - 1), qmin)
    if Fraction(2) ** (q + p) <= abs(e):  # log2 rounded up across a power of two
        q += 1
    r = round(e / Fraction(2) ** q) * Fraction(2) ** q  # Fraction rounds ties to even
    if abs(r) > top:
        return math.copysign(math.inf, e)
    return float(r) if r else math.copysign(0.0, e)


_F32 = st.floats(width=32, allow_nan=True, allow_infinity=True, allow_subnormal=True)


@st.composite
def _near_ties(draw: st.DrawFn) -> tuple:
    """(x, y, z) of f32 values whose exact ``x * y + z`` lies at or just off a tie of f32,
    scaled anywhere from the subnormal range of the result up."""
    x = 1 + draw(st.integers(0, 4095)) * 2.0**-12
    y = 1 + draw(st.integers(0, 4095)) * 2.0**-12
    z = draw(st.integers(-64, 64)) * 2.0 ** -draw(st.integers(20, 60))
    ex, ey = draw(st.integers(-76, 50)), draw(st.integers(-76, 50))  # both normal
    sx, sz = draw(st.sampled_from([1, -1])), draw(st.sampled_from([1, -1]))
    return (sx * x * 2.0**ex, y * 2.0**ey, sz * z * 2.0 ** (ex + ey))


@given(st.lists(st.one_of(st.tuples(_F32, _F32, _F32), _near_ties()), min_size=1, max_size=40))
@settings(max_examples=300, deadline=None)
def test_fmaf_lane_arrays_are_exactly_rounded(triples: list) -> None:
    # the lane path rounds the float64 sum and sends ties, zeros and tiny results to the exact
    # path: every lane must equal one rounding of the exact value (sign of zero, NaN, inf too)
    from loom.interp.numerics import fma_round

    with np.errstate(all="ignore"):
        x, y, z = (np.array(v, dtype=np.float32) for v in zip(*triples))
        got = fma_round(F32, x, y, z)
        assert got.dtype == np.float32 and got.shape == x.shape
        for i in range(x.size):
            a, b, c = float(x[i]), float(y[i]), float(z[i])
            if not all(map(math.isfinite, (a, b, c))):
                want = float(np.float32(a * b + c))  # exact in float64 for these cases
            else:
                e = Fraction(a) * Fraction(b) + Fraction(c)
                want = _exact_round(e, "f32") if e else a * b + c  # IEEE sign of zero
            g = float(got[i])
            if math.isnan(want):
                assert math.isnan(g), (a, b, c)
            else:
                assert g == want and math.copysign(1, g) == math.copysign(1, want), (a, b, c, g)
