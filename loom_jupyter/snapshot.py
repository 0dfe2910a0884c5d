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
from loom_jupyter.render import Listing, diagnostic_rows, esc, listing_rows, pre, summary, wrap

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


def status_parts(snap: Snapshot) -> tuple[str, str]:
    """The one-line status."""
    return snap.status, f'<pre class="loom-code"><strong>{esc(snap.status)}</strong></pre>\n'


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


def grid_parts(snap: Snapshot, wrap_at: int = 16) -> tuple[str, str]:
    """Workitem states of the shown workgroup: a letter per workitem, a coloured table."""
    legend = "R running, B at barrier, X exited, D done; * current"
    plain_rows, html_rows = [], []
    for row in _grid_rows(snap.workgroup_shape):
        for start in range(0, len(row), wrap_at):
            chunk = row[start : start + wrap_at]
            letters, cells = [], []
            for lid in chunk:
                state = snap.states.get(lid, "done")
                cur = lid == snap.current
                letters.append(STATE_LETTERS.get(state, "?") + ("*" if cur else " "))
                cls = f"loom-state-{STATE_CLASSES.get(state, 'done')}"
                if cur:
                    cls += " loom-state-current"
                label = ",".join(str(c) for c in lid[: len(snap.workgroup_shape)] or lid[:1])
                text = STATE_LETTERS.get(state, "?") + ("*" if cur else "")
                cells.append(
                    f'<td class="{cls}" title="{esc(label)}: {esc(state)}">{esc(text)}</td>'
                )
            x0, y, z = chunk[0]
            head = (
                f"x {x0}-{chunk[-1][0]}"
                + (f" y {y}" if snap.workgroup_shape[1:2] > (1,) else "")
                + (f" z {z}" if snap.workgroup_shape[2:3] > (1,) else "")
                + ": "
            )
            plain_rows.append(head + "".join(letters).rstrip())
            html_rows.append(f"<tr><th>{esc(head.strip())}</th>{''.join(cells)}</tr>")
    wg = ",".join(str(c) for c in snap.workgroup)
    title = f"workgroup ({wg}): {legend}"
    plain = title + "\n" + "\n".join(plain_rows)
    html = (
        f'<div class="loom-title">{esc(title)}</div>\n'
        f'<table class="loom-table">{"".join(html_rows)}</table>\n'
    )
    return plain, html


def values_parts(snap: Snapshot) -> tuple[str, str]:
    """The current workitem's SSA values."""
    if not snap.values:
        return "values: none yet", '<div class="loom-title">values: none yet</div>\n'
    width = max(len(n) for n, _ in snap.values)
    plain = "values:\n" + "\n".join(f"  {n:<{width}} = {v}" for n, v in snap.values)
    rows = "".join(f"<tr><th>{esc(n)}</th><td>{esc(v)}</td></tr>" for n, v in snap.values)
    html = f'<div class="loom-title">values</div>\n<table class="loom-table">{rows}</table>\n'
    return plain, html


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
            text, html_text = "?", '<span class="loom-uninit">?</span>'
        else:
            text = _element_text(buf.values[i])
            html_text = esc(text)
        if buf.touched[i]:
            plain_cells.append(f"[{i}]*{text}")
            html_text = f'<mark class="loom-touched">{html_text}</mark>'
        else:
            plain_cells.append(f"[{i}] {text}")
        cells.append(f"<td>{html_text}</td>")
        if len(cells) == per_row or i == shown - 1:
            first = i - len(cells) + 1
            html_rows.append(f"<tr><th>{first}</th>{''.join(cells)}</tr>")
            cells = []
    more = f" (first {shown} of {n})" if shown < n else ""
    title = f"{buf.name}: {n} x {buf.values.dtype}{more}; * touched by the last step, ? unwritten"
    lines = [" ".join(plain_cells[k : k + per_row]) for k in range(0, shown, per_row)]
    plain = title + ("\n  " + "\n  ".join(lines) if lines else "")
    html = (
        f'<div class="loom-title">{esc(title)}</div>\n'
        f'<table class="loom-table">{"".join(html_rows)}</table>\n'
    )
    return plain, html


def buffers_parts(snap: Snapshot) -> tuple[str, str]:
    """Every buffer picture."""
    parts = [buffer_parts(b) for b in snap.buffers]
    return "\n".join(p for p, _ in parts), "".join(h for _, h in parts)


def findings_parts(snap: Snapshot) -> tuple[str, str]:
    """The sanitizer findings so far (they also appear under their lines in the code)."""
    title = f"findings: {summary(snap.findings)}" if snap.findings else "findings: none"
    head_html = f'<div class="loom-title">{esc(title)}</div>\n'
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
    body = "".join(f'<div class="loom-{s}">\n{h}</div>\n' for s, (_, h) in zip(sections, parts))
    return {"text/plain": plain, "text/html": wrap(body, "stepper")}
