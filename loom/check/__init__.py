"""Executable test cases: run the ``check`` dialect's cases on the reference interpreter.

``run(module)`` expands each case's parameters into deterministic samples, materialises inputs,
calls oracles and evaluates expectations, returning a :class:`Report`.
"""

from loom.check.report import CaseResult, Failure, PlanningIssue, Report, SampleResult
from loom.check.runner import ORACLES, REQUIREMENTS, SANITIZER_CATEGORIES, VALIDATORS, Linker, run

__all__ = [
    "ORACLES",
    "REQUIREMENTS",
    "SANITIZER_CATEGORIES",
    "VALIDATORS",
    "CaseResult",
    "Failure",
    "Linker",
    "PlanningIssue",
    "Report",
    "SampleResult",
    "run",
]
