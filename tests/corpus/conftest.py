"""One pytest collector for every ``tests/corpus/**/*.loom-test`` file (see README.md).

Each case becomes one test item. Cases are parsed with their real line numbers (the text is
padded with the lines before it), so diagnostics point into the ``.loom-test`` file itself.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from loom.errors import LoomParseError
from loom.format.text.parser import parse_module
from loom.format.text.printer import print_module
from loom.testing.corpus import Case, match_diagnostics, split_cases
from loom.verify import verify_module


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
        source = case.source()
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
        want = case.expected_text()
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
        missing, unmatched = match_diagnostics(found, self.case.expected)
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
