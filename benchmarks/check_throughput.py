"""Check-case throughput: samples/s of a 1,000-sample case, serial vs Dask.

Run: ``python benchmarks/check_throughput.py [--workers N]``. The case sweeps 10 sizes x 100
seeds; each sample draws two f32 tensors, launches an f32 add kernel over them on the
reference interpreter (sanitizer on), and compares the result with the NumPy oracle. Prints the
serial run, then the same run fanned out over a Dask ``LocalCluster`` of N worker processes
(default: the CPU count; cluster start-up is timed separately), and checks both reports agree.
Needs the ``dask`` extra.
"""

from __future__ import annotations

import argparse
import os
import time

from loom.check import run
from loom.format.text.parser import parse_module

T = "tensor<512xf32>"
CASE = f"""\
target.generic<reference> @reference

kernel.def target(@reference) export("addf") @addf(%n: index) {{
  %one = index.constant 1 : index
  %lanes = index.constant 64 : index
  %spare = index.constant 63 : index
  %padded = index.add %n, %spare : index
  %groups = index.div %padded, %lanes : index
  kernel.launch.config workgroups(%groups, %one, %one) workgroup_size(%lanes, %one, %one) : index
}} launch(%n: index, %a: buffer, %b: buffer, %c: buffer) {{
  %base = index.constant 0 : offset
  %i = kernel.workitem.dispatch.id<x> : index
  %inside = index.cmp ult, %i, %n : index
  %av = buffer.view %a[%base] : buffer -> view<[%n]xf32>
  %bv = buffer.view %b[%base] : buffer -> view<[%n]xf32>
  %cv = buffer.view %c[%base] : buffer -> view<[%n]xf32>
  scf.if %inside {{
    %x = view.load %av[%i] : view<[%n]xf32> -> f32
    %y = view.load %bv[%i] : view<[%n]xf32> -> f32
    %sum = scalar.addf %x, %y : f32
    view.store %sum, %cv[%i] : f32, view<[%n]xf32>
  }}
  kernel.return
}}

check.case @sweep {{
  %n = check.param.range linear bounds(512 to 512) name("n") : index
  %size = check.param.choice values([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]) name("size") : index
  %seed = check.param.seed base(1000) count(100) name("seed") : i64
  %a = check.generate.random.uniform seed(%seed) range(-1.0 to 1.0) : {T}
  %b = check.generate.random.uniform seed(%seed) range(0.0 to 2.0) : {T}
  %c = check.generate.fill value(0.0) : {T}
  kernel.launch @addf[%n](%n, %a, %b, %c) : [index](index, {T}, {T}, {T})
  %e = check.oracle.call<reference.add> callee(@add) inputs(%a, %b) : ({T}, {T}) -> ({T})
  check.expect.close actual(%c) expected(%e) atol(0.0) rtol(0.0) nan(same) : {T}
  check.return
}}
"""


def main() -> None:
    """Print the figures."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    ns = ap.parse_args()
    module = parse_module(CASE, filename="check_throughput.loom")
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"load average {load:.2f} on {os.cpu_count()} CPUs")
    t0 = time.perf_counter()
    serial = run(module)
    t_serial = time.perf_counter() - t0
    n = len(serial.samples)
    assert n == 1000 and serial.ok, serial.summary()
    print(f"{'run':<28} {'time s':>8} {'samples/s':>10} {'x serial':>9}")
    print(f"{'serial':<28} {t_serial:>8.2f} {n / t_serial:>10.1f} {1.0:>9.2f}")
    try:
        from dask.distributed import Client, LocalCluster
    except ImportError:
        print("dask.distributed is not installed (pip install 'loom-workbench[dask]')")
        return
    from loom.check.distributed import run_on_dask

    t0 = time.perf_counter()
    with (
        LocalCluster(
            n_workers=ns.workers, threads_per_worker=1, dashboard_address=None, silence_logs=40
        ) as cluster,
        Client(cluster) as client,
    ):
        t_start = time.perf_counter() - t0
        for label in ("dask (first run)", "dask (warm workers)"):
            t0 = time.perf_counter()
            fanned = run_on_dask(module, client)
            t = time.perf_counter() - t0
            assert fanned.to_json() == serial.to_json()
            name = f"{label}, {ns.workers} procs"
            print(f"{name:<28} {t:>8.2f} {n / t:>10.1f} {t_serial / t:>9.2f}")
    print(f"(LocalCluster start-up {t_start:.2f} s, not included; reports identical)")


if __name__ == "__main__":
    main()
