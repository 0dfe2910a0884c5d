"""Function declarations bound to Python and first-class function references, in both engines.

Spec (upstream func dialect): ``func.decl`` is a callable boundary without a body; on the CPU it
needs a host-provided callable. ``func.address`` makes a ``func.ref`` to a function,
``func.call.indirect`` calls one (each workitem may name another function), ``func.null`` /
``func.compare.null`` are the null reference and its test, ``func.ref.cast`` widens a synchronous
reference to a yieldable one, ``func.import.resolved`` tells whether an import is available.
"""

from __future__ import annotations

import numpy as np
import pytest

from loom.errors import LoomRuntimeError
from loom.format.text.parser import parse_module
from loom.interp import Stepper, launch
from loom.verify import verify_module

ENGINES = ["grid", "stepper"]

DECL = """target.generic<reference> @reference

func.decl import("mathlib", "poly") @poly(%x: f32, %k: i32) -> (f32, i1)

kernel.def target(@reference) export("k") @k() {
  %one = index.constant 1 : index
  %lanes = index.constant 8 : index
  kernel.launch.config workgroups(%one, %one, %one) workgroup_size(%lanes, %one, %one) : index
} launch(%in: buffer, %out: buffer, %flags: buffer) {
  %base = index.constant 0 : offset
  %i = kernel.workitem.id<x> : index
  %iv = buffer.view %in[%base] : buffer -> view<8xf32>
  %ov = buffer.view %out[%base] : buffer -> view<8xf32>
  %fv = buffer.view %flags[%base] : buffer -> view<8xi32>
  %x = view.load %iv[%i] : view<8xf32> -> f32
  %k = scalar.constant 3 : i32
  %y, %big = func.call @poly(%x, %k) : (f32, i32) -> (f32, i1)
  %f = scalar.extui %big : i1 to i32
  view.store %y, %ov[%i] : f32, view<8xf32>
  view.store %f, %fv[%i] : i32, view<8xi32>
  kernel.return
}
"""


def _module(text: str):
    m = parse_module(text, filename="refs.loom")
    assert not verify_module(m).has_errors, verify_module(m).render()
    return m


def _run(engine: str, module, functions=None, args=()):
    if engine == "grid":
        return launch(module, "k", args=list(args), functions=functions)
    Stepper(module, "k", args=list(args), functions=functions).run()
    return None


@pytest.mark.parametrize("engine", ENGINES)
def test_a_declaration_runs_the_bound_python_function_per_lane(engine: str) -> None:
    seen = []

    def poly(x, k):
        seen.append((x.dtype, k.dtype, x.shape))
        return x * x + k, x > 3

    x = np.arange(8, dtype=np.float32)
    out = np.zeros(8, np.float32)
    flags = np.zeros(8, np.int32)
    _run(engine, _module(DECL), {"poly": poly}, [x, out, flags])
    np.testing.assert_array_equal(out, x * x + 3)
    np.testing.assert_array_equal(flags, (x > 3).astype(np.int32))
    assert {s[:2] for s in seen} == {(np.dtype(np.float32), np.dtype(np.int32))}
    # the grid engine passes the 8 lanes at once, the stepper one workitem at a time
    assert [s[2] for s in seen] == ([(8,)] if engine == "grid" else [(1,)] * 8)


@pytest.mark.parametrize("engine", ENGINES)
def test_calling_an_unbound_declaration_is_a_runtime_error(engine: str) -> None:
    bufs = [np.zeros(8, np.float32), np.zeros(8, np.float32), np.zeros(8, np.int32)]
    with pytest.raises(LoomRuntimeError) as info:
        _run(engine, _module(DECL), None, bufs)
    d = info.value.diagnostics[0]
    assert d.code == "RUNTIME/022"
    assert "@poly" in d.message and "functions=" in d.message
    assert d.range.line == 17


