"""``loom-run``: run a kernel from a ``.loom`` file on ``.npy`` data with the interpreter.

    loom-run saxpy.loom --kernel saxpy --workload 1000 \\
        --arg n=1000 --arg a=2.5 --arg x=x.npy --arg y=y.npy -o out/

Buffer arguments take ``NAME=FILE.npy``; scalar arguments take ``NAME=VALUE``. After the launch
every buffer is written back as ``OUTDIR/NAME.npy`` (same dtype and shape as loaded). Findings
print like compiler diagnostics on stderr; the exit status is 1 on errors (runtime or
sanitizer), 2 on bad command lines.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import numpy as np

from loom.errors import LoomError
from loom.ir import BufferType, ScalarType


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="loom-run", description="Run a Loom kernel on NumPy data.")
    p.add_argument("file", help="a .loom text file")
    p.add_argument("--kernel", required=True, help="kernel symbol (with or without @)")
    p.add_argument(
        "--workload",
        nargs="*",
        type=int,
        default=[],
        metavar="N",
        help="workload values for the config region",
    )
    p.add_argument(
        "--arg",
        action="append",
        default=[],
        metavar="NAME=FILE.npy|VALUE",
        help="a launch argument (repeat for each, any order)",
    )
    p.add_argument(
        "-o",
        "--output",
        default=".",
        metavar="OUTDIR",
        help="folder for the written-back buffers (default: current folder)",
    )
    p.add_argument("--no-sanitize", action="store_true", help="turn the sanitizer off")
    p.add_argument("--max-steps", type=int, default=None, help="ops one workitem may execute")
    p.add_argument(
        "--progress",
        action="store_true",
        help="show a progress bar even when stderr is not a terminal",
    )
    p.add_argument(
        "--plot",
        metavar="FILE.svg",
        help="draw the access map (last writer, read/write counts, races, out-of-bounds and "
        "uninitialised accesses per element) to FILE.svg; needs matplotlib",
    )
    return p


def _plot(source: Any, path: str, buffers: dict[str, np.ndarray]) -> None:
    from loom.plot import access_svg

    Path(path).write_text(access_svg(source, {n: a.dtype for n, a in buffers.items()}))
    print(f"loom-run: wrote the access map to {path}", file=sys.stderr)


def _scalar(text: str, t: ScalarType) -> Any:
    if t.is_float:
        return float(text)
    if t.bit_width == 1 and text in ("true", "false"):
        return text == "true"
    return int(text, 0)


def _progress_bar(stream: Any) -> Any:
    def show(done: int, total: int) -> None:
        width = 30
        filled = width * done // max(total, 1)
        stream.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {done}/{total} workgroups")
        if done >= total:
            stream.write("\n")
        stream.flush()

    return show


def _bind(plan: Any, given: dict[str, str]) -> tuple[list, dict[str, np.ndarray]]:
    args: list = []
    buffers: dict[str, np.ndarray] = {}
    for p in plan.params:
        name = p.display_name
        if name not in given:
            expected = ", ".join(f"{q.display_name}: {q.type}" for q in plan.params)
            raise ValueError(f"missing --arg {name}=... (kernel arguments: {expected})")
        raw = given.pop(name)
        if isinstance(p.type, BufferType):
            try:
                arr = np.ascontiguousarray(np.load(raw, allow_pickle=False))
            except (OSError, ValueError) as e:
                raise ValueError(f"argument {name}: cannot load {raw!r}: {e}") from None
            buffers[name] = arr
            args.append(arr)
        elif isinstance(p.type, ScalarType):
            try:
                args.append(_scalar(raw, p.type))
            except ValueError:
                raise ValueError(f"argument {name}: {raw!r} is not a {p.type} value") from None
        else:
            raise ValueError(f"argument {name} of type {p.type} is not supported")
    if given:
        raise ValueError(f"unknown argument(s): {', '.join(sorted(given))}")
    return args, buffers


def main(argv: list[str] | None = None) -> int:
    """Entry point; returns the exit status."""
    ns = _parser().parse_args(argv)
    from loom.format.text.parser import parse_module
    from loom.interp import launch
    from loom.interp.engine import _plan

    path = Path(ns.file)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as e:
        print(f"loom-run: cannot read {path}: {e.strerror}", file=sys.stderr)
        return 2
    given: dict[str, str] = {}
    for item in ns.arg:
        name, sep, value = item.partition("=")
        if not sep:
            print(f"loom-run: --arg {item!r} must be NAME=FILE.npy or NAME=VALUE", file=sys.stderr)
            return 2
        given[name.lstrip("%")] = value
    try:
        module = parse_module(text, filename=str(path))
        plan = _plan(module, ns.kernel)
        args, buffers = _bind(plan, given)
        show = ns.progress or sys.stderr.isatty()
        result = launch(
            module,
            ns.kernel,
            workload=tuple(ns.workload),
            args=tuple(args),
            sanitize=not ns.no_sanitize,
            max_steps=ns.max_steps,
            progress=_progress_bar(sys.stderr) if show else None,
            trace=ns.plot is not None,
        )
        if ns.plot:
            _plot(result, ns.plot, buffers)
    except ValueError as e:
        print(f"loom-run: {e}", file=sys.stderr)
        return 2
    except LoomError as e:
        print(str(e), file=sys.stderr)
        if ns.plot and getattr(e, "accesses", None):
            try:
                _plot(e, ns.plot, buffers)
            except LoomError as plot_error:
                print(str(plot_error), file=sys.stderr)
        return 1
    out = Path(ns.output)
    out.mkdir(parents=True, exist_ok=True)
    for name, arr in buffers.items():
        np.save(out / f"{name}.npy", arr)
    for d in result.findings:
        print(d.render(), file=sys.stderr)
    print(
        f"ran @{result.kernel}: grid {result.grid}, workgroup {result.workgroup}, "
        f"{result.workitems} workitems, {result.ops_executed} ops in "
        f"{result.wall_time * 1e3:.1f} ms; wrote {len(buffers)} buffer(s) to {out}"
    )
    return 1 if result.errors else 0


if __name__ == "__main__":
    raise SystemExit(main())
