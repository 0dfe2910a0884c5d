"""Reading ``.loom-test`` corpus files: RUN mode, cases, expected output and expected diagnostics.

Shared by the pytest collector (``tests/corpus/conftest.py``) and the conformance runner
(``tools/conformance.py``), so both read one format the same way. The format is described in
``tests/corpus/README.md``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from loom.diagnostics import Diagnostic

CASE_SEPARATOR = "// ===="
OUTPUT_SEPARATOR = "// ----"
_RUN = re.compile(r"//\s*RUN:\s*(.+?)\s*$")
_ERROR = re.compile(r"//\s*ERROR(?:@([+-]\d+))?:\s*([A-Z]+/\d+)(.*)$")
_FRAGMENT = re.compile(r'"((?:[^"\\]|\\.)*)"')
_COMMENT_LINE = re.compile(r"^\s*//")


@dataclass
class Expected:
    """An expected diagnostic: code, file line and message fragments."""

    code: str
    line: int
    fragments: list[str]
    comment_line: int


@dataclass
class Case:
    """One case of a corpus file."""

    index: int
    first_line: int
    input_lines: list[str]
    output_lines: list[str] | None
    expected: list[Expected] = field(default_factory=list)

    def source(self) -> str:
        """The input text padded with blank lines, so parse positions are file positions."""
        return "\n" * (self.first_line - 1) + "\n".join(self.input_lines) + "\n"

    def expected_text(self) -> str:
        """The text a round trip must print: the ``// ----`` part, else the input itself."""
        lines = self.output_lines if self.output_lines is not None else self.input_lines
        return "\n".join(lines) + "\n"


def normalize_mode(mode: str) -> str:
    """``format bytecode`` and ``bytecode`` name one mode; other modes are kept as written."""
    words = mode.split()
    return "bytecode" if words and words[-1] == "bytecode" else mode


def _trim(lines: list[str], first: int) -> tuple[list[str], int]:
    while lines and not lines[0].strip():
        lines = lines[1:]
        first += 1
    while lines and not lines[-1].strip():
        lines = lines[:-1]
    return lines, first


def split_cases(text: str, default_mode: str | None = None) -> tuple[str, list[Case]]:
    """The RUN mode and the cases of a corpus file.

    A file without a ``// RUN:`` first line gets ``default_mode``; without one either, that is a
    ``ValueError``.
    """
    lines = text.splitlines()
    run = _RUN.match(lines[0]) if lines else None
    if run is not None:
        mode, body_start = run.group(1), 2
    elif default_mode is not None:
        mode, body_start = default_mode, 1
    else:
        raise ValueError("the first line must be '// RUN: roundtrip' or '// RUN: verify'")
    cases: list[Case] = []
    chunk: list[tuple[int, str]] = []

    def flush() -> None:
        if not chunk:
            return
        inp: list[str] = []
        out: list[str] | None = None
        start = chunk[0][0]
        out_start = start
        expected = []
        for lineno, line in chunk:
            if line.strip() == OUTPUT_SEPARATOR and out is None:
                out = []
                out_start = lineno + 1
                continue
            (inp if out is None else out).append(line)
            m = _ERROR.match(line.strip())
            if m and out is None:
                offset = int(m.group(1) or 0)
                expected.append(
                    Expected(m.group(2), lineno + offset, _FRAGMENT.findall(m.group(3)), lineno)
                )
        inp_lines, first = _trim(inp, start)
        out_lines = _trim(out, out_start)[0] if out is not None else None
        if inp_lines:
            cases.append(Case(len(cases), first, inp_lines, out_lines, expected))

    for lineno, line in enumerate(lines[body_start - 1 :], start=body_start):
        if line.strip() == CASE_SEPARATOR:
            flush()
            chunk = []
        else:
            chunk.append((lineno, line))
    flush()
    return mode, cases


def without_comment_lines(text: str) -> str:
    """``text`` without its whole-line ``//`` comments (for printers that drop comments)."""
    return "".join(line for line in text.splitlines(keepends=True) if not _COMMENT_LINE.match(line))


def diagnostic_matches(d: Diagnostic, exp: Expected) -> bool:
    """True when ``d`` has the expected code and line and contains every fragment."""
    if d.code != exp.code or d.range is None or d.range.line != exp.line:
        return False
    text = d.message + "\n" + d.render()
    return all(_unescape(f) in text for f in exp.fragments)


def match_diagnostics(
    found: Iterable[Diagnostic], expected: Iterable[Expected]
) -> tuple[list[Expected], list[Diagnostic]]:
    """Pair reported with expected diagnostics: (expected but missing, reported but unexpected)."""
    unmatched = list(found)
    missing = []
    for exp in expected:
        hit = next((d for d in unmatched if diagnostic_matches(d, exp)), None)
        if hit is None:
            missing.append(exp)
        else:
            unmatched.remove(hit)
    return missing, unmatched


def _unescape(fragment: str) -> str:
    return fragment.replace('\\"', '"').replace("\\\\", "\\")


__all__ = [
    "CASE_SEPARATOR",
    "OUTPUT_SEPARATOR",
    "Case",
    "Expected",
    "diagnostic_matches",
    "match_diagnostics",
    "normalize_mode",
    "split_cases",
    "without_comment_lines",
]
