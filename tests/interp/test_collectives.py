"""Subgroup and workgroup collectives against NumPy, with the stepper agreeing bit for bit."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).parent))
from collective_kernels import SUBGROUP, run_both, unary_kernel  # noqa: E402
from interp_helpers import KERNELS  # noqa: E402

N, WG = 64, 32
RNG = np.random.default_rng(7)
INTS = RNG.integers(-1000, 1000, N).astype(np.int32)
FLOATS = RNG.standard_normal(N).astype(np.float32)


def rows(a: np.ndarray, width: int) -> np.ndarray:
    return a.reshape(-1, width)


def run(body: str, t: str, r: str, data: np.ndarray, out_dtype, wg: int = WG, sg: int = SUBGROUP):
    out = np.zeros(data.size, dtype=out_dtype)
    (_, got), result, stepper = run_both(unary_kernel(body, t, r, data.size, wg, sg), [data, out])
    assert not result.findings, result.render()
    assert not stepper.findings
    return got


@pytest.mark.parametrize(
    ("kind", "fold"),
    [("addi", np.sum), ("maxsi", np.max), ("minsi", np.min), ("xori", np.bitwise_xor.reduce)],
)
def test_subgroup_reduce_integer_kinds(kind, fold) -> None:
    got = run(f"%r = kernel.subgroup.reduce<{kind}> %x : i32", "i32", "i32", INTS, np.int32)
    want = np.repeat(fold(rows(INTS, SUBGROUP), axis=1), SUBGROUP).astype(np.int32)
    np.testing.assert_array_equal(got, want)


def test_subgroup_reduce_addf_folds_in_lane_order() -> None:
    got = run("%r = kernel.subgroup.reduce<addf> %x : f32", "f32", "f32", FLOATS, np.float32)
    want = []
    for row in rows(FLOATS, SUBGROUP):
        acc = row[0]
        for v in row[1:]:
            acc = np.float32(acc + v)
        want += [acc] * SUBGROUP
    np.testing.assert_array_equal(got, np.array(want, dtype=np.float32))


def test_minnumf_ignores_nan_and_maximumf_propagates_it() -> None:
    data = FLOATS.copy()
    data[3] = np.nan
    got = run("%r = kernel.subgroup.reduce<minnumf> %x : f32", "f32", "f32", data, np.float32)
    assert got[0] == np.nanmin(data[:8])
    got = run("%r = kernel.subgroup.reduce<maximumf> %x : f32", "f32", "f32", data, np.float32)
    assert np.isnan(got[:8]).all() and not np.isnan(got[8:]).any()


def test_clustered_reduce() -> None:
    got = run(
        "%r = kernel.subgroup.reduce<addi> %x {cluster_size = 4} : i32",
        "i32",
        "i32",
        INTS,
        np.int32,
    )
    np.testing.assert_array_equal(got, np.repeat(rows(INTS, 4).sum(axis=1), 4))
    got = run(
        "%r = kernel.subgroup.reduce<addi> %x {cluster_size = 2, cluster_stride = 4} : i32",
        "i32",
        "i32",
        INTS,
        np.int32,
    )
    # lanes L and L+4 of each subgroup form a cluster
    r = rows(INTS, 8)
    pair = r[:, :4] + r[:, 4:]
    np.testing.assert_array_equal(got, np.concatenate([pair, pair], axis=1).reshape(-1))


@pytest.mark.parametrize("direction", ["forward", "reverse"])
@pytest.mark.parametrize("mode", ["inclusive", "exclusive"])
def test_subgroup_scan(direction, mode) -> None:
    body = f"%r = kernel.subgroup.scan<addi> %x {{direction = {direction}, mode = {mode}}} : i32"
    got = run(body, "i32", "i32", INTS, np.int32)
    r = rows(INTS, SUBGROUP)
    if direction == "reverse":
        r = r[:, ::-1]
    want = np.cumsum(r, axis=1)
    if mode == "exclusive":
        want = want - r
    if direction == "reverse":
        want = want[:, ::-1]
    np.testing.assert_array_equal(got, want.reshape(-1).astype(np.int32))


def test_workgroup_reduce_scan_and_count() -> None:
    got = run("%r = kernel.workgroup.reduce<addi> %x : i32", "i32", "i32", INTS, np.int32)
    np.testing.assert_array_equal(got, np.repeat(rows(INTS, WG).sum(axis=1), WG))
    body = "%r = kernel.workgroup.scan<maxsi> %x {direction = forward, mode = inclusive} : i32"
    got = run(body, "i32", "i32", INTS, np.int32)
    np.testing.assert_array_equal(got, np.maximum.accumulate(rows(INTS, WG), axis=1).reshape(-1))
    body = (
        "%zero = scalar.constant 0 : i32\n"
        "%p = scalar.cmpi sgt, %x, %zero : i32\n"
        "%r = kernel.workgroup.vote.count %p : i1 -> i32"
    )
    got = run(body, "i32", "i32", INTS, np.int32)
    np.testing.assert_array_equal(got, np.repeat((rows(INTS, WG) > 0).sum(axis=1), WG))


def _pred(op: str, result: str = "i1") -> str:
    return (
        "%zero = scalar.constant 0 : i32\n"
        "%p = scalar.cmpi sgt, %x, %zero : i32\n"
        f"%b = {op} %p : i1{'' if result == 'i1' else ' -> ' + result}\n"
        + (
            "%r = scalar.extui %b : i1 to i32"
            if result == "i1"
            else "%r = scalar.trunci %b : i64 to i32"
        )
    )


def test_votes_and_ballot() -> None:
    data = INTS.copy()
    data[:8] = 5  # subgroup 0: all positive
    data[8:16] = -5  # subgroup 1: none positive
    pos = rows(data, SUBGROUP) > 0
    got = run(_pred("kernel.subgroup.vote.any"), "i32", "i32", data, np.int32)
    np.testing.assert_array_equal(got, np.repeat(pos.any(axis=1), SUBGROUP))
    got = run(_pred("kernel.subgroup.vote.all"), "i32", "i32", data, np.int32)
    np.testing.assert_array_equal(got, np.repeat(pos.all(axis=1), SUBGROUP))
    got = run(_pred("kernel.subgroup.vote.ballot", "i64"), "i32", "i32", data, np.int32)
    want = (pos * (1 << np.arange(SUBGROUP))).sum(axis=1)
    np.testing.assert_array_equal(got, np.repeat(want, SUBGROUP))
    got = run(_pred("kernel.workgroup.vote.all"), "i32", "i32", data, np.int32)
    np.testing.assert_array_equal(got, np.repeat(rows(data, WG).__gt__(0).all(axis=1), WG))


def test_queries_and_active_mask_in_a_partial_subgroup() -> None:
    # 12 workitems per workgroup with subgroups of 8: the second subgroup has 4 lanes
    body = (
        "%sg = kernel.subgroup.id : index\n"
        "%lane = kernel.subgroup.lane.id : index\n"
        "%cnt = kernel.subgroup.count : index\n"
        "%w = kernel.subgroup.size : index\n"
        "%a = index.mul %sg, %w : index\n"
        "%b = index.add %a, %lane : index\n"
        "%c = index.mul %cnt, %w : index\n"
        "%d = index.mul %c, %w : index\n"
        "%e = index.add %b, %d : index\n"
        "%m = kernel.subgroup.active.mask : i64\n"
        "%mi = index.cast %m : i64 to index\n"
        "%f = index.mul %mi, %d : index\n"
        "%g = index.add %e, %f : index\n"
        "%r = index.cast %g : index to i64"
    )
    data = np.zeros(24, dtype=np.int32)
    got = run(body, "i32", "i64", data, np.int64, wg=12)
    flat = np.tile(np.arange(12), 2)
    mask = np.where(flat < 8, 0xFF, 0xF)
    want = flat + 2 * 8 * 8 + mask * 128
    np.testing.assert_array_equal(got, want)


def test_shuffles_broadcasts_and_matches() -> None:
    lanes = np.arange(N, dtype=np.int32) % SUBGROUP
    base = np.arange(N) - lanes
    body = (
        "%o = scalar.constant 1 : i32\n"
        "%w = scalar.constant 8 : i32\n"
        "%r, %ok = kernel.subgroup.shuffle<xor> %x, %o, %w : i32, i32, i32"
    )
    got = run(body, "i32", "i32", INTS, np.int32)
    np.testing.assert_array_equal(got, INTS[base + (lanes ^ 1)])
    body = (
        "%o = scalar.constant 2 : i32\n"
        "%w = scalar.constant 8 : i32\n"
        "%s, %ok = kernel.subgroup.shuffle<down> %x, %o, %w : i32, i32, i32\n"
        "%v = scalar.extui %ok : i1 to i32\n"
        "%k = scalar.constant 100000 : i32\n"
        "%t = scalar.muli %v, %k : i32\n"
        "%r = scalar.addi %s, %t : i32"
    )
    got = run(body, "i32", "i32", INTS, np.int32)
    valid = lanes + 2 < 8
    want = np.where(valid, INTS[np.minimum(np.arange(N) + 2, N - 1)] + 100000, INTS)
    np.testing.assert_array_equal(got, want)
    body = "%l = scalar.constant 3 : i32\n%r = kernel.subgroup.broadcast %x from %l : i32, i32"
    got = run(body, "i32", "i32", INTS, np.int32)
    np.testing.assert_array_equal(got, np.repeat(rows(INTS, 8)[:, 3], 8))
    got = run("%r = kernel.subgroup.broadcast.first %x : i32", "i32", "i32", INTS, np.int32)
    np.testing.assert_array_equal(got, np.repeat(rows(INTS, 8)[:, 0], 8))
    data = (np.arange(N) % 3).astype(np.int32)
    body = "%m = kernel.subgroup.match.any %x : i32 -> i32\n%r = scalar.addi %m, %m : i32"
    got = run(body, "i32", "i32", data, np.int32)
    r = rows(data, 8)
    want = [
        (((r[i] == r[i, j]) * (1 << np.arange(8))).sum()) * 2 for i in range(8) for j in range(8)
    ]
    np.testing.assert_array_equal(got, want)
    data = np.repeat(np.array([7, 7, 7, 7, 1, 2, 3, 4], dtype=np.int32), 8)
    body = (
        "%m, %same = kernel.subgroup.match.all %x : i32 -> i32, i1\n"
        "%s = scalar.extui %same : i1 to i32\n"
        "%r = scalar.addi %m, %s : i32"
    )
    got = run(body, "i32", "i32", data, np.int32)
    same = (rows(data, 8) == rows(data, 8)[:, :1]).all(axis=1)
    np.testing.assert_array_equal(got, np.repeat(np.where(same, 0xFF + 1, 0), 8))


def test_collective_under_divergent_control_is_a_finding_in_both_engines() -> None:
    from loom.format.text.parser import parse_module
    from loom.interp import Stepper, launch

    text = unary_kernel(
        "%four = index.constant 4 : index\n"
        "%lane = kernel.subgroup.lane.id : index\n"
        "%low = index.cmp ult, %lane, %four : index\n"
        "scf.if %low {\n"
        "  %s = kernel.subgroup.reduce<addi> %x : i32\n"
        "  view.store %s, %vo[%gid] : i32, view<64xi32>\n"
        "}\n"
        "%r = scalar.constant 0 : i32",
        "i32",
        "i32",
        N,
        WG,
    ).replace("  view.store %r, %vo[%gid] : i32, view<64xi32>\n", "")
    line = next(i for i, t in enumerate(text.splitlines(), 1) if "subgroup.reduce" in t)
    module = parse_module(text, filename="div.loom")
    out = np.zeros(N, np.int32)
    r = launch(module, "k", args=[INTS.copy(), out])
    codes = [(d.code, d.range.line) for d in r.findings]
    assert ("SANITIZE/005", line) in codes
    # the active lanes 0..3 of each subgroup reduce over themselves
    np.testing.assert_array_equal(
        rows(out, 8)[:, :4], np.repeat(rows(INTS, 8)[:, :4].sum(1), 4).reshape(-1, 4)
    )
    s_out = np.zeros(N, np.int32)
    s = Stepper(module, "k", args=[INTS.copy(), s_out])
    s.run()
    assert ("SANITIZE/005", line) in [(d.code, d.range.line) for d in s.findings]
    np.testing.assert_array_equal(out, s_out)


def test_ops_without_meaning_here_say_so_at_run_time() -> None:
    from loom.errors import LoomRuntimeError
    from loom.format.text.parser import parse_module
    from loom.interp import launch

    text = (KERNELS / "cluster_gather.loom").read_text()
    module = parse_module(text)
    with pytest.raises(LoomRuntimeError, match="not executable on the reference target") as e:
        launch(module, "k", args=[np.zeros(4, np.uint8), 1])
    assert e.value.diagnostics[0].code == "RUNTIME/013"


def test_stepper_undoes_collectives_exactly() -> None:
    from loom.format.text.parser import parse_module
    from loom.interp import Stepper

    text = unary_kernel(
        "%r = kernel.subgroup.scan<addi> %x {direction = forward, mode = inclusive} : i32",
        "i32",
        "i32",
        16,
        16,
    )
    data, out = INTS[:16].copy(), np.zeros(16, np.int32)
    s = Stepper(parse_module(text), "k", args=[data, out])
    s.run()
    done = out.copy()
    np.testing.assert_array_equal(done, np.cumsum(rows(data, 8), axis=1).reshape(-1))
    while s.step_back():
        pass
    assert not out.any()
    s.run()
    np.testing.assert_array_equal(out, done)
