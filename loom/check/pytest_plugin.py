"""pytest plugin (entry point ``pytest11``): ``.loom`` files with check cases are test files.

Each sample of each case is one test item (``file.loom::case[ordinal]``); a failed sample shows
the expectation's line with its caret, the first differing elements (got/want) and the
tolerance. A skipped case is one skipped item; a file that does not parse or verify, or a case
that cannot be planned, is one failing item with the diagnostics.

A comment ``// EXPECT-FAIL: @case "fragment" ...`` in a file turns that case's samples into
expected failures: each must fail, with every quoted fragment in its failure text (so a corpus
can show failures, such as a sanitizer finding, and still pass).

Options: ``--loom-sanitizer=CATEGORIES``, ``--loom-max-samples-per-case=N``,
``--loom-library=FILE`` (repeatable).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from loom.dialects.check import CASE
from loom.errors import LoomError

_EXPECT_FAIL = re.compile(r"^\s*//\s*EXPECT-FAIL:\s*@([A-Za-z0-9_$.]+)((?:\s+\"[^\"]*\")*)\s*$")
_MARKER = CASE.name


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("loom", "Loom check cases")
    group.addoption("--loom-sanitizer", default="all", help="sanitizer categories (default all)")
    group.addoption("--loom-max-samples-per-case", type=int, default=4096)
    group.addoption("--loom-library", action="append", default=[], help="a library module")


def pytest_collect_file(parent: pytest.Collector, file_path: Path) -> pytest.Collector | None:
    if file_path.suffix != ".loom":
        return None
    try:
        head = file_path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    if _MARKER not in head:
        return None
    return LoomCheckFile.from_parent(parent, path=file_path)


class LoomCheckError(Exception):
    """A sample failed, or a file/case could not be run; the message is the rendering."""


def expected_failures(text: str) -> dict[str, list[str]]:
    """``case -> fragments`` from the file's ``// EXPECT-FAIL:`` comments."""
    out: dict[str, list[str]] = {}
    for line in text.splitlines():
        m = _EXPECT_FAIL.match(line)
        if m:
            out.setdefault(m.group(1), []).extend(re.findall(r"\"([^\"]*)\"", m.group(2)))
    return out


class LoomCheckFile(pytest.File):
    """A ``.loom`` file: one item per sample of each case."""

    def collect(self):  # noqa: ANN201
        from loom.check.runner import plan
        from loom.cli.test import load_module

        cfg = self.config
        text = self.path.read_text(encoding="utf-8")
        xfail = expected_failures(text)
        try:
            libraries = [load_module(p) for p in cfg.getoption("loom_library")]
            module = load_module(str(self.path))
            report, work = plan(
                module,
                sanitize=cfg.getoption("loom_sanitizer"),
                max_samples_per_case=cfg.getoption("loom_max_samples_per_case"),
                base_dir=self.path.parent,
                libraries=libraries,
                write_files=False,
            )
        except (OSError, ValueError, LoomError) as e:
            yield LoomProblemItem.from_parent(self, name="<load>", message=_error_text(e))
            return
        for issue in report.planning_issues:
            yield LoomProblemItem.from_parent(
                self, name=f"{issue.case}[plan]", message=issue.render()
            )
        for c in report.skipped:
            yield LoomSkippedItem.from_parent(self, name=f"{c.name}[skip]", reason=c.skipped)
        for runner, _, ordinals in work:
            for s in ordinals:
                yield LoomSampleItem.from_parent(
                    self,
                    name=f"{runner.name}[{s}]",
                    runner=runner,
                    ordinal=s,
                    expect_fail=xfail.get(runner.name),
                )


def _error_text(e: Exception) -> str:
    lines = [str(e)]
    for d in getattr(e, "diagnostics", ()):
        lines.append(d.render())
    return "\n".join(lines)


class LoomSampleItem(pytest.Item):
    """One sample of a check case."""

    def __init__(
        self, *, runner: Any, ordinal: int, expect_fail: list[str] | None, **kw: Any
    ) -> None:
        super().__init__(**kw)
        self.runner = runner
        self.ordinal = ordinal
        self.expect_fail = expect_fail

    def runtest(self) -> None:
        result = self.runner.run_sample(self.ordinal)
        text = "\n".join(
            [f"@{result.case} sample {result.ordinal} {result.params}"]
            + result.issues
            + [f.render() for f in result.failures]
        )
        if self.expect_fail is None:
            if not result.passed:
                raise LoomCheckError(text)
            return
        if result.passed:
            raise LoomCheckError(f"{text}\npassed, but the file expects @{result.case} to fail")
        missing = [f for f in self.expect_fail if f not in text]
        if missing:
            raise LoomCheckError(f"{text}\nfailed, but the failure lacks {missing}")

    def repr_failure(self, excinfo, style=None):  # noqa: ANN001, ANN201
        if isinstance(excinfo.value, LoomCheckError):
            return str(excinfo.value)
        return super().repr_failure(excinfo, style)

    def reportinfo(self):  # noqa: ANN201
        return self.path, None, f"{self.path.name}::{self.name}"


class LoomSkippedItem(pytest.Item):
    """A case its requirements skip."""

    def __init__(self, *, reason: str | None, **kw: Any) -> None:
        super().__init__(**kw)
        self.reason = reason

    def runtest(self) -> None:
        pytest.skip(self.reason or "skipped by its requirements")

    def reportinfo(self):  # noqa: ANN201
        return self.path, None, f"{self.path.name}::{self.name}"


class LoomProblemItem(pytest.Item):
    """A file that cannot be loaded or a case that cannot be planned."""

    def __init__(self, *, message: str, **kw: Any) -> None:
        super().__init__(**kw)
        self.message = message

    def runtest(self) -> None:
        raise LoomCheckError(self.message)

    def repr_failure(self, excinfo, style=None):  # noqa: ANN001, ANN201
        if isinstance(excinfo.value, LoomCheckError):
            return str(excinfo.value)
        return super().repr_failure(excinfo, style)

    def reportinfo(self):  # noqa: ANN201
        return self.path, None, f"{self.path.name}::{self.name}"
