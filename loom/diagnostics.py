"""Diagnostics as data: severity, code, message, location, notes; rendered late.

A :class:`Diagnostic` points at a source range: a parsed ``.loom`` file, a frontend location
recorded with ``location_id=``, or (for ops built without a location) the op's line in the
module's canonical printed text. Rendering (:mod:`loom.diagnostic_render`) turns it into
``file:line:col: error CODE: message``, the source line and a ``^~~~`` underline, then notes.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from loom.errors import LoomError

if TYPE_CHECKING:
    from loom.ir import Module, Operation


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


DiagnosticParam = tuple[str, Any]
"""A named parameter of a diagnostic (``("attribute", "scope")``)."""


@dataclass
class Diagnostic:
    """One finding: severity, ``DOMAIN/NNN`` code, message, where, notes and the op path.

    ``range`` is the primary location. When it is None but ``op`` and ``module`` are known,
    rendering falls back to the op's line in the module's canonical text (so there is always
    something to look at). ``params`` holds structured values (op_name, field names...).
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

    @property
    def is_error(self) -> bool:
        """True for error severity."""
        return self.severity is DiagnosticSeverity.ERROR

    @property
    def domain(self) -> str:
        """The part of the code before ``/`` (``TYPE`` for ``TYPE/003``)."""
        return self.code.split("/", 1)[0]

    def resolved_range(self) -> SourceRange | None:
        """The primary range, or the printed-module fallback for an op without location."""
        if self.range is not None:
            return self.range
        from loom.diagnostic_render import fallback_range

        return fallback_range(self.module, self.op)

    def headline(self) -> str:
        """``file:line:col: error CODE: message`` (location omitted when unknown)."""
        rng = self.resolved_range()
        where = f"{rng}: " if rng else ""
        code = f" {self.code}" if self.code else ""
        return f"{where}{self.severity.value}{code}: {self.message}"

    def render(self) -> str:
        """Multi-line text: headline, source line with underline, op path, notes."""
        from loom.diagnostic_render import render_diagnostic

        return render_diagnostic(self)

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

    def render(self) -> str:
        """All diagnostics as text."""
        return "\n".join(d.render() for d in self.diagnostics)

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


class LoomDiagnosticError(LoomError):
    """Raised with diagnostics; its message joins their renderings."""

    def __init__(self, diagnostics: Iterable[Diagnostic]) -> None:
        diags = list(diagnostics)
        super().__init__("\n".join(d.render() for d in diags) or "error", diags)
