"""Diagnostics as data: severity, code, message, location, notes; rendered late.

A :class:`Diagnostic` points at a source range: a parsed ``.loom`` file, a frontend location
recorded with ``location_id=``, or (for ops built without a location, when the caller hands in
a :data:`PrintedText` provider) the op's line in the module's printed text. Rendering
(:mod:`loom.diagnostic_render`) turns it into ``file:line:col: error CODE: message``, the source
line and a ``^~~~`` underline, then the structured parameters and the notes.

This module is data only: it imports neither the printer nor the renderer's helpers at import
time, so every layer (format, verify, interp) can make diagnostics without depending on another.
"""

from __future__ import annotations

import enum
import linecache
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from loom.errors import LoomError
from loom.ir.locations import FileLocation, FusedLocation, TaggedLocation

if TYPE_CHECKING:
    from loom.ir import Module, Operation

PrintedText = Callable[["Module"], "tuple[str, Mapping[int, int]] | None"]
"""A provider of a module's printed text and the line of each op (keyed by ``id(op)``).

Rendering is handed one (``render(printed=...)``) to show ops that have no source location;
:class:`loom.diagnostic_sources.PrintedModules` is the text printer's. Rendering never imports
the printer itself."""


class DiagnosticSeverity(enum.Enum):
    """How serious a diagnostic is."""

    ERROR = "error"
    WARNING = "warning"
    REMARK = "remark"


class SourceProvenance(enum.Enum):
    """Where a range comes from: the author's source, the printed module, or nowhere."""

    EXACT = "exact"
    PRINTED_FALLBACK = "printed-fallback"
    UNAVAILABLE = "unavailable"


@dataclass(frozen=True)
class SourceRange:
    """A 1-based line/column span in a named source; ``text`` is the source's text when known."""

    filename: str
    line: int
    column: int
    end_line: int | None = None
    end_column: int | None = None
    text: str | None = field(default=None, repr=False, compare=False)
    provenance: SourceProvenance = field(default=SourceProvenance.EXACT, compare=False)

    def __str__(self) -> str:
        return f"{self.filename}:{self.line}:{self.column}"


@dataclass(frozen=True)
class DiagnosticRelatedLocation:
    """A note attached to a diagnostic, optionally with its own location."""

    message: str
    range: SourceRange | None = None
    op: Operation | None = field(default=None, repr=False, compare=False)
    """The op the note is about (its location is resolved at render time when ``range`` is
    None)."""


def location_range(module: Module | None, location_id: int) -> SourceRange | None:
    """The file range of a location id (fused/tagged locations use their first file part)."""
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


def op_source_range(module: Module, op: Operation) -> SourceRange | None:
    """The op's recorded source location as a range, if it has a file location."""
    return location_range(module, op.location_id)


DiagnosticParam = tuple[str, Any]
"""A named parameter of a diagnostic (``("attribute", "scope")``)."""


@dataclass
class Diagnostic:
    """One finding: severity, ``DOMAIN/NNN`` code, message, where, notes and the op path.

    ``range`` is the primary location. When it is None but ``op`` and ``module`` are known,
    rendering falls back to the op's line in the module's printed text, given a
    :data:`PrintedText` provider (``printed``, or one passed to :meth:`render`). ``params``
    holds structured values (op_name, field names...); the message never spells them, the
    rendering lists them on a line of their own.
    """

    severity: DiagnosticSeverity
    code: str
    message: str
    range: SourceRange | None = None
    notes: list[DiagnosticRelatedLocation] = field(default_factory=list)
    op_path: str | None = None
    op: Operation | None = field(default=None, repr=False, compare=False)
    module: Module | None = field(default=None, repr=False, compare=False)
    location_id: int = 0
    params: dict[str, Any] = field(default_factory=dict)
    printed: PrintedText | None = field(default=None, repr=False, compare=False)
    """How to print ``module`` for the fallback line (handed in by whoever made this)."""

    @property
    def is_error(self) -> bool:
        """True for error severity."""
        return self.severity is DiagnosticSeverity.ERROR

    @property
    def domain(self) -> str:
        """The part of the code before ``/`` (``TYPE`` for ``TYPE/003``)."""
        return self.code.split("/", 1)[0]

    def resolved_range(self, printed: PrintedText | None = None) -> SourceRange | None:
        """The primary range, or the printed-module fallback for an op without location."""
        if self.range is not None:
            return self.range
        return fallback_range(self.module, self.op, printed or self.printed)

    def headline(self, printed: PrintedText | None = None) -> str:
        """``file:line:col: error CODE: message`` (location omitted when unknown)."""
        return headline(self, self.resolved_range(printed))

    def render(self, printed: PrintedText | None = None) -> str:
        """Multi-line text: headline, source line with underline, op path, parameters, notes."""
        return render_diagnostic(self, printed)

    def __str__(self) -> str:
        return self.render()


