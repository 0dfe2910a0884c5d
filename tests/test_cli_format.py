"""loom-format: --check, --in-place, conversion, stdin, exit codes, no tracebacks."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest

from loom.cli.format import main

KERNELS = Path(__file__).resolve().parents[1] / "examples" / "kernels"
GOOD = (KERNELS / "vector_add_i32.loom").read_text()
NONCANONICAL = GOOD.replace("index.add %n, %spare", "index.add   %n,%spare")
INVALID = GOOD.replace("index.add %n, %spare", "index.add %n, %nope")


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    out = {}
    for name, text in (("good", GOOD), ("noncanonical", NONCANONICAL), ("invalid", INVALID)):
        p = tmp_path / f"{name}.loom"
        p.write_text(text)
        out[name] = p
    return out


def run(
    argv: list[str], capsys: pytest.CaptureFixture[str], stdin: bytes | None = None
) -> tuple[int, str, str]:
    if stdin is not None:
        sys.stdin = io.TextIOWrapper(io.BytesIO(stdin))
    try:
        code = main(argv)
    finally:
        sys.stdin = sys.__stdin__
    out, err = capsys.readouterr()
    return code, out, err


def test_check_exit_codes(files: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["--check", str(files["good"])], capsys)[0] == 0
    code, out, err = run(["--check", str(files["good"]), str(files["noncanonical"])], capsys)
    assert code == 1
    assert "-  %padded = index.add   %n,%spare : index" in out
    assert "+  %padded = index.add %n, %spare : index" in out
    code, out, err = run(["--check", str(files["noncanonical"]), str(files["invalid"])], capsys)
    assert code == 2
    assert "PARSE/001" in err and "invalid.loom:8:" in err and "^~~~~" in err
    assert "1 not canonical, 1 invalid" in err


def test_in_place_rewrites_only_valid_noncanonical(
    files: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    before_invalid = files["invalid"].read_text()
    code, _, err = run(["--in-place", *map(str, files.values())], capsys)
    assert code == 2
    assert files["noncanonical"].read_text() == GOOD
    assert files["good"].read_text() == GOOD
    assert files["invalid"].read_text() == before_invalid
    assert "1 changed, 1 unchanged, 1 failed" in err
    assert not list(files["good"].parent.glob(".loom-format-*"))


def test_conversion_text_and_bytecode(
    tmp_path: Path, files: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    bc = tmp_path / "out.loombc"
    assert run([str(files["noncanonical"]), "--to", "bc", "-o", str(bc)], capsys)[0] == 0
    assert bc.read_bytes().startswith(b"LOOM")
    text = tmp_path / "back.loom"
    assert run([str(bc), "-o", str(text)], capsys)[0] == 0
    assert text.read_text() == GOOD
    assert run([str(bc), "--from", "text"], capsys)[0] == 2


def test_stdin_and_locations(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["-", "--print-locations"], capsys, stdin=GOOD.encode())
    assert code == 0
    assert 'target.generic<reference> @reference loc("<stdin>":2:1 to 2:37)' in out
    code, _, err = run(["--check"], capsys, stdin=NONCANONICAL.encode())
    assert code == 1


@pytest.mark.parametrize("data", [b"\xff\xfe bad", b"kernel.def @k( {\n", b"}\n", b"\x00"])
def test_bad_input_is_a_diagnostic_not_a_traceback(
    data: bytes, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run(["-"], capsys, stdin=data)
    assert code == 2
    assert "Traceback" not in err and "<stdin>:1" in err


def test_missing_file(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(["--check", "/nonexistent/x.loom"], capsys)
    assert code == 2 and "cannot read /nonexistent/x.loom" in err


def test_help_documents_exit_codes(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    assert "1  --check: some input is valid but not canonical" in out
