"""Report objects of a check run (per case, per sample, per failed expectation)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np


@dataclass
class Failure:
    """One failed expectation: kind, message, where (rendered with a caret) and the diff."""

    kind: str
    detail: str
    index: int
    location: str = ""
    first_index: tuple[int, ...] | None = None
    got: Any = None
    want: Any = None
    atol: float | None = None
    rtol: float | None = None
    mismatches: list[tuple[tuple[int, ...], Any, Any]] = field(default_factory=list)
    """The first few differing elements as (index, got, want)."""
    dtype: str | None = None
    """The compared element type (NumPy name): values print at its precision."""
    actual_value_id: int | None = None
    expected_value_id: int | None = None

    def _v(self, value: Any) -> str:
        if self.dtype is not None and isinstance(value, float):
            return (
                repr(float(value))
                if self.dtype == "float64"
                else str(np.dtype(self.dtype).type(value))
            )
        return repr(value)

    def render(self) -> str:
        """Multi-line text: the headline, the source line with its caret, the values."""
        lines = [f"expectation {self.kind} failed: {self.detail}"]
        if self.location:
            lines.append(self.location)
        if self.first_index is not None:
            lines.append(f"  first differing index: {list(self.first_index)}")
        if self.got is not None or self.want is not None:
            lines.append(f"  got:  {self._v(self.got)}")
            lines.append(f"  want: {self._v(self.want)}")
        if self.atol is not None:
            lines.append(f"  tolerance: atol={self.atol} rtol={self.rtol}")
        if len(self.mismatches) > 1:
            lines.append("  differing elements (index: got != want):")
            lines.extend(
                f"    {list(i)}: {self._v(g)} != {self._v(w)}" for i, g, w in self.mismatches
            )
        return "\n".join(lines)


@dataclass
class SampleResult:
    """The outcome of one sample of a case."""

    case: str
    ordinal: int
    params: dict[str, Any]
    expectation_count: int = 0
    failures: list[Failure] = field(default_factory=list)
    issues: list[str] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        """No failed expectation and no issue."""
        return not self.failures and not self.issues


@dataclass
class PlanningIssue:
    """Why a case could not be planned (upstream's planning issue kinds)."""

    kind: str
    message: str
    case: str | None = None
    op: str | None = None
    source_location: dict[str, Any] | None = None
    fix_hint: str | None = None
    benchmark: str | None = None

    def render(self) -> str:
        """One or two lines: where, kind and message, then the hint."""
        loc = self.source_location
        where = f"{loc['filename']}:{loc['start_line']}:{loc['start_column']}: " if loc else ""
        out = f"{where}@{self.case}: {self.kind}: {self.message}"
        return out + (f" ({self.fix_hint})" if self.fix_hint else "")

    def to_json(self) -> dict[str, Any]:
        """The planning issue object of a ``loom.test.v0`` report (empty fields omitted)."""
        return {k: v for k, v in self.__dict__.items() if v is not None}


@dataclass
class CaseResult:
    """A case: its samples, or why it was skipped."""

    name: str
    sample_count: int = 0
    skipped: str | None = None
    samples: list[SampleResult] = field(default_factory=list)
    skip_code: str | None = None
    skip_op: str | None = None
    skip_provider: str | None = None
    cartesian_sample_count: int = 0


@dataclass
class Report:
    """Everything a run found, case by case."""

    cases: list[CaseResult] = field(default_factory=list)
    planning_issues: list[PlanningIssue] = field(default_factory=list)

    @property
    def samples(self) -> list[SampleResult]:
        """Every executed sample, in case then ordinal order."""
        return [s for c in self.cases for s in c.samples]

    @property
    def passed(self) -> list[SampleResult]:
        """Samples that passed."""
        return [s for s in self.samples if s.passed]

    @property
    def failed(self) -> list[SampleResult]:
        """Samples that failed."""
        return [s for s in self.samples if not s.passed]

    @property
    def skipped(self) -> list[CaseResult]:
        """Cases skipped by their requirements."""
        return [c for c in self.cases if c.skipped is not None]

    @property
    def ok(self) -> bool:
        """True when no sample failed and every case could be planned."""
        return not self.failed and not self.planning_issues

    def summary(self) -> str:
        """One line: counts of cases, samples, passed, failed and skipped."""
        return (
            f"{len(self.cases)} cases, {len(self.samples)} samples: {len(self.passed)} passed, "
            f"{len(self.failed)} failed, {len(self.skipped)} skipped"
            + (f", {len(self.planning_issues)} planning issues" if self.planning_issues else "")
        )

    def render(self) -> str:
        """The summary followed by every failure."""
        out = [self.summary()]
        for s in self.failed:
            out.append(f"FAIL @{s.case} sample {s.ordinal} {s.params}")
            out.extend(s.issues)
            out.extend(f.render() for f in s.failures)
        for c in self.skipped:
            out.append(f"SKIP @{c.name}: {c.skipped}")
        out.extend(f"PLAN {p.render()}" for p in self.planning_issues)
        return "\n".join(out)

    def to_json(self) -> dict[str, Any]:
        """A ``loom.test.v0``-shaped report."""
        kinds = {"equal", "bitwise", "close", "shape", "custom", "event"}
        samples = []
        for s in self.samples:
            failures = [
                {
                    "index": f.index,
                    "kind": f.kind if f.kind in kinds else "custom",
                    "actual_value_id": f.actual_value_id,
                    "expected_value_id": f.expected_value_id,
                    "detail": f.detail,
                }
                for f in s.failures
            ]
            entry: dict[str, Any] = {
                "case": s.case,
                "sample_ordinal": s.ordinal,
                "passed": s.passed,
                "expectations": {
                    "expectation_count": s.expectation_count,
                    "passed_count": s.expectation_count - len(failures),
                    "failure_count": len(failures),
                    "failures": failures,
                },
            }
            if s.issues:
                entry["issues"] = [{"category": "runtime", "message": m} for m in s.issues]
            samples.append(entry)
        return {
            "format": "loom.test.v0",
            "case_count": len(self.cases),
            "sample_count": len(samples),
            "failed_sample_count": len(self.failed),
            "skipped_case_count": len(self.skipped),
            "planning_issue_count": len(self.planning_issues),
            "samples": samples,
            "skipped_cases": [
                {
                    "case": c.name,
                    "provider": c.skip_provider,
                    "op": c.skip_op,
                    "code": c.skip_code or "requirement_not_satisfied",
                    "display_message": c.skipped,
                }
                for c in self.skipped
            ],
            "planning_issues": [p.to_json() for p in self.planning_issues],
        }
