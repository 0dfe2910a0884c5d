"""``loom-format`` converts text <-> bytecode (``--to bc``, ``--from auto`` sniffs the magic)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from loom.format.bytecode import MAGIC, read_module, write_module
from loom.format.text.parser import parse_module
from loom.format.text.printer import print_module

KERNELS = sorted((Path(__file__).resolve().parents[1] / "examples" / "kernels").glob("*.loom"))

if importlib.util.find_spec("loom.cli.format") is None:  # pragma: no cover - until it lands
    pytest.skip(
        "loom.cli.format (loom-format, issue 3) does not exist yet", allow_module_level=True
    )

from loom.cli.format import main  # noqa: E402


def run(args: list[str]) -> int:
    """``main(args)`` as an exit code (whether it returns one or raises SystemExit)."""
    try:
        code = main(args)
    except SystemExit as e:
        code = e.code
    return int(code or 0)


@pytest.mark.parametrize("path", KERNELS, ids=[p.name for p in KERNELS])
def test_text_to_bytecode_and_back(path: Path, tmp_path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    bc = tmp_path / "k.loombc"
    assert run([str(path), "--to", "bc", "--output", str(bc)]) == 0
    data = bc.read_bytes()
    assert data[:4] == MAGIC
    assert print_module(read_module(data, verify=True)) == text
    # Same bytes as the library writes for the parsed module.
    assert data == write_module(parse_module(text, filename=str(path)))
    out = tmp_path / "k.loom"
    assert run([str(bc), "--from", "auto", "--output", str(out)]) == 0
    assert out.read_text(encoding="utf-8") == text
    out2 = tmp_path / "k2.loom"
    assert run([str(bc), "--from", "bc", "--to", "text", "--output", str(out2)]) == 0
    assert out2.read_text(encoding="utf-8") == text


def test_auto_detects_text_too(tmp_path: Path) -> None:
    out = tmp_path / "k.loom"
    assert run([str(KERNELS[0]), "--from", "auto", "--output", str(out)]) == 0
    assert out.read_text(encoding="utf-8") == KERNELS[0].read_text(encoding="utf-8")


def test_bytecode_to_bytecode_is_stable(tmp_path: Path) -> None:
    a, b = tmp_path / "a.loombc", tmp_path / "b.loombc"
    assert run([str(KERNELS[0]), "--to", "bc", "--output", str(a)]) == 0
    assert run([str(a), "--to", "bc", "--output", str(b)]) == 0
    assert a.read_bytes() == b.read_bytes()


def test_corrupt_bytecode_fails_with_a_bytecode_diagnostic(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good = tmp_path / "k.loombc"
    assert run([str(KERNELS[0]), "--to", "bc", "--output", str(good)]) == 0
    bad = tmp_path / "bad.loombc"
    bad.write_bytes(good.read_bytes()[:-3])
    out = tmp_path / "never.loom"
    assert run([str(bad), "--from", "auto", "--output", str(out)]) != 0
    err = capsys.readouterr()
    assert "BYTECODE/" in err.err + err.out
    assert "Traceback" not in err.err
    assert not out.exists() or out.read_text(encoding="utf-8") == ""


def test_unknown_version_is_reported(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good = tmp_path / "k.loombc"
    assert run([str(KERNELS[0]), "--to", "bc", "--output", str(good)]) == 0
    data = bytearray(good.read_bytes())
    data[4] = 99
    bad = tmp_path / "v99.loombc"
    bad.write_bytes(bytes(data))
    assert run([str(bad), "--from", "bc", "--to", "text"]) != 0
    err = capsys.readouterr()
    assert "BYTECODE/002" in err.err + err.out
