"""Deterministic text and HTML renderings: highlighted listings with diagnostics under lines.

Every function here is pure: the same input gives the same bytes (no ids, no timestamps), so
notebook outputs can be compared by nbval. HTML uses classes and one ``<style>`` block, and its
content sits in ``<pre>``/``<strong>``/``<mark>`` so it still reads with styles stripped.
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache

from pygments import highlight
from pygments.formatters import HtmlFormatter

from loom.diagnostic_render import source_line, underline
from loom.diagnostics import Diagnostic, DiagnosticRelatedLocation, SourceRange
from loom.highlight import LoomLexer

CLASS_PREFIX = "lm-"
"""Prefix of the Pygments token classes (``lm-nb`` for op names...)."""
ROOT = "loom-out"
"""Class of the outermost element of every rendering; the stylesheet is scoped to it."""

_EXTRA_CSS = f"""\
.{ROOT} {{ font-size: 0.92em; }}
.{ROOT} pre.loom-code {{ margin: 0.2em 0; padding: 0.4em 0.6em; line-height: 1.35;
  font-family: var(--jp-code-font-family, monospace); white-space: pre;
  background: #f8f8f8; border-left: 3px solid #c9d3e0; overflow-x: auto; }}
.{ROOT} .loom-ln {{ color: #9aa3ad; user-select: none; }}
.{ROOT} .loom-diag {{ display: inline-block; width: 100%; }}
.{ROOT} .loom-error {{ color: #a4161a; background: #fdecec; }}
.{ROOT} .loom-warning {{ color: #8a5300; background: #fff5e0; }}
.{ROOT} .loom-remark {{ color: #24548f; background: #eaf2fd; }}
.{ROOT} .loom-note {{ color: #4a4f55; }}
.{ROOT} .loom-caret {{ color: #a4161a; font-weight: bold; }}
.{ROOT} mark.loom-current {{ background: #fff0a6; }}
.{ROOT} mark.loom-touched {{ background: #ffd27f; }}
.{ROOT} .loom-uninit {{ color: #9aa3ad; }}
.{ROOT} table.loom-table {{ border-collapse: collapse; margin: 0.3em 0; }}
.{ROOT} table.loom-table td, .{ROOT} table.loom-table th {{ border: 1px solid #d0d7de;
  padding: 0.1em 0.45em; font-family: monospace; text-align: right; }}
.{ROOT} .loom-state-running {{ background: #d8f5d0; }}
.{ROOT} .loom-state-barrier {{ background: #ffe9a8; }}
.{ROOT} .loom-state-exited {{ background: #e3e3e3; }}
.{ROOT} .loom-state-done {{ background: #c9dcf5; }}
.{ROOT} .loom-state-current {{ outline: 2px solid #d1495b; }}
.{ROOT} .loom-title {{ font-weight: bold; margin: 0.2em 0; }}
"""


@lru_cache(maxsize=1)
def style_block() -> str:
    """The one ``<style>`` element shared by every rendering (token colours + layout)."""
    formatter = HtmlFormatter(style="default", classprefix=CLASS_PREFIX)
    scope = f".{ROOT} pre.loom-code"
    # Token rules only: get_style_defs() would add unscoped ``pre``/line-number rules.
    rules = "\n".join(formatter.get_token_style_defs(scope))
    return "<style>\n" + rules + "\n" + _EXTRA_CSS + "</style>"


def esc(text: object) -> str:
    """HTML-escape ``text`` (quotes included)."""
    return html.escape(str(text), quote=True)


@lru_cache(maxsize=64)
def _highlighted(text: str) -> tuple[str, ...]:
    lexer = LoomLexer(stripnl=False, ensurenl=True)
    formatter = HtmlFormatter(nowrap=True, classprefix=CLASS_PREFIX)
    out = highlight(text, lexer, formatter).split("\n")
    n = len(text.splitlines())
    return tuple((out + [""] * n)[:n])


def highlight_lines(text: str) -> list[str]:
    """Highlighted HTML of each line of ``text`` (same count as ``text.splitlines()``)."""
    return list(_highlighted(text)) if text else []


def wrap(body: str, kind: str, title: str | None = None) -> str:
    """Wrap rendered ``body`` in the scoped root element with the stylesheet."""
    head = f'<div class="loom-title">{esc(title)}</div>\n' if title else ""
    return f'<div class="{ROOT} loom-{kind}">\n{style_block()}\n{head}{body}</div>'


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
        (pad + "| " + mark, pad + '| <span class="loom-caret">' + esc(mark) + "</span>"),
    ]


def _note_rows(note: DiagnosticRelatedLocation, pad: str) -> list[tuple[str, str]]:
    where = f"{note.range}: " if note.range else ""
    rows = [
        (
            f"{pad}{where}note: {note.message}",
            f'{pad}<span class="loom-note">{esc(where)}<strong>note</strong>: '
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
            f'{pad}<span class="loom-diag loom-{sev}">{esc(where)}<strong>{esc(label)}</strong>: '
            f"{esc(message)}</span>",
        )
    ]
    if d.range is not None and show_range:
        rows.extend(_quoted_range(d.range, pad + "  "))
    if d.op_path:
        rows.append(
            (
                f"{pad}  source: {d.op_path}",
                f'{pad}  <span class="loom-note">source: {esc(d.op_path)}</span>',
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
            code = f'<mark class="loom-current">{code or " "}</mark>'
            plain = f"{num}{line}  <-- current"
        else:
            plain = num + line
        rows.append((plain, f'<span class="loom-ln">{num}</span>{code}'))
        for ann in listing.annotations.get(no, ()):
            rng = SourceRange("", no, ann.column, no, ann.end_column)
            mark = underline(rng, line)
            rows.append((gutter + mark, gutter + f'<span class="loom-caret">{esc(mark)}</span>'))
            rows.extend(diagnostic_rows(ann.diagnostic, gutter, ann.show_range))
    for d in listing.unplaced:
        rows.extend(diagnostic_rows(d))
    return rows


def pre(rows: Sequence[tuple[str, str]]) -> tuple[str, str]:
    """Join rows into (plain text, ``<pre>`` HTML)."""
    plain = "\n".join(r[0] for r in rows)
    body = '<pre class="loom-code">' + "\n".join(r[1] for r in rows) + "</pre>\n"
    return plain, body


def summary(diagnostics: Iterable[Diagnostic]) -> str:
    """``2 errors, 1 warning`` (or ``no diagnostics``)."""
    counts: dict[str, int] = {}
    for d in diagnostics:
        counts[_severity(d)] = counts.get(_severity(d), 0) + 1
    if not counts:
        return "no diagnostics"
    return ", ".join(f"{n} {sev}{'' if n == 1 else 's'}" for sev, n in counts.items())
