"""Measure the workbench against a folder of ``.loom-test`` corpus files (upstream's, read at check
time into a temporary folder and never committed).

    python tools/conformance.py [CORPUS] [--dialect kernel,scf] [--show-failures 20] [--json]

``CORPUS`` (default ``/tmp/upstream-corpus``) holds one folder per dialect; every
``roundtrip*``, ``verify*`` and ``bytecode*`` ``.loom-test`` file below it is read. A case is *in
scope* when every op name it spells is declared in our registry; in-scope cases are run:

* ``text``: parse, verify clean, print, compare with the expected output (the ``// ----`` part,
  else the input). Upstream's printer drops comments, so whole-line comments are removed from both
  sides and runs of blank lines count as one.
* ``bytecode``: the verified module is written, read back with ``verify=True`` and printed; the
  text must equal the printed text of the parsed module.
* ``verify``: the diagnostics we report (parse errors count) must match the ``// ERROR@+N: CODE
  "fragment"`` comments: same code, same line, every fragment in the message or its rendering.

``roundtrip`` and ``bytecode`` files run the first two modes, ``verify`` files the third. A case
passes when all its modes pass. The report gives a table per dialect and file, the op names we do
not know (by the number of cases that use them) and the failure reasons of in-scope cases.
"""

from __future__ import annotations

import argparse
import difflib
import json
import re
import sys
import time
import traceback
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

from loom.errors import LoomError, LoomParseError
from loom.format.bytecode.reader import read_module
from loom.format.bytecode.writer import write_module
from loom.format.text.parser import parse_module
from loom.format.text.printer import print_module
from loom.ir.module import Module
from loom.registry import OpRegistry, default_registry
from loom.testing.corpus import (
    Case,
    Expected,
    match_diagnostics,
    normalize_mode,
    split_cases,
    without_comment_lines,
)
from loom.verify import verify_module

DEFAULT_CORPUS = Path("/tmp/upstream-corpus")
FILE_KINDS = ("roundtrip", "verify", "bytecode")
# The nine compute dialects of issue 13, and with them the kernel level of issue 14.
COMPUTE_DIALECTS = ("kernel", "scalar", "index", "buffer", "view", "scf", "func", "target", "cfg")
KERNEL_LEVEL_DIALECTS = (*COMPUTE_DIALECTS, "encoding", "global", "config", "sanitizer", "test")
MODES_OF_KIND = {"roundtrip": ("text", "bytecode"), "bytecode": ("text", "bytecode")}
ALL_MODES = ("text", "bytecode", "verify")

# An op is spelled at the start of a line, after an optional `%a, %b =` result list.
_RESULTS = re.compile(r"^%[^=]*=\s*")
_OP_NAME = re.compile(r'^"?([a-z_][a-z0-9_]*(?:\.[a-z_][a-z0-9_]*)+)')


def op_names(lines: Iterable[str]) -> list[str]:
    """The op names a case spells, in order of first use (comments and labels are skipped)."""
    seen: dict[str, None] = {}
    for raw in lines:
        line = raw.strip()
        if not line or line.startswith(("//", "}", "^")):
            continue
        if line.startswith("%"):
            m = _RESULTS.match(line)
            if m is None:
                continue
            line = line[m.end() :]
        m = _OP_NAME.match(line)
        if m:
            seen.setdefault(m.group(1), None)
    return list(seen)


@dataclass
class Outcome:
    """The result of one mode on one case."""

    ok: bool
    reason: str = ""
    detail: str = ""
    # Every distinct reason (a verify case can miss several diagnostics), the first is `reason`.
    reasons: list[str] = field(default_factory=list)
    # Verify only: every expected code was reported at its line, fragments aside.
    codes_ok: bool | None = None

    def __post_init__(self) -> None:
        if self.reason and not self.reasons:
            self.reasons = [self.reason]


