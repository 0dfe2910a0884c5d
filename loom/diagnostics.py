"""Diagnostics as data: severity, code, message, location, notes; rendered late.

A :class:`Diagnostic` points at a source range (a parsed ``.loom`` file or a frontend location
recorded with ``location_id=``) or at an op of a module. Rendering turns it into
``file:line:col: error CODE: message``, the source line and a ``^~~~`` underline.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from loom.errors import LoomError

if TYPE_CHECKING:
    from loom.ir import Module, Operation


class DiagnosticSeverity(enum.Enum):
    """How serious a diagnostic is."""

    ERROR = "error"
    WARNING = "warning"
    REMARK = "remark"


@dataclass(frozen=True)
class SourceRange:
    """A 1-based line/column span in a named source; ``text`` is the file's text when known."""

    filename: str
    line: int
    column: int
    end_line: int | None = None
    end_column: int | None = None
    text: str | None = field(default=None, repr=False, compare=False)

    def __str__(self) -> str:
        return f"{self.filename}:{self.line}:{self.column}"


@dataclass(frozen=True)
class DiagnosticRelatedLocation:
    """A note attached to a diagnostic, optionally with its own location."""

    message: str
    range: SourceRange | None = None


@dataclass
class Diagnostic:
    """One finding: severity, ``DOMAIN/NNN`` code, message, where, notes and the op path."""

    severity: DiagnosticSeverity
    code: str
    message: str
    range: SourceRange | None = None
    notes: list[DiagnosticRelatedLocation] = field(default_factory=list)
    op_path: str | None = None
    op: Operation | None = field(default=None, repr=False, compare=False)
    module: Module | None = field(default=None, repr=False, compare=False)
    location_id: int = 0

    @property
    def is_error(self) -> bool:
        """True for error severity."""
        return self.severity is DiagnosticSeverity.ERROR

    def headline(self) -> str:
        """``file:line:col: error CODE: message`` (location omitted when unknown)."""
        where = f"{self.range}: " if self.range else ""
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

    def __bool__(self) -> bool:
        return bool(self.diagnostics)

    def __repr__(self) -> str:
        return (f"<DiagnosticEngine {len(self.errors)} errors, "
                f"{len(self.diagnostics) - len(self.errors)} other>")


class LoomDiagnosticError(LoomError):
    """Raised with diagnostics; its message joins their renderings."""

    def __init__(self, diagnostics: Iterable[Diagnostic]) -> None:
        diags = list(diagnostics)
        super().__init__("\n".join(d.render() for d in diags) or "error", diags)
