"""One pytest collector for every ``tests/corpus/**/*.loom-test`` file (see README.md).

Each case becomes one test item. Cases are parsed with their real line numbers (the text is
padded with the lines before it), so diagnostics point into the ``.loom-test`` file itself.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from loom.diagnostics import Diagnostic
from loom.errors import LoomParseError
from loom.format.text.parser import parse_module
from loom.format.text.printer import print_module
from loom.verify import verify_module

CASE_SEPARATOR = "// ===="
OUTPUT_SEPARATOR = "// ----"
_RUN = re.compile(r"//\s*RUN:\s*(.+?)\s*$")
_ERROR = re.compile(r"//\s*ERROR(?:@([+-]\d+))?:\s*([A-Z]+/\d+)(.*)$")
_FRAGMENT = re.compile(r'"((?:[^"\\]|\\.)*)"')


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


def _trim(lines: list[str], first: int) -> tuple[list[str], int]:
    while lines and not lines[0].strip():
        lines = lines[1:]
        first += 1
    while lines and not lines[-1].strip():
        lines = lines[:-1]
    return lines, first


def split_cases(text: str) -> tuple[str, list[Case]]:
    """The RUN mode and the cases of a corpus file."""
    lines = text.splitlines()
    if not lines or not _RUN.match(lines[0]):
        raise ValueError("the first line must be '// RUN: roundtrip' or '// RUN: verify'")
    mode = _RUN.match(lines[0]).group(1)  # type: ignore[union-attr]
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

    for lineno, line in enumerate(lines[1:], start=2):
        if line.strip() == CASE_SEPARATOR:
            flush()
            chunk = []
        else:
            chunk.append((lineno, line))
    flush()
    return mode, cases


def pytest_collect_file(parent: pytest.Collector, file_path: Path) -> pytest.Collector | None:
    if file_path.suffix == ".loom-test":
        return CorpusFile.from_parent(parent, path=file_path)
    return None


class CorpusFile(pytest.File):
    """A ``.loom-test`` file: one item per case."""

    def collect(self):  # noqa: ANN201
        mode, cases = split_cases(self.path.read_text(encoding="utf-8"))
        for case in cases:
            yield CorpusItem.from_parent(
                self, name=f"case{case.index}-line{case.first_line}", mode=mode, case=case
            )


class CorpusFailure(Exception):
    """A corpus case did not behave as expected."""


class CorpusItem(pytest.Item):
    """One corpus case."""

    def __init__(self, *, mode: str, case: Case, **kwargs) -> None:  # noqa: ANN003
        super().__init__(**kwargs)
        self.mode = mode
        self.case = case

    def runtest(self) -> None:
        case = self.case
        source = "\n" * (case.first_line - 1) + "\n".join(case.input_lines) + "\n"
        if self.mode == "roundtrip":
            self._roundtrip(source)
        elif self.mode == "verify":
            self._verify(source)
        else:
            pytest.skip(f"RUN mode {self.mode!r} is not supported")

    def _roundtrip(self, source: str) -> None:
        case = self.case
        try:
            module = parse_module(source, filename=str(self.path))
        except LoomParseError as e:
            raise CorpusFailure(f"parse failed:\n{e}") from None
        diags = verify_module(module)
        if diags.has_errors:
            raise CorpusFailure(f"verification failed:\n{diags.render()}")
        want = (
            "\n".join(case.output_lines if case.output_lines is not None else case.input_lines)
            + "\n"
        )
        got = print_module(module)
        if got != want:
            import difflib

            diff = "".join(
                difflib.unified_diff(
                    want.splitlines(True), got.splitlines(True), "expected", "printed"
                )
            )
            raise CorpusFailure(f"printed text differs from the expectation:\n{diff}")

    def _verify(self, source: str) -> None:
        try:
            module = parse_module(source, filename=str(self.path))
        except LoomParseError as e:
            found = list(e.diagnostics)
        else:
            found = [d for d in verify_module(module).diagnostics if d.is_error]
        unmatched = list(found)
        missing = []
        for exp in self.case.expected:
            hit = next((d for d in unmatched if _matches(d, exp)), None)
            if hit is None:
                missing.append(exp)
            else:
                unmatched.remove(hit)
        if missing or unmatched:
            lines = []
            for exp in missing:
                lines.append(
                    f"expected but not reported (comment on line {exp.comment_line}): "
                    f"{exp.code} at line {exp.line} with {exp.fragments}"
                )
            for d in unmatched:
                lines.append(f"reported but not expected: {d.render()}")
            raise CorpusFailure("\n".join(lines))

    def repr_failure(self, excinfo, style=None):  # noqa: ANN001, ANN201
        if isinstance(excinfo.value, CorpusFailure):
            return f"{self.path}:{self.case.first_line}: {excinfo.value}"
        return super().repr_failure(excinfo, style)

    def reportinfo(self):  # noqa: ANN201
        return self.path, self.case.first_line - 1, f"{self.path.name}:{self.name}"


def _matches(d: Diagnostic, exp: Expected) -> bool:
    if d.code != exp.code or d.range is None or d.range.line != exp.line:
        return False
    text = d.message + "\n" + d.render()
    return all(_unescape(f) in text for f in exp.fragments)


def _unescape(fragment: str) -> str:
    return fragment.replace('\\"', '"').replace("\\\\", "\\")
