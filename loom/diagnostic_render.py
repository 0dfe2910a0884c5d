"""Text rendering of diagnostics: headline, source line, ``^~~~`` underline, notes.

Locations resolve in three ways: a file location whose source text the module keeps
(``module.source_texts``, filled by the parser), a file location of a readable file (a
frontend's own source, read through :mod:`linecache`), or, for an op without any location,
its line in the module's canonical printed text.
"""

from __future__ import annotations

import linecache
from typing import TYPE_CHECKING

from loom.diagnostics import Diagnostic, SourceProvenance, SourceRange

if TYPE_CHECKING:
    from loom.ir import Module, Operation


def location_range(module: Module | None, location_id: int) -> SourceRange | None:
    """The file range of a location id (fused/tagged locations use their first file part)."""
    from loom.ir import FileLocation, FusedLocation, TaggedLocation

    if module is None or not location_id:
        return None
    seen: set[int] = set()
    todo = [location_id]
    while todo:
        lid = todo.pop(0)
        if lid in seen:
            continue
        seen.add(lid)
        loc = module.location(lid)
        if isinstance(loc, FileLocation):
            sources = module.sources
            name = sources[loc.source_id] if 0 <= loc.source_id < len(sources) else "<unknown>"
            texts = getattr(module, "source_texts", None) or {}
            return SourceRange(
                name, loc.start_line, loc.start_col, loc.end_line, loc.end_col, texts.get(name)
            )
        if isinstance(loc, FusedLocation):
            todo.extend(loc.children)
        elif isinstance(loc, TaggedLocation) and loc.child:
            todo.append(loc.child)
    return None


def printed_name(module: Module) -> str:
    """The pseudo file name of a module's printed text."""
    return f"<{module.name}>" if module.name else "<module>"


def _printed(module: Module) -> tuple[str, dict[int, int]] | None:
    """The module's canonical text and op lines, cached on it until it is edited."""
    return module.derived("loom.diagnostics.printed", _print)


def _print(module: Module) -> tuple[str, dict[int, int]] | None:
    from loom.format.text.printer import Printer

    try:
        printer = Printer(None)
        text = printer.print_module(module)
        result: tuple[str, dict[int, int]] | None = (text, dict(printer.op_lines))
    except Exception:  # the module may be too broken to print; then there is no fallback
        result = None
    return result


def fallback_range(module: Module | None, op: Operation | None) -> SourceRange | None:
    """The op's line in the canonical text of ``module`` (None when it cannot be printed)."""
    if module is None or op is None:
        return None
    printed = _printed(module)
    if printed is None:
        return None
    text, op_lines = printed
    line_no = op_lines.get(id(op))
    if line_no is None:
        return None
    lines = text.splitlines()
    line = lines[line_no - 1] if line_no <= len(lines) else ""
    col = len(line) - len(line.lstrip(" ")) + 1
    return SourceRange(
        printed_name(module),
        line_no,
        col,
        line_no,
        max(len(line) + 1, col + 1),
        text,
        SourceProvenance.PRINTED_FALLBACK,
    )


def source_line(rng: SourceRange) -> str | None:
    """The text of the range's first line, from the attached text or a readable file."""
    if rng.text is not None:
        lines = rng.text.splitlines()
        return lines[rng.line - 1] if 0 < rng.line <= len(lines) else None
    line = linecache.getline(rng.filename, rng.line)
    return line.rstrip("\r\n") if line else None


def underline(rng: SourceRange, line: str) -> str:
    """``^~~~`` under the span (to the end of the line when the span continues)."""
    start = min(max(rng.column - 1, 0), len(line))
    if rng.end_line is not None and rng.end_line == rng.line and rng.end_column:
        end = max(min(rng.end_column - 1, len(line)), start + 1)
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
    rng = d.resolved_range()
    out = [d.headline()]
    if rng is not None:
        out.extend(render_range(rng))
        if rng.provenance is SourceProvenance.PRINTED_FALLBACK:
            out.append("note: the op has no source location; the line is from the printed module")
    if d.op_path:
        out.append(f"  source: {d.op_path}")
    for note in d.notes:
        nrng = note.range
        if nrng is None and note.op is not None:
            nrng = location_range(d.module, note.op.location_id) or fallback_range(
                d.module, note.op
            )
        where = f"{nrng}: " if nrng else ""
        out.append(f"{where}note: {note.message}")
        if nrng is not None:
            out.extend(render_range(nrng))
    return "\n".join(out)