@pytest.mark.parametrize("engine", ENGINES)
def test_python_function_errors_are_reported_at_the_call(engine: str) -> None:
    bufs = [np.zeros(8, np.float32), np.zeros(8, np.float32), np.zeros(8, np.int32)]

    def boom(x, k):
        raise ValueError("no such polynomial")

    with pytest.raises(LoomRuntimeError, match="ValueError: no such polynomial") as info:
        _run(engine, _module(DECL), {"poly": boom}, bufs)
    assert info.value.diagnostics[0].code == "RUNTIME/023"
    with pytest.raises(LoomRuntimeError, match="returned 1 values") as info:
        _run(engine, _module(DECL), {"poly": lambda x, k: x}, bufs)
    with pytest.raises(LoomRuntimeError, match="not 8 values|not 1 values"):
        _run(engine, _module(DECL), {"poly": lambda x, k: (np.zeros(3), x > 0)}, bufs)


def test_functions_must_name_declarations_and_be_callable() -> None:
    bufs = [np.zeros(8, np.float32), np.zeros(8, np.float32), np.zeros(8, np.int32)]
    with pytest.raises(LoomRuntimeError, match=r"'pol'.*declarations: @poly"):
        launch(_module(DECL), "k", args=bufs, functions={"pol": abs})
    with pytest.raises(LoomRuntimeError, match="not callable"):
        Stepper(_module(DECL), "k", args=bufs, functions={"@poly": 3})


INDIRECT = """target.generic<reference> @reference

func.def @double(%x: i32) -> (i32) {
  %y = scalar.addi %x, %x : i32
  func.return %y : i32
}

func.def @negate(%x: i32) -> (i32) {
  %zero = scalar.constant 0 : i32
  %y = scalar.subi %zero, %x : i32
  func.return %y : i32
}

func.decl @host_square(%x: i32) -> (i32)

kernel.def target(@reference) export("k") @k() {
  %one = index.constant 1 : index
  %lanes = index.constant 8 : index
  kernel.launch.config workgroups(%one, %one, %one) workgroup_size(%lanes, %one, %one) : index
} launch(%in: buffer, %sel: buffer, %out: buffer, %nulls: buffer) {
  %base = index.constant 0 : offset
  %i = kernel.workitem.id<x> : index
  %iv = buffer.view %in[%base] : buffer -> view<8xi32>
  %sv = buffer.view %sel[%base] : buffer -> view<8xi32>
  %ov = buffer.view %out[%base] : buffer -> view<8xi32>
  %nv = buffer.view %nulls[%base] : buffer -> view<8xi32>
  %x = view.load %iv[%i] : view<8xi32> -> i32
  %s = view.load %sv[%i] : view<8xi32> -> i32
  %c1 = scalar.constant 1 : i32
  %c2 = scalar.constant 2 : i32
  %is1 = scalar.cmpi eq, %s, %c1 : i32
  %is2 = scalar.cmpi eq, %s, %c2 : i32
  %fd = func.address @double : func.ref<(i32) -> (i32)>
  %fn = func.address @negate : func.ref<(i32) -> (i32)>
  %fh = func.address @host_square : func.ref<(i32) -> (i32)>
  %none = func.null : func.ref<(i32) -> (i32)>
  %a = scf.select %is1, %fn, %fd : func.ref<(i32) -> (i32)>
  %f = scf.select %is2, %fh, %a : func.ref<(i32) -> (i32)>
  %y = func.call.indirect %f(%x) : (i32) -> (i32)
  %n = func.compare.null %none : func.ref<(i32) -> (i32)>
  %m = func.compare.null %f : func.ref<(i32) -> (i32)>
  %nn = scalar.extui %n : i1 to i32
  %mm = scalar.extui %m : i1 to i32
  %both = scalar.addi %nn, %mm : i32
  view.store %y, %ov[%i] : i32, view<8xi32>
  view.store %both, %nv[%i] : i32, view<8xi32>
  kernel.return
}
"""


