"""Static pictures of a stepper state: the code with the current op, the workitem grid, the
current workitem's values, typed buffer views and the findings, as plain text and HTML.

A :class:`Snapshot` is plain data, so the same rendering serves the live widget (one HTML
widget per section) and the static MIME bundle stored in notebooks.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from loom.diagnostics import Diagnostic
from loom_jupyter.render import (
    Listing,
    attrs,
    cell,
    code_block,
    diagnostic_rows,
    esc,
    listing_rows,
    pre,
    summary,
    table,
    title_div,
    wrap,
)

STATE_CLASSES = {"running": "running", "at barrier": "barrier", "exited": "exited", "done": "done"}
"""Workitem state -> CSS class suffix (``loom-state-...``)."""
STATE_LETTERS = {"running": "R", "at barrier": "B", "exited": "X", "done": "D"}


@dataclass
class BufferPicture:
    """One buffer argument seen through a dtype: elements, touched and uninitialised flags."""

    name: str
    values: np.ndarray
    touched: np.ndarray
    """Per element: some byte was read or written by the last step."""
    uninit: np.ndarray
    """Per element: some byte was never written."""


@dataclass
class Snapshot:
    """Everything the stepper picture shows, as data."""

    listing: Listing
    status: str
    workgroup: tuple[int, ...]
    workgroup_shape: tuple[int, ...]
    states: dict[tuple[int, ...], str]
    current: tuple[int, ...] | None
    values: list[tuple[str, str]]
    """(SSA name, value text) of the current workitem."""
    buffers: list[BufferPicture] = field(default_factory=list)
    findings: list[Diagnostic] = field(default_factory=list)
    grid: tuple[int, ...] = (1, 1, 1)
    """Workgroups of the launch."""
    done: bool = False
    """Every workitem of every workgroup has finished."""
    lines: dict[tuple[int, ...], int] = field(default_factory=dict)
    """Listing line of each workitem's next op (shown workgroup)."""


def status_parts(snap: Snapshot) -> tuple[str, str]:
    """The one-line status."""
    return snap.status, code_block(f"<strong>{esc(snap.status)}</strong>")


def code_parts(snap: Snapshot) -> tuple[str, str]:
    """The module listing with the current op's line marked."""
    return pre(listing_rows(snap.listing))


def _grid_rows(shape: tuple[int, ...]) -> list[list[tuple[int, ...]]]:
    sx, sy, sz = (*shape, 1, 1, 1)[:3]
    rows = []
    for z in range(sz):
        for y in range(sy):
            rows.append([(x, y, z) for x in range(sx)])
    return rows


def _shape_text(shape: Sequence[int]) -> str:
    return " x ".join(str(c) for c in shape)


def grid_title(snap: Snapshot) -> str:
    """What the grid picture shows: the running workgroup, or the finished grid."""
    if snap.done:
        return f"grid of {_shape_text(snap.grid)} workgroups: every workitem done"
    wg = ",".join(str(c) for c in snap.workgroup)
    return f"workgroup ({wg}) of {_shape_text(snap.grid)}"


GRID_LEGEND = "R running, B at barrier, X exited, D done; * current"


def grid_parts(snap: Snapshot, wrap_at: int = 16) -> tuple[str, str]:
    """Workitem states of the shown workgroup: a letter per workitem, a coloured table."""
    plain_rows, html_rows = [], []
    for row in _grid_rows(snap.workgroup_shape):
        for start in range(0, len(row), wrap_at):
            chunk = row[start : start + wrap_at]
            letters, cells = [], []
            for lid in chunk:
                state = "done" if snap.done else snap.states.get(lid, "done")
                cur = lid == snap.current
                letters.append(STATE_LETTERS.get(state, "?") + ("*" if cur else " "))
                classes = [f"loom-state-{STATE_CLASSES.get(state, 'done')}"]
                if cur:
                    classes.append("loom-state-current")
                label = ",".join(str(c) for c in lid[: len(snap.workgroup_shape)] or lid[:1])
                text = STATE_LETTERS.get(state, "?") + ("*" if cur else "")
                cells.append(cell(esc(text), *classes, title=f"{label}: {state}"))
            x0, y, z = chunk[0]
            head = (
                f"x {x0}-{chunk[-1][0]}"
                + (f" y {y}" if snap.workgroup_shape[1:2] > (1,) else "")
                + (f" z {z}" if snap.workgroup_shape[2:3] > (1,) else "")
                + ": "
            )
            plain_rows.append(head + "".join(letters).rstrip())
            html_rows.append(f"<tr>{cell(esc(head.strip()), tag='th')}{''.join(cells)}</tr>")
    title = grid_title(snap)
    plain = f"{title}: {GRID_LEGEND}\n" + "\n".join(plain_rows)
    html = (
        title_div(title)
        + f"<div {attrs('loom-note')}>{esc(GRID_LEGEND)}</div>\n"
        + f'<div style="overflow-x:auto;max-width:100%">{table(html_rows)}</div>\n'
    )
    return plain, html


