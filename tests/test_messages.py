"""Messages people read: grammar, source order, parameters off the headline, bytecode errors
that name their file, and a quiet second ``%load_ext``."""

from __future__ import annotations

import io
import sys
import types
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

from loom.builder import module_builder
from loom.diagnostics import (
    Diagnostic,
    DiagnosticEngine,
    DiagnosticSeverity,
    LoomDiagnosticError,
    SourceRange,
    a_or_an,
    count_of,
    source_order,
)
from loom.errors import BytecodeError, LoomBuilderError
from loom.format.bytecode import read_module, write_module
from loom.format.text.parser import parse_module
from loom.ir import INDEX
from loom.verify import verify_module

# A type error on line 10 is found while walking; the divergent barrier on line 7 only at the
# end of the walk (barriers are checked once the whole kernel is known).
OUT_OF_ORDER = """\
kernel.def @k() {
  %c1 = index.constant 1 : index
  kernel.launch.config workgroups(%c1, %c1, %c1) workgroup_size(%c1, %c1, %c1) : index
} launch(%n: index) {
  %lane = kernel.workitem.id<x> : index
  %low = index.cmp slt, %lane, %n : index
  scf.if %low {
    kernel.barrier<workgroup> scope(workgroup) ordering(acq_rel)
  }
  %bad = scalar.addi %n, %n : index
  kernel.return
}
"""


# --------------------------------------------------------------------------- grammar


@pytest.mark.parametrize(
    ("phrase", "expected"),
    [
        ("index value", "an index value"),
        ("offset value", "an offset value"),
        ("i32 value", "an i32 value"),
        ("f16 value", "an f16 value"),
        ("bf16 value", "a bf16 value"),
        ("buffer", "a buffer"),
        ("unit attribute", "a unit attribute"),
        ("SSA name", "an SSA name"),
        ("kernel or function", "a kernel or function"),
    ],
)
def test_indefinite_article_follows_the_sound(phrase: str, expected: str) -> None:
    assert a_or_an(phrase) == expected


@pytest.mark.parametrize(
    ("n", "noun", "expected"),
    [
        (1, "workload value", "1 workload value"),
        (2, "workload value", "2 workload values"),
        (0, "entry", "0 entries"),
        (1, "entry", "1 entry"),
        (1, "byte", "1 byte"),
        (3, "memory read", "3 memory reads"),
    ],
)
def test_counts_agree_with_their_nouns(n: int, noun: str, expected: str) -> None:
    assert count_of(n, noun) == expected


def test_builder_counts_read_as_english() -> None:
    module, b = module_builder()
    with pytest.raises(LoomBuilderError) as e:
        b.build("scf.while", iter_args=[], results=[INDEX, INDEX], names=["a"])
    assert "'names' has 1 entry for 2 results" in str(e.value)


def test_truncated_bytecode_counts_one_byte_as_one_byte() -> None:
    data = write_module(parse_module(OUT_OF_ORDER.replace("%bad = scalar.addi", "%ok = index.add")))
    for cut in range(9, len(data)):
        try:
            read_module(data[:cut])
        except BytecodeError as e:
            assert " 1 bytes" not in str(e) and " 1 entries" not in str(e), str(e)


# --------------------------------------------------------------------------- order


def _diag(code: str, rng: SourceRange | None) -> Diagnostic:
    return Diagnostic(DiagnosticSeverity.ERROR, code, code.lower(), rng)


def test_source_order_sorts_by_file_line_column_and_keeps_ties() -> None:
    a = _diag("T/1", SourceRange("a.loom", 9, 1))
    b = _diag("T/2", SourceRange("a.loom", 3, 7))
    c = _diag("T/3", None)
    d = _diag("T/4", SourceRange("a.loom", 3, 2))
    e = _diag("T/5", SourceRange("b.loom", 1, 1))
    f = _diag("T/6", SourceRange("a.loom", 3, 2))
    g = _diag("T/7", None)
    ordered = source_order([a, b, c, d, e, f, g])
    assert [x.code for x in ordered] == ["T/4", "T/6", "T/2", "T/1", "T/5", "T/3", "T/7"]
    engine = DiagnosticEngine([a, b, c, d, e, f, g])
    assert engine.codes == ["T/1", "T/2", "T/3", "T/4", "T/5", "T/6", "T/7"]  # as recorded
    lines = [ln.split(": ", 1)[0] for ln in engine.render().splitlines()]
    assert lines == ["a.loom:3:2", "a.loom:3:2", "a.loom:3:7", "a.loom:9:1", "b.loom:1:1"] + [
        "error T/3",
        "error T/7",
    ]
    assert str(LoomDiagnosticError([a, b])).startswith("a.loom:3:7:")


