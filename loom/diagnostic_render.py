"""Text rendering of diagnostics: headline, source line, ``^~~~`` underline, notes."""

from __future__ import annotations

import linecache

from loom.diagnostics import Diagnostic, SourceRange


def source_line(rng: SourceRange) -> str | None:
    """The text of the range's first line, from the attached text or a readable file."""
    if rng.text is not None:
        lines = rng.text.splitlines()
        return lines[rng.line - 1] if 0 < rng.line <= len(lines) else None
    line = linecache.getline(rng.filename, rng.line)
    return line.rstrip("\n") if line else None


def underline(rng: SourceRange, line: str) -> str:
    """``^~~~`` under the span (to the end of the line when the span continues)."""
    start = max(rng.column - 1, 0)
    if rng.end_line is not None and rng.end_line == rng.line and rng.end_column:
        end = max(rng.end_column - 1, start + 1)
    elif rng.end_line is not None and rng.end_line > rng.line:
        end = max(len(line), start + 1)
    else:
        end = start + 1
    prefix = "".join(c if c == "\t" else " " for c in line[:start])
    return prefix + "^" + "~" * (end - start - 1)


def render_range(rng: SourceRange) -> list[str]:
    """The source line and underline for a range (empty when the text is unavailable)."""
    line = source_line(rng)
    if line is None:
        return []
    return [line, underline(rng, line)]


def render_diagnostic(d: Diagnostic) -> str:
    """Compiler-style multi-line rendering."""
    out = [d.headline()]
    if d.range is not None:
        out.extend(render_range(d.range))
    if d.op_path:
        out.append(f"  source: {d.op_path}")
    for note in d.notes:
        where = f"{note.range}: " if note.range else ""
        out.append(f"{where}note: {note.message}")
        if note.range is not None:
            out.extend(render_range(note.range))
    return "\n".join(out)
