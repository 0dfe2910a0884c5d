"""JupyterLab in a real Chromium: highlighted outputs untrusted, Loom in the editor, Run All,
the stepper widget's clicks and layout. See conftest.py for the server and browser."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted(p.name for p in (ROOT / "notebooks").glob("*.ipynb"))


def open_path(page: Any, lab: dict[str, Any], path: str) -> None:
    """Open ``path`` (relative to the server root) in the session's JupyterLab; wait for it."""
    page.evaluate("p => window.jupyterapp.commands.execute('docmanager:open', {path: p})", path)
    page.wait_for_function(
        """p => { const w = window.jupyterapp.shell.currentWidget;
        return w && w.context && w.context.path === p && w.context.isReady; }""",
        arg=path,
        timeout=30000,
    )
    if path.endswith(".ipynb"):
        page.wait_for_function(
            """() => { const nb = window.jupyterapp.shell.currentWidget.content;
            return nb.model && nb.widgets.length === nb.model.cells.length
                && nb.widgets.length > 0; }""",
            timeout=30000,
        )


def distinct_colours(page: Any, selector: str) -> dict[str, str]:
    """Text -> computed colour of the token spans under ``selector``."""
    return page.eval_on_selector_all(
        selector,
        "els => Object.fromEntries(els.map(e => [e.textContent, getComputedStyle(e).color]))",
    )


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_untrusted_notebook_shows_highlighted_listings(page, lab, shots, name) -> None:
    open_path(page, lab, f"notebooks/{name}")
    page.wait_for_selector(".jp-OutputArea-output .loom-out", state="attached", timeout=30000)
    trusted = page.evaluate(
        "window.jupyterapp.shell.currentWidget.content.widgets.some(c => c.model.trusted)"
    )
    assert not trusted, "a fresh checkout's notebook opens untrusted"
    # op names are coloured apart from plain text: the inline styles survived the sanitizer
    ops = page.eval_on_selector_all(
        ".jp-OutputArea-output .loom-out .lm-nb",
        "els => els.slice(0, 50).map(e => getComputedStyle(e).color)",
    )
    plain = page.eval_on_selector(
        ".jp-OutputArea-output .loom-out pre.loom-code", "e => getComputedStyle(e).color"
    )
    assert ops, "no highlighted op names in the stored outputs"
    assert all(c != plain for c in ops), (ops[:3], plain)
    layout = page.eval_on_selector_all(
        ".jp-OutputArea-output .loom-out pre.loom-code",
        "els => els.map(e => [getComputedStyle(e).whiteSpace, getComputedStyle(e).wordBreak,"
        " getComputedStyle(e).overflowX])",
    )
    assert all(ws == "pre" and wb == "normal" and ox == "auto" for ws, wb, ox in layout), layout
    page.eval_on_selector(".jp-OutputArea-output .loom-out", "e => e.scrollIntoView()")
    page.wait_for_timeout(200)
    page.screenshot(path=str(shots / f"untrusted-{name}.png"))


def example_kernel(lab: dict[str, Any]) -> str:
    """A sample .loom file reachable from the served root (examples/ first)."""
    root = lab["root"]
    for folder in ("examples", "tests/interp/kernels"):
        found = sorted((root / folder).rglob("*.loom")) if (root / folder).is_dir() else []
        if found:
            return str(found[0].relative_to(root))
    pytest.fail("no example .loom file under examples/ or tests/interp/kernels/")


SPAN_COLOURS = """root => Array.from(root.querySelectorAll('.cm-line span'))
    .map(e => [e.textContent, getComputedStyle(e).color])"""


def op_colours(pairs: list[list[str]]) -> tuple[set[str], set[str]]:
    """Colours of op-name spans and of %value spans."""
    from loom.highlight import loom_words

    ops = loom_words().ops
    return (
        {c for t, c in pairs if t in ops},
        {c for t, c in pairs if t.startswith("%")},
    )


def test_loom_file_opens_highlighted_with_its_icon(page, lab, shots) -> None:
    path = example_kernel(lab)
    open_path(page, lab, path)
    page.wait_for_selector(".jp-FileEditor .cm-content .cm-line span", timeout=30000)
    mime = page.evaluate("window.jupyterapp.shell.currentWidget.content.model.mimeType")
    assert mime == "text/x-loom"
    pairs = page.eval_on_selector(".jp-FileEditor .cm-content", SPAN_COLOURS)
    plain = page.eval_on_selector(".jp-FileEditor .cm-line", "e => getComputedStyle(e).color")
    ops, _ = op_colours(pairs)
    assert ops and plain not in ops, (ops, plain, pairs[:20])
    assert len({c for _, c in pairs}) >= 4, "ops, types, numbers, comments... differ"
    ftype = page.evaluate(
        """p => { const t = window.jupyterapp.docRegistry.getFileTypesForPath(p)[0];
        return [t.name, t.icon && t.icon.name]; }""",
        path,
    )
    assert ftype == ["loom", "loom-jupyterlab:loom"], ftype
    page.screenshot(path=str(shots / "editor-loom-file.png"))


