"""Decision 9 runtime errors, launch argument checking and the step budget."""

from __future__ import annotations

import numpy as np
import pytest

from loom.errors import LoomRuntimeError
from loom.format.text.parser import parse_module
from loom.interp import Stepper, launch

TEMPLATE = """target.generic<reference> @reference

kernel.def target(@reference) @k() {{
  %one = index.constant 1 : index
  %four = index.constant 4 : index
  kernel.launch.config workgroups(%one, %one, %one) workgroup_size(%four, %one, %one) : index
}} launch(%out: buffer) {{
  %lane = kernel.workitem.id<x> : index
  %base = index.constant 0 : offset
  %ov = buffer.view %out[%base] : buffer -> view<4xi32>
{body}
  kernel.return
}}
"""
BODY_LINE = 11


def kernel(body: str):
    text = TEMPLATE.format(body="\n".join("  " + line for line in body.strip().splitlines()))
    return parse_module(text, filename="err.loom")


def run_error(body: str, engine: str = "grid") -> LoomRuntimeError:
    m = kernel(body)
    with pytest.raises(LoomRuntimeError) as info:
        if engine == "grid":
            launch(m, "k", args=(np.zeros(4, np.int32),))
        else:
            Stepper(m, "k", args=(np.zeros(4, np.int32),)).run()
    return info.value


CASES = {
    "div-by-zero": (
        """
%l = index.cast %lane : index to i32
%z = scalar.constant 0 : i32
%q = scalar.divsi %l, %z : i32""",
        "RUNTIME/002",
        3,
    ),
    "rem-by-zero": (
        """
%l = index.cast %lane : index to i32
%z = scalar.constant 0 : i32
%q = scalar.remui %l, %z : i32""",
        "RUNTIME/002",
        3,
    ),
    "int-min-div": (
        """
%m = scalar.constant -2147483648 : i32
%n = scalar.constant -1 : i32
%q = scalar.divsi %m, %n : i32""",
        "RUNTIME/003",
        3,
    ),
    "shift-width": (
        """
%l = index.cast %lane : index to i32
%c = scalar.constant 30 : i32
%s = scalar.addi %l, %c : i32
%q = scalar.shli %l, %s : i32""",
        "RUNTIME/004",
        4,
    ),
    "nan-to-int": (
        """
%z = scalar.constant 0.0 : f32
%nan = scalar.divf %z, %z : f32
%q = scalar.fptosi %nan : f32 to i32""",
        "RUNTIME/005",
        3,
    ),
    "float-out-of-range": (
        """
%big = scalar.constant 3.0e9 : f32
%q = scalar.fptosi %big : f32 to i32""",
        "RUNTIME/005",
        2,
    ),
    "offset-negative": (
        """
%o = index.cast %lane : index to offset
%one = index.constant 1 : offset
%q = index.sub %o, %one : offset""",
        "RUNTIME/006",
        3,
    ),
    "index-overflow": (
        """
%big = index.constant 9223372036854775807 : index
%q = index.add %big, %lane : index""",
        "RUNTIME/006",
        2,
    ),
    "index-div-negative": (
        """
%m = index.constant -4 : index
%q = index.div %m, %lane : index""",
        "RUNTIME/006",
        2,
    ),
    "for-step": (
        """
%c0 = index.constant 0 : index
%c4 = index.constant 4 : index
scf.for %iv = [%c0 to %c4 step %c0] {
}""",
        "RUNTIME/007",
        3,
    ),
    "assert": (
        """
%c2 = index.constant 2 : index
%ok = index.cmp slt, %lane, %c2 : index
kernel.assert %ok "lane too large" : i1""",
        "RUNTIME/008",
        3,
    ),
    "store-oob": (
        """
%c4 = index.constant 4 : index
%i = index.add %lane, %c4 : index
%v = index.cast %lane : index to i32
view.store %v, %ov[%i] : i32, view<4xi32>""",
        "RUNTIME/001",
        4,
    ),
}


@pytest.mark.parametrize("engine", ["grid", "stepper"])
@pytest.mark.parametrize("name", list(CASES))
def test_runtime_errors_name_op_line_and_workitem(name: str, engine: str) -> None:
    body, code, line = CASES[name]
    err = run_error(body, engine)
    d = err.diagnostics[0]
    assert d.code == code, str(err)
    assert d.range is not None and d.range.line == BODY_LINE + line - 1, str(err)
    assert "workgroup (0, 0, 0) workitem (" in d.message
    text = str(err)
    assert f"err.loom:{BODY_LINE + line - 1}:" in text and "^" in text