class DiagnosticEngine:
    """An ordered collection of diagnostics (the result of verification)."""

    def __init__(self, diagnostics: Iterable[Diagnostic] = ()) -> None:
        self.diagnostics: list[Diagnostic] = list(diagnostics)

    def add(self, diagnostic: Diagnostic) -> None:
        """Append a diagnostic."""
        self.diagnostics.append(diagnostic)

    def extend(self, diagnostics: Iterable[Diagnostic]) -> None:
        """Append several diagnostics."""
        self.diagnostics.extend(diagnostics)

    @property
    def errors(self) -> list[Diagnostic]:
        """Only the errors."""
        return [d for d in self.diagnostics if d.is_error]

    @property
    def has_errors(self) -> bool:
        """True if any diagnostic is an error."""
        return any(d.is_error for d in self.diagnostics)

    @property
    def codes(self) -> list[str]:
        """The codes of every diagnostic, in order."""
        return [d.code for d in self.diagnostics]

    def raise_if_errors(self) -> None:
        """Raise :class:`LoomDiagnosticError` carrying every diagnostic if any is an error."""
        if self.has_errors:
            raise LoomDiagnosticError(self.diagnostics)

    def in_source_order(self) -> list[Diagnostic]:
        """The diagnostics sorted by file, line and column (see :func:`source_order`)."""
        return source_order(self.diagnostics)

    def render(self, printed: PrintedText | None = None) -> str:
        """All diagnostics as text, in source order."""
        return "\n".join(d.render(printed) for d in self.in_source_order())

    def __iter__(self) -> Iterator[Diagnostic]:
        return iter(self.diagnostics)

    def __len__(self) -> int:
        return len(self.diagnostics)

    def __getitem__(self, index: int) -> Diagnostic:
        return self.diagnostics[index]

    def __bool__(self) -> bool:
        return bool(self.diagnostics)

    def __repr__(self) -> str:
        return (
            f"<DiagnosticEngine {len(self.errors)} errors, "
            f"{len(self.diagnostics) - len(self.errors)} other>"
        )


def source_order(diagnostics: Iterable[Diagnostic]) -> list[Diagnostic]:
    """Sorted by file (in order of first appearance), line and column; diagnostics without a
    source location come last. The sort is stable: equal positions keep their order."""
    diags = list(diagnostics)
    files: dict[str, int] = {}
    for d in diags:
        if d.range is not None:
            files.setdefault(d.range.filename, len(files))

    def key(d: Diagnostic) -> tuple[int, int, int, int]:
        r = d.range
        if r is None:
            return (1, 0, 0, 0)
        return (0, files[r.filename], r.line, r.column)

    return sorted(diags, key=key)


class LoomDiagnosticError(LoomError):
    """Raised with diagnostics; its message joins their renderings (in source order)."""

    def __init__(
        self, diagnostics: Iterable[Diagnostic], printed: PrintedText | None = None
    ) -> None:
        diags = list(diagnostics)
        text = "\n".join(d.render(printed) for d in source_order(diags))
        super().__init__(text or "error", diags)