def test_loom_cell_is_highlighted_as_loom(page, lab, shots) -> None:
    open_path(page, lab, "notebooks/02-diagnostics.ipynb")
    index = page.evaluate(
        """() => {
        const nb = window.jupyterapp.shell.currentWidget.content;
        const i = nb.widgets.findIndex(c => c.model.sharedModel.getSource().startsWith('%%loom'));
        if (i >= 0) { nb.activeCellIndex = i; nb.widgets[i].node.scrollIntoView(); }
        return i;
    }"""
    )
    assert index >= 0, "notebook 02 has a %%loom cell"
    page.wait_for_function(
        f"window.jupyterapp.shell.currentWidget.content.widgets[{index}]"
        ".model.mimeType === 'text/x-loom'",
        timeout=15000,
    )
    page.wait_for_function(
        f"window.jupyterapp.shell.currentWidget.content.widgets[{index}]"
        ".node.querySelectorAll('.jp-InputArea .cm-line span').length > 5",
        timeout=15000,
    )
    pairs = page.evaluate(
        f"""(() => {{ const root = window.jupyterapp.shell.currentWidget.content
            .widgets[{index}].node.querySelector('.jp-InputArea');
            return ({SPAN_COLOURS})(root); }})()"""
    )
    ops, _ = op_colours(pairs)
    plain = page.evaluate(
        f"getComputedStyle(window.jupyterapp.shell.currentWidget.content.widgets[{index}]"
        ".node.querySelector('.jp-InputArea .cm-line')).color"
    )
    assert ops and plain not in ops, (ops, plain, pairs[:20])
    # a Python cell of the same notebook keeps the kernel's language
    other = page.evaluate(
        """window.jupyterapp.shell.currentWidget.content.widgets
        .filter(c => c.model.type === 'code' && !c.model.sharedModel.getSource()
        .startsWith('%%loom')).map(c => c.model.mimeType)"""
    )
    assert other and "text/x-loom" not in other, other
    page.screenshot(path=str(shots / "editor-loom-cell.png"))


# --------------------------------------------------------------------------- Run All + stepper


@pytest.fixture(scope="module")
def ran_stepper_notebook(app_page, lab, shots):
    """Notebook 03 after Run All (kept open for the stepper tests)."""
    page = app_page
    seen = len(page.js_errors)
    open_path(page, lab, "notebooks/03-stepping-the-grid.ipynb")
    page.wait_for_function(
        "window.jupyterapp.shell.currentWidget.sessionContext.session?.kernel?.status === 'idle'",
        timeout=60000,
    )
    page.evaluate("window.jupyterapp.commands.execute('notebook:run-all-cells')")
    page.wait_for_function(
        """(() => { const nb = window.jupyterapp.shell.currentWidget;
        const cells = nb.content.widgets.filter(c => c.model.type === 'code');
        return nb.sessionContext.session.kernel.status === 'idle'
          && cells.every(c => c.model.executionCount !== null); })()""",
        timeout=90000,
        polling=500,
    )
    yield page, page.js_errors
    page.set_viewport_size({"width": 1280, "height": 900})
    page.evaluate("window.jupyterapp.commands.execute('notebook:shutdown-kernel')")
    page.evaluate("window.jupyterapp.commands.execute('application:close-all')")
    assert not page.js_errors[seen:], f"JavaScript errors: {page.js_errors[seen:]}"


def test_run_all_gives_no_errors(ran_stepper_notebook, shots) -> None:
    page, _ = ran_stepper_notebook
    bad = page.evaluate(
        """window.jupyterapp.shell.currentWidget.content.widgets
        .filter(c => c.model.type === 'code')
        .flatMap(c => c.model.outputs.toJSON())
        .filter(o => o.output_type === 'error' || (o.output_type === 'stream'
            && o.name === 'stderr'))"""
    )
    assert not bad, bad
    pictures = page.query_selector_all(".jp-OutputArea-output img.loom-picture")
    assert len(pictures) >= 3, "race and out-of-bounds access maps, the grid picture"
    pictures[0].scroll_into_view_if_needed()
    pictures[0].screenshot(path=str(shots / "heatmap-race.png"))
    pictures[1].screenshot(path=str(shots / "heatmap-out-of-bounds.png"))