@pytest.mark.parametrize("engine", ENGINES)
def test_indirect_calls_dispatch_per_lane(engine: str) -> None:
    x = np.array([1, 2, 3, 4, 5, 6, 7, 8], np.int32)
    sel = np.array([0, 1, 2, 0, 1, 2, 1, 0], np.int32)
    out = np.zeros(8, np.int32)
    nulls = np.zeros(8, np.int32)
    calls = []

    def square(v):
        calls.append(v.copy())
        return v * v

    _run(engine, _module(INDIRECT), {"host_square": square}, [x, sel, out, nulls])
    want = np.where(sel == 0, 2 * x, np.where(sel == 1, -x, x * x))
    np.testing.assert_array_equal(out, want)
    np.testing.assert_array_equal(nulls, np.ones(8, np.int32))  # null is null, %f never
    # the host function sees only the lanes whose reference names it
    np.testing.assert_array_equal(np.concatenate(calls), x[sel == 2])


@pytest.mark.parametrize("engine", ENGINES)
def test_calling_a_null_reference_is_a_runtime_error(engine: str) -> None:
    text = INDIRECT.replace("%f = scf.select %is2, %fh, %a", "%f = scf.select %is2, %none, %a")
    sel = np.array([0, 1, 0, 0, 2, 0, 0, 0], np.int32)
    bufs = [np.zeros(8, np.int32), sel, np.zeros(8, np.int32), np.zeros(8, np.int32)]
    with pytest.raises(LoomRuntimeError) as info:
        _run(engine, _module(text), None, bufs)
    d = info.value.diagnostics[0]
    assert d.code == "RUNTIME/021" and "null function reference" in d.message
    assert "workitem (4, 0, 0)" in str(info.value)


RESOLVED = """target.generic<reference> @reference

func.decl optional import("ext") @feature(%x: i32) -> (i32)

func.def @local(%x: i32) -> (i32) {
  func.return %x : i32
}

kernel.def target(@reference) export("k") @k() {
  %one = index.constant 1 : index
  kernel.launch.config workgroups(%one, %one, %one) workgroup_size(%one, %one, %one) : index
} launch(%out: buffer) {
  %base = index.constant 0 : offset
  %c0 = index.constant 0 : index
  %c1 = index.constant 1 : index
  %ov = buffer.view %out[%base] : buffer -> view<2xi32>
  %a = func.import.resolved @feature
  %b = func.import.resolved @local
  %fa = scalar.extui %a : i1 to i32
  %fb = scalar.extui %b : i1 to i32
  view.store %fa, %ov[%c0] : i32, view<2xi32>
  view.store %fb, %ov[%c1] : i32, view<2xi32>
  kernel.return
}
"""


@pytest.mark.parametrize("engine", ENGINES)
def test_import_resolved_tells_whether_a_function_is_bound(engine: str) -> None:
    out = np.zeros(2, np.int32)
    _run(engine, _module(RESOLVED), None, [out])
    np.testing.assert_array_equal(out, [0, 1])
    _run(engine, _module(RESOLVED), {"feature": lambda x: x}, [out])
    np.testing.assert_array_equal(out, [1, 1])


def test_the_stepper_shows_function_references_by_name() -> None:
    x = np.arange(8, dtype=np.int32)
    sel = np.zeros(8, np.int32)
    bufs = [x, sel, np.zeros(8, np.int32), np.zeros(8, np.int32)]
    st = Stepper(_module(INDIRECT), "k", args=bufs, functions={"host_square": lambda v: v})
    while "%f" not in st.values():
        st.step()
    values = st.values()
    assert values["%fd"] == "@double" and values["%fn"] == "@negate"
    assert values["%none"] == "null" and values["%f"] == "@double"


def test_indirect_calls_agree_with_the_fast_paths_off() -> None:
    from loom.interp import engine, sanitizer

    results = []
    for fast in (True, False):
        saved = engine.FAST_PATHS, sanitizer.SHORTCUTS
        engine.FAST_PATHS = sanitizer.SHORTCUTS = fast
        try:
            x = np.arange(8, dtype=np.int32) - 3
            sel = np.array([2, 1, 0, 2, 1, 0, 0, 2], np.int32)
            out, nulls = np.zeros(8, np.int32), np.zeros(8, np.int32)
            r = launch(
                _module(INDIRECT),
                "k",
                args=[x, sel, out, nulls],
                functions={"host_square": lambda v: v * v},
            )
            results.append((out.tobytes(), nulls.tobytes(), r.ops_executed))
        finally:
            engine.FAST_PATHS, sanitizer.SHORTCUTS = saved
    assert results[0] == results[1]


