"""``loom-run``: run a kernel from a ``.loom`` or ``.loombc`` file on ``.npy`` data.

    loom-run saxpy.loom --kernel saxpy --workload 1000 \\
        --arg n=1000 --arg a=2.5 --arg x=x.npy --arg y=y.npy -o out/

Buffer arguments take ``NAME=FILE.npy``; scalar arguments take ``NAME=VALUE``. After the launch
every buffer is written back as ``OUTDIR/NAME.npy`` (same dtype and shape as loaded).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from loom.cli.files import replace_atomically
from loom.cli.format import DEFAULT_MAX_INPUT, human_size, parse_size
from loom.cli.run_inputs import (
    RunInputError,
    check_array,
    load_npy,
    output_targets,
    parse_scalar,
    view_uses,
)
from loom.errors import LoomError
from loom.ir import BufferType, Module, ScalarType

EXIT_OK = 0
EXIT_KERNEL_ERRORS = 1
EXIT_USAGE = 2

EPILOG = """\
checks before the launch (each failure is one line on stderr and exit status 2):
  the file is read as bytecode when it starts with the magic 'LOOM', otherwise as UTF-8 text,
  then verified; every --arg names a launch argument exactly once; scalars fit their type;
  workload values are non-negative; a .npy header must describe data the file really holds
  (at most --max-input-size bytes); a buffer's dtype and shape must match the views the
  kernel makes from it (i32 -> int32/uint32, f32 -> float32, ...; extents that are static,
  constants or launch arguments are compared) unless --reinterpret is given; existing
  OUTDIR/NAME.npy files are not overwritten unless --force is given.

exit status:
  0  the kernel ran without errors (warnings may be printed)
  1  the kernel ran and reported errors (runtime errors, sanitizer findings)
  2  bad command line or input: nothing ran, no file written
