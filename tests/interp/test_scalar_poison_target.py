"""Poison at run time, scalar.assume, casts rounded once, and target.subgroup.size."""

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
from loom.ir import BF16, F16, F32, I32, I64


def _kernel(target: str, body: str, arg: str = "%dst: buffer") -> str:
    return (
        f"{target}\n\n"
        "kernel.def target(@t) @k() {\n"
        "  %c1 = index.constant 1 : index\n"
        "  %n = index.constant 4 : index\n"
        "  kernel.launch.config workgroups(%c1, %c1, %c1) workgroup_size(%n, %c1, %c1) : index\n"
        f"}} launch({arg}) {{\n"
        "  %z = index.constant 0 : offset\n"
        "  %i = kernel.workitem.dispatch.id<x> : index\n"
        "  %vd = buffer.view %dst[%z] : buffer -> view<4xi64>\n"
        f"{body}"
        "  kernel.return\n"
        "}\n"
    )


STORE_SIZE = (
    "  %s = target.subgroup.size : index\n"
    "  %x = index.cast %s : index to i64\n"
    "  view.store %x, %vd[%i] : i64, view<4xi64>\n"
)


@pytest.mark.parametrize(
    ("record", "want"),
    [
        ("target.generic<reference> @t", 32),
        ("target.generic<reference> @t {subgroup_size = 64}", 64),
        ("target.decl @t", 32),
    ],
)
def test_subgroup_size_reads_the_target_record(record: str, want: int) -> None:
    module = parse_module(_kernel(record, STORE_SIZE))
    out = np.zeros(4, dtype=np.int64)
    launch(module, "k", args=[out])
    assert out.tolist() == [want] * 4
    out2 = np.zeros(4, dtype=np.int64)
    Stepper(module, "k", args=[out2]).run()
    assert out2.tolist() == [want] * 4


def test_dead_poison_runs() -> None:
    body = (
        "  %p = scalar.poison : i64\n"
        "  %dead = scalar.addi %p, %p : i64\n"
        "  %one = scalar.constant 1 : i64\n"
        "  view.store %one, %vd[%i] : i64, view<4xi64>\n"
    )
    module = parse_module(_kernel("target.generic<reference> @t", body))
    out = np.zeros(4, dtype=np.int64)
    launch(module, "k", args=[out])
    assert out.tolist() == [1] * 4


def test_observed_poison_is_a_runtime_error_naming_the_observer() -> None:
    body = (
        "  %p = scalar.poison : i64\n"
        "  %q = scalar.muli %p, %p : i64\n"
        "  view.store %q, %vd[%i] : i64, view<4xi64>\n"
    )
    module = parse_module(_kernel("target.generic<reference> @t", body), filename="p.loom")
    for run in (
        lambda: launch(module, "k", args=[np.zeros(4, np.int64)]),
        lambda: Stepper(module, "k", args=[np.zeros(4, np.int64)]).run(),
    ):
        with pytest.raises(LoomRuntimeError) as e:
            run()
        text = str(e.value)
        assert "RUNTIME/040" in text and "view.store" in text and "at line 13" in text


def test_assume_is_the_identity() -> None:
    body = (
        "  %v = index.cast %i : index to i64\n"
        "  %w = scalar.assume %v [range(%v, 0, 3)] : i64\n"
        "  view.store %w, %vd[%i] : i64, view<4xi64>\n"
    )
    out = np.zeros(4, dtype=np.int64)
    launch(parse_module(_kernel("target.generic<reference> @t", body)), "k", args=[out])
    assert out.tolist() == [0, 1, 2, 3]


def _run(op: str, src, dst, x: np.ndarray, out_dt) -> np.ndarray:  # noqa: ANN001
    out = np.zeros(len(x), dtype=out_dt)
    launch(elementwise_module(op, [src], dst, len(x)), "k", args=[x, out])
    return out


def test_i64_to_narrow_floats_rounds_once() -> None:
    # 2^24 + 1 + 2^-? : i64 values whose float64 conversion would round before the f32 rounding
    x = np.array([2**54 + 2**30 + 1, -(2**54 + 2**30 + 1), 2**63 - 1, -(2**63), 3], dtype=np.int64)
    got = _run("scalar.sitofp", I64, F32, x, np.float32)
    # exact references: the nearest f32 to the integer (ties to the even significand)
    from fractions import Fraction

    def nearest_f32(v: int) -> float:
        f = float(np.float32(v))
        cands = [np.nextafter(np.float32(f), np.float32(-np.inf)), np.float32(f)]
        cands.append(np.nextafter(np.float32(f), np.float32(np.inf)))
        return float(
            min(
                cands,
                key=lambda c: (abs(Fraction(float(c)) - v), int(np.float32(c).view(np.uint32)) & 1),
            )
        )

    assert got.tolist() == [nearest_f32(v) for v in x.tolist()]
    u = _run("scalar.uitofp", I64, F32, np.array([-1], dtype=np.int64), np.float32)
    assert u.tolist() == [2.0**64]


def test_fptrunc_f64_to_bf16_rounds_once() -> None:
    # just above a bf16 tie, but float32 rounding first lands exactly on the tie
    tie = 1.0 + 2.0**-8
    x = np.array([tie + 2.0**-40, tie - 2.0**-40, tie], dtype=np.float64)
    raw = np.zeros(3, dtype=np.uint16)
    from loom.ir import F64

    launch(elementwise_module("scalar.fptrunc", [F64], BF16, 3), "k", args=[x, raw])
    got = (raw.astype(np.uint32) << 16).view(np.float32).tolist()
    assert got == [1.0 + 2.0**-7, 1.0, 1.0]


def test_sitofp_to_f16_overflows_to_inf() -> None:
    got = _run("scalar.sitofp", I32, F16, np.array([65519, 65520, -70000], np.int32), np.float16)
    assert got.tolist() == [65504.0, np.inf, -np.inf]


def test_subgroup_size_in_the_launch_config() -> None:
    text = (
        "target.generic<reference> @t {subgroup_size = 16}\n\n"
        "kernel.def target(@t) @k() {\n"
        "  %c1 = index.constant 1 : index\n"
        "  %s = target.subgroup.size : index\n"
        "  kernel.launch.config workgroups(%c1, %c1, %c1) workgroup_size(%s, %c1, %c1) : index\n"
        "} launch(%dst: buffer) {\n"
        "  %z = index.constant 0 : offset\n"
        "  %i = kernel.workitem.dispatch.id<x> : index\n"
        "  %vd = buffer.view %dst[%z] : buffer -> view<32xi64>\n"
        "  %one = scalar.constant 1 : i64\n"
        "  view.store %one, %vd[%i] : i64, view<32xi64>\n"
        "  kernel.return\n"
        "}\n"
    )
    out = np.zeros(32, dtype=np.int64)
    launch(parse_module(text), "k", args=[out])
    assert out.tolist() == [1] * 16 + [0] * 16
