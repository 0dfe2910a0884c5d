"""Re-execute the notebooks in place and drop execution timestamps, so nbval stays byte-stable.

Run: ``make notebooks`` (or ``python tools/run_notebooks.py [NOTEBOOK...]``).
"""

from __future__ import annotations

import sys
from pathlib import Path

import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parent.parent


def run(path: Path) -> None:
    """Execute ``path`` in its own folder and save it without per-cell execution metadata."""
    nb = nbformat.read(path, as_version=4)
    NotebookClient(nb, timeout=600, resources={"metadata": {"path": str(path.parent)}}).execute()
    for cell in nb.cells:
        cell.metadata.pop("execution", None)
    nbformat.write(nb, path)
    print(f"executed {path.relative_to(ROOT)}")


def main(argv: list[str]) -> int:
    """Execute the named notebooks, or every notebook under notebooks/."""
    paths = [Path(a).resolve() for a in argv] or sorted((ROOT / "notebooks").glob("*.ipynb"))
    for p in paths:
        run(p)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