"""


class _Usage(Exception):
    """A bad command line or input, reported as one line; exit status 2."""


def build_parser() -> argparse.ArgumentParser:
    """The command line of ``loom-run`` (options are grouped so tools can add their own)."""
    p = argparse.ArgumentParser(
        prog="loom-run",
        description="Run a Loom kernel on NumPy data with the reference interpreter.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("file", help="a .loom text or .loombc bytecode file")
    launch = p.add_argument_group("launch")
    launch.add_argument("--kernel", required=True, help="kernel symbol (with or without @)")
    launch.add_argument(
        "--workload",
        nargs="*",
        type=int,
        default=[],
        metavar="N",
        help="workload values for the config region (non-negative)",
    )
    launch.add_argument(
        "--arg",
        action="append",
        default=[],
        metavar="NAME=FILE.npy|VALUE",
        help="a launch argument (once each, any order)",
    )
    launch.add_argument(
        "--config",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="override a config value (config.decl / config.def symbol, with or without @)",
    )
    launch.add_argument(
        "--global",
        dest="globals",
        action="append",
        default=[],
        metavar="NAME=FILE.npy|VALUE",
        help="the starting value of a global (a .npy file is written back like a buffer)",
    )
    launch.add_argument(
        "--reinterpret",
        action="store_true",
        help="use a .npy file's bytes even when its dtype or shape does not match the views",
    )
    launch.add_argument("--no-sanitize", action="store_true", help="turn the sanitizer off")
    launch.add_argument(
        "--max-steps", type=_positive, default=None, help="ops one workitem may execute"
    )
    launch.add_argument(
        "--max-input-size",
        type=parse_size,
        default=DEFAULT_MAX_INPUT,
        metavar="SIZE",
        help="largest module or .npy file read (suffix K, M or G; default 256M)",
    )
    out = p.add_argument_group("output")
    out.add_argument(
        "-o",
        "--output",
        default=".",
        metavar="OUTDIR",
        help="folder for the written-back buffers, created if missing (default: .)",
    )
    out.add_argument("--force", action="store_true", help="replace existing OUTDIR/NAME.npy files")
    out.add_argument(
        "--progress",
        action="store_true",
        help="show a progress bar even when stderr is not a terminal",
    )
    out.add_argument(
        "--plot",
        metavar="FILE.svg",
        help="draw the access map (last writer, read/write counts, races, out-of-bounds and "
        "uninitialised accesses per element) to FILE.svg; needs matplotlib",
    )
    return p


def _plot(source: Any, path: str, buffers: dict[str, np.ndarray]) -> None:
    """Write the access map of a traced launch (or of its runtime error) to ``path``."""
    from loom.plot import access_svg

    try:
        Path(path).write_text(access_svg(source, {n: a.dtype for n, a in buffers.items()}))
    except OSError as e:
        _err(f"loom-run: error: cannot write the access map {path}: {e.strerror}")
        return
    except LoomError as e:
        _err(str(e))
        return
    _err(f"loom-run: wrote the access map to {path}")


def _positive(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if n <= 0:
        raise argparse.ArgumentTypeError(f"must be positive, got {n}")
    return n


@dataclass
class Job:
    """A checked launch: the module, kernel, values and where the buffers go afterwards."""

    module: Module
    kernel: str
    workload: tuple[int, ...]
    args: list[Any]
    buffers: dict[str, np.ndarray] = field(default_factory=dict)
    targets: dict[str, Path] = field(default_factory=dict)
    globals: dict[str, Any] = field(default_factory=dict)
    """Starting values of globals by name; after the launch, every scalar global's value."""
    config: dict[str, Any] = field(default_factory=dict)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the exit status."""
    ns = build_parser().parse_args(argv)
    try:
        job = prepare(ns)
    except (_Usage, RunInputError) as e:
        _err(f"loom-run: error: {e}")
        return EXIT_USAGE
    except LoomError as e:
        _report(e)
        return EXIT_USAGE
    from loom.interp import launch

    show = ns.progress or sys.stderr.isatty()
    try:
        result = launch(
            job.module,
            job.kernel,
            workload=job.workload,
            args=tuple(job.args),
            sanitize=not ns.no_sanitize,
            max_steps=ns.max_steps,
            progress=_progress_bar(sys.stderr) if show else None,
            trace=ns.plot is not None,
            globals=job.globals,
            config=job.config,
        )
    except LoomError as e:
        _report(e)
        if ns.plot and getattr(e, "accesses", None):
            _plot(e, ns.plot, job.buffers)
        _err("loom-run: the launch stopped; no buffer written")
        return EXIT_KERNEL_ERRORS
    except (MemoryError, RecursionError) as e:
        _err(f"loom-run: error: the interpreter ran out of {_resource(e)}; no buffer written")
        return EXIT_KERNEL_ERRORS
    for d in result.findings:
        _err(d.render())
    if ns.plot:
        _plot(result, ns.plot, job.buffers)
    try:
        write_back(job)
    except _Usage as e:
        _err(f"loom-run: error: {e}")
        return EXIT_USAGE
    for name, value in job.globals.items():
        if not isinstance(value, np.ndarray):
            print(f"global @{name} = {value}")
    print(
        f"ran @{result.kernel}: grid {result.grid}, workgroup {result.workgroup}, "
        f"{result.workitems} workitems, {result.ops_executed} ops in "
        f"{result.wall_time * 1e3:.1f} ms; wrote {len(job.buffers)} buffer(s) to {ns.output}"
    )
    return EXIT_KERNEL_ERRORS if result.errors else EXIT_OK


def _resource(e: BaseException) -> str:
    return "memory" if isinstance(e, MemoryError) else "stack (calls nested too deeply)"


# ---------------------------------------------------------------------- preparing


def prepare(ns: argparse.Namespace) -> Job:
    """Read, verify and bind everything; raises before anything runs or is written."""
    module = load_module(ns.file, ns.max_input_size)
    op, config, body = _kernel(module, ns.kernel)
    given = _given_args(ns.arg, body)
    workload = _workload(ns.workload, config)
    job = Job(module, ns.kernel, workload, [])
    from loom.interp.launch_args import bind_scalar

    scalars: dict[int, int] = {}
    for p in body.entry.args:
        if isinstance(p.type, ScalarType):
            raw = given[p.display_name]
            try:
                value = parse_scalar(raw, p.type)
                bind_scalar(value, p.type, f"argument {p.display_name}")
            except RunInputError as e:
                raise _Usage(f"argument {p.display_name}: {e}") from None
            except LoomError as e:
                raise _Usage(str(e)) from None
            if isinstance(value, int):
                scalars[p.id] = value
            job.args.append(value)
        elif isinstance(p.type, BufferType):
            job.args.append(None)  # filled below, once scalar extents are known
        else:
            raise _Usage(f"argument {p.display_name} of type {p.type} cannot be passed yet")
    uses = view_uses(module, body, scalars)
    for i, p in enumerate(body.entry.args):
        if not isinstance(p.type, BufferType):
            continue
        path = given[p.display_name]
        arr = load_npy(path, ns.max_input_size)
        if not ns.reinterpret:
            check_array(p.display_name, path, arr, uses.get(p.id, []))
        job.args[i] = arr
        job.buffers[p.display_name] = arr
    _records(module, ns, job)
    names = list(job.buffers)
    targets = output_targets(Path(ns.output), names, ns.force)
    job.targets = dict(zip(names, targets))
    if names:
        try:
            Path(ns.output).mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise _Usage(f"cannot create {ns.output}: {e.strerror or e}") from None
    return job


def _records(module: Module, ns: argparse.Namespace, job: Job) -> None:
    """Bind ``--config`` and ``--global`` values by the types the module declares."""
    from loom.interp.semantics._records import ModuleRecords

    try:
        known = ModuleRecords(module)
    except LoomError as e:
        raise _Usage(str(e)) from None
    for item, into, what in (
        (ns.config, job.config, "config"),
        (ns.globals, job.globals, "global"),
    ):
        for text in item:
            name, sep, raw = text.partition("=")
            name = name.strip().removeprefix("@")
            if not sep or not name:
                raise _Usage(f"--{what} {text!r}: expected NAME=VALUE")
            if name in into:
                raise _Usage(f"--{what} names @{name} twice")
            t = known.config_types.get(name) if what == "config" else None
            if what == "global":
                cell = known.cells.get(name)
                t = cell.type if cell is not None else None
            if raw.endswith(".npy") and what == "global":
                arr = load_npy(raw, ns.max_input_size)
                into[name] = arr
                job.buffers[name] = arr
            elif isinstance(t, ScalarType):
                try:
                    into[name] = parse_scalar(raw.strip(), t)
                except RunInputError as e:
                    raise _Usage(f"--{what} {name}: {e}") from None
            else:
                into[name] = raw  # unknown names: the launch reports them with the known ones
    try:
        ModuleRecords(module, job.globals, job.config)
    except LoomError as e:
        raise _Usage(str(e)) from None


def load_module(path: str, limit: int) -> Module:
    """Read ``path`` as bytecode (sniffing the magic) or UTF-8 text, parse and verify it."""
    from loom.format.bytecode import MAGIC

    try:
        with open(path, "rb") as f:
            data = f.read(limit + 1)
    except OSError as e:
        raise _Usage(f"cannot read {path}: {e.strerror or e}") from None
    if len(data) > limit:
        raise _Usage(
            f"{path} is larger than the input limit of {human_size(limit)} "
            "(raise it with --max-input-size)"
        )
    if data.startswith(MAGIC):
        from loom.format.bytecode import read_module

        module = read_module(data)
    else:
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as e:
            line = data[: e.start].count(b"\n") + 1
            raise _Usage(
                f"{path}:{line}: the file is neither Loom bytecode nor UTF-8 text (byte "
                f"0x{data[e.start]:02x} at offset {e.start})"
            ) from None
        from loom.format.text.parser import parse_module

        module = parse_module(text, filename=path)
    from loom.verify import verify_module

    diags = verify_module(module)
    if diags.has_errors:
        for d in diags:
            _err(d.render())
        raise _Usage(f"{path} does not verify; nothing ran")
    return module


def _kernel(module: Module, name: str) -> tuple[Any, Any, Any]:
    from loom.interp.compile import find_kernel
    from loom.opview import region_groups
    from loom.registry import default_registry

    try:
        op = find_kernel(module, name)
    except LoomError as e:
        raise _Usage(str(e)) from None
    decl = default_registry().lookup(op.name)
    regions = region_groups(op, decl)
    return op, regions["config"], regions["body"]


def _signature(body: Any) -> str:
    return ", ".join(f"{p.display_name}: {p.type}" for p in body.entry.args) or "none"


def _given_args(items: list[str], body: Any) -> dict[str, str]:
    known = {p.display_name for p in body.entry.args}
    given: dict[str, str] = {}
    for item in items:
        name, sep, value = item.partition("=")
        name = name.lstrip("%")
        if not sep or not name:
            raise _Usage(f"--arg {item!r} must be NAME=FILE.npy or NAME=VALUE")
        if name not in known:
            raise _Usage(f"unknown --arg {name} (kernel arguments: {_signature(body)})")
        if name in given:
            raise _Usage(f"--arg {name} is given twice")
        given[name] = value
    for p in body.entry.args:
        if p.display_name not in given:
            raise _Usage(
                f"missing --arg {p.display_name}=... (kernel arguments: {_signature(body)})"
            )
    return given


def _workload(values: list[int], config: Any) -> tuple[int, ...]:
    from loom.interp.launch_args import bind_scalar

    params = config.entry.args
    names = ", ".join(f"{p.display_name}: {p.type}" for p in params) or "none"
    if len(values) != len(params):
        raise _Usage(
            f"the kernel takes {len(params)} --workload value(s) ({names}), got {len(values)}"
        )
    for p, v in zip(params, values):
        if v < 0:
            raise _Usage(f"workload value {p.display_name} must not be negative, got {v}")
        try:
            bind_scalar(v, p.type, f"workload value {p.display_name}")
        except LoomError as e:
            raise _Usage(str(e)) from None
    return tuple(values)


# ---------------------------------------------------------------------- output


def write_back(job: Job) -> None:
    """Write every buffer to its target, each atomically (no partial ``.npy`` file)."""
    for name, arr in job.buffers.items():
        target = job.targets[name]
        try:
            replace_atomically(
                str(target),
                lambda f, arr=arr: np.save(f, arr, allow_pickle=False),
                prefix=f".{name}-",
                suffix=".npy",
            )
        except OSError as e:
            raise _Usage(f"cannot write {target}: {e.strerror or e}") from None


# ---------------------------------------------------------------------- printing


def _err(message: str) -> None:
    print(message, file=sys.stderr)


def _report(e: LoomError) -> None:
    diags = getattr(e, "diagnostics", None)
    if diags:
        for d in diags:
            _err(d.render())
    else:
        _err(f"loom-run: error: {e}")


def _progress_bar(stream: Any) -> Any:
    def show(done: int, total: int) -> None:
        width = 30
        filled = width * done // max(total, 1)
        stream.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {done}/{total} workgroups")
        if done >= total:
            stream.write("\n")
        stream.flush()

    return show


if __name__ == "__main__":
    raise SystemExit(main())
