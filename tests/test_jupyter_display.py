"""loom_jupyter rich display: stable, class-based bundles with diagnostics under their lines."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from loom.diagnostics import (
    Diagnostic,
    DiagnosticEngine,
    DiagnosticRelatedLocation,
    DiagnosticSeverity,
    SourceRange,
)
from loom.errors import LoomError
from loom.importers import (
    KernelArgumentSpec,
    KernelLaunchConfigSpec,
    KernelModuleSpec,
    create_kernel_module,
    kernel_module_ops,
    print_loom_module,
)
from loom.ir import INDEX, FileLocation
from loom.verify import verify_module
from loom_jupyter import DiagnosticsView, LaunchView, ModuleView, SourceView
from loom_jupyter.display import error_bundle

COPY_KERNEL = (
    Path(__file__).resolve().parents[1] / "examples" / "python-importer" / "copy_64_bytes.loom"
)
OPS = kernel_module_ops("reference")
TOY = "let i = workitem(x)\n  store i -> out\n"


def headline_module():
    """The README's headline kernel (copy 64 bytes), read from the repository."""
    from loom.format.text.parser import parse_module

    return parse_module(COPY_KERNEL.read_text(), filename="copy_64_bytes.loom")


def broken_module():
    """A kernel body without its terminator; the offending op has a toy-frontend location."""
    shell = create_kernel_module(
        KernelModuleSpec(
            target_preset="reference",
            export_symbol="k",
            callee="k",
            arguments=(KernelArgumentSpec(ordinal=0, name="out"),),
            launch_config=KernelLaunchConfigSpec(workgroup_size=(8, 1, 1)),
        )
    )
    m = shell.module
    loc = m.add_location(FileLocation(m.add_source("toy.src"), 2, 3, 2, 8))
    with shell.builder.insertion_block(shell.body_block):
        shell.builder.kernel.workitem_dispatch_id(
            dimension="x", results=[INDEX], name="i", location_id=loc
        )
    return m


def strip_tags(html: str) -> str:
    text = re.sub(r"<[^>]+>", "", html)
    return (
        text.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", '"')
        .replace("&#x27;", "'")
        .replace("&amp;", "&")
    )


# CSS properties JupyterLab's HTML sanitizer keeps in untrusted outputs (a subset we use).
SANITIZER_KEEPS = {
    "background", "background-color", "border", "border-collapse", "border-left", "color",
    "display", "font-family", "font-size", "font-style", "font-weight", "height", "line-height",
    "margin", "max-width", "outline", "overflow-wrap", "overflow-x", "padding", "text-align",
    "vertical-align", "white-space", "width", "word-break",
}  # fmt: skip


def check_html_hygiene(html: str) -> None:
    """Stable, id-free HTML whose styling survives a sanitizer that strips ``<style>``."""
    assert "<style>" not in html, "JupyterLab strips <style> from untrusted outputs"
    assert not re.search(r"\sid=", html), "no element ids"
    assert not re.search(r"0x[0-9a-f]{6,}", html), "no memory addresses"
    assert html.startswith('<div class="loom-out ')
    for style in re.findall(r'style="([^"]*)"', html):
        for decl in filter(None, style.split(";")):
            prop = decl.split(":", 1)[0].strip()
            assert prop in SANITIZER_KEEPS, f"{prop} would be stripped"
    # every styled class carries its style inline
    from loom_jupyter.render import STYLES

    for classes, rest in re.findall(r'class="([^"]*)"([^>]*)>', html):
        if any(c in STYLES for c in classes.split()):
            assert "style=" in rest, classes


def test_module_bundle_is_highlighted_numbered_and_stable() -> None:
    m = headline_module()
    b1 = ModuleView(m)._repr_mimebundle_()
    b2 = ModuleView(m)._repr_mimebundle_()
    assert b1 == b2
    text = print_loom_module(m, ops=OPS)
    plain_lines = b1["text/plain"].splitlines()
    assert plain_lines[0] == "  1 target.generic<reference> @reference"
    assert [ln[4:] for ln in plain_lines] == text.splitlines()
    html = b1["text/html"]
    check_html_hygiene(html)
    assert '<span class="lm-nb" style="color:#008000">kernel.def</span>' in html
    assert '<span class="lm-nv" style="color:#19177C">%workitem_index</span>' in html
    assert '<span class="loom-ln" style="color:#9aa3ad"> 12 </span>' in html
    # With styles stripped the listing still reads: numbered lines of the canonical text.
    assert strip_tags(html).strip() == b1["text/plain"].strip()


