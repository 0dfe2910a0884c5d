"""Diagnostics: the model, the engine and rendering for the three kinds of location."""

from __future__ import annotations

import pytest

from loom.diagnostic_render import underline
from loom.diagnostic_sources import PrintedModules
from loom.diagnostics import (
    Diagnostic,
    DiagnosticEngine,
    DiagnosticSeverity,
    LoomDiagnosticError,
    SourceProvenance,
    SourceRange,
)
from loom.errors import LoomError
from loom.format.text.parser import parse_module
from loom.format.text.printer import Printer
from loom.importers import KernelArgumentSpec, KernelModuleSpec, create_kernel_module
from loom.ir import I32, INDEX, FileLocation
from loom.verify import verify_module

BAD_TEXT = """\
target.generic<reference> @t

kernel.def target(@t) @k() {
  %c1 = index.constant 1 : index
  %w = scalar.constant 64 : i32
  kernel.launch.config workgroups(%c1, %c1, %c1) workgroup_size(%w, %c1, %c1) : index
} launch() {
  kernel.return
}
"""


def test_parsed_text_points_into_the_file() -> None:
    module = parse_module(BAD_TEXT, filename="grid.loom")
    diags = verify_module(module)
    assert diags.codes == ["TYPE/003"]
    text = diags[0].render()
    lines = text.splitlines()
    assert lines[0] == (
        "grid.loom:6:3: error TYPE/003: 'kernel.launch.config' operand 'workgroup_size_x' has "
        "type i32, expected index"
    )
    assert lines[1] == BAD_TEXT.splitlines()[5]
    assert lines[2].startswith("  ^~~~")
    assert "source: module operation[1] kernel.def.regions[0].blocks[0].ops[2]" in text
    assert diags[0].range is not None
    assert diags[0].range.provenance is SourceProvenance.EXACT


def test_parsed_text_without_kept_source_reads_the_file(tmp_path) -> None:  # noqa: ANN001
    path = tmp_path / "grid.loom"
    path.write_text(BAD_TEXT)
    module = parse_module(BAD_TEXT, filename=str(path))
    module.source_texts.clear()  # force the file to be read back from disk
    text = verify_module(module)[0].render()
    assert f"{path}:6:3: error TYPE/003" in text
    assert "workgroup_size(%w, %c1, %c1)" in text.splitlines()[1]


def _shell_with_location(filename: str, line: int, col: int, end: int):  # noqa: ANN202
    shell = create_kernel_module(
        KernelModuleSpec(
            target_preset="reference",
            export_symbol="k",
            callee="k",
            arguments=(KernelArgumentSpec(0, "n", INDEX),),
        )
    )
    module, b = shell.module, shell.builder
    src = module.add_source(filename)
    loc = module.add_location(FileLocation(src, line, col, line, end))
    n = shell.body_arguments_by_ordinal[0]
    with b.insertion_block(shell.body_block):
        b.index.add(lhs=n, rhs=n, results=[INDEX], name="doubled", location_id=loc)
        b.kernel.return_()
    # The frontend forgot a cast: the result claims to be i32.
    shell.body_block.ops[0].results[0].type = I32
    return module


def test_frontend_location_with_readable_file(tmp_path) -> None:  # noqa: ANN001
    frontend = tmp_path / "kernel.py"
    frontend.write_text("def k(n):\n    doubled = n + n\n    return doubled\n")
    module = _shell_with_location(str(frontend), 2, 15, 20)
    diags = verify_module(module)
    assert set(diags.codes) == {"TYPE/004", "TYPE/001"}
    lines = diags[0].render().splitlines()
    assert lines[0].startswith(f"{frontend}:2:15: error ")
    assert lines[1] == "    doubled = n + n"
    assert lines[2] == "              ^~~~~"


def test_frontend_location_without_file_still_names_it() -> None:
    module = _shell_with_location("missing_frontend_file.py", 12, 5, 9)
    text = verify_module(module)[0].render()
    first, second = text.splitlines()[:2]
    assert first.startswith("missing_frontend_file.py:12:5: error ")
    assert second.startswith("  source: ")  # no source line to show, but the op path


