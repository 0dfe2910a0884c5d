"""Process-wide switches (garbage collector, recursion limit) are held for a scope and restored
on every exit path; the caches they used to sit beside live on their objects."""

from __future__ import annotations

import gc
import sys
import threading

import pytest

from loom.dsl import Example, RegionDef, op
from loom.errors import BytecodeError
from loom.format.bytecode import read_module, write_module
from loom.ir import Module, Operation, Region
from loom.registry import as_registry, default_ops, default_registry
from loom.switches import gc_paused, recursion_limit_at_least
from loom.verify import verify_module
from loom.verify.plan import plan_for


@pytest.fixture(autouse=True)
def _gc_back_on():
    yield
    gc.enable()


def test_gc_pause_restores_the_state_found_even_after_an_error() -> None:
    gc.enable()
    with pytest.raises(RuntimeError), gc_paused():
        assert not gc.isenabled()
        raise RuntimeError("boom")
    assert gc.isenabled()
    gc.disable()  # a caller that had it off keeps it off
    with gc_paused():
        pass
    assert not gc.isenabled()


def test_nested_and_overlapping_gc_pauses_share_one_hold() -> None:
    gc.enable()
    with gc_paused():
        with gc_paused():
            pass
        assert not gc.isenabled()  # the inner exit does not switch it back on under the outer
    assert gc.isenabled()
    inside, leave = threading.Event(), threading.Event()

    def other() -> None:
        with gc_paused():
            inside.set()
            leave.wait(5)

    t = threading.Thread(target=other)
    t.start()
    inside.wait(5)
    with gc_paused():
        pass
    assert not gc.isenabled()  # the other thread still holds it
    leave.set()
    t.join(5)
    assert gc.isenabled()


def test_recursion_limit_is_raised_never_lowered_and_restored() -> None:
    before = sys.getrecursionlimit()
    with recursion_limit_at_least(before + 500):
        assert sys.getrecursionlimit() == before + 500
        with recursion_limit_at_least(10):
            assert sys.getrecursionlimit() == before + 500
    assert sys.getrecursionlimit() == before
    with pytest.raises(KeyError), recursion_limit_at_least(before + 100):
        raise KeyError("x")
    assert sys.getrecursionlimit() == before


def test_bytecode_reader_restores_the_collector_after_bad_input() -> None:
    gc.enable()
    with pytest.raises(BytecodeError):
        read_module(b"LOOM\x01\x00\x00\x00\xff\xff")
    assert gc.isenabled()
    gc.disable()
    read_module(write_module(Module()))
    assert not gc.isenabled()


def test_verifier_restores_the_recursion_limit_when_a_hook_interrupts() -> None:
    def interrupt(o, ctx):  # noqa: ANN001, ANN202
        raise KeyboardInterrupt

    stop = op(
        "test.stop",
        "An op whose verifier hook interrupts (as Ctrl-C would).",
        verifier=interrupt,
        examples=[Example("test.stop")],
    )
    module = Module()
    module.body.ops.append(Operation("test.stop"))
    before = sys.getrecursionlimit()
    with pytest.raises(KeyboardInterrupt):
        verify_module(module, ops=(*default_ops(), stop))
    assert sys.getrecursionlimit() == before


def _nested(levels: int) -> tuple[Module, object]:
    """A module of ``levels`` nested ``test.nest`` ops, and that op's declaration."""
    holder = op(
        "test.nest",
        "Holds one region of anything.",
        regions=[RegionDef("body")],
        examples=[Example("test.nest {\n}")],
    )
    module = Module()
    region = Region()
    module.body.ops.append(Operation("test.nest", regions=(region,)))
    for _ in range(levels):
        inner = Region()
        region.blocks[0].ops.append(Operation("test.nest", regions=(inner,)))
        region = inner
    return module, holder


def test_verifier_restores_the_recursion_limit_after_too_deep_nesting() -> None:
    module, holder = _nested(3000)
    before = sys.getrecursionlimit()
    diags = verify_module(module, ops=(*default_ops(), holder))
    assert "STRUCTURE/099" in diags.codes
    assert sys.getrecursionlimit() == before


def test_registries_for_the_same_declarations_are_shared_without_id_keys() -> None:
    assert as_registry(None) is default_registry() is as_registry(default_ops())
    some = default_ops()[:5]
    assert as_registry(some) is as_registry(list(some)) is as_registry(tuple(some))
    assert as_registry(some) is not as_registry(default_ops()[:6])
    reg = as_registry(some)
    calls = []
    assert reg.plan(lambda r: calls.append(r) or len(r)) == 5  # a fresh factory computes

    def factory(r):  # noqa: ANN001, ANN202
        calls.append(r)
        return len(r)

    assert reg.plan(factory) == reg.plan(factory) == 5
    assert calls.count(reg) == 2  # once for the lambda, once for the named factory


def test_type_checkers_live_on_the_declaration_plan() -> None:
    decl = default_registry().lookup("scf.yield")
    plan = plan_for(decl)
    assert set(plan.accepts) == {o.name for o in decl.operands} | {r.name for r in decl.results}
    decl.drop_plans()
    assert plan_for(decl) is not plan  # dropping the declaration's plans drops its verdicts


def test_the_verifier_walks_nested_regions_without_recursion() -> None:
    module, holder = _nested(900)
    before = sys.getrecursionlimit()
    sys.setrecursionlimit(len(__import__("inspect").stack()) + 150)  # far fewer than 900 levels
    try:
        diags = verify_module(module, ops=(*default_ops(), holder))
    finally:
        sys.setrecursionlimit(before)
    assert set(diags.codes) == {"STRUCTURE/001"}  # only: a test.nest at top level