RECURSIVE = """target.generic<reference> @reference

func.def @again(%f: func.ref<(i32) -> (i32)>, %x: i32) -> (i32) {
  %y = func.call.indirect %f(%x) : (i32) -> (i32)
  func.return %y : i32
}

func.def @loop(%x: i32) -> (i32) {
  %self = func.address @loop : func.ref<(i32) -> (i32)>
  %y = func.call @again(%self, %x) : (func.ref<(i32) -> (i32)>, i32) -> (i32)
  func.return %y : i32
}

kernel.def target(@reference) export("k") @k() {
  %one = index.constant 1 : index
  kernel.launch.config workgroups(%one, %one, %one) workgroup_size(%one, %one, %one) : index
} launch(%out: buffer) {
  %base = index.constant 0 : offset
  %c0 = index.constant 0 : index
  %ov = buffer.view %out[%base] : buffer -> view<1xi32>
  %x = scalar.constant 1 : i32
  %y = func.call @loop(%x) : (i32) -> (i32)
  view.store %y, %ov[%c0] : i32, view<1xi32>
  kernel.return
}
"""


@pytest.mark.parametrize("engine", ENGINES)
def test_unbounded_recursion_through_references_ends_with_a_depth_error(engine: str) -> None:
    with pytest.raises(LoomRuntimeError) as info:
        _run(engine, _module(RECURSIVE), None, [np.zeros(1, np.int32)])
    assert info.value.diagnostics[0].code == "RUNTIME/011"


HOST_REF = """target.generic<reference> @reference

func.def @double(%x: i32) -> (i32) {
  %y = scalar.addi %x, %x : i32
  func.return %y : i32
}

func.def @other(%x: f32) -> (f32) {
  func.return %x : f32
}

kernel.def target(@reference) export("k") @k() {
  %one = index.constant 1 : index
  %lanes = index.constant 4 : index
  kernel.launch.config workgroups(%one, %one, %one) workgroup_size(%lanes, %one, %one) : index
} launch(%f: func.ref<(i32) -> (i32)>, %out: buffer) {
  %base = index.constant 0 : offset
  %i = kernel.workitem.id<x> : index
  %ov = buffer.view %out[%base] : buffer -> view<4xi32>
  %x = index.cast %i : index to i32
  %y = func.call.indirect %f(%x) : (i32) -> (i32)
  view.store %y, %ov[%i] : i32, view<4xi32>
  kernel.return
}
"""


@pytest.mark.parametrize("engine", ENGINES)
def test_a_launch_passes_a_function_reference_by_name(engine: str) -> None:
    out = np.zeros(4, np.int32)
    _run(engine, _module(HOST_REF), None, ["@double", out])
    np.testing.assert_array_equal(out, [0, 2, 4, 6])
    with pytest.raises(LoomRuntimeError) as info:
        _run(engine, _module(HOST_REF), None, [None, out])
    assert info.value.diagnostics[0].code == "RUNTIME/021"
    with pytest.raises(LoomRuntimeError, match="signature"):
        _run(engine, _module(HOST_REF), None, ["other", out])
    with pytest.raises(LoomRuntimeError, match="not a function"):
        _run(engine, _module(HOST_REF), None, ["@k", out])


BUFFER_ARG = """target.generic<reference> @reference

func.decl @sink(%b: buffer)

kernel.def target(@reference) export("k") @k() {
  %one = index.constant 1 : index
  kernel.launch.config workgroups(%one, %one, %one) workgroup_size(%one, %one, %one) : index
} launch(%out: buffer) {
  func.call @sink(%out) : (buffer)
  kernel.return
}
"""


@pytest.mark.parametrize("engine", ENGINES)
def test_only_scalars_cross_into_python_functions(engine: str) -> None:
    with pytest.raises(LoomRuntimeError, match="only scalars") as info:
        _run(engine, _module(BUFFER_ARG), {"sink": lambda b: None}, [np.zeros(4, np.uint8)])
    assert info.value.diagnostics[0].code == "RUNTIME/023"
