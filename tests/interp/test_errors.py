"""Decision 9 runtime errors, launch argument checking and the step budget."""

from __future__ import annotations

import numpy as np
import pytest

from loom.errors import LoomError, LoomRuntimeError, LoomUsageError
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


def test_arguments_that_do_not_go_together_are_loom_errors() -> None:
    m = kernel("")
    out = np.zeros(4, np.int32)
    with pytest.raises(LoomUsageError, match="needs the sanitizer") as caught:
        launch(m, "k", args=(out,), trace=True, sanitize=False)
    assert isinstance(caught.value, LoomError) and isinstance(caught.value, ValueError)
    with pytest.raises(LoomUsageError, match="history_limit must not be negative"):
        Stepper(m, "k", args=(out,), history_limit=-1)
    launch(m, "k", args=(out,), trace=True)  # with the sanitizer, tracing is fine


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


# ----------------------------------------------------------------------------- hostile kernels
# Each must end in a LoomRuntimeError (or a refusal before the run) in both engines: never a
# NumPy/Python exception, a hang or an out-of-memory crash.

ENGINES = ["grid", "stepper"]


def _run(m, engine: str, **kw) -> None:  # noqa: ANN001
    out = np.zeros(4, np.int32)
    if engine == "grid":
        launch(m, "k", args=(out,), **kw)
    else:
        Stepper(m, "k", args=(out,), **kw).run()


def _with_functions(body: str, functions: str):  # noqa: ANN202
    text = TEMPLATE.format(body="\n".join("  " + line for line in body.strip().splitlines()))
    text = text.replace("kernel.def", functions.strip() + "\n\nkernel.def", 1)
    return parse_module(text, filename="calls.loom")


SELF_CALL = """
func.def @f(%x: i32) -> (i32) {
  %r = func.call @f(%x) : (i32) -> (i32)
  func.return %r : i32
}"""
MUTUAL_CALLS = """
func.def @ping(%x: i32) -> (i32) {
  %r = func.call @pong(%x) : (i32) -> (i32)
  func.return %r : i32
}
func.def @pong(%x: i32) -> (i32) {
  %r = func.call @ping(%x) : (i32) -> (i32)
  func.return %r : i32
}"""


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("functions", [SELF_CALL, MUTUAL_CALLS], ids=["self", "mutual"])
def test_a_call_cycle_is_a_runtime_error(engine: str, functions: str) -> None:
    callee = "f" if "@f(" in functions else "ping"
    m = _with_functions(
        f"%x = index.cast %lane : index to i32\n%r = func.call @{callee}(%x) : (i32) -> (i32)",
        functions,
    )
    with pytest.raises(LoomRuntimeError) as info:
        _run(m, engine)
    d = info.value.diagnostics[0]
    assert d.code == "RUNTIME/011" and "func.call cycle" in d.message