def values_title(snap: Snapshot) -> str:
    """Whose values are shown, or why there are none."""
    if snap.done or snap.current is None:
        return "values: none (every workitem has finished)"
    who = "workitem (" + ",".join(str(c) for c in snap.current) + ")"
    if not snap.values:
        return f"values of {who}: none defined yet"
    return f"values of {who}"


def values_parts(snap: Snapshot) -> tuple[str, str]:
    """The current workitem's SSA values."""
    title = values_title(snap)
    if not snap.values:
        return title, title_div(title)
    width = max(len(n) for n, _ in snap.values)
    plain = title + ":\n" + "\n".join(f"  {n:<{width}} = {v}" for n, v in snap.values)
    rows = (f"<tr>{cell(esc(n), tag='th')}{cell(esc(v))}</tr>" for n, v in snap.values)
    return plain, title_div(title) + table(rows)


def _element_text(value: Any) -> str:
    if isinstance(value, (float, np.floating)):
        return repr(float(value))
    return str(value.item() if hasattr(value, "item") else value)


def buffer_parts(buf: BufferPicture, per_row: int = 8, limit: int = 256) -> tuple[str, str]:
    """A typed buffer: ``[i] value``, touched elements marked ``*``/``<mark>``, unwritten ``?``."""
    n = len(buf.values)
    shown = min(n, limit)
    plain_cells, html_rows, cells = [], [], []
    for i in range(shown):
        if buf.uninit[i]:
            text, html_text = "?", f"<span {attrs('loom-uninit')}>?</span>"
        else:
            text = _element_text(buf.values[i])
            html_text = esc(text)
        if buf.touched[i]:
            plain_cells.append(f"[{i}]*{text}")
            html_text = f"<mark {attrs('loom-touched')}>{html_text}</mark>"
        else:
            plain_cells.append(f"[{i}] {text}")
        cells.append(cell(html_text))
        if len(cells) == per_row or i == shown - 1:
            first = i - len(cells) + 1
            html_rows.append(f"<tr>{cell(str(first), tag='th')}{''.join(cells)}</tr>")
            cells = []
    more = f" (first {shown} of {n})" if shown < n else ""
    title = f"{buf.name}: {n} x {buf.values.dtype}{more}; * touched by the last step, ? unwritten"
    lines = [" ".join(plain_cells[k : k + per_row]) for k in range(0, shown, per_row)]
    plain = title + ("\n  " + "\n  ".join(lines) if lines else "")
    return plain, title_div(title) + table(html_rows)


def buffers_parts(snap: Snapshot) -> tuple[str, str]:
    """Every buffer picture."""
    parts = [buffer_parts(b) for b in snap.buffers]
    return "\n".join(p for p, _ in parts), "".join(h for _, h in parts)


def findings_parts(snap: Snapshot) -> tuple[str, str]:
    """The sanitizer findings so far (they also appear under their lines in the code)."""
    title = f"findings: {summary(snap.findings)}" if snap.findings else "findings: none"
    head_html = title_div(title)
    if not snap.findings:
        return title, head_html
    plain, html = pre([row for d in snap.findings for row in diagnostic_rows(d)])
    return title + "\n" + plain, head_html + html


SECTIONS = ("status", "code", "grid", "values", "buffers", "findings")
_RENDER = {
    "status": status_parts,
    "code": code_parts,
    "grid": grid_parts,
    "values": values_parts,
    "buffers": buffers_parts,
    "findings": findings_parts,
}


def section_parts(snap: Snapshot, section: str) -> tuple[str, str]:
    """(plain, html) of one named section."""
    return _RENDER[section](snap)


def snapshot_bundle(snap: Snapshot, sections: Sequence[str] = SECTIONS) -> dict[str, str]:
    """The whole picture as a static MIME bundle (what a notebook shows without a kernel)."""
    parts = [section_parts(snap, s) for s in sections]
    plain = "\n\n".join(p for p, _ in parts)
    body = "".join(
        f'<div class="loom-section loom-section-{s}">\n{h}</div>\n'
        for s, (_, h) in zip(sections, parts)
    )
    return {"text/plain": plain, "text/html": wrap(body, "stepper")}
