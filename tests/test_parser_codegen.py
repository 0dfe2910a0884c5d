"""Generated print and parse functions are visible: linecache, tracebacks and a switch."""

from __future__ import annotations

import linecache
import os
import subprocess
import sys
import traceback

import pytest

from loom.format.text.codegen import generated_filename, generated_source
from loom.format.text.parse_format import plan_for
from loom.format.text.print_plan import Fallback
from loom.format.text.printer import print_plan
from loom.ir import Operation
from loom.registry import as_registry


def decl(name: str):  # noqa: ANN201
    return as_registry(None).get(name)


def test_generated_source_of_one_op_has_each_compiled_function() -> None:
    text = generated_source("scalar.addf")
    for head in ("def _print(", "def _line("):
        assert head in text
    assert generated_filename("print", "scalar.addf") in text


def test_linecache_serves_the_generated_lines() -> None:
    plan = print_plan(decl("scalar.addf"))
    filename = generated_filename("print", "scalar.addf")
    assert plan.fn is not None and plan.fn.__code__.co_filename == filename
    assert linecache.getline(filename, 1) == plan.source.splitlines(True)[0]
    linecache.checkcache()  # the file is not on disk; the entry must survive
    assert linecache.getline(filename, 1).startswith("def _print(")
    line = plan_for(decl("scalar.addf")).line_fn
    assert line is not None and line.__code__.co_filename == generated_filename(
        "parse_line", "scalar.addf"
    )


def test_a_traceback_through_generated_code_shows_its_source() -> None:
    plan = print_plan(decl("scalar.addf"))
    with pytest.raises(Fallback) as info:
        plan.fn(Operation("scalar.addf"), lambda i: None, str, None, "", None)
    frames = traceback.extract_tb(info.tb)
    last = frames[-1]
    assert last.filename == generated_filename("print", "scalar.addf")
    assert last.line == "raise Fallback"


def test_the_environment_switch_prints_one_ops_code() -> None:
    code = (
        "from loom.format.text.parser import parse_module\n"
        "parse_module('func.def @f(%a: f32) {\\n  %b = scalar.addf %a, %a : f32\\n"
        "  func.return\\n}\\n')\n"
    )
    env = {**os.environ, "LOOM_SHOW_GENERATED": "scalar.addf"}
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    assert "def _print(" not in out.stderr and "def _line(" in out.stderr
    assert "scalar.mulf" not in out.stderr


def test_the_verifiers_shape_checks_are_generated_under_real_names() -> None:
    from loom.format.text.parser import parse_module
    from loom.verify import verify_module

    text = "func.def @f(%a: f32) {\n  %b = scalar.mulf %a, %a : f32\n  func.return\n}\n"
    verify_module(parse_module(text))
    source = generated_source("scalar.mulf", "verify")
    assert generated_filename("verify", "scalar.mulf", "2-1") in source
    assert "def check(" in source
    assert linecache.getline(generated_filename("verify", "scalar.mulf", "2-1"), 1).startswith(
        "def check("
    )
