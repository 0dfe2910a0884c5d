"""Text rendering of diagnostics: headline, source line, ``^~~~`` underline, parameters, notes.

The functions live in :mod:`loom.diagnostics` (diagnostics are data rendered late, and the
renderer needs nothing else); this module names them for callers that only render. Rendering is
handed what it needs: the source text kept by the module (``module.source_texts``), a readable
file (through :mod:`linecache`), or a :data:`~loom.diagnostics.PrintedText` provider for ops
without a location. It never imports the printer.
"""

from __future__ import annotations

from loom.diagnostics import (
    PrintedText,
    fallback_range,
    headline,
    location_range,
    op_source_range,
    params_text,
    printed_name,
    render_diagnostic,
    render_range,
    source_line,
    underline,
)

__all__ = [
    "PrintedText",
    "fallback_range",
    "headline",
    "location_range",
    "op_source_range",
    "params_text",
    "printed_name",
    "render_diagnostic",
    "render_range",
    "source_line",
    "underline",
]
