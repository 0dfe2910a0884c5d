"""``loom-test FILE...``: run the check cases of Loom modules on the reference interpreter.

Exit status: 0 when every sample passes, 1 when an expectation failed (or a case could not be
planned), 2 on invalid input.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

from loom.cli.format import DEFAULT_MAX_INPUT
from loom.errors import LoomError


def build_parser() -> argparse.ArgumentParser:
    """The command-line parser of loom-test."""
    p = argparse.ArgumentParser(prog="loom-test", description=__doc__.split("\n")[0])
    p.add_argument("files", nargs="+", metavar="FILE", help=".loom text or .loombc bytecode")
    p.add_argument("--case", help="run only this case (@name or name)")
    p.add_argument("--sample", type=int, help="run only this sample ordinal of each case")
    p.add_argument("--max-samples-per-case", type=int, default=4096, metavar="N")
    p.add_argument(
        "--library",
        action="append",
        default=[],
        metavar="LIB",
        help="a .loom or .loombc module defining symbols the inputs only declare (repeatable)",
    )
    p.add_argument(
        "--sanitizer",
        default="all",
        metavar="CATEGORIES",
        help="sanitizer categories joined by | or , (none, all, access, asan, race, tsan, "
        "operation, value, ubsan; default all)",
    )
    p.add_argument(
        "--dask",
        metavar="local|ADDRESS",
        help="run the samples on a Dask cluster: 'local' starts one on this machine",
    )
    p.add_argument("--list", action="store_true", help="list cases and sample counts; run none")
    p.add_argument("--json", metavar="REPORT", help="also write a loom.test.v0 JSON report")
    p.add_argument(
        "--progress",
        choices=("auto", "always", "never"),
        default="auto",
        help="a progress line on stderr (auto: when stderr is a terminal and a run is long)",
    )
    return p


def load_module(path: str) -> Any:
    """Read and verify a ``.loom`` text or ``.loombc`` bytecode module."""
    from loom.format.bytecode import MAGIC
    from loom.verify import verify_module

    data = Path(path).read_bytes()
    if len(data) > DEFAULT_MAX_INPUT:
        raise ValueError(f"{path} is larger than the input limit")
    if data.startswith(MAGIC):
        from loom.format.bytecode import read_module

        module = read_module(data, filename=path)
    else:
        from loom.format.text.parser import parse_module

        module = parse_module(data.decode("utf-8"), filename=path)
    diags = verify_module(module)
    if diags.has_errors:
        raise LoomError(f"{path} does not verify; nothing ran", list(diags))
    return module


class ProgressLine:
    """``loom-test: 123/1000 samples  12.3/s`` redrawn in place on a terminal.

    Draws nothing for runs that finish within ``delay`` seconds, nor when ``stream`` is not a
    terminal (unless forced)."""

    def __init__(self, stream: TextIO, force: bool = False, delay: float = 0.5) -> None:
        self.stream = stream
        self.enabled = force or stream.isatty()
        self.delay = 0.0 if force else delay
        self.start = time.perf_counter()
        self.last = 0.0
        self.drawn = False

    def __call__(self, done: int, total: int) -> None:
        if not self.enabled:
            return
        now = time.perf_counter()
        elapsed = now - self.start
        if done < total and (elapsed < self.delay or now - self.last < 0.1):
            return
        self.last = now
        rate = done / elapsed if elapsed > 0 else 0.0
        width = 24
        filled = width * done // max(total, 1)
        bar = "#" * filled + "-" * (width - filled)
        self.stream.write(f"\rloom-test [{bar}] {done}/{total} samples  {rate:.1f}/s")
        self.stream.flush()
        self.drawn = True

    def close(self) -> None:
        """End the line (when one was drawn)."""
        if self.drawn:
            self.stream.write("\n")
            self.stream.flush()


def _fail(message: str) -> int:
    print(f"loom-test: error: {message}", file=sys.stderr)
    return 2


def _report_load_error(path: str, e: Exception) -> int:
    if isinstance(e, LoomError):
        for d in e.diagnostics:
            print(d.render(), file=sys.stderr)
        return _fail(str(e))
    return _fail(f"cannot read {path}: {e}")


def main(argv: list[str] | None = None) -> int:
    """Entry point of the loom-test console script."""
    from loom.check.report import Report
    from loom.check.runner import plan_counts, run, sanitizer_codes

    ns = build_parser().parse_args(argv)
    if ns.max_samples_per_case <= 0:
        return _fail("--max-samples-per-case must be > 0")
    try:
        sanitizer_codes(ns.sanitizer)
    except LoomError as e:
        return _fail(str(e))
    libraries = []
    for path in ns.library:
        try:
            libraries.append(load_module(path))
        except (OSError, UnicodeDecodeError, ValueError, LoomError) as e:
            return _report_load_error(path, e)
    runner: Callable[..., Report] = run
    client = None
    if ns.dask and not ns.list:
        found = _dask_runner(ns.dask)
        if isinstance(found, int):
            return found
        runner, client = found
    progress = ProgressLine(sys.stderr, force=ns.progress == "always")
    if ns.progress == "never":
        progress.enabled = False
    total = Report()
    try:
        for path in ns.files:
            try:
                module = load_module(path)
            except (OSError, UnicodeDecodeError, ValueError, LoomError) as e:
                return _report_load_error(path, e)
            try:
                if ns.list:
                    for name, count in plan_counts(module, ns.max_samples_per_case, ns.case):
                        print(f"{path}: @{name} {count} samples")
                    continue
                report = runner(
                    module,
                    case=ns.case,
                    sample=ns.sample,
                    sanitize=ns.sanitizer,
                    max_samples_per_case=ns.max_samples_per_case,
                    base_dir=Path(path).parent,
                    libraries=libraries,
                    progress=progress,
                )
            except LoomError as e:
                return _fail(f"{path}: {e}")
            total.cases.extend(report.cases)
            total.planning_issues.extend(report.planning_issues)
    finally:
        progress.close()
        if client is not None:
            _close(client, local=ns.dask == "local")
    if ns.list:
        return 0
    return _write_report(total, ns.json)


def _dask_runner(address: str) -> tuple[Callable[..., Any], Any] | int:
    """A runner that fans samples out over the Dask scheduler at ``address`` (``local``: an
    in-process cluster) and its client, or the exit status of a clear failure."""
    try:
        from loom.check.distributed import client_for, run_on_dask
    except ImportError as e:
        return _fail(str(e))
    try:
        client = client_for(address)
    except (ImportError, OSError, ValueError) as e:
        return _fail(f"cannot reach the Dask scheduler {address}: {e}")

    def runner(module: Any, **kw: Any) -> Any:
        return run_on_dask(module, client, **kw)

    return runner, client


def _close(client: Any, local: bool) -> None:
    """Close the Dask client, and the in-process cluster ``--dask=local`` started."""
    cluster = client.cluster if local else None
    client.close()
    if cluster is not None:
        cluster.close()


def _write_report(total: Any, json_path: str | None) -> int:
    """Print the verdict table (and write the JSON report); the exit status."""
    try:
        print(total.render())
        sys.stdout.flush()
    except BrokenPipeError:  # e.g. piped into `head`: the JSON report is still written
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # quiet exit flush
    if json_path:
        try:
            Path(json_path).write_text(json.dumps(total.to_json()) + "\n")
        except OSError as e:
            return _fail(f"cannot write {json_path}: {e}")
    return 0 if total.ok else 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
