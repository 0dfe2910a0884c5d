"""Fan a check run out over a Dask cluster (``dask.distributed``; the optional ``dask`` extra).

The client plans every case (skips, planning issues, sample counts) exactly as the serial
:func:`loom.check.run` does; the samples are then cut into chunks that workers run. A worker
rebuilds the module from its source text (or bytecode) once and runs the same per-sample code,
so the merged report equals the serial one sample for sample.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from loom.check.report import Report, SampleResult
from loom.check.runner import CaseRunner, Linker, cases_of, plan

Payload = tuple[str, Any, str]
"""How a worker rebuilds a module: (``"text"`` or ``"bytecode"``, data, filename)."""

_MODULES: dict[str, Any] = {}
"""Modules rebuilt on this worker, by payload digest."""


def payload_of(module: Any) -> Payload:
    """The smallest faithful description of ``module`` for a worker: its source text when the
    parser kept it (diagnostics then show the same lines), else its bytecode."""
    name = module.sources[0] if module.sources else "<module>"
    text = (getattr(module, "source_texts", None) or {}).get(name)
    if text is not None:
        return ("text", text, name)
    from loom.format.bytecode import write_module

    return ("bytecode", write_module(module), name)


def _digest(p: Payload) -> str:
    data = p[1].encode("utf-8") if isinstance(p[1], str) else p[1]
    return hashlib.sha256(p[0].encode() + b"\0" + p[2].encode() + b"\0" + data).hexdigest()


def _module(p: Payload) -> Any:
    key = _digest(p)
    m = _MODULES.get(key)
    if m is None:
        if p[0] == "text":
            from loom.format.text.parser import parse_module

            m = parse_module(p[1], filename=p[2])
        else:
            from loom.format.bytecode import read_module

            m = read_module(p[1], filename=p[2])
        if len(_MODULES) > 32:
            _MODULES.clear()
        _MODULES[key] = m
    return m


def run_chunk(
    payload: Payload,
    libraries: tuple[Payload, ...],
    case: str,
    ordinals: list[int],
    options: dict[str, Any],
) -> list[SampleResult]:
    """Worker side: run samples ``ordinals`` of ``case`` of the module ``payload`` describes."""
    module = _module(payload)
    linker = Linker(module, [_module(p) for p in libraries])
    [op] = cases_of(module, case)
    base = options.get("base_dir")
    c = CaseRunner(
        module,
        op,
        Path(base) if base is not None else None,
        options.get("sanitize", True),
        linker,
        options.get("write_files", True),
    )
    return [c.run_sample(s) for s in ordinals]


def client_for(address: str) -> Any:
    """A ``dask.distributed.Client``: ``"local"`` starts a LocalCluster of worker processes
    on this machine, anything else is a scheduler address (``tcp://host:8786``)."""
    try:
        from dask.distributed import Client, LocalCluster
    except ImportError as e:  # pragma: no cover - depends on the installed extras
        raise ImportError(
            "Dask fan-out needs dask.distributed: pip install 'loom-workbench[dask]'"
        ) from e
    if address == "local":
        return Client(LocalCluster(threads_per_worker=1, dashboard_address=None))
    return Client(address)


def run_on_dask(
    module: Any,
    client: Any,
    case: str | None = None,
    sample: int | None = None,
    sanitize: bool | str = True,
    *,
    max_samples_per_case: int = 4096,
    base_dir: str | Path | None = None,
    libraries: Iterable[Any] = (),
    progress: Callable[[int, int], None] | None = None,
    write_files: bool = True,
    chunk_size: int | None = None,
) -> Report:
    """:func:`loom.check.run` with the samples run on the workers of Dask ``client``.

    ``chunk_size`` samples go to one task (default: about four tasks per worker thread, at
    most 256 samples each). The report is the serial run's, in the same order."""
    from dask.distributed import as_completed

    libraries = tuple(libraries)
    report, work = plan(
        module, case, sample, sanitize, max_samples_per_case=max_samples_per_case,
        base_dir=base_dir, libraries=libraries, write_files=write_files,
    )  # fmt: skip
    total = sum(len(o) for _, _, o in work)
    if not total:
        return report
    if chunk_size is None:
        threads = sum(client.nthreads().values()) or 1
        chunk_size = max(1, min(256, math.ceil(total / (4 * threads))))
    options = {
        "base_dir": str(base_dir) if base_dir is not None else None,
        "sanitize": sanitize,
        "write_files": write_files,
    }
    [mod_f] = client.scatter([payload_of(module)], broadcast=True)
    lib_f = client.scatter([tuple(payload_of(lib) for lib in libraries)], broadcast=True)[0]
    futures = {}
    for c, result, ordinals in work:
        for k in range(0, len(ordinals), chunk_size):
            part = ordinals[k : k + chunk_size]
            f = client.submit(run_chunk, mod_f, lib_f, c.name, part, options, pure=False)
            futures[f] = (result, k)
    pieces: dict[int, dict[int, list[SampleResult]]] = {}
    done = 0
    for f in as_completed(list(futures)):
        result, k = futures[f]
        samples = f.result()
        pieces.setdefault(id(result), {})[k] = samples
        done += len(samples)
        if progress is not None:
            progress(done, total)
    for _, result, _ in work:
        parts = pieces.get(id(result), {})
        for k in sorted(parts):
            result.samples.extend(parts[k])
    return report