def live_stepper(page: Any) -> Any:
    """The last live (not frozen) stepper widget."""
    widgets = page.query_selector_all(".loom-stepper-widget")
    live = [w for w in widgets if not w.query_selector(".loom-stepper-frozen")]
    assert live, "a live stepper widget is shown"
    live[-1].scroll_into_view_if_needed()
    return live[-1]


def read_state(widget: Any) -> dict[str, Any]:
    """Status, marked line, values title and rows, grid title of the widget."""
    return widget.evaluate(
        """w => ({
        status: w.querySelector('.loom-stepper-status pre').textContent,
        marked: (w.querySelector('.loom-stepper-code mark.loom-current')
            ?.previousElementSibling?.textContent ?? '').trim(),
        values: w.querySelector('.loom-stepper-values .loom-title').textContent,
        rows: w.querySelectorAll('.loom-stepper-values tr').length,
        grid: w.querySelector('.loom-stepper-grid .loom-title').textContent,
        current: w.querySelector('.loom-stepper-grid td.loom-state-current')?.title ?? null,
    })"""
    )


def click(widget: Any, label: str, expect: str) -> dict[str, Any]:
    widget.query_selector(f"button:text-is('{label}')").click()
    widget.owner_frame().page.wait_for_function(
        "([w, s]) => w.querySelector('.loom-stepper-status pre').textContent.includes(s)",
        arg=[widget, expect],
        timeout=15000,
    )
    return read_state(widget)


def consistent(state: dict[str, Any]) -> None:
    """What the status says is what the listing, grid and values show."""
    import re

    m = re.match(r"step (\d+): workgroup \((\S+)\) of .*, workitem \((\S+)\) \((.+?)\)"
                 r"(?:, next op on line (\d+))?", state["status"])  # fmt: skip
    assert m, state
    _, group, item, status, line = m.groups()
    assert state["marked"] == (line or ""), state
    assert state["values"].startswith(f"values of workitem ({item})"), state
    assert state["grid"].startswith(f"workgroup ({group})"), state
    assert state["current"] and state["current"].endswith(f": {status}"), state


def test_stepper_clicks_give_consistent_states(ran_stepper_notebook, shots) -> None:
    page, _ = ran_stepper_notebook
    w = live_stepper(page)
    s = click(w, "reset", "step 0:")
    consistent(s)
    start = s["rows"]  # the kernel's arguments
    for n in (1, 2, 3):
        s = click(w, "step", f"step {n}:")
        consistent(s)
    assert s["rows"] == start + 3, "three constants ran, three more values"
    s = click(w, "step back", "step 2:")
    consistent(s)
    assert s["rows"] == start + 2
    w.query_selector("input[type='number']").fill("25")
    s = click(w, "run to line", "next op on line 25")
    consistent(s)
    s = click(w, "next workitem", "workitem (1,0,0)")
    consistent(s)
    w.screenshot(path=str(shots / "stepper.png"))
    s = click(w, "run", "done after")
    assert s["grid"].startswith("grid of 1 x 1 x 1 workgroups: every workitem done"), s
    assert s["values"] == "values: none (every workitem has finished)", s
    assert s["marked"] == "", "no line is marked when nothing runs next"


CLIPPED = """w => Array.from(w.querySelectorAll('*')).concat([w]).filter(e => {
    const s = getComputedStyle(e);
    const hides = v => v === 'hidden' || v === 'clip';
    return (hides(s.overflowX) && e.scrollWidth > e.clientWidth + 1)
        || (hides(s.overflowY) && e.scrollHeight > e.clientHeight + 1);
}).map(e => e.className + ': ' + e.scrollWidth + '>' + e.clientWidth)"""


@pytest.mark.parametrize("width", [1000, 1400])
def test_nothing_in_the_stepper_is_clipped(ran_stepper_notebook, shots, width) -> None:
    page, _ = ran_stepper_notebook
    page.set_viewport_size({"width": width, "height": 900})
    page.wait_for_timeout(300)
    w = live_stepper(page)
    assert not w.evaluate(CLIPPED)
    box, area = (
        w.bounding_box(),
        w.evaluate("w => w.closest('.jp-OutputArea-output').getBoundingClientRect().right"),
    )
    assert box["x"] + box["width"] <= area + 1, "the widget fits its output area"
    # the line box shows four digits
    room = w.evaluate(
        """w => { const i = w.querySelector("input[type='number']");
        const c = document.createElement('canvas').getContext('2d');
        c.font = getComputedStyle(i).font;
        return [i.clientWidth, c.measureText('8888').width]; }"""
    )
    assert room[0] >= room[1] + 16, room
    w.screenshot(path=str(shots / f"stepper-{width}px.png"))