@dataclass
class CaseResult:
    """One case: where it is, the ops it uses and, when in scope, what each mode gave."""

    dialect: str
    file: str
    index: int
    line: int
    kind: str
    ops: list[str]
    unknown: list[str]
    outcomes: dict[str, Outcome] = field(default_factory=dict)

    @property
    def in_scope(self) -> bool:
        """Every op it spells is declared."""
        return not self.unknown

    @property
    def passed(self) -> bool:
        """In scope and every mode passed."""
        return self.in_scope and bool(self.outcomes) and all(o.ok for o in self.outcomes.values())

    def dialects(self) -> set[str]:
        """The dialects of the ops it spells."""
        return {name.split(".", 1)[0] for name in self.ops}


def _first_code(diags: Iterable[object]) -> str:
    codes = [getattr(d, "code", "") or "?" for d in diags]
    return codes[0] if codes else "?"


def _crash(where: str, exc: BaseException) -> Outcome:
    tail = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__)[-3:])
    return Outcome(False, f"{where}: crash {type(exc).__name__}", tail)


def _normalize(text: str) -> str:
    lines = [line.rstrip() for line in without_comment_lines(text).splitlines()]
    out: list[str] = []
    for line in lines:
        if line or (out and out[-1]):
            out.append(line)
    while out and not out[-1]:
        out.pop()
    return "\n".join(out) + "\n"


def _diff(want: str, got: str, a: str = "expected", b: str = "printed") -> str:
    return "".join(difflib.unified_diff(want.splitlines(True), got.splitlines(True), a, b))


def _parse_and_verify(
    case: Case, filename: str, registry: OpRegistry
) -> tuple[Module | None, Outcome | None]:
    try:
        module = parse_module(case.source(), filename=filename, ops=registry)
    except LoomParseError as e:
        diags = list(e.diagnostics)
        return None, Outcome(False, f"text: parse {_first_code(diags)}", str(e))
    except LoomError as e:
        return None, Outcome(False, f"text: parse error {type(e).__name__}", str(e))
    except Exception as e:  # a raw exception from the library is itself a finding
        return None, _crash("text: parse", e)
    try:
        diags = verify_module(module, ops=registry)
    except Exception as e:
        return None, _crash("text: verify", e)
    if diags.has_errors:
        errors = [d for d in diags.diagnostics if d.is_error]
        return None, Outcome(False, f"text: verify {_first_code(errors)}", diags.render())
    return module, None


def run_roundtrip(
    case: Case, filename: str, registry: OpRegistry, modes: Sequence[str]
) -> dict[str, Outcome]:
    """Text and bytecode round trips of one case."""
    out: dict[str, Outcome] = {}
    module, failure = _parse_and_verify(case, filename, registry)
    if module is None:
        assert failure is not None
        out["text"] = failure
        if "bytecode" in modes:
            out["bytecode"] = Outcome(False, "bytecode: text did not parse and verify")
        return out
    try:
        printed = print_module(module, ops=registry)
    except Exception as e:
        out["text"] = _crash("text: print", e)
        if "bytecode" in modes:
            out["bytecode"] = Outcome(False, "bytecode: text did not print")
        return out
    want = _normalize(case.expected_text())
    got = _normalize(printed)
    out["text"] = (
        Outcome(True) if got == want else Outcome(False, "text: mismatch", _diff(want, got))
    )
    if "bytecode" in modes:
        out["bytecode"] = _bytecode(module, printed, registry)
    return out


def _bytecode(module: Module, printed: str, registry: OpRegistry) -> Outcome:
    try:
        data = write_module(module, op_decls=registry)
    except LoomError as e:
        return Outcome(False, f"bytecode: write {type(e).__name__}", str(e))
    except Exception as e:
        return _crash("bytecode: write", e)
    try:
        back = read_module(data, op_decls=registry, verify=True)
    except LoomError as e:
        return Outcome(False, f"bytecode: read {type(e).__name__}", str(e))
    except Exception as e:
        return _crash("bytecode: read", e)
    try:
        again = print_module(back, ops=registry)
    except Exception as e:
        return _crash("bytecode: print", e)
    if again != printed:
        return Outcome(False, "bytecode: mismatch", _diff(printed, again, "text", "bytecode"))
    return Outcome(True)


