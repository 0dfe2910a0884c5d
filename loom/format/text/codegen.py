"""Compiling generated code so that tracebacks, coverage and ``pdb`` can show it.

The print plans and the compiled parse paths generate one small Python function per declaration
from its format elements' fragments, and the verifier one check per operand/result shape seen.
:func:`compile_generated` compiles such source under a file name of its own
(``<package>/format/text/generated/<kind>/<op>[~<variant>].py``) and registers the text with
:mod:`linecache`, so a traceback through generated code shows its lines, ``pdb`` can list and
step through it, and :func:`generated_source` returns it. Plans are compiled when an op is
first printed, parsed or verified, so a run generates code only for the ops it meets
(:func:`generated_line_counts`).

To see what was generated for one op, call ``generated_source(op_name)`` or set the
environment variable ``LOOM_SHOW_GENERATED`` to its name (a comma-separated list of names, or
``*``): each function is then printed to standard error when it is compiled.
"""

from __future__ import annotations

import linecache
import os
import sys
from pathlib import Path
from typing import Any

GENERATED_DIR = Path(__file__).resolve().parent / "generated"
"""Where generated functions say they live (the files exist only in :mod:`linecache`)."""
KINDS = ("print", "parse_line", "verify")
"""The generated functions of one op: its print plan, its compiled parse path and the
verifier's checks of each operand/result shape seen."""

_SOURCES: dict[str, str] = {}
"""File name -> source of everything compiled here (linecache entries can be evicted)."""


def generated_filename(kind: str, op_name: str, variant: str = "") -> str:
    """The file name generated code of ``kind`` for ``op_name`` is compiled under (``variant``
    tells apart several functions of one kind and op, such as the verifier's per-shape
    checks)."""
    return str(GENERATED_DIR / kind / f"{op_name}{'~' + variant if variant else ''}.py")


def compile_generated(
    source: str, kind: str, op_name: str, env: dict[str, Any], variant: str = ""
) -> dict[str, Any]:
    """Execute generated ``source`` in ``env`` under its own file name; returns ``env``."""
    filename = generated_filename(kind, op_name, variant)
    _SOURCES[filename] = source
    # mtime None: linecache.checkcache never drops the entry for a file missing on disk.
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    exec(compile(source, filename, "exec"), env)
    if _shown(op_name):
        sys.stderr.write(f"# ---- {filename}\n{source}")
    return env


def generated_source(op_name: str, kind: str | None = None) -> str:
    """The generated source for ``op_name`` (every kind compiled so far, or just ``kind``).

    Compiles the op's plans first when needed, so this works before anything was parsed.
    """
    from loom.format.text.parse_format import plan_for
    from loom.format.text.printer import print_plan
    from loom.registry import as_registry

    decl = as_registry(None).get(op_name)
    if decl is not None:
        plan_for(decl)
        print_plan(decl)
    parts = []
    for k in KINDS if kind is None else (kind,):
        folder = str(GENERATED_DIR / k) + os.sep
        for filename, text in _SOURCES.items():
            base = filename[len(folder) :] if filename.startswith(folder) else ""
            if base == f"{op_name}.py" or base.startswith(op_name + "~"):
                parts.append(f"# ---- {filename}\n{text}")
    return "".join(parts)


def generated_line_counts() -> dict[str, int]:
    """Lines of generated source compiled so far in this process, by kind."""
    counts = dict.fromkeys(KINDS, 0)
    for filename, text in _SOURCES.items():
        kind = Path(filename).parent.name
        counts[kind] = counts.get(kind, 0) + text.count("\n")
    return counts


def _shown(op_name: str) -> bool:
    wanted = os.environ.get("LOOM_SHOW_GENERATED")
    if not wanted:
        return False
    return wanted == "*" or op_name in wanted.split(",")
