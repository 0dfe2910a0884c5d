"""The benchmark suite's kernels (tests/interp/kernels/suite/) at small sizes.

Each kernel must compute what its NumPy equivalent in ``benchmarks/interp_suite.py`` computes,
with the fast paths on and off (same memory, findings and op counts), and the stepper must
leave the same memory as the grid engine.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).parent))
from test_fast_paths import assert_same  # noqa: E402

from loom.format.text.parser import parse_module
from loom.interp import Stepper, launch

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))
import interp_suite as suite

CASES = {c.name: c for c in suite.CASES}
SMALL = 1 << 12


def _module(name: str):
    path = suite.SUITE / f"{name}.loom"
    return parse_module(path.read_text(), filename=str(path))


def test_every_suite_file_has_a_case() -> None:
    assert sorted(p.stem for p in suite.SUITE.glob("*.loom")) == sorted(CASES)


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_numpy_with_clean_sanitizer(name: str) -> None:
    job = CASES[name].make(SMALL, np.random.default_rng(1))
    want = job["numpy"]()
    r = launch(_module(name), name, workload=job["workload"], args=job["args"], sanitize=True)
    assert not r.findings, r.render()
    assert job["check"](want)


@pytest.mark.parametrize("name", sorted(CASES))
def test_fast_and_general_paths_agree(name: str) -> None:
    def make_args() -> tuple:
        job = CASES[name].make(SMALL // 4, np.random.default_rng(2))
        return job["args"]

    job = CASES[name].make(SMALL // 4, np.random.default_rng(2))
    assert_same(_module(name), name, job["workload"], make_args)
    assert_same(_module(name), name, job["workload"], make_args, chunk_lanes=64)
    # without the sanitizer (loads may then hand out read-only views of memory)
    assert_same(_module(name), name, job["workload"], make_args, sanitize=False)
    assert_same(_module(name), name, job["workload"], make_args, chunk_lanes=64, sanitize=False)


@pytest.mark.parametrize(
    "name",
    [
        "saxpy_madd",
        "reduce_tree",
        "transpose_tiled",
        "stencil_halo",
        "histogram_atomic",
        "subgroup_reduce",
    ],
)
def test_stepper_leaves_the_same_memory(name: str) -> None:
    size = 1024
    grid_job = CASES[name].make(size, np.random.default_rng(3))
    launch(_module(name), name, workload=grid_job["workload"], args=grid_job["args"])
    step_job = CASES[name].make(size, np.random.default_rng(3))
    stepper = Stepper(_module(name), name, workload=step_job["workload"], args=step_job["args"])
    stepper.run()
    assert stepper.done
    assert not stepper.findings
    for a, b in zip(grid_job["args"], step_job["args"]):
        if isinstance(a, np.ndarray):
            assert np.array_equal(a, b)


@pytest.mark.parametrize("name", sorted(CASES))
def test_traced_launch_counts_every_store(name: str) -> None:
    job = CASES[name].make(SMALL // 4, np.random.default_rng(4))
    r = launch(_module(name), name, workload=job["workload"], args=job["args"], trace=True)
    assert not r.findings, r.render()
    writes = sum(int(t.writes.sum()) for t in r.accesses.values())
    assert writes > 0
