"""The Loom exception hierarchy. Every error carries its diagnostics as data."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from loom.diagnostics import Diagnostic


class LoomError(Exception):
    """Base of every error Loom raises on purpose; ``diagnostics`` holds the details."""

    def __init__(self, message: str, diagnostics: list[Diagnostic] | None = None) -> None:
        super().__init__(message)
        self.diagnostics: list[Diagnostic] = list(diagnostics or [])


class LoomBuilderError(LoomError, TypeError):
    """Misuse of a builder method (unknown keyword, missing operand, wrong type...)."""


class LoomUsageError(LoomError, ValueError):
    """A Loom API called with arguments that do not go together (for example
    ``launch(trace=True, sanitize=False)``); still a ``ValueError`` for callers that catch that."""


class LoomPrintError(LoomError):
    """A module cannot be printed (for example an op outside the declaration set)."""


class LoomParseError(LoomError):
    """Malformed Loom text; ``diagnostics`` holds PARSE/NNN diagnostics with carets."""


class BytecodeError(LoomError):
    """Malformed, truncated, unsupported or hostile bytecode (names the file and byte offset).

    ``offset`` is the byte offset of the problem (None when there is none), ``detail`` what
    was wrong there, ``filename`` the file it was read from (None for bytes in memory).
    """

    offset: int | None = None
    detail: str = ""
    filename: str | None = None


class LoomRuntimeError(LoomError):
    """A kernel did something invalid while being interpreted (out of bounds, trap...)."""