def test_op_without_location_underlines_the_printed_module() -> None:
    shell = create_kernel_module(
        KernelModuleSpec(
            target_preset="reference",
            export_symbol="k",
            callee="k",
            arguments=(KernelArgumentSpec(0, "n", INDEX),),
        )
    )
    module, b = shell.module, shell.builder
    n = shell.body_arguments_by_ordinal[0]
    with b.insertion_block(shell.body_block):
        b.index.add(lhs=n, rhs=n, results=[INDEX], name="doubled")
        b.kernel.return_()
    shell.body_block.ops[0].results[0].type = I32
    diag = verify_module(module)[0]
    assert diag.range is None
    # Without a printed-text provider there is no line to show, but the op path is there.
    bare = diag.render().splitlines()
    assert bare[0].startswith("error TYPE/") and bare[1].startswith("  source: module ")
    printer = Printer()
    printed = printer.print_module(module)
    line_no = printer.op_lines[id(shell.body_block.ops[0])]
    lines = diag.render(printed=PrintedModules()).splitlines()
    assert lines[0].startswith(f"<module>:{line_no}:3: error TYPE/")
    assert lines[1] == printed.splitlines()[line_no - 1] == "  %doubled = index.add %n, %n : i32"
    assert lines[2] == "  " + "^" + "~" * (len(lines[1]) - 3)
    assert "no source location" in lines[3]
    assert diag.resolved_range(PrintedModules()).provenance is SourceProvenance.PRINTED_FALLBACK
    module.name = "demo"
    # A provider handed to the verifier travels with its diagnostics.
    again = verify_module(module, printed=PrintedModules())[0]
    assert again.render().startswith(f"<demo>:{line_no}:3:")


def test_engine_and_error() -> None:
    engine = DiagnosticEngine()
    assert not engine.has_errors
    engine.raise_if_errors()  # nothing to raise
    engine.add(Diagnostic(DiagnosticSeverity.WARNING, "STRUCTURE/900", "just a warning"))
    assert not engine.has_errors and engine.errors == []
    engine.raise_if_errors()
    rng = SourceRange("a.loom", 3, 5, 3, 8, text="x\ny\n    abcdef\n")
    engine.add(Diagnostic(DiagnosticSeverity.ERROR, "TYPE/003", "bad", rng))
    assert engine.has_errors and engine.codes == ["STRUCTURE/900", "TYPE/003"]
    with pytest.raises(LoomDiagnosticError) as info:
        engine.raise_if_errors()
    err = info.value
    assert isinstance(err, LoomError)
    assert err.diagnostics == engine.diagnostics
    assert str(err) == engine.render()
    assert "a.loom:3:5: error TYPE/003: bad\n    abcdef\n    ^~~" in str(err)
    assert "warning STRUCTURE/900: just a warning" in str(err)
    assert engine[1].domain == "TYPE"


def test_underline_shapes() -> None:
    assert underline(SourceRange("f", 1, 3), "abcdef") == "  ^"
    assert underline(SourceRange("f", 1, 2, 1, 5), "abcdef") == " ^~~"
    assert underline(SourceRange("f", 1, 2, 3, 1), "abcdef") == " ^~~~~"  # spans lines
    assert underline(SourceRange("f", 1, 3, 1, 4), "\tab") == "\t ^"  # tabs kept
    assert underline(SourceRange("f", 1, 40, 1, 50), "short") == "     ^"  # clamped


def test_notes_render_with_their_locations() -> None:
    rng = SourceRange("a.loom", 1, 1, 1, 4, text="abc\ndef\n")
    note_rng = SourceRange("a.loom", 2, 1, 2, 4, text="abc\ndef\n")
    from loom.diagnostics import DiagnosticRelatedLocation

    d = Diagnostic(
        DiagnosticSeverity.ERROR,
        "SYMBOL/001",
        "twice",
        rng,
        notes=[DiagnosticRelatedLocation("first definition", note_rng)],
    )
    assert d.render().splitlines() == [
        "a.loom:1:1: error SYMBOL/001: twice",
        "abc",
        "^~~",
        "a.loom:2:1: note: first definition",
        "def",
        "^~~",
    ]
