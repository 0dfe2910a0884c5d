"""func.fail ends the invocation with its status and message, in both engines."""

from __future__ import annotations

import numpy as np
import pytest

from loom.errors import LoomRuntimeError
from loom.format.text.parser import parse_module
from loom.interp import Stepper, launch
from loom.verify import verify_module

TEXT = """target.generic<reference> @reference

func.def @check(%value: i32, %message: buffer) -> (i32) {
  %limit = scalar.constant 5 : i32
  %ok = scalar.cmpi slt, %value, %limit : i32
  cfg.cond_br %ok, ^fine, ^bad
^fine:
  func.return %value : i32
^bad:
  func.fail out_of_range, %message : buffer
}

kernel.def target(@reference) export("k") @k() {
  %one = index.constant 1 : index
  %lanes = index.constant 8 : index
  kernel.launch.config workgroups(%one, %one, %one) workgroup_size(%lanes, %one, %one) : index
} launch(%in: buffer, %out: buffer, %message: buffer) {
  %base = index.constant 0 : offset
  %i = kernel.workitem.id<x> : index
  %iv = buffer.view %in[%base] : buffer -> view<8xi32>
  %ov = buffer.view %out[%base] : buffer -> view<8xi32>
  %x = view.load %iv[%i] : view<8xi32> -> i32
  %y = func.call @check(%x, %message) : (i32, buffer) -> (i32)
  view.store %y, %ov[%i] : i32, view<8xi32>
  kernel.return
}
"""


def _module():
    m = parse_module(TEXT, filename="fail.loom")
    assert not verify_module(m).has_errors, verify_module(m).render()
    return m


def _message() -> np.ndarray:
    return np.frombuffer(b"value too large\0padding", dtype=np.uint8).copy()


def test_no_lane_fails_runs_normally() -> None:
    x = np.arange(8, dtype=np.int32) % 5
    out = np.zeros(8, np.int32)
    launch(_module(), "k", args=[x, out, _message()])
    np.testing.assert_array_equal(out, x)


@pytest.mark.parametrize("engine", ["grid", "stepper"])
def test_a_failing_lane_raises_status_and_message_at_the_fail_line(engine: str) -> None:
    x = np.array([0, 1, 2, 9, 3, 4, 1, 0], dtype=np.int32)
    out = np.zeros(8, np.int32)
    with pytest.raises(LoomRuntimeError) as info:
        if engine == "grid":
            launch(_module(), "k", args=[x, out, _message()])
        else:
            Stepper(_module(), "k", args=[x, out, _message()]).run()
    d = info.value.diagnostics[0]
    assert d.code == "RUNTIME/020"
    assert "out_of_range" in d.message and "value too large" in d.message
    assert "padding" not in d.message
    assert d.range.line == 10
    assert "workitem (3, 0, 0)" in str(info.value)  # the first failing lane