def test_module_formatter_registered_with_ipython() -> None:
    from IPython.core.interactiveshell import InteractiveShell

    ip = InteractiveShell.instance()
    ip.run_line_magic("load_ext", "loom_jupyter")
    try:
        m = headline_module()
        data, _ = ip.display_formatter.format(m)
        assert data["text/html"] == ModuleView(m)._repr_mimebundle_()["text/html"]
        assert data["text/plain"].startswith("  1 target.generic")
        engine = verify_module(broken_module(), ops=OPS)
        data, _ = ip.display_formatter.format(engine)
        assert "STRUCTURE/018" in data["text/plain"]
    finally:
        ip.run_line_magic("unload_ext", "loom_jupyter")
    data, _ = ip.display_formatter.format(headline_module())
    assert "text/html" not in data


def test_verifier_diagnostic_shown_under_its_op_line_with_frontend_location() -> None:
    m = broken_module()
    engine = verify_module(m, ops=OPS)
    assert engine.has_errors
    b = DiagnosticsView(engine)._repr_mimebundle_()
    lines = b["text/plain"].splitlines()
    assert lines[0] == "1 error"
    op_row = next(i for i, ln in enumerate(lines) if "kernel.workitem.dispatch.id<x>" in ln)
    caret = lines[op_row + 1]
    assert caret.strip() == "^" + "~" * (len("kernel.workitem.dispatch.id") - 1)
    assert caret.index("^") == lines[op_row].index("kernel.workitem")
    assert "toy.src:2:3: error STRUCTURE/018:" in lines[op_row + 2]
    html = b["text/html"]
    check_html_hygiene(html)
    assert re.search(
        r'<span class="loom-diag loom-error" style="[^"]*white-space:pre-wrap[^"]*">'
        r"toy.src:2:3: <strong>error STRUCTURE/018</strong>",
        html,
    )
    path = engine.diagnostics[0].op_path
    if path:
        assert f"source: {path}" in strip_tags(html)


def test_frontend_source_line_and_notes_are_quoted() -> None:
    m = broken_module()
    op = m.ops[1].regions[1].blocks[0].ops[0]
    d = Diagnostic(
        DiagnosticSeverity.WARNING,
        "TOY/001",
        "value <i> & stuff",
        SourceRange("toy.src", 2, 3, 2, 8, text=TOY),
        notes=[
            DiagnosticRelatedLocation("declared here", SourceRange("toy.src", 1, 5, 1, 6, text=TOY))
        ],
        op=op,
        module=m,
    )
    b = DiagnosticsView([d])._repr_mimebundle_()
    plain = b["text/plain"]
    assert "toy.src:2:3: warning TOY/001: value <i> & stuff" in plain
    assert "|   store i -> out\n" in plain
    assert "|   ^~~~~\n" in plain
    assert "toy.src:1:5: note: declared here" in plain
    assert "| let i = workitem(x)" in plain
    html = b["text/html"]
    assert "value &lt;i&gt; &amp; stuff" in html
    assert 'class="loom-diag loom-warning"' in html
    assert strip_tags(html).strip() == plain.strip()


def test_unplaced_diagnostics_are_listed() -> None:
    d = Diagnostic(DiagnosticSeverity.ERROR, "X/001", "no location at all")
    b = DiagnosticsView(DiagnosticEngine([d]))._repr_mimebundle_()
    assert b["text/plain"] == "1 error\nerror X/001: no location at all"


