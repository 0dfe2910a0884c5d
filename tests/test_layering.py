"""The layers stand side by side: a static check of every import in ``loom`` (module level and
inside functions), followed transitively, plus one run-time check in a fresh interpreter."""

from __future__ import annotations

import ast
import subprocess
import sys
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "loom"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _resolve(name: str) -> str | None:
    """The loom module an imported name lives in (``loom.ir.Module`` -> ``loom.ir``)."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


@cache
def imports_of(module: str) -> frozenset[str]:
    """Every module ``module`` imports anywhere in its text (loom modules resolved, others by
    their top-level name)."""
    path = MODULES[module]
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    out: set[str] = set()
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            names = [base] + [f"{base}.{a.name}" for a in node.names]
        for n in names:
            if n.split(".")[0] == "loom":
                resolved = _resolve(n)
                if resolved and resolved != module and resolved != "loom":
                    out.add(resolved)
            else:
                out.add(n.split(".")[0])
    return frozenset(out)


def reachable(module: str) -> set[str]:
    """Modules reachable from ``module`` through imports (the ``loom`` package init excluded:
    importing any submodule runs it, so it cannot tell layers apart)."""
    seen: set[str] = set()
    todo = [module]
    while todo:
        m = todo.pop()
        for dep in imports_of(m):
            if dep not in seen:
                seen.add(dep)
                if dep in MODULES:
                    todo.append(dep)
    return seen


def _layer(prefix: str) -> list[str]:
    return [m for m in MODULES if m == prefix or m.startswith(prefix + ".")]


def _in(found: set[str], prefixes: tuple[str, ...]) -> list[str]:
    return sorted(m for m in found if any(m == p or m.startswith(p + ".") for p in prefixes))


def test_the_import_scanner_sees_in_function_imports() -> None:
    # The check would be hollow if lazy imports went unseen: this one sits inside a function.
    assert "loom.format.text.printer" in imports_of("loom.diagnostic_sources")
    assert "loom.diagnostics" in imports_of("loom.verify.core")


@pytest.mark.parametrize("module", _layer("loom.ir"))
def test_ir_knows_nothing_of_the_layers_above(module: str) -> None:
    above = ("loom.format", "loom.verify", "loom.interp", "loom.diagnostics", "loom.builder")
    assert _in(reachable(module), above) == []
    assert _in(reachable(module), ("numpy", "pygments")) == []


@pytest.mark.parametrize("module", _layer("loom.interp"))
def test_the_interpreter_does_not_import_the_verifier(module: str) -> None:
    assert _in(reachable(module), ("loom.verify",)) == []


@pytest.mark.parametrize("module", ["loom.diagnostics", "loom.diagnostic_render", "loom.errors"])
def test_diagnostics_rendering_does_not_import_the_printer(module: str) -> None:
    found = reachable(module)
    assert _in(found, ("loom.format", "loom.verify", "loom.interp", "loom.builder")) == []


@pytest.mark.parametrize("module", sorted(MODULES))
def test_loom_never_imports_the_notebook_side(module: str) -> None:
    assert _in(reachable(module), ("loom_jupyter", "IPython", "ipywidgets")) == []


@pytest.mark.parametrize("module", sorted(MODULES))
def test_only_the_picture_module_reaches_matplotlib(module: str) -> None:
    # loom.plot imports matplotlib when a picture is drawn (an optional dependency); the
    # subprocess test below checks that importing any module does not load it
    found = reachable(module)
    if "matplotlib" in _in(found, ("matplotlib",)):
        assert module == "loom.plot" or "loom.plot" in found


def test_importing_every_loom_module_loads_no_notebook_package() -> None:
    names = [m for m in MODULES if m != "loom.__main__"]
    code = (
        "import importlib, sys\n"
        f"for m in {names!r}:\n"
        "    importlib.import_module(m)\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in "
        "('loom_jupyter', 'IPython', 'ipywidgets', 'matplotlib'))\n"
        "print(' '.join(bad))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True
    )
    assert out.stdout.strip() == ""
