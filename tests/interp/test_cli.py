"""loom-run: arguments from .npy files and values, buffers written back, findings printed."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from loom.cli.run import main

KERNELS = Path(__file__).parent / "kernels"


def test_saxpy_round_trip(tmp_path: Path, capsys) -> None:
    n = 300
    x = np.arange(n, dtype=np.float32)
    y = np.ones(n, dtype=np.float32)
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "y.npy", y)
    out = tmp_path / "out"
    code = main(
        [
            str(KERNELS / "saxpy.loom"),
            "--kernel",
            "@saxpy",
            "--workload",
            str(n),
            "--arg",
            f"n={n}",
            "--arg",
            "a=2",
            "--arg",
            f"x={tmp_path / 'x.npy'}",
            "--arg",
            f"y={tmp_path / 'y.npy'}",
            "-o",
            str(out),
            "--progress",
        ]
    )
    assert code == 0
    np.testing.assert_array_equal(np.load(out / "y.npy"), 2 * x + 1)
    np.testing.assert_array_equal(np.load(out / "x.npy"), x)
    captured = capsys.readouterr()
    assert "ran @saxpy" in captured.out and "2/2 workgroups" in captured.err


def test_findings_print_like_diagnostics(tmp_path: Path, capsys) -> None:
    np.save(tmp_path / "d.npy", np.arange(100, dtype=np.int32))
    np.save(tmp_path / "b.npy", np.zeros(16, dtype=np.int32))
    code = main(
        [
            str(KERNELS / "histogram.loom"),
            "--kernel",
            "histogram",
            "--workload",
            "100",
            "--arg",
            "n=100",
            "--arg",
            f"data={tmp_path / 'd.npy'}",
            "--arg",
            f"bins={tmp_path / 'b.npy'}",
            "-o",
            str(tmp_path),
        ]
    )
    err = capsys.readouterr().err
    assert code == 1
    assert "histogram.loom:25:5: error SANITIZE/002" in err and "^~~" in err
    assert (tmp_path / "bins.npy").exists()


def test_runtime_error_exit_status(tmp_path: Path, capsys) -> None:
    np.save(tmp_path / "x.npy", np.zeros(8, dtype=np.float32))
    code = main(
        [
            str(KERNELS / "oob_read.loom"),
            "--kernel",
            "shift_left",
            "--workload",
            "8",
            "--arg",
            "n=8",
            "--arg",
            f"x={tmp_path / 'x.npy'}",
            "--arg",
            f"y={tmp_path / 'x.npy'}",
            "-o",
            str(tmp_path / "o"),
        ]
    )
    err = capsys.readouterr().err
    assert code == 1 and "oob_read.loom:14:3: error RUNTIME/001" in err
    assert "Traceback" not in err


def test_bad_command_lines(tmp_path: Path, capsys) -> None:
    saxpy = str(KERNELS / "saxpy.loom")
    assert main([saxpy, "--kernel", "saxpy", "--workload", "4", "--arg", "n=4"]) == 2
    assert "missing --arg a=" in capsys.readouterr().err
    assert main([saxpy, "--kernel", "saxpy", "--arg", "n"]) == 2
    assert (
        main(
            [
                saxpy,
                "--kernel",
                "saxpy",
                "--workload",
                "4",
                "--arg",
                "n=4",
                "--arg",
                "a=x",
                "--arg",
                "x=nope.npy",
                "--arg",
                "y=nope.npy",
            ]
        )
        == 2
    )
    assert "not an f32 value" in capsys.readouterr().err
    assert main([str(tmp_path / "missing.loom"), "--kernel", "k"]) == 2
    assert main([saxpy, "--kernel", "nope"]) == 2
    assert "no kernel named '@nope'" in capsys.readouterr().err
