"""The README's examples work when pasted: the Python example prints the output shown after it,
and every ``console``/``sh`` block runs (in a scratch folder holding a copy of ``examples/``)
with the exit status and output it shows."""

from __future__ import annotations

import contextlib
import io
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCUMENTS = [README, ROOT / "examples" / "kernels" / "README.md"]
SKIP = "<!-- readme-test: skip"
BLOCK = re.compile(r"(?P<before>[^\n]*)\n```(?P<lang>console|sh)\n(?P<body>.*?)^```", re.S | re.M)
EXIT = re.compile(r"\[exit (\d+)\]")


@dataclass
class Command:
    """One pasted command with the output and exit status the document shows."""

    line: int
    text: str
    expected: list[str]
    status: int = 0


def test_readme_example_prints_the_documented_output() -> None:
    text = README.read_text()
    match = re.search(r"```python\n(.*?)```.*?```\n(.*?)```", text, re.S)
    assert match, "README needs a python example followed by its output block"
    code, expected = match.groups()
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "README.md", "exec"), {})
    assert out.getvalue() == expected


def commands(text: str) -> tuple[list[Command], int]:
    """The commands of every shell block that is not marked skip, and how many were skipped."""
    found: list[Command] = []
    skipped = 0
    for m in BLOCK.finditer(text):
        if m.group("before").startswith(SKIP):
            skipped += 1
            continue
        first = text.count("\n", 0, m.start("body")) + 1
        lines = m.group("body").splitlines()
        if m.group("lang") == "sh":
            found += [Command(first + i, ln, [], 0) for i, ln in enumerate(lines) if ln.strip()]
            continue
        i = 0
        while i < len(lines):
            assert lines[i].startswith("$ "), f"line {first + i}: output before any command"
            cmd, start = lines[i][2:], i
            while cmd.endswith("\\"):
                i += 1
                cmd += "\n" + lines[i]  # bash joins the lines as the user's shell would
            i += 1
            out = []
            while i < len(lines) and not lines[i].startswith("$ "):
                out.append(lines[i])
                i += 1
            status = 0
            if out and EXIT.fullmatch(out[-1]):
                status = int(EXIT.fullmatch(out.pop()).group(1))
            found.append(Command(first + start, cmd, out, status))
    return found, skipped


def test_command_extraction() -> None:
    text = (
        "x\n```console\n$ a \\\n  b\nout ...\n[exit 2]\n$ c\n```\n"
        f"{SKIP} -->\n```sh\nmake lab\n```\n\n```sh\nls\n```\n"
    )
    cmds, skipped = commands(text)
    assert skipped == 1
    assert [(c.text, c.expected, c.status) for c in cmds] == [
        ("a \\\n  b", ["out ..."], 2),
        ("c", [], 0),
        ("ls", [], 0),
    ]


def matches(expected: str, actual: str) -> bool:
    """``...`` in a documented line stands for any text (timings, counts)."""
    pattern = ".*".join(re.escape(part) for part in expected.split("..."))
    return re.fullmatch(pattern, actual) is not None


def scratch(tmp_path: Path) -> dict[str, str]:
    """A folder laid out like the repository root; the environment of an activated venv."""
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    venv = tmp_path / ".venv"
    if sys.prefix != sys.base_prefix:
        venv.symlink_to(sys.prefix, target_is_directory=True)
    else:  # not run from a virtual environment: stand one in for it
        (venv / "bin").mkdir(parents=True)
        here = Path(sys.executable).parent
        (venv / "bin" / "python").symlink_to(sys.executable)
        for tool in ("loom-format", "loom-run"):
            found = here / tool if (here / tool).exists() else shutil.which(tool)
            assert found, f"{tool} is not installed"
            (venv / "bin" / tool).symlink_to(found)
        (venv / "bin" / "activate").write_text(f'export PATH="{venv / "bin"}:$PATH"\n')
    env = dict(os.environ)
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    env["VIRTUAL_ENV"] = str(venv)
    env.pop("PYTHONHOME", None)
    return env


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda p: str(p.relative_to(ROOT)))
def test_shell_examples_run_as_shown(document: Path, tmp_path: Path) -> None:
    cmds, _ = commands(document.read_text(encoding="utf-8"))
    assert cmds, f"{document.name} has no shell examples"
    env = scratch(tmp_path)
    rel = document.relative_to(ROOT)
    for c in cmds:
        proc = subprocess.run(
            ["bash", "-c", "set -o pipefail\n" + c.text],
            cwd=tmp_path,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            timeout=300,
        )
        where = f"{rel}:{c.line}: $ {c.text}"
        assert proc.returncode == c.status, f"{where}\nexit {proc.returncode}\n{proc.stdout}"
        actual = proc.stdout.splitlines()
        ok = len(actual) == len(c.expected) and all(map(matches, c.expected, actual))
        assert ok, f"{where}\nexpected:\n" + "\n".join(c.expected) + "\ngot:\n" + proc.stdout


def test_the_quick_start_reaches_the_console_scripts() -> None:
    text = README.read_text(encoding="utf-8")
    quick = text[text.index("## Quick start") : text.index("## Example\n")]
    assert ". .venv/bin/activate" in quick and ".venv/bin/loom-format" in quick
    cmds, skipped = commands(text)
    assert skipped == 1  # only the block that builds the environment itself
    named = " ".join(c.text for c in cmds)
    for tool in ("loom-format", "loom-run"):
        assert tool in named
