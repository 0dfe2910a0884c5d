"""The headline example runs unchanged and prints exactly the golden file."""

import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLE = Path(__file__).resolve().parents[2] / "shared" / "examples" / "python-importer"


@pytest.fixture(scope="module")
def example_dir() -> Path:
    if not EXAMPLE.is_dir():
        pytest.fail(f"shared example folder missing: {EXAMPLE}")
    return EXAMPLE


def test_importer_prints_golden_text_byte_for_byte(example_dir: Path, tmp_path: Path) -> None:
    # Run from an unrelated folder so only the installed package is used.
    proc = subprocess.run(
        [sys.executable, str(example_dir / "importer.py")],
        cwd=tmp_path,
        capture_output=True,
        check=True,
    )
    assert proc.stderr == b""
    assert proc.stdout == (example_dir / "copy_64_bytes.loom").read_bytes()
