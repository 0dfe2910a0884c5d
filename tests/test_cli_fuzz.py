"""Fuzzing the command-line tools: hostile .npy headers, huge sizes and shapes, random --arg
and --workload lists, random bytes on stdin. Each ends in a clean result or a clean refusal."""

from __future__ import annotations

import argparse
import io
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from loom.cli import format as fmt
from loom.cli import run
from loom.cli.run_inputs import RunInputError, load_npy

KERNELS = Path(__file__).resolve().parents[1] / "examples" / "kernels"
VADD = str(KERNELS / "vector_add_i32.loom")
QUICK = settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
HUGE = st.one_of(
    st.integers(-3, 300), st.integers(-(2**70), 2**70), st.sampled_from([2**31, 2**63, 2**64])
)
DESCRS = ["<i4", ">i4", "<f8", "|b1", "<u2", "|O", "V8", "nonsense", "<i4,<i4", "<U3"]


def npy_bytes(descr: str, fortran: bool, shape: list[int], data: bytes) -> bytes:
    header = f"{{'descr': {descr!r}, 'fortran_order': {fortran}, 'shape': {tuple(shape)!r}, }}"
    h = header.encode("latin1")
    pad = 64 - (10 + len(h) + 1) % 64
    size = (len(h) + pad + 1).to_bytes(2, "little")
    return b"\x93NUMPY\x01\x00" + size + h + b" " * pad + b"\n" + data


@QUICK
@given(
    descr=st.sampled_from(DESCRS),
    fortran=st.booleans(),
    shape=st.lists(HUGE, max_size=4),
    data=st.binary(max_size=600),
)
def test_npy_headers_load_or_refuse(
    tmp_path: Path, descr: str, fortran: bool, shape: list[int], data: bytes
) -> None:
    path = tmp_path / "x.npy"
    path.write_bytes(npy_bytes(descr, fortran, shape, data))
    try:
        arr = load_npy(str(path), 1 << 20)
    except RunInputError as e:
        assert str(e) and "\n" not in str(e)
        return
    assert arr.shape == tuple(shape) and arr.nbytes <= len(data)
    assert arr.flags.c_contiguous and arr.flags.writeable
    assert arr.dtype.byteorder in "<|="


@QUICK
@given(
    text=st.one_of(
        st.text(max_size=12),
        st.builds(lambda n, u: f"{n}{u}", HUGE, st.sampled_from(["", "K", "M", "G", "GiB", "x"])),
    )
)
def test_sizes_parse_or_refuse(text: str) -> None:
    try:
        n = fmt.parse_size(text)
    except argparse.ArgumentTypeError:
        return
    assert isinstance(n, int) and n >= 0


NAMES = st.sampled_from(["n", "a", "b", "c", "%n", "zz", "", "a=b"])


@pytest.fixture(scope="module")
def inputs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("fuzz-inputs")
    np.save(d / "i32.npy", np.arange(100, dtype=np.int32))
    np.save(d / "i64.npy", np.arange(100))
    np.save(d / "small.npy", np.arange(3, dtype=np.int32))
    np.save(d / "grid.npy", np.zeros((10, 10), np.int32))
    return d


@QUICK
@given(
    args=st.lists(
        st.tuples(
            NAMES,
            st.one_of(
                st.sampled_from(["i32.npy", "i64.npy", "small.npy", "grid.npy", "no.npy"]),
                HUGE.map(str),
                st.text(max_size=8),
            ),
        ),
        max_size=6,
    ),
    workload=st.lists(HUGE, max_size=2),
    reinterpret=st.booleans(),
)
def test_run_command_lines_end_cleanly(
    inputs: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    args: list[tuple[str, str]],
    workload: list[int],
    reinterpret: bool,
) -> None:
    argv = [VADD, "--kernel", "vector_add_i32", "-o", str(tmp_path / "out"), "--force"]
    argv += [f"--workload={w}" for w in workload[:1]]  # argparse form that allows negatives
    for name, value in args:
        path = inputs / value
        argv.append(f"--arg={name}={path if value.endswith('.npy') else value}")
    if reinterpret:
        argv.append("--reinterpret")
    try:
        code = run.main(argv)
    except SystemExit as e:  # argparse refusing the command line
        code = e.code
    err = capsys.readouterr().err
    assert code in (0, 1, 2), err
    assert "Traceback" not in err
    if code == 2 and "loom-run: error:" in err:
        assert err.count("loom-run: error:") == 1


@QUICK
@given(data=st.binary(max_size=400), limit=st.integers(0, 500))
def test_format_stdin_ends_cleanly(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, data: bytes, limit: int
) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
    code = fmt.main(["--check", "--max-input-size", str(limit), "-"])
    err = capsys.readouterr().err
    assert code in (0, 1, 2) and "Traceback" not in err
    if len(data) > limit:
        assert code == 2 and "larger than the input limit" in err
