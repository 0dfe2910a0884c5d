"""The repository stands on its own: no project file reads a path outside the clone."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCANNED = ("loom", "loom_jupyter", "tests", "benchmarks", "notebooks", "examples", "binder")
SUFFIXES = {".py", ".ipynb", ".md", ".loom", ".loom-test", ".txt", ".cfg", ".toml"}
# Spelled in pieces so that this file does not match itself.
OUTSIDE = [
    re.compile("/" + "work/"),
    re.compile(r"\.\./" + "shared"),
    re.compile(r"""/\s*["']""" + "shared" + r"""["']"""),
    re.compile(r"ROOT\.parent\b"),
]
PARENTS = re.compile(r"Path\(__file__\)(?:\.resolve\(\))?\.parents\[(\d+)\]")


def project_files() -> list[Path]:
    files = [ROOT / "Makefile", ROOT / "README.md", ROOT / "pyproject.toml"]
    for folder in SCANNED:
        files += [p for p in (ROOT / folder).rglob("*") if p.suffix in SUFFIXES and p.is_file()]
    here = Path(__file__).resolve()
    return [p for p in files if p.exists() and p != here and ".ipynb_checkpoints" not in p.parts]


def test_no_file_names_a_path_outside_the_repository() -> None:
    bad = []
    for path in project_files():
        text = path.read_text(encoding="utf-8", errors="replace")
        rel = path.relative_to(ROOT)
        for pattern in OUTSIDE:
            for m in pattern.finditer(text):
                line = text.count("\n", 0, m.start()) + 1
                bad.append(f"{rel}:{line}: {m.group(0)!r}")
        depth = len(rel.parts) - 1  # Path(__file__).parents[depth] is the repository root
        for m in PARENTS.finditer(text):
            if int(m.group(1)) > depth:
                line = text.count("\n", 0, m.start()) + 1
                bad.append(f"{rel}:{line}: {m.group(0)} leaves the repository")
    assert not bad, "paths outside the repository:\n" + "\n".join(bad)


def test_the_scan_finds_what_it_looks_for() -> None:
    parents = PARENTS.search("A = Path(__file__).resolve().parents[2] / 'x'")
    assert parents and parents.group(1) == "2"
    for sample in ("'/" + "work/shared/k.loom'", "ROOT / 'sha" + "red' / 'x'", "'../sha" + "red'"):
        assert any(p.search(sample) for p in OUTSIDE), sample


def test_samples_live_in_examples() -> None:
    kernels = sorted(p.name for p in (ROOT / "examples" / "kernels").glob("*.loom"))
    assert kernels == [
        "reverse_blocks_f32.loom",
        "transpose_pitched_f32.loom",
        "vector_add_i32.loom",
    ]
    importer = ROOT / "examples" / "python-importer"
    assert (importer / "importer.py").is_file() and (importer / "copy_64_bytes.loom").is_file()
