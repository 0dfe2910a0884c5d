"""The headline example runs unchanged and prints exactly the golden file."""

import subprocess
import sys
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "python-importer"


def test_importer_prints_golden_text_byte_for_byte(tmp_path: Path) -> None:
    # Run from an unrelated folder so only the installed package is used.
    proc = subprocess.run(
        [sys.executable, str(EXAMPLE / "importer.py")],
        cwd=tmp_path,
        capture_output=True,
        check=True,
    )
    assert proc.stderr == b""
    assert proc.stdout == (EXAMPLE / "copy_64_bytes.loom").read_bytes()