def test_bounded_recursion_below_the_depth_limit_runs() -> None:
    from loom.interp.compile import MAX_DEPTH

    # a chain of distinct functions as deep as the limit allows, then one more
    def chain(n: int) -> str:
        parts = [f"func.def @f{n}(%x: i32) -> (i32) {{\n  func.return %x : i32\n}}"]
        for k in range(n - 1, -1, -1):
            parts.append(
                f"func.def @f{k}(%x: i32) -> (i32) {{\n"
                f"  %r = func.call @f{k + 1}(%x) : (i32) -> (i32)\n  func.return %r : i32\n}}"
            )
        return "\n".join(parts)

    body = "%x = index.cast %lane : index to i32\n%r = func.call @f0(%x) : (i32) -> (i32)"
    for engine in ENGINES:
        _run(_with_functions(body, chain(MAX_DEPTH // 2)), engine)
        with pytest.raises(LoomRuntimeError, match="nested more than"):
            _run(_with_functions(body, chain(MAX_DEPTH + 1)), engine)


@pytest.mark.parametrize("engine", ENGINES)
def test_regions_nested_too_deep_are_refused(engine: str) -> None:
    from loom.interp.compile import MAX_DEPTH

    depth = MAX_DEPTH + 5
    opened = "\n".join(" " * k + "scf.if %t {" for k in range(depth))
    closed = "\n".join(" " * k + "}" for k in range(depth - 1, -1, -1))
    m = kernel(f"%t = scalar.constant true : i1\n{opened}\n{closed}")
    with pytest.raises(LoomRuntimeError, match=f"nested more than {MAX_DEPTH} deep"):
        _run(m, engine)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize(
    ("size", "space", "code"),
    [
        (-8, "private", "RUNTIME/006"),
        (-1, "workgroup", "RUNTIME/006"),
        (2**63 - 1, "private", "RUNTIME/010"),
        (2**40, "workgroup", "RUNTIME/010"),
    ],
)
def test_negative_or_enormous_alloca_is_a_runtime_error(
    engine: str, size: int, space: str, code: str
) -> None:
    m = kernel(f"%n = index.constant {size} : offset\n%b = buffer.alloca<{space}> %n : buffer")
    with pytest.raises(LoomRuntimeError) as info:
        _run(m, engine)
    assert info.value.diagnostics[0].code == code
    assert info.value.diagnostics[0].range.line == BODY_LINE + 1


def test_the_stepper_bounds_all_scratch_memory_of_a_run(monkeypatch) -> None:
    from loom.interp import stepper

    monkeypatch.setattr(stepper, "MAX_SCRATCH_BYTES", 1000)
    m = kernel("%n = index.constant 300 : offset\n%b = buffer.alloca<private> %n : buffer")
    with pytest.raises(LoomRuntimeError, match="RUNTIME/010"):  # 4 workitems x 300 bytes
        Stepper(m, "k", args=(np.zeros(4, np.int32),)).run()


def _grid_kernel(groups: int, size: int):  # noqa: ANN202
    text = TEMPLATE.replace(
        "%four = index.constant 4 : index",
        f"%four = index.constant {size} : index\n  %groups = index.constant {groups} : index",
    ).replace("workgroups(%one, %one, %one)", "workgroups(%groups, %one, %one)")
    return parse_module(text.format(body=""), filename="grid.loom")


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize(
    ("groups", "size", "what"),
    [
        (1, 2**31, "workitems per workgroup"),
        (2**62, 2, "workitems per launch"),
        (2**31, 2**31, "workitems per workgroup"),
    ],
)
def test_huge_grids_are_refused_before_running(
    engine: str, groups: int, size: int, what: str
) -> None:
    with pytest.raises(LoomRuntimeError, match=f"exceeds the interpreter's limit of \\d+ {what}"):
        _run(_grid_kernel(groups, size), engine)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize(
    "body",
    [
        "%o = index.constant 9223372036854775807 : offset\n%v = buffer.load.i8.u %out[%o]",
        "%o = index.constant 9223372036854775807 : offset\n"
        "%z = scalar.constant 0 : i32\nbuffer.store.i8 %z, %out[%o]",
        # a lane-varying address near 2^63: the bound check must not wrap around
        "%o = index.constant 9223372036854775804 : offset\n"
        "%l = index.cast %lane : index to offset\n%a = index.add %o, %l : offset\n"
        "%v = buffer.load.i8.u %out[%a]",
        "%o = index.constant 9223372036854775800 : offset\n"
        "%w = buffer.view %out[%o] : buffer -> view<4xi32>\n"
        "%v = view.load %w[%lane] : view<4xi32> -> i32",
    ],
    ids=["load", "store", "lanes", "view"],
)
def test_accesses_near_2_63_are_out_of_bounds_errors(engine: str, body: str) -> None:
    with pytest.raises(LoomRuntimeError) as info:
        _run(kernel(body), engine)
    assert info.value.diagnostics[0].code == "RUNTIME/001"


@pytest.mark.parametrize("engine", ENGINES)
def test_an_infinite_loop_stops_at_the_default_step_budget(engine: str, monkeypatch) -> None:
    # the default budget is read at each launch; the benchmark measures how long it takes
    from loom.interp import engine as grid_engine
    from loom.interp import stepper

    monkeypatch.setattr(grid_engine, "DEFAULT_MAX_STEPS", 2_000)
    monkeypatch.setattr(stepper, "DEFAULT_MAX_STEPS", 2_000)
    m = kernel("""
%t = scalar.constant true : i1
scf.while {
  scf.condition %t : i1
} do {
  scf.yield
}""")
    with pytest.raises(LoomRuntimeError, match="max_steps=2000") as info:
        _run(m, engine)
    assert info.value.diagnostics[0].code == "RUNTIME/009"