def run_verify(case: Case, filename: str, registry: OpRegistry) -> Outcome:
    """The expected ``ERROR@`` diagnostics of one case against the ones we report."""
    try:
        module = parse_module(case.source(), filename=filename, ops=registry)
    except LoomParseError as e:
        found = list(e.diagnostics)
    except LoomError as e:
        return Outcome(False, f"verify: parse error {type(e).__name__}", str(e))
    except Exception as e:
        return _crash("verify: parse", e)
    else:
        try:
            found = [d for d in verify_module(module, ops=registry).diagnostics if d.is_error]
        except Exception as e:
            return _crash("verify: verify", e)
    missing, unexpected = match_diagnostics(found, case.expected)
    if not missing and not unexpected:
        return Outcome(True, codes_ok=True)
    # Matching again on code and line alone tells a wording difference from a missing error.
    loose = [Expected(e.code, e.line, [], e.comment_line) for e in case.expected]
    loose_missing, loose_unexpected = match_diagnostics(found, loose)
    unmatched = {id(e) for e in loose_missing}
    missing_ids = {id(e) for e in missing}
    reasons = []
    elsewhere = list(loose_unexpected)
    for exp, lo in zip(case.expected, loose):
        if id(exp) not in missing_ids:
            continue
        if id(lo) not in unmatched:
            reasons.append(f"verify: fragments differ {exp.code}")
            continue
        other = next((d for d in elsewhere if d.code == exp.code), None)
        if other is not None:
            elsewhere.remove(other)
            reasons.append(f"verify: wrong line {exp.code}")
        else:
            reasons.append(f"verify: missing {exp.code}")
    reasons += [f"verify: unexpected {d.code}" for d in elsewhere]
    lines = [
        f"expected (comment line {e.comment_line}): {e.code} at line {e.line} {e.fragments}"
        for e in missing
    ]
    lines += [f"reported: {d.render()}" for d in unexpected]
    codes_ok = not loose_missing and not loose_unexpected
    return Outcome(False, reasons[0], "\n".join(lines), list(dict.fromkeys(reasons)), codes_ok)


def corpus_files(root: Path, dialects: Sequence[str] | None = None) -> list[tuple[str, Path]]:
    """(dialect, path) of every round-trip, verify and bytecode corpus file under ``root``."""
    out = []
    for folder in sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith(".")):
        if dialects and folder.name not in dialects:
            continue
        for path in sorted(folder.rglob("*.loom-test")):
            if path.name.startswith(FILE_KINDS):
                out.append((folder.name, path))
    return out


def _kind_of(path: Path, mode: str) -> str:
    mode = normalize_mode(mode)
    if mode in FILE_KINDS:
        return mode
    return next(k for k in FILE_KINDS if path.name.startswith(k))


def run_file(
    dialect: str, path: Path, root: Path, registry: OpRegistry | None = None
) -> list[CaseResult]:
    """Classify and run every case of one corpus file."""
    registry = registry or default_registry()
    default = next(k for k in FILE_KINDS if path.name.startswith(k))
    mode, cases = split_cases(path.read_text(encoding="utf-8"), default_mode=default)
    kind = _kind_of(path, mode)
    rel = path.relative_to(root).as_posix()
    results = []
    for case in cases:
        ops = op_names(case.input_lines)
        unknown = [name for name in ops if name not in registry]
        res = CaseResult(dialect, rel, case.index, case.first_line, kind, ops, unknown)
        if res.in_scope:
            if kind == "verify":
                res.outcomes["verify"] = run_verify(case, str(path), registry)
            else:
                res.outcomes.update(run_roundtrip(case, str(path), registry, MODES_OF_KIND[kind]))
        results.append(res)
    return results


