"""Rich display of Loom objects: modules, diagnostics, errors, launch results, check reports.

Each view has ``_repr_mimebundle_`` returning stable ``text/plain`` and class-based
``text/html``; :func:`register_formatters` makes IPython use them for the plain ``loom``
objects too (``Module``, ``Diagnostic``, ``DiagnosticEngine``, ``LoomError``, launch results).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from loom.diagnostics import Diagnostic, DiagnosticEngine
from loom.errors import LoomError
from loom.format.text.printer import Printer
from loom.ir import Module, Operation
from loom.registry import OpRegistry
from loom_jupyter.render import (
    Annotation,
    Listing,
    cell,
    code_block,
    diagnostic_rows,
    esc,
    listing_rows,
    pre,
    summary,
    table,
    wrap,
)

Bundle = dict[str, str]
Ops = OpRegistry | Iterable[Any] | None


def _bundle(plain: str, body: str, kind: str, title: str | None = None) -> Bundle:
    text = (f"{title}\n{plain}" if plain else title) if title else plain
    return {"text/plain": text, "text/html": wrap(body, kind, title)}


def _op_column(line: str, op: Operation | None) -> tuple[int, int | None]:
    """1-based span of the op name on its printed line (whole line when not found)."""
    if op is not None:
        at = line.find(op.name)
        if at >= 0:
            return at + 1, at + 1 + len(op.name)
    stripped = len(line) - len(line.lstrip())
    return stripped + 1, len(line) + 1


def place_diagnostics(
    listing: Listing, op_lines: Mapping[int, int], diagnostics: Iterable[Diagnostic]
) -> None:
    """Attach each diagnostic under the printed line of its op (``op_lines``: id(op) -> line)."""
    lines = listing.text.splitlines()
    for d in diagnostics:
        line_no = op_lines.get(id(d.op)) if d.op is not None else None
        if line_no is None:
            listing.unplaced.append(d)
            continue
        col, end = _op_column(lines[line_no - 1], d.op)
        listing.add(line_no, Annotation(d, col, end))


def module_listing(
    module: Module,
    *,
    ops: Ops = None,
    diagnostics: Iterable[Diagnostic] = (),
    print_locations: bool = False,
    current: Operation | None = None,
) -> Listing:
    """Print ``module`` and attach each diagnostic under the printed line of its op."""
    printer = Printer(ops, print_locations=print_locations)
    listing = Listing(printer.print_module(module))
    place_diagnostics(listing, printer.op_lines, diagnostics)
    if current is not None:
        listing.current_line = printer.op_lines.get(id(current))
    return listing


def source_listing(
    text: str,
    filename: str,
    diagnostics: Iterable[Diagnostic] = (),
    current_line: int | None = None,
) -> Listing:
    """Attach diagnostics whose range lies in ``filename`` under their line of ``text``."""
    listing = Listing(text, current_line=current_line)
    n = len(text.splitlines())
    for d in diagnostics:
        rng = d.range
        if rng is None or rng.filename != filename or not 0 < rng.line <= n:
            listing.unplaced.append(d)
            continue
        end = rng.end_column if rng.end_line in (None, rng.line) else None
        listing.add(rng.line, Annotation(d, rng.column, end, show_range=False))
    return listing


def _listing_bundle(listing: Listing, kind: str, title: str | None) -> Bundle:
    plain, body = pre(listing_rows(listing))
    return _bundle(plain, body, kind, title)


def diagnostics_parts(diagnostics: Sequence[Diagnostic], ops: Ops = None) -> tuple[str, str]:
    """(plain, html body): diagnostics under the printed lines of their module, when they
    point at ops of one, else a compiler-style list."""
    diags = list(diagnostics)
    module = next((d.module for d in diags if d.module is not None and d.op is not None), None)
    if module is not None:
        try:
            return pre(listing_rows(module_listing(module, ops=ops, diagnostics=diags)))
        except LoomError:
            pass  # the module cannot be printed: fall back to the plain list below
    rows = [row for d in diags for row in diagnostic_rows(d)]
    return pre(rows) if rows else ("", "")


def diagnostics_bundle(
    diagnostics: Sequence[Diagnostic], title: str | None = None, ops: Ops = None
) -> Bundle:
    """A bundle of :func:`diagnostics_parts` titled with the counts by severity."""
    plain, body = diagnostics_parts(diagnostics, ops)
    return _bundle(plain, body, "diagnostics", summary(diagnostics) if title is None else title)


class ModuleView:
    """A module shown highlighted with line numbers and, optionally, diagnostics under lines."""

    def __init__(
        self,
        module: Module,
        *,
        ops: Ops = None,
        diagnostics: Iterable[Diagnostic] = (),
        print_locations: bool = False,
        title: str | None = None,
    ) -> None:
        self.module = module
        self.ops = ops
        self.diagnostics = list(diagnostics)
        self.print_locations = print_locations
        self.title = title

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> Bundle:
        try:
            listing = module_listing(
                self.module,
                ops=self.ops,
                diagnostics=self.diagnostics,
                print_locations=self.print_locations,
            )
        except LoomError as exc:
            return error_bundle(exc)
        title = self.title
        if title is None and self.diagnostics:
            title = summary(self.diagnostics)
        return _listing_bundle(listing, "module", title)


class SourceView:
    """Loom source text (a cell, a file) with diagnostics under the lines they point at."""

    def __init__(
        self,
        text: str,
        filename: str,
        diagnostics: Iterable[Diagnostic] = (),
        title: str | None = None,
    ) -> None:
        self.text = text
        self.filename = filename
        self.diagnostics = list(diagnostics)
        self.title = title

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> Bundle:
        listing = source_listing(self.text, self.filename, self.diagnostics)
        title = (
            self.title
            if self.title is not None
            else (f"{self.filename}: {summary(self.diagnostics)}")
        )
        return _listing_bundle(listing, "source", title)


class DiagnosticsView:
    """A list of diagnostics (a verification result, launch findings...)."""

    def __init__(
        self, diagnostics: Iterable[Diagnostic], title: str | None = None, ops: Ops = None
    ) -> None:
        self.diagnostics = list(diagnostics)
        self.title = title
        self.ops = ops

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> Bundle:
        return diagnostics_bundle(self.diagnostics, self.title, self.ops)


def error_bundle(exc: BaseException) -> Bundle:
    """A Loom exception as its diagnostics (or its message when it has none)."""
    name = type(exc).__name__
    diags = list(getattr(exc, "diagnostics", ()) or ())
    if diags:
        bundle = diagnostics_bundle(diags, f"{name}: {summary(diags)}")
        pic_plain, pic_body = _access_parts(exc)
        if pic_body:
            bundle["text/plain"] += pic_plain
            bundle["text/html"] = bundle["text/html"].removesuffix("</div>") + pic_body + "</div>"
        return bundle
    message = str(exc)
    return _bundle(
        message,
        code_block(f"<strong>{esc(name)}</strong>: {esc(message)}"),
        "error",
        name,
    )


# --------------------------------------------------------------------------- launch results

_LAUNCH_FIELDS = (
    ("kernel", "kernel"),
    ("grid", "grid (workgroups)"),
    ("workgroup_size", "workgroup size"),
    ("workgroup", "workgroup size"),
    ("workitems", "workitems"),
    ("ops_executed", "ops executed"),
)


def launch_summary(result: Any) -> list[tuple[str, str]]:
    """(label, value) pairs of a launch result; wall time is left out on purpose (unstable)."""
    out: list[tuple[str, str]] = []
    seen: set[str] = set()
    for attr, label in _LAUNCH_FIELDS:
        value = getattr(result, attr, None)
        if value is None or label in seen:
            continue
        seen.add(label)
        if isinstance(value, tuple):
            value = " x ".join(str(v) for v in value)
        out.append((label, str(value)))
    return out


def launch_bundle(result: Any, ops: Ops = None) -> Bundle:
    """A launch result: grid, counts and findings (shown under their source lines)."""
    findings = list(getattr(result, "findings", ()) or ())
    pairs = launch_summary(result)
    plain = "\n".join(f"{label}: {value}" for label, value in pairs)
    body = table(
        f"<tr>{cell(esc(label), tag='th')}{cell(esc(value))}</tr>" for label, value in pairs
    )
    title = f"launch: {summary(findings) if findings else 'no findings'}"
    if findings:
        sub_plain, sub_body = diagnostics_parts(findings, ops)
        plain += "\n" + sub_plain
        body += sub_body
    pic_plain, pic_body = _access_parts(result)
    return _bundle(plain + pic_plain, body + pic_body, "launch", title)


def _access_parts(source: Any) -> tuple[str, str]:
    """The access picture of a traced launch (or its error), when there is one."""
    if not getattr(source, "accesses", None):
        return "", ""
    from loom_jupyter.pictures import PictureError, access_picture

    try:
        pic = access_picture(source)
    except PictureError as exc:
        return f"\n{exc}", f"<div>{esc(exc)}</div>\n"
    return "\n" + pic.summary, pic.html()


class LaunchView:
    """A launch result with its findings."""

    def __init__(self, result: Any, ops: Ops = None) -> None:
        self.result = result
        self.ops = ops

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> Bundle:
        return launch_bundle(self.result, self.ops)


# --------------------------------------------------------------------------- IPython hooks


def _launch_result_type() -> type | None:
    try:
        from loom.interp import LaunchResult
    except ImportError:
        return None
    return LaunchResult


def register_formatters(ip: Any) -> None:
    """Use the bundles above for plain ``loom`` objects in shell ``ip``."""
    fmt = ip.display_formatter.mimebundle_formatter
    fmt.for_type(Module, lambda m, include=None, exclude=None: ModuleView(m)._repr_mimebundle_())
    fmt.for_type(Diagnostic, lambda d, include=None, exclude=None: diagnostics_bundle([d]))
    fmt.for_type(
        DiagnosticEngine, lambda e, include=None, exclude=None: diagnostics_bundle(e.diagnostics)
    )
    fmt.for_type(LoomError, lambda e, include=None, exclude=None: error_bundle(e))
    launch = _launch_result_type()
    if launch is not None:
        fmt.for_type(launch, lambda r, include=None, exclude=None: launch_bundle(r))
    from loom.check.report import Report

    fmt.for_type(Report, lambda r, include=None, exclude=None: check_report_bundle(r))


def unregister_formatters(ip: Any) -> None:
    """Undo :func:`register_formatters`."""
    fmt = ip.display_formatter.mimebundle_formatter
    from loom.check.report import Report

    types: list[type] = [Module, Diagnostic, DiagnosticEngine, LoomError, Report]
    launch = _launch_result_type()
    if launch is not None:
        types.append(launch)
    for t in types:
        fmt.pop(t, None)


# --------------------------------------------------------------------------- check reports

_VERDICT_CLASS = {
    "passed": "loom-state-running",
    "failed": "loom-error",
    "skipped": "loom-state-exited",
}


def check_report_rows(report: Any) -> list[tuple[str, str, str, str, str]]:
    """(case, sample, parameters, verdict, detail) rows of a :class:`loom.check.Report`."""
    rows = []
    for c in report.cases:
        if c.skipped is not None:
            rows.append((f"@{c.name}", "-", "", "skipped", c.skipped))
            continue
        for s in c.samples:
            params = ", ".join(f"{k}={v}" for k, v in s.params.items())
            if s.passed:
                detail = f"{s.expectation_count} expectations"
            else:
                heads = [f.render().split("\n", 1)[0] for f in s.failures]
                heads += [m.strip().splitlines()[-1] for m in s.issues]
                detail = "; ".join(heads)
            rows.append(
                (f"@{c.name}", str(s.ordinal), params, "passed" if s.passed else "failed", detail)
            )
    for p in report.planning_issues:
        rows.append((f"@{p.case}", "-", "", "failed", f"{p.kind}: {p.message}"))
    return rows


def check_report_bundle(report: Any) -> Bundle:
    """A check report: a verdict table (one row per sample, per skipped case, per planning
    issue), then every failure with its source line, caret and differing values."""
    rows = check_report_rows(report)
    head = "".join(
        cell(esc(h), tag="th") for h in ("case", "sample", "parameters", "verdict", "detail")
    )
    body_rows = [f"<tr>{head}</tr>"]
    for case, sample, params, verdict, detail in rows:
        body_rows.append(
            "<tr>"
            + cell(esc(case))
            + cell(esc(sample))
            + cell(esc(params))
            + cell(esc(verdict), _VERDICT_CLASS[verdict])
            + cell(esc(detail))
            + "</tr>"
        )
    body = table(body_rows)
    failures = []
    for s in report.failed:
        text = "\n".join(
            [f"@{s.case} sample {s.ordinal}", *s.issues, *(f.render() for f in s.failures)]
        )
        failures.append(text)
    if failures:
        body += "".join(code_block(esc(t)) for t in failures)
    plain = "\n".join(
        f"{case:<24} {sample:>6} {verdict:<8} {params}" for case, sample, params, verdict, _ in rows
    )
    if failures:
        plain += "\n" + "\n".join(failures)
    return _bundle(plain, body, "check", report.summary())


class CheckReportView:
    """A check report as a verdict table with its failures."""

    def __init__(self, report: Any) -> None:
        self.report = report

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> Bundle:
        return check_report_bundle(self.report)