def test_verifier_reports_in_source_order() -> None:
    module = parse_module(OUT_OF_ORDER, filename="k.loom")
    diags = verify_module(module)
    lines = [d.range.line for d in diags]
    assert len(lines) >= 2 and lines == sorted(lines)
    assert diags[0].code == "STRUCTURE/038" and diags[0].range.line == 8
    with pytest.raises(LoomDiagnosticError) as e:
        diags.raise_if_errors()
    assert str(e.value).startswith("k.loom:8:")


# --------------------------------------------------------------------------- parameters


def test_structured_parameters_are_on_a_line_of_their_own() -> None:
    module = parse_module(OUT_OF_ORDER, filename="k.loom")
    barrier = verify_module(module)[0]
    assert barrier.params["control_distribution"] == "lane_predicate"
    assert "{" not in barrier.message and "op_name" not in barrier.message
    text = barrier.render().splitlines()
    assert "{" not in text[0] and "control_kind" not in text[0]
    params = [ln for ln in text if ln.startswith("  params: ")]
    assert params == [
        '  params: op_name="kernel.barrier", required_uniform_scope="workgroup", '
        'control_kind="region_selector", control_value="%low", control_op_name="index.cmp", '
        'control_distribution="lane_predicate"'
    ]


# --------------------------------------------------------------------------- bytecode files


def _corrupt(tmp_path: Path) -> Path:
    data = bytearray(write_module(parse_module(OUT_OF_ORDER.replace("scalar.addi", "index.add"))))
    data[4] = 99  # an unknown format version
    path = tmp_path / "broken.loombc"
    path.write_bytes(bytes(data))
    return path


def test_read_module_from_a_path_names_the_file(tmp_path: Path) -> None:
    path = _corrupt(tmp_path)
    with pytest.raises(BytecodeError) as e:
        read_module(path)
    assert f"in {path} at byte offset 4" in str(e.value)
    assert e.value.filename == str(path) and e.value.offset == 4
    assert e.value.diagnostics[0].code == "BYTECODE/002"
    assert str(path) in e.value.diagnostics[0].render()
    with pytest.raises(BytecodeError) as e:
        read_module(str(path))
    assert str(path) in str(e.value)


def test_bytes_read_elsewhere_are_named_by_filename(tmp_path: Path) -> None:
    data = _corrupt(tmp_path).read_bytes()
    with pytest.raises(BytecodeError) as e:
        read_module(data, filename="upload.loombc")
    assert "in upload.loombc at byte offset 4" in str(e.value)
    with pytest.raises(BytecodeError) as e:
        read_module(data)
    assert str(e.value).startswith("invalid Loom bytecode at byte offset 4")


def test_missing_bytecode_file_is_a_clean_error(tmp_path: Path) -> None:
    with pytest.raises(BytecodeError) as e:
        read_module(tmp_path / "nope.loombc")
    assert "cannot read" in str(e.value) and "nope.loombc" in str(e.value)


def test_loom_format_names_the_bytecode_file(tmp_path: Path) -> None:
    from loom.cli.format import main

    path = _corrupt(tmp_path)
    err = io.StringIO()
    with redirect_stderr(err), redirect_stdout(io.StringIO()):
        try:
            code = main([str(path), "--from", "bc"])
        except SystemExit as e:
            code = e.code
    assert code not in (0, None)
    assert f"in {path} at byte offset 4" in err.getvalue()


# --------------------------------------------------------------------------- %load_ext


def test_second_load_ext_is_silent_and_unload_still_works(monkeypatch) -> None:  # noqa: ANN001
    from IPython.core.interactiveshell import InteractiveShell

    other = types.ModuleType("other_loom_test_extension")
    other.load_ipython_extension = lambda ip: None  # type: ignore[attr-defined]
    other.unload_ipython_extension = lambda ip: None  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, other.__name__, other)
    ip = InteractiveShell.instance()
    out = io.StringIO()
    try:
        with redirect_stdout(out):
            ip.run_line_magic("load_ext", "loom_jupyter")
            ip.run_line_magic("load_ext", "loom_jupyter")
            ip.run_line_magic("load_ext", "loom_jupyter")
        assert out.getvalue() == ""
        assert "loom_jupyter" in ip.extension_manager.loaded
        # Other extensions still get IPython's own notice.
        with redirect_stdout(out):
            ip.run_line_magic("load_ext", other.__name__)
            ip.run_line_magic("load_ext", other.__name__)
        assert "already loaded" in out.getvalue()
    finally:
        ip.run_line_magic("unload_ext", "loom_jupyter")
        ip.run_line_magic("unload_ext", other.__name__)
    assert "loom_jupyter" not in ip.extension_manager.loaded
    # IPython's own magic is back.
    assert getattr(ip.magics_manager.magics["line"]["load_ext"], "_loom_wrapped", None) is None
    assert "load_ext" not in vars(ip.magics_manager.user_magics)
    out = io.StringIO()
    with redirect_stdout(out):
        ip.run_line_magic("load_ext", "loom_jupyter")
        ip.run_line_magic("unload_ext", "loom_jupyter")
    assert out.getvalue() == ""
