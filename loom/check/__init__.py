"""Executable test cases: run the ``check`` dialect's cases on the reference interpreter.

``run(module)`` expands each case's parameters into deterministic samples, materialises inputs,
calls oracles and evaluates expectations, returning a :class:`Report`.
"""

from loom.check.report import CaseResult, Failure, Report, SampleResult
from loom.check.runner import ORACLES, run

__all__ = ["ORACLES", "CaseResult", "Failure", "Report", "SampleResult", "run"]