def test_assert_message_is_reported() -> None:
    err = run_error(CASES["assert"][0])
    assert "lane too large" in str(err) and "workitem (2, 0, 0)" in str(err)


def test_float_division_by_zero_is_ieee_not_an_error() -> None:
    m = kernel("""
%z = scalar.constant 0.0 : f32
%one = scalar.constant 1.0 : f32
%inf = scalar.divf %one, %z : f32
%bits = scalar.bitcast %inf : f32 to i32
view.store %bits, %ov[%lane] : i32, view<4xi32>""")
    out = np.zeros(4, np.int32)
    launch(m, "k", args=(out,))
    assert np.all(out.view(np.float32) == np.inf)


def test_errors_only_for_active_lanes() -> None:
    m = kernel("""
%c0 = index.constant 0 : index
%nonzero = index.cmp ne, %lane, %c0 : index
%l = index.cast %lane : index to i32
scf.if %nonzero {
  %c12 = scalar.constant 12 : i32
  %q = scalar.divsi %c12, %l : i32
  view.store %q, %ov[%lane] : i32, view<4xi32>
}""")
    out = np.zeros(4, np.int32)
    launch(m, "k", args=(out,))
    np.testing.assert_array_equal(out, [0, 12, 6, 4])


def test_infinite_loop_hits_the_step_budget() -> None:
    m = kernel("""
%t = scalar.constant true : i1
scf.while {
  scf.condition %t : i1
} do {
  scf.yield
}""")
    with pytest.raises(LoomRuntimeError) as info:
        launch(m, "k", args=(np.zeros(4, np.int32),), max_steps=1000)
    assert info.value.diagnostics[0].code == "RUNTIME/009"
    with pytest.raises(LoomRuntimeError):
        Stepper(m, "k", args=(np.zeros(4, np.int32),), max_steps=500).run()


def test_wrong_argument_count_and_types_fail_before_running() -> None:
    m = kernel("")
    out = np.zeros(4, np.int32)
    with pytest.raises(LoomRuntimeError, match="takes 1 launch arguments"):
        launch(m, "k", args=())
    with pytest.raises(LoomRuntimeError, match="NumPy array or a bytearray"):
        launch(m, "k", args=(5,))
    with pytest.raises(LoomRuntimeError, match="C-contiguous"):
        launch(m, "k", args=(np.zeros((4, 4), np.int32)[:, 0],))
    with pytest.raises(LoomRuntimeError, match="takes 0 workload"):
        launch(m, "k", workload=(3,), args=(out,))
    with pytest.raises(LoomRuntimeError, match="no kernel named"):
        launch(m, "nope", args=(out,))


def test_scalar_arguments_are_checked_against_declared_type() -> None:
    text = TEMPLATE.replace("launch(%out: buffer)", "launch(%out: buffer, %s: i8)")
    m = parse_module(text.format(body=""), filename="s.loom")
    with pytest.raises(LoomRuntimeError, match="does not fit in i8"):
        launch(m, "k", args=(np.zeros(4, np.int32), 300))
    with pytest.raises(LoomRuntimeError, match="must be an integer"):
        launch(m, "k", args=(np.zeros(4, np.int32), 1.5))
    launch(m, "k", args=(np.zeros(4, np.int32), -128))


def test_zero_sized_grid_does_no_work() -> None:
    text = TEMPLATE.replace("workgroups(%one, %one, %one)", "workgroups(%zero, %one, %one)")
    text = text.replace(
        "%four = index.constant 4 : index",
        "%four = index.constant 4 : index\n  %zero = index.constant 0 : index",
    )
    body = "%f = scalar.constant false : i1\n  kernel.assert %f : i1"
    m = parse_module(text.format(body=body), filename="z.loom")
    r = launch(m, "k", args=(np.zeros(4, np.int32),))
    assert r.workitems == 0 and r.ops_executed == 0


def test_sanitizer_state_too_large_is_refused(monkeypatch) -> None:
    from loom.interp import sanitizer

    monkeypatch.setattr(sanitizer, "MAX_SHADOW_BYTES", 1000)
    m = kernel("""
%v = index.cast %lane : index to i32
view.store %v, %ov[%lane] : i32, view<4xi32>""")
    big = np.zeros(1024, np.int32)
    with pytest.raises(LoomRuntimeError, match="sanitize=False"):
        launch(m, "k", args=(big,))
    launch(m, "k", args=(big,), sanitize=False)
    np.testing.assert_array_equal(big[:4], [0, 1, 2, 3])
