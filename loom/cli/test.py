"""``loom-test FILE...``: run the check cases of Loom modules on the reference interpreter.

Exit status: 0 when every sample passes, 1 when an expectation failed, 2 on invalid input.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from loom.cli.format import DEFAULT_MAX_INPUT
from loom.errors import LoomError


def build_parser() -> argparse.ArgumentParser:
    """The command-line parser of loom-test."""
    p = argparse.ArgumentParser(prog="loom-test", description=__doc__.split("\n")[0])
    p.add_argument("files", nargs="+", metavar="FILE", help=".loom text or .loombc bytecode")
    p.add_argument("--case", help="run only this case (@name or name)")
    p.add_argument("--sample", type=int, help="run only this sample ordinal of each case")
    p.add_argument("--max-samples-per-case", type=int, default=4096, metavar="N")
    p.add_argument("--list", action="store_true", help="list cases and sample counts; run none")
    p.add_argument("--json", metavar="REPORT", help="also write a loom.test.v0 JSON report")
    return p


def _load(path: str) -> object:
    from loom.format.bytecode import MAGIC
    from loom.verify import verify_module

    data = Path(path).read_bytes()
    if len(data) > DEFAULT_MAX_INPUT:
        raise ValueError(f"{path} is larger than the input limit")
    if data.startswith(MAGIC):
        from loom.format.bytecode import read_module

        module = read_module(data)
    else:
        from loom.format.text.parser import parse_module

        module = parse_module(data.decode("utf-8"), filename=path)
    diags = verify_module(module)
    if diags.has_errors:
        raise LoomError(f"{path} does not verify; nothing ran", list(diags))
    return module


def _fail(message: str) -> int:
    print(f"loom-test: error: {message}", file=sys.stderr)
    return 2


def main(argv: list[str] | None = None) -> int:
    """Entry point of the loom-test console script."""
    from loom.check import run
    from loom.check.report import Report

    ns = build_parser().parse_args(argv)
    if ns.max_samples_per_case <= 0:
        return _fail("--max-samples-per-case must be > 0")
    total = Report()
    for path in ns.files:
        try:
            module = _load(path)
        except (OSError, UnicodeDecodeError, ValueError) as e:
            return _fail(f"cannot read {path}: {e}")
        except LoomError as e:
            for d in e.diagnostics:
                print(d.render(), file=sys.stderr)
            return _fail(str(e))
        try:
            if ns.list:
                from loom.check.runner import plan_counts

                for name, count in plan_counts(module, ns.max_samples_per_case, ns.case):
                    print(f"{path}: @{name} {count} samples")
                continue
            report = run(
                module,
                case=ns.case,
                sample=ns.sample,
                max_samples_per_case=ns.max_samples_per_case,
                base_dir=Path(path).parent,
            )
        except LoomError as e:
            return _fail(f"{path}: {e}")
        total.cases.extend(report.cases)
    if ns.list:
        return 0
    print(total.render())
    if ns.json:
        try:
            Path(ns.json).write_text(json.dumps(total.to_json()) + "\n")
        except OSError as e:
            return _fail(f"cannot write {ns.json}: {e}")
    return 0 if total.ok else 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
