"""Deterministic text and HTML renderings: highlighted listings with diagnostics under lines.

Every function here is pure: the same input gives the same bytes (no ids, no timestamps), so
notebook outputs can be compared by nbval. Saved outputs must read where no stylesheet reaches
them (JupyterLab strips ``<style>`` from untrusted outputs, GitHub strips more), so every element
carries its class *and* the inline style of that class (:data:`STYLES`, all properties that
JupyterLab's sanitizer keeps); the JupyterLab extension styles the same classes from
:func:`stylesheet`, generated from the same table. Content sits in
``<pre>``/``<strong>``/``<mark>`` so it still reads with every style stripped.
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache

from pygments.formatters.html import _get_ttype_class
from pygments.styles import get_style_by_name
from pygments.token import Token, _TokenType

from loom.diagnostic_render import source_line, underline
from loom.diagnostics import Diagnostic, DiagnosticRelatedLocation, SourceRange
from loom.highlight import LoomLexer

CLASS_PREFIX = "lm-"
"""Prefix of the Pygments token classes (``lm-nb`` for op names...)."""
ROOT = "loom-out"
"""Class of the outermost element of every rendering; the stylesheet is scoped to it."""
PYGMENTS_STYLE = "default"

_CODE = (
    "margin:0.2em 0;padding:0.4em 0.6em;line-height:1.35;font-family:monospace;"
    "font-size:0.92em;color:#1f2328;background:#f8f8f8;border-left:3px solid #c9d3e0;"
    # listings scroll sideways rather than wrap (line numbers and carets stay aligned) and
    # never break inside a word, whatever the surrounding page sets
    "white-space:pre;word-break:normal;overflow-wrap:normal;overflow-x:auto;text-align:left"
)
_CELL = "border:1px solid #d0d7de;padding:0.1em 0.45em;font-family:monospace;text-align:right"
STYLES: dict[str, str] = {
    ROOT: "font-size:0.92em;max-width:100%;overflow-x:auto",
    "loom-code": _CODE,
    "loom-ln": "color:#9aa3ad",
    # headlines wrap at spaces within the visible width of the listing
    "loom-diag": (
        "display:inline-block;width:100%;white-space:pre-wrap;word-break:normal;"
        "overflow-wrap:normal;vertical-align:top"
    ),
    "loom-error": "color:#a4161a;background:#fdecec",
    "loom-warning": "color:#8a5300;background:#fff5e0",
    "loom-remark": "color:#24548f;background:#eaf2fd",
    "loom-note": "color:#4a4f55",
    "loom-caret": "color:#a4161a;font-weight:bold",
    "loom-current": "background:#fff0a6;color:inherit",
    "loom-touched": "background:#ffd27f;color:inherit",
    "loom-uninit": "color:#9aa3ad",
    "loom-table": "border-collapse:collapse;margin:0.3em 0",
    "loom-cell": _CELL,
    "loom-state-running": "background:#d8f5d0",
    "loom-state-barrier": "background:#ffe9a8",
    "loom-state-exited": "background:#e3e3e3",
    "loom-state-done": "background:#c9dcf5",
    "loom-state-current": "outline:2px solid #d1495b",
    "loom-title": "font-weight:bold;margin:0.2em 0;white-space:normal;overflow-wrap:normal",
    "loom-picture": "max-width:100%;height:auto",
}
"""Inline style of each output class (also the extension's stylesheet rules)."""
_EXTENSION_ONLY = {
    "loom-ln": "user-select:none",
}
"""Rules the sanitizer would strip from inline styles; only the extension applies them."""


def attrs(*classes: str) -> str:
    """``class="a b" style="..."``: the classes with their inline styles (see :data:`STYLES`)."""
    style = ";".join(STYLES[c] for c in classes if c in STYLES)
    out = f'class="{" ".join(classes)}"'
    return out + (f' style="{style}"' if style else "")


@lru_cache(maxsize=256)
def _token_attrs(ttype: _TokenType) -> str:
    """``class="lm-nb" style="color:#008000"`` for one token type ('' for plain text)."""
    cls = _get_ttype_class(ttype)
    if not cls:
        return ""
    return f'class="{CLASS_PREFIX}{cls}"' + (
        f' style="{_token_style(ttype)}"' if _token_style(ttype) else ""
    )


@lru_cache(maxsize=256)
def _token_style(ttype: _TokenType) -> str:
    spec = get_style_by_name(PYGMENTS_STYLE).style_for_token(ttype)
    parts = []
    if spec["color"]:
        parts.append(f"color:#{spec['color']}")
    if spec["bgcolor"]:
        parts.append(f"background-color:#{spec['bgcolor']}")
    if spec["bold"]:
        parts.append("font-weight:bold")
    if spec["italic"]:
        parts.append("font-style:italic")
    return ";".join(parts)


def stylesheet() -> str:
    """The CSS of every output class and token class, scoped to ``.loom-out`` (extension)."""
    rules = []
    for cls, style in STYLES.items():
        sel = f".{ROOT}" if cls == ROOT else f".{ROOT} .{cls}"
        body = style + (";" + _EXTENSION_ONLY[cls] if cls in _EXTENSION_ONLY else "")
        rules.append(f"{sel} {{ {body}; }}")
    seen: set[str] = set()
    for ttype in sorted(get_style_by_name(PYGMENTS_STYLE).styles, key=str):
        cls, style = _get_ttype_class(ttype), _token_style(ttype)
        if cls and style and cls not in seen:
            seen.add(cls)
            rules.append(f".{ROOT} .{CLASS_PREFIX}{cls} {{ {style}; }}")
    return "\n".join(rules) + "\n"


def esc(text: object) -> str:
    """HTML-escape ``text`` (quotes included)."""
    return html.escape(str(text), quote=True)


@lru_cache(maxsize=64)
def _highlighted(text: str) -> tuple[str, ...]:
    lexer = LoomLexer(stripnl=False, ensurenl=True)
    lines: list[str] = []
    cur: list[str] = []
    for ttype, value in lexer.get_tokens(text):
        a = "" if ttype in Token.Text else _token_attrs(ttype)
        for k, piece in enumerate(value.split("\n")):
            if k:
                lines.append("".join(cur))
                cur = []
            if piece:
                cur.append(f"<span {a}>{esc(piece)}</span>" if a else esc(piece))
    if cur:
        lines.append("".join(cur))
    n = len(text.splitlines())
    return tuple((lines + [""] * n)[:n])


def highlight_lines(text: str) -> list[str]:
    """Highlighted HTML of each line of ``text`` (same count as ``text.splitlines()``)."""
    return list(_highlighted(text)) if text else []


def title_div(title: str) -> str:
    """A bold one-line title."""
    return f"<div {attrs('loom-title')}>{esc(title)}</div>\n"


def table(rows: Iterable[str]) -> str:
    """A bordered table of already rendered ``<tr>`` rows."""
    return f"<table {attrs('loom-table')}>{''.join(rows)}</table>\n"


def cell(text_html: str, *classes: str, tag: str = "td", title: str | None = None) -> str:
    """One table cell (``text_html`` is already escaped)."""
    tip = f' title="{esc(title)}"' if title else ""
    return f"<{tag} {attrs('loom-cell', *classes)}{tip}>{text_html}</{tag}>"


def code_block(inner: str) -> str:
    """A ``<pre>`` listing block around rendered lines."""
    return f"<pre {attrs('loom-code')}>{inner}</pre>\n"


def wrap(body: str, kind: str, title: str | None = None) -> str:
    """Wrap rendered ``body`` in the root element (class ``loom-out loom-KIND``)."""
    head = title_div(title) if title else ""
    return f'<div class="{ROOT} loom-{kind}" style="{STYLES[ROOT]}">\n{head}{body}</div>'


# --------------------------------------------------------------------------- annotated listings


@dataclass
class Annotation:
    """Diagnostics to show under one listing line, with the span to underline."""

    diagnostic: Diagnostic
    column: int = 1
    end_column: int | None = None
    show_range: bool = True
    """Also show the diagnostic's own source range (a frontend location) as a quoted line."""


@dataclass
class Listing:
    """Source text with diagnostics attached to its 1-based lines, plus unplaced ones."""

    text: str
    annotations: dict[int, list[Annotation]] = field(default_factory=dict)
    unplaced: list[Diagnostic] = field(default_factory=list)
    current_line: int | None = None

    def add(self, line: int, annotation: Annotation) -> None:
        """Attach ``annotation`` under ``line``."""
        self.annotations.setdefault(line, []).append(annotation)


def _severity(d: Diagnostic) -> str:
    return d.severity.value


def _headline_parts(d: Diagnostic) -> tuple[str, str]:
    code = f" {d.code}" if d.code else ""
    return f"{_severity(d)}{code}", d.message


def _quoted_range(rng: SourceRange, pad: str) -> list[tuple[str, str]]:
    """(plain, html) rows quoting a range's source line with its underline."""
    line = source_line(rng)
    if line is None:
        return []
    mark = underline(rng, line)
    return [
        (pad + "| " + line, pad + "| " + esc(line)),
        (pad + "| " + mark, pad + f"| <span {attrs('loom-caret')}>" + esc(mark) + "</span>"),
    ]


def _note_rows(note: DiagnosticRelatedLocation, pad: str) -> list[tuple[str, str]]:
    where = f"{note.range}: " if note.range else ""
    rows = [
        (
            f"{pad}{where}note: {note.message}",
            f"{pad}<span {attrs('loom-note')}>{esc(where)}<strong>note</strong>: "
            f"{esc(note.message)}</span>",
        )
    ]
    if note.range is not None:
        rows.extend(_quoted_range(note.range, pad + "  "))
    return rows


def diagnostic_rows(d: Diagnostic, pad: str = "", show_range: bool = True) -> list[tuple[str, str]]:
    """(plain, html) rows of one diagnostic: headline, frontend location, op path, notes."""
    sev = _severity(d)
    label, message = _headline_parts(d)
    where = f"{d.range}: " if (d.range and show_range) else ""
    rows = [
        (
            f"{pad}{where}{label}: {message}",
            f"{pad}<span {attrs('loom-diag', f'loom-{sev}')}>{esc(where)}"
            f"<strong>{esc(label)}</strong>: "
            f"{esc(message)}</span>",
        )
    ]
    if d.range is not None and show_range:
        rows.extend(_quoted_range(d.range, pad + "  "))
    if d.op_path:
        rows.append(
            (
                f"{pad}  source: {d.op_path}",
                f"{pad}  <span {attrs('loom-note')}>source: {esc(d.op_path)}</span>",
            )
        )
    for note in d.notes:
        rows.extend(_note_rows(note, pad + "  "))
    return rows


def listing_rows(listing: Listing) -> list[tuple[str, str]]:
    """(plain, html) rows of a listing: numbered lines, each followed by its diagnostics."""
    lines = listing.text.splitlines()
    coded = highlight_lines(listing.text)
    width = max(3, len(str(len(lines))))
    gutter = " " * (width + 1)
    rows: list[tuple[str, str]] = []
    for no, (line, code) in enumerate(zip(lines, coded), start=1):
        num = f"{no:>{width}} "
        if no == listing.current_line:
            code = f"<mark {attrs('loom-current')}>{code or ' '}</mark>"
            plain = f"{num}{line}  <-- current"
        else:
            plain = num + line
        rows.append((plain, f"<span {attrs('loom-ln')}>{num}</span>{code}"))
        for ann in listing.annotations.get(no, ()):
            rng = SourceRange("", no, ann.column, no, ann.end_column)
            mark = underline(rng, line)
            rows.append((gutter + mark, gutter + f"<span {attrs('loom-caret')}>{esc(mark)}</span>"))
            rows.extend(diagnostic_rows(ann.diagnostic, gutter, ann.show_range))
    for d in listing.unplaced:
        rows.extend(diagnostic_rows(d))
    return rows


def pre(rows: Sequence[tuple[str, str]]) -> tuple[str, str]:
    """Join rows into (plain text, ``<pre>`` HTML)."""
    plain = "\n".join(r[0] for r in rows)
    body = code_block("\n".join(r[1] for r in rows))
    return plain, body


def summary(diagnostics: Iterable[Diagnostic]) -> str:
    """``2 errors, 1 warning`` (or ``no diagnostics``)."""
    counts: dict[str, int] = {}
    for d in diagnostics:
        counts[_severity(d)] = counts.get(_severity(d), 0) + 1
    if not counts:
        return "no diagnostics"
    return ", ".join(f"{n} {sev}{'' if n == 1 else 's'}" for sev, n in counts.items())