def run_corpus(
    root: Path, dialects: Sequence[str] | None = None, registry: OpRegistry | None = None
) -> list[CaseResult]:
    """Every case of every corpus file under ``root``."""
    registry = registry or default_registry()
    results: list[CaseResult] = []
    for dialect, path in corpus_files(root, dialects):
        results.extend(run_file(dialect, path, root, registry))
    return results


def _ratio(n: int, d: int) -> str:
    return f"{n}/{d} ({100 * n / d:.0f}%)" if d else "0/0"


def summarize(results: Sequence[CaseResult]) -> dict[str, object]:
    """Totals, per-file rows, unknown op counts and failure reasons."""
    rows = []
    by_file: dict[str, list[CaseResult]] = {}
    for r in results:
        by_file.setdefault(r.file, []).append(r)
    for file, rs in by_file.items():
        row: dict[str, object] = {
            "dialect": rs[0].dialect,
            "file": file,
            "cases": len(rs),
            "in_scope": sum(r.in_scope for r in rs),
            "passed": sum(r.passed for r in rs),
        }
        for mode in ALL_MODES:
            ran = [r.outcomes[mode] for r in rs if mode in r.outcomes]
            row[mode] = [sum(o.ok for o in ran), len(ran)]
        ran = [r.outcomes["verify"] for r in rs if "verify" in r.outcomes]
        row["verify_codes"] = [sum(bool(o.codes_ok) for o in ran), len(ran)]
        rows.append(row)

    def headline(selected: Sequence[CaseResult]) -> dict[str, int]:
        return {
            "cases": len(selected),
            "in_scope": sum(r.in_scope for r in selected),
            "passed": sum(r.passed for r in selected),
        }

    kernel_level = [r for r in results if r.dialects() <= set(KERNEL_LEVEL_DIALECTS)]
    compute = [r for r in results if r.dialects() <= set(COMPUTE_DIALECTS)]
    unknown_all: Counter[str] = Counter()
    unknown_by_dialect: dict[str, Counter[str]] = {}
    for r in results:
        unknown_all.update(r.unknown)
        unknown_by_dialect.setdefault(r.dialect, Counter()).update(r.unknown)
    reasons: Counter[str] = Counter()
    for r in results:
        reasons.update({x for o in r.outcomes.values() if not o.ok for x in o.reasons})
    return {
        "all": headline(results),
        "kernel_level": headline(kernel_level),
        "compute_dialects": headline(compute),
        "files": rows,
        "unknown_ops": unknown_all.most_common(),
        "unknown_ops_by_dialect": {d: c.most_common() for d, c in unknown_by_dialect.items()},
        "failure_reasons": reasons.most_common(),
    }