def test_source_view_places_diagnostics_by_range() -> None:
    text = "line one\n  second line here\nthird\n"
    d = Diagnostic(DiagnosticSeverity.ERROR, "PARSE/001", "bad", SourceRange("c.loom", 2, 3, 2, 9))
    other = Diagnostic(
        DiagnosticSeverity.ERROR, "PARSE/002", "elsewhere", SourceRange("other.loom", 1, 1)
    )
    b = SourceView(text, "c.loom", [d, other])._repr_mimebundle_()
    lines = b["text/plain"].splitlines()
    assert lines[0] == "c.loom: 2 errors"
    assert lines[2] == "  2   second line here"
    assert lines[3] == "      ^~~~~~"
    assert lines[4] == "    error PARSE/001: bad"
    assert lines[5] == "  3 third"
    assert "other.loom:1:1: error PARSE/002: elsewhere" in lines


def test_loom_error_bundle() -> None:
    d = Diagnostic(
        DiagnosticSeverity.ERROR,
        "PARSE/003",
        "expected ':'",
        SourceRange("a.loom", 1, 4, 1, 5, text="%x 1\n"),
    )
    b = error_bundle(LoomError("expected ':'", [d]))
    assert b["text/plain"].splitlines()[:4] == [
        "LoomError: 1 error",
        "a.loom:1:4: error PARSE/003: expected ':'",
        "  | %x 1",
        "  |    ^",
    ]
    b = error_bundle(LoomError("plain message"))
    assert b["text/plain"] == "LoomError\nplain message"
    check_html_hygiene(b["text/html"])


def test_loom_error_in_a_cell_shows_diagnostics_not_a_traceback() -> None:
    from IPython.core.interactiveshell import InteractiveShell
    from IPython.utils.capture import capture_output

    ip = InteractiveShell.instance()
    ip.run_line_magic("load_ext", "loom_jupyter")
    try:
        ip.user_ns["_d"] = Diagnostic(
            DiagnosticSeverity.ERROR,
            "RUN/001",
            "boom",
            SourceRange("k.loom", 1, 1, 1, 3, text="abc\n"),
        )
        with capture_output() as cap:
            result = ip.run_cell(
                "from loom.errors import LoomRuntimeError\nraise LoomRuntimeError('boom', [_d])"
            )
        assert isinstance(result.error_in_exec, LoomError)
        assert len(cap.outputs) == 1
        assert (
            cap.outputs[0]
            .data["text/plain"]
            .startswith("LoomRuntimeError: 1 error\nk.loom:1:1: error RUN/001: boom")
        )
        assert "Traceback" not in cap.stdout + cap.stderr
    finally:
        ip.run_line_magic("unload_ext", "loom_jupyter")


class _FakeLaunch:
    kernel = "k"
    grid = (2, 1, 1)
    workgroup_size = (4, 1, 1)
    workitems = 8
    ops_executed = 40
    wall_time = 0.123
    findings = ()


def test_launch_view_omits_wall_time() -> None:
    b = LaunchView(_FakeLaunch())._repr_mimebundle_()
    assert b["text/plain"] == (
        "launch: no findings\nkernel: k\ngrid (workgroups): 2 x 1 x 1\n"
        "workgroup size: 4 x 1 x 1\nworkitems: 8\nops executed: 40"
    )
    assert "0.123" not in b["text/html"]
    check_html_hygiene(b["text/html"])


def test_loom_never_imports_jupyter_packages() -> None:
    import subprocess

    code = (
        "import sys, loom, loom.highlight, loom.verify, loom.importers, loom.diagnostics\n"
        "bad = [m for m in ('IPython', 'ipywidgets', 'loom_jupyter') if m in sys.modules]\n"
        "assert not bad, bad"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.parametrize("view", ["module", "diagnostics"])
def test_bundles_have_exactly_plain_and_html(view: str) -> None:
    m = broken_module()
    obj = ModuleView(m) if view == "module" else DiagnosticsView(verify_module(m, ops=OPS))
    assert set(obj._repr_mimebundle_()) == {"text/plain", "text/html"}


def test_every_style_rule_is_scoped_to_loom_output() -> None:
    from loom_jupyter.render import stylesheet

    css = stylesheet()
    selectors = [ln for ln in css.splitlines() if "{" in ln]
    assert len(selectors) > 20
    for line in selectors:
        for sel in line.split("{")[0].split(","):
            assert sel.strip().startswith(".loom-out"), line
