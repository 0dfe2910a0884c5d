"""scf.switch, scf.lookup and cfg.switch in both engines, against NumPy, with per-lane
selectors (lanes take different cases and meet again)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).parent))
from interp_helpers import load  # noqa: E402

from loom.interp import Stepper, launch
from loom.verify import verify_module


def _expected() -> list[np.ndarray]:
    i = np.arange(16)
    sel = i % 5
    switched = np.select([sel == 0, sel == 1, sel == 3], [i * 10, i, i + 5], 10 - i)
    looked = np.select([sel == 1, sel == 4], [11, 22], -1)
    jumped = np.select([sel == 0, sel == 2], [100, 2 * i], sel)
    marks = np.where(sel == 1, 7, 0)
    return [a.astype(np.int32) for a in (switched, looked, jumped, marks)]


def _buffers() -> list[np.ndarray]:
    return [np.zeros(16, np.int32) for _ in range(4)]


@pytest.mark.parametrize("engine", ["grid", "stepper"])
def test_multiway_kernel_matches_numpy(engine: str) -> None:
    module = load("multiway")
    assert not verify_module(module).has_errors
    bufs = _buffers()
    if engine == "grid":
        findings = launch(module, "multiway", args=bufs).findings
    else:
        s = Stepper(module, "multiway", args=bufs)
        s.run()
        assert s.done
        findings = s.findings
    assert not findings  # the barrier after the cfg.switch join is reached by every lane
    for got, want in zip(bufs, _expected()):
        np.testing.assert_array_equal(got, want)


def test_a_case_region_runs_only_for_its_lanes() -> None:
    bufs = _buffers()
    launch(load("multiway"), "multiway", args=bufs)
    # lanes 1, 6, 11 take case 1, the only region that writes marks
    assert set(np.flatnonzero(bufs[3])) == {1, 6, 11}


def test_stepper_step_back_through_switches_is_exact() -> None:
    bufs = _buffers()
    s = Stepper(load("multiway"), "multiway", args=bufs)
    n = s.run()
    assert n > 0
    for _ in range(n):
        assert s.step_back()
    assert not any(b.any() for b in bufs)