# --------------------------------------------------------------------------- wording

_VOWEL_SOUND_EXCEPTIONS = ("one", "uni", "use", "usu", "eu")
"""Words spelled with a vowel that start with a consonant sound (``a unit``, ``a use``)."""
_LETTER_NAMES_WITH_VOWEL_SOUND = frozenset("aefhilmnorsx")
"""Letters read as a name with a vowel sound (``an i32``, ``an f16``, ``an SSA name``)."""


def a_or_an(phrase: str) -> str:
    """``phrase`` with its indefinite article: ``an index value``, ``a buffer``, ``an i32``."""
    word = phrase.lstrip("'\"`%@(")
    low = word.lower()
    if not low:
        return f"a {phrase}"
    first = low.split()[0]
    spelled = len(first) > 1 and (first[1].isdigit() or (word[:2].isupper()))
    if spelled:  # read letter by letter: i32, f16, SSA
        vowel = low[0] in _LETTER_NAMES_WITH_VOWEL_SOUND
    else:
        vowel = low[0] in "aeiou" and not low.startswith(_VOWEL_SOUND_EXCEPTIONS)
    return f"{'an' if vowel else 'a'} {phrase}"


def count_of(n: int, noun: str, plural: str | None = None) -> str:
    """``1 value``, ``2 values``, ``0 entries``: a count with its noun in the right number."""
    if n == 1:
        return f"{n} {noun}"
    if plural is None:
        if noun.endswith("y") and noun[-2:-1] not in ("a", "e", "o", "u"):
            plural = noun[:-1] + "ies"
        elif noun.endswith(("s", "x", "ch", "sh")):
            plural = noun + "es"
        else:
            plural = noun + "s"
    return f"{n} {plural}"


# --------------------------------------------------------------------------- text rendering


def printed_name(module: Module) -> str:
    """The pseudo file name of a module's printed text."""
    return f"<{module.name}>" if module.name else "<module>"


def fallback_range(
    module: Module | None, op: Operation | None, printed: PrintedText | None
) -> SourceRange | None:
    """The op's line in ``printed(module)`` (None without a provider or when it cannot print)."""
    if module is None or op is None or printed is None:
        return None
    got = printed(module)
    if got is None:
        return None
    text, op_lines = got
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


def headline(d: Diagnostic, rng: SourceRange | None) -> str:
    """``file:line:col: error CODE: message`` for ``d`` at ``rng``."""
    where = f"{rng}: " if rng else ""
    code = f" {d.code}" if d.code else ""
    return f"{where}{d.severity.value}{code}: {d.message}"


def params_text(params: Mapping[str, Any]) -> str:
    """``name="value", ...``: the structured parameters as one line."""
    return ", ".join(f'{k}="{v}"' for k, v in params.items())


def render_diagnostic(d: Diagnostic, printed: PrintedText | None = None) -> str:
    """Compiler-style multi-line rendering: headline, source line and underline, op path,
    structured parameters, notes. ``printed`` (else ``d.printed``) places location-less ops."""
    printed = printed or d.printed
    rng = d.resolved_range(printed)
    out = [headline(d, rng)]
    if rng is not None:
        out.extend(render_range(rng))
        if rng.provenance is SourceProvenance.PRINTED_FALLBACK:
            out.append("note: the op has no source location; the line is from the printed module")
    if d.op_path:
        out.append(f"  source: {d.op_path}")
    if d.params:
        out.append(f"  params: {params_text(d.params)}")
    for note in d.notes:
        nrng = note.range
        if nrng is None and note.op is not None:
            nrng = location_range(d.module, note.op.location_id) or fallback_range(
                d.module, note.op, printed
            )
        where = f"{nrng}: " if nrng else ""
        out.append(f"{where}note: {note.message}")
        if nrng is not None:
            out.extend(render_range(nrng))
    return "\n".join(out)