def render_table(summary: dict[str, object]) -> str:
    """The per-dialect, per-file table with totals."""
    rows = summary["files"]
    assert isinstance(rows, list)
    head = ("file", "cases", "in scope", "text", "bytecode", "verify", "codes", "passed")
    table = [head]
    dialect_totals: dict[str, list[int]] = {}
    for row in rows:
        cells = [row["file"], str(row["cases"]), str(row["in_scope"])]
        for mode in (*ALL_MODES, "verify_codes"):
            ok, n = row[mode]
            cells.append(f"{ok}/{n}" if n else "-")
        cells.append(str(row["passed"]))
        table.append(tuple(cells))
        vals = [row["cases"], row["in_scope"]]
        for mode in (*ALL_MODES, "verify_codes"):
            vals += row[mode]
        vals.append(row["passed"])
        tot = dialect_totals.setdefault(row["dialect"], [0] * len(vals))
        for i, v in enumerate(vals):
            tot[i] += v
    table.append(("",) * len(head))
    grand = [sum(col) for col in zip(*dialect_totals.values())] if dialect_totals else []
    for dialect, t in [*dialect_totals.items(), ("total", grand)]:
        if not t:
            continue
        modes = [f"{t[i]}/{t[i + 1]}" if t[i + 1] else "-" for i in (2, 4, 6, 8)]
        table.append((f"[{dialect}]", str(t[0]), str(t[1]), *modes, str(t[10])))
    widths = [max(len(r[i]) for r in table) for i in range(len(head))]
    lines = [
        "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths)))
        for r in table
    ]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def render_report(summary: dict[str, object], top: int = 40) -> str:
    """The table, the headline figures, unknown ops and failure reasons as text."""
    out = [render_table(summary), ""]
    for key, title in (
        ("all", "all cases"),
        ("kernel_level", "kernel-level cases (ops only from the 14 kernel-level dialects)"),
        ("compute_dialects", "compute cases (ops only from the nine compute dialects)"),
    ):
        h = summary[key]
        assert isinstance(h, dict)
        out.append(
            f"{title}: {h['cases']} cases, in scope {_ratio(h['in_scope'], h['cases'])}, "
            f"passed {_ratio(h['passed'], h['cases'])} (of in scope: "
            f"{_ratio(h['passed'], h['in_scope'])})"
        )
    unknown = summary["unknown_ops"]
    assert isinstance(unknown, list)
    out += ["", f"unknown op names (cases using them), top {top} of {len(unknown)}:"]
    out += [f"  {n:4d}  {name}" for name, n in unknown[:top]]
    by_dialect = summary["unknown_ops_by_dialect"]
    assert isinstance(by_dialect, dict)
    out += ["", "unknown op names per corpus dialect:"]
    for dialect, pairs in by_dialect.items():
        if pairs:
            out.append(f"  {dialect}: " + ", ".join(f"{name} {n}" for name, n in pairs))
    reasons = summary["failure_reasons"]
    assert isinstance(reasons, list)
    out += ["", "failure reasons of in-scope cases (cases):"]
    out += [f"  {n:4d}  {reason}" for reason, n in reasons] or ["  none"]
    return "\n".join(out)


def render_failures(results: Sequence[CaseResult], limit: int) -> str:
    """The first ``limit`` failing mode runs with their diffs or diagnostics."""
    out = []
    shown = 0
    for r in results:
        for mode, o in r.outcomes.items():
            if o.ok:
                continue
            if shown >= limit:
                return "\n".join(out)
            shown += 1
            out.append(f"=== {r.file}:{r.line} (case {r.index}, {mode}): {o.reason}")
            if o.detail:
                out.append(o.detail.rstrip())
    return "\n".join(out)


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("corpus", nargs="?", type=Path, default=DEFAULT_CORPUS)
    ap.add_argument("--dialect", action="append", default=[], help="only these (repeat or a,b)")
    ap.add_argument("--show-failures", type=int, default=0, metavar="N")
    ap.add_argument("--json", action="store_true", help="print JSON instead of the table")
    ap.add_argument("--top", type=int, default=40, help="unknown op names to list")
    args = ap.parse_args(argv)
    if not args.corpus.is_dir():
        print(f"conformance: no corpus folder at {args.corpus}", file=sys.stderr)
        return 2
    dialects = [d for item in args.dialect for d in item.split(",") if d]
    start = time.perf_counter()
    results = run_corpus(args.corpus, dialects or None)
    summary = summarize(results)
    elapsed = time.perf_counter() - start
    if args.json:
        summary["seconds"] = round(elapsed, 2)
        summary["failures"] = [
            {"file": r.file, "line": r.line, "case": r.index, "mode": m, **asdict(o)}
            for r in results
            for m, o in r.outcomes.items()
            if not o.ok
        ][: args.show_failures or None]
        print(json.dumps(summary, indent=2))
        return 0
    print(render_report(summary, args.top))
    print(f"\n{len(results)} cases in {elapsed:.1f} s")
    if args.show_failures:
        print("\n" + render_failures(results, args.show_failures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
