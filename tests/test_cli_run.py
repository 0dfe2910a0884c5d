"""loom-run refuses bad input before it runs: one line on stderr, exit status 2, no traceback.

Covers bytecode input, non-UTF-8 files, unknown and duplicate --arg, .npy files that do not
match the views they are read through (and --reinterpret), crafted .npy headers, existing
outputs (and --force), negative or oversized workloads.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from loom.cli.run import main
from loom.format.bytecode import write_module
from loom.format.text.parser import parse_module

KERNELS = Path(__file__).resolve().parents[1] / "examples" / "kernels"
VADD = KERNELS / "vector_add_i32.loom"
REVERSE = KERNELS / "reverse_blocks_f32.loom"
N = 100


@pytest.fixture
def vadd(tmp_path: Path) -> dict[str, Path]:
    """Inputs for vector_add_i32 with n = 100."""
    files = {}
    for name, arr in (
        ("a", np.arange(N, dtype=np.int32)),
        ("b", np.full(N, 7, dtype=np.int32)),
        ("c", np.zeros(N, dtype=np.int32)),
    ):
        files[name] = tmp_path / f"{name}.npy"
        np.save(files[name], arr)
    return files


def vadd_argv(files: dict[str, Path], out: Path, *extra: str, kernel: Path = VADD) -> list[str]:
    return [
        str(kernel),
        "--kernel",
        "vector_add_i32",
        "--workload",
        str(N),
        "--arg",
        f"n={N}",
        *(f"--arg={k}={v}" for k, v in files.items()),
        "-o",
        str(out),
        *extra,
    ]


def refused(argv: list[str], capsys: pytest.CaptureFixture[str], *needles: str) -> str:
    """Run, expect exit 2 with one error line containing ``needles``; return stderr."""
    code = main(argv)
    err = capsys.readouterr().err
    assert code == 2, err
    assert "Traceback" not in err
    lines = [ln for ln in err.splitlines() if ln.startswith("loom-run: error:")]
    assert len(lines) == 1, err
    for needle in needles:
        assert needle in lines[0], err
    return lines[0]


# ---------------------------------------------------------------------- runs


def test_text_input_runs(vadd: dict[str, Path], tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert main(vadd_argv(vadd, out)) == 0
    np.testing.assert_array_equal(np.load(out / "c.npy"), np.arange(N) + 7)


def test_bytecode_input_runs(vadd: dict[str, Path], tmp_path: Path) -> None:
    bc = tmp_path / "vadd.loombc"
    bc.write_bytes(write_module(parse_module(VADD.read_text(), filename=str(VADD))))
    out = tmp_path / "out"
    assert main(vadd_argv(vadd, out, kernel=bc)) == 0
    np.testing.assert_array_equal(np.load(out / "c.npy"), np.arange(N) + 7)


def test_big_endian_and_fortran_arrays_keep_their_values(tmp_path: Path) -> None:
    files = {
        "a": tmp_path / "a.npy",
        "b": tmp_path / "b.npy",
        "c": tmp_path / "c.npy",
    }
    np.save(files["a"], np.arange(N, dtype=">i4"))
    np.save(files["b"], np.asfortranarray(np.full(N, 5, dtype=np.uint32)))
    np.save(files["c"], np.zeros(N, dtype=np.int32))
    out = tmp_path / "out"
    assert main(vadd_argv(files, out)) == 0
    np.testing.assert_array_equal(np.load(out / "c.npy"), np.arange(N) + 5)
    np.testing.assert_array_equal(np.load(out / "a.npy"), np.arange(N))


# ---------------------------------------------------------------------- the module file


def test_non_utf8_file_is_a_clean_error(
    vadd: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.loom"
    bad.write_bytes(VADD.read_bytes().replace(b"c[i]", b"c[\xff]"))
    refused(vadd_argv(vadd, tmp_path / "o", kernel=bad), capsys, "bad.loom:1:", "0xff")


def test_parse_error_is_a_diagnostic(
    vadd: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.loom"
    bad.write_text(VADD.read_text().replace("index.add %n, %spare", "index.add %n, %nope"))
    assert main(vadd_argv(vadd, tmp_path / "o", kernel=bad)) == 2
    err = capsys.readouterr().err
    assert "bad.loom:8:" in err and "error PARSE/" in err and "Traceback" not in err
    assert not (tmp_path / "o").exists()


def test_corrupt_bytecode_is_a_diagnostic(
    vadd: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bc = tmp_path / "k.loombc"
    bc.write_bytes(write_module(parse_module(VADD.read_text()))[:-5])
    assert main(vadd_argv(vadd, tmp_path / "o", kernel=bc)) == 2
    err = capsys.readouterr().err
    assert "BYTECODE/" in err and "Traceback" not in err


def test_missing_file_and_kernel(
    vadd: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    refused(vadd_argv(vadd, tmp_path, kernel=tmp_path / "none.loom"), capsys, "cannot read")
    argv = vadd_argv(vadd, tmp_path)
    argv[argv.index("vector_add_i32")] = "nope"
    refused(argv, capsys, "no kernel named '@nope'", "@vector_add_i32")


# ---------------------------------------------------------------------- --arg


def test_unknown_arg_lists_the_kernel_arguments(
    vadd: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    refused(
        vadd_argv(vadd, tmp_path / "o", "--arg", "m=3"),
        capsys,
        "unknown --arg m",
        "n: index, a: buffer, b: buffer, c: buffer",
    )


def test_duplicate_arg_is_an_error(
    vadd: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    refused(vadd_argv(vadd, tmp_path / "o", "--arg", "n=5"), capsys, "--arg n is given twice")


def test_missing_and_malformed_args(
    vadd: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = vadd_argv(vadd, tmp_path / "o")
    del argv[argv.index(f"--arg=c={vadd['c']}")]
    refused(argv, capsys, "missing --arg c=", "n: index")
    refused(vadd_argv(vadd, tmp_path / "o", "--arg", "n"), capsys, "must be NAME=")


@pytest.mark.parametrize(
    ("value", "needle"),
    [
        ("x", "'x' is not an index value"),
        ("9" * 5000, "is not an index value"),
        (str(2**64), "fit"),
    ],
)
def test_bad_scalar_values(
    value: str,
    needle: str,
    vadd: dict[str, Path],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = vadd_argv(vadd, tmp_path / "o")
    argv[argv.index(f"n={N}")] = f"n={value}"
    refused(argv, capsys, needle)


# ---------------------------------------------------------------------- views


def test_dtype_mismatch_is_refused_unless_reinterpret(
    vadd: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    np.save(vadd["b"], np.arange(N))  # int64: the classic mistake
    before = vadd["b"].read_bytes()
    line = refused(
        vadd_argv(vadd, tmp_path / "o"),
        capsys,
        "argument b:",
        "int64 values of shape (100,)",
        "view<[%n]xi32>",
        "vector_add_i32.loom:16",
        "dtype int32 or uint32",
        "--reinterpret",
    )
    assert "shape (100,)" not in line.split("needs")[1]
    assert vadd["b"].read_bytes() == before and not (tmp_path / "o").exists()
    assert main(vadd_argv(vadd, tmp_path / "o", "--reinterpret")) == 0
    # The bytes were used as they are: int64 k reads as the i32 pair (k, 0).
    got = np.load(tmp_path / "o" / "c.npy")
    np.testing.assert_array_equal(got[0::2], np.arange(0, N, 2) + np.arange(N // 2))


def test_float_for_an_integer_view_is_refused(
    vadd: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    np.save(vadd["a"], np.zeros(N, dtype=np.float32))
    refused(vadd_argv(vadd, tmp_path / "o"), capsys, "argument a:", "float32", "int32")


def test_shape_mismatch_is_refused_unless_reinterpret(
    vadd: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    np.save(vadd["c"], np.zeros((10, 10), dtype=np.int32))
    refused(vadd_argv(vadd, tmp_path / "o"), capsys, "argument c:", "(10, 10)", "shape (100,)")
    assert main(vadd_argv(vadd, tmp_path / "o", "--reinterpret")) == 0
    got = np.load(tmp_path / "o" / "c.npy")
    assert got.shape == (10, 10)
    np.testing.assert_array_equal(got.reshape(-1), np.arange(N) + 7)


def test_extent_mismatch_is_refused(
    vadd: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    np.save(vadd["a"], np.arange(2 * N, dtype=np.int32))
    refused(vadd_argv(vadd, tmp_path / "o"), capsys, "argument a:", "(200,)", "shape (100,)")


def test_computed_extents_still_check_dtype_and_rank(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "data.npy"
    argv = [str(REVERSE), "--kernel", "reverse_blocks_f32", "--workload", "2"]
    argv += ["--arg", "blocks=2", "--arg", f"data={data}", "-o", str(tmp_path / "o")]
    np.save(data, np.arange(64, dtype=np.float64))
    refused(argv, capsys, "argument data:", "float64", "dtype float32")
    np.save(data, np.arange(64, dtype=np.float32))
    assert main(argv) == 0
    got = np.load(tmp_path / "o" / "data.npy")
    np.testing.assert_array_equal(
        got, np.arange(64, dtype=np.float32).reshape(2, 32)[:, ::-1].ravel()
    )


# ---------------------------------------------------------------------- crafted .npy files


def _npy(path: Path, header: str, data: bytes = b"") -> None:
    h = header.encode("latin1")
    pad = 64 - (10 + len(h) + 1) % 64
    path.write_bytes(
        b"\x93NUMPY\x01\x00"
        + (len(h) + pad + 1).to_bytes(2, "little")
        + h
        + b" " * pad
        + b"\n"
        + data
    )


@pytest.mark.parametrize(
    ("header", "data", "needle"),
    [
        ("{'descr': '<i4', 'fortran_order': False, 'shape': (1099511627776,), }", b"", "needs"),
        ("{'descr': '<i4', 'fortran_order': False, 'shape': (2**62,), }", b"", "not a valid .npy"),
        (
            "{'descr': '<i4', 'fortran_order': False, 'shape': (4611686018427387904, 8), }",
            b"",
            "more than the limit",
        ),
        ("{'descr': '<i4', 'fortran_order': False, 'shape': (100,), }", b"\0" * 40, "holds 40"),
        ("{'descr': '|O', 'fortran_order': False, 'shape': (100,), }", b"", "not supported"),
        ("{'descr': '<i4', 'fortran_order': False, 'shape': (-100,), }", b"", "negative"),
        (
            "{'descr': '<i4', 'fortran_order': False, 'shape': (0, 2305843009213693952), }",
            b"",
            "not usable",
        ),
        ("{'descr': 'nonsense', 'fortran_order': False, 'shape': (1,), }", b"", "not a valid"),
    ],
)
def test_crafted_npy_headers_are_clean_errors(
    header: str,
    data: bytes,
    needle: str,
    vadd: dict[str, Path],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    _npy(vadd["a"], header, data)
    refused(vadd_argv(vadd, tmp_path / "o"), capsys, "a.npy", needle)


def test_not_a_npy_file(
    vadd: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    vadd["a"].write_bytes(b"hello")
    refused(vadd_argv(vadd, tmp_path / "o"), capsys, "a.npy is not a valid .npy file")


# ---------------------------------------------------------------------- outputs


def test_existing_outputs_are_kept_unless_force(
    vadd: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The default -o is the current folder, where the inputs often are: never overwrite them.
    before = {k: p.read_bytes() for k, p in vadd.items()}
    refused(vadd_argv(vadd, tmp_path), capsys, "would overwrite", "a.npy", "--force")
    assert {k: p.read_bytes() for k, p in vadd.items()} == before
    assert main(vadd_argv(vadd, tmp_path, "--force")) == 0
    np.testing.assert_array_equal(np.load(vadd["c"]), np.arange(N) + 7)
    assert not list(tmp_path.glob(".*.npy"))


def test_output_that_is_a_file_is_refused(
    vadd: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    refused(vadd_argv(vadd, vadd["a"]), capsys, "not a folder")


# ---------------------------------------------------------------------- workload


@pytest.mark.parametrize(
    ("workload", "needle"),
    [(["-5"], "must not be negative"), ([str(2**70)], "does not fit"), ([], "takes 1 --workload")],
)
def test_bad_workloads(
    workload: list[str],
    needle: str,
    vadd: dict[str, Path],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = vadd_argv(vadd, tmp_path / "o")
    i = argv.index("--workload")
    argv[i + 1 : i + 2] = workload
    refused(argv, capsys, needle)
    assert not (tmp_path / "o").exists()


def test_console_exit_status_and_no_traceback(vadd: dict[str, Path], tmp_path: Path) -> None:
    argv = vadd_argv(vadd, tmp_path / "o", "--arg", "zz=1")
    proc = subprocess.run(
        [sys.executable, "-m", "loom.cli.run", *argv], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 2
    assert proc.stderr.startswith("loom-run: error: unknown --arg zz")
    assert "Traceback" not in proc.stderr and proc.stdout == ""
