"""No stale compiled state: every in-place edit of a module is seen by the next launch.

Each test launches (or steps) a kernel, edits the parsed module through one mutating API and
launches again: the second run must use the edited IR, not the plan compiled for the first.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).parent))
from interp_helpers import load  # noqa: E402

from loom.errors import LoomRuntimeError
from loom.interp import Stepper, launch
from loom.ir import Block, Operation, Region, freeze_attributes

N = 8


def _run(module, engine: str = "grid") -> np.ndarray:
    a = np.arange(N, dtype=np.int32) * 10
    b = np.arange(N, dtype=np.int32)
    c = np.zeros(N, np.int32)
    if engine == "grid":
        launch(module, "vector_add_i32", workload=(N,), args=(N, a, b, c))
    else:
        Stepper(module, "vector_add_i32", workload=(N,), args=(N, a, b, c)).run()
    return c


def _op(module, name: str) -> Operation:
    return next(op for op in module.walk() if op.name == name)


def _guarded_block(module) -> Block:
    return _op(module, "scf.if").regions[0].blocks[0]


@pytest.mark.parametrize("engine", ["grid", "stepper"])
def test_renaming_an_op_is_seen_by_the_next_launch(engine: str) -> None:
    module = load("vector_add_i32")
    assert list(_run(module, engine)) == [11 * k for k in range(N)]
    _op(module, "scalar.addi").name = "scalar.subi"
    assert list(_run(module, engine)) == [9 * k for k in range(N)]


def test_replacing_operands_is_seen() -> None:
    module = load("vector_add_i32")
    _run(module)
    add = _op(module, "scalar.addi")
    add.operands = (add.operands[0], add.operands[0])  # a + a
    assert list(_run(module)) == [20 * k for k in range(N)]


def test_replacing_attributes_is_seen() -> None:
    module = load("vector_add_i32")
    _run(module)
    cmp = _op(module, "index.cmp")
    assert cmp.attributes["predicate"] == "ult"
    cmp.attributes = {**cmp.attributes, "predicate": "ule"}  # a plain dict is frozen
    with pytest.raises(LoomRuntimeError, match="RUNTIME/001"):
        _run(module)  # lane n now passes the guard and reads past the end
    assert type(cmp.attributes) is type(freeze_attributes({"x": 1}))


def test_inserting_and_removing_ops_is_seen() -> None:
    module = load("vector_add_i32")
    _run(module)
    block = _guarded_block(module)
    at = block.ops.index(_op(module, "view.store"))  # the op before the implicit scf.yield
    store = block.ops.pop(at)
    assert list(_run(module)) == [0] * N  # nothing stores any more
    block.ops.insert(at, store)
    assert list(_run(module)) == [11 * k for k in range(N)]
    del block.ops[at]
    assert list(_run(module)) == [0] * N
    block.ops[at:at] = [store]
    assert list(_run(module)) == [11 * k for k in range(N)]
    block.ops.remove(store)
    assert list(_run(module)) == [0] * N
    terminator = block.ops.pop()
    block.ops.extend([store, terminator])
    assert list(_run(module)) == [11 * k for k in range(N)]
    block.ops[at] = terminator  # the store replaced by a second terminator: nothing stores
    assert list(_run(module)) == [0] * N


def test_replacing_a_region_and_its_blocks_is_seen() -> None:
    module = load("vector_add_i32")
    _run(module)
    if_op = _op(module, "scf.if")
    old = if_op.regions[0].blocks[0]
    fresh = Block()
    fresh.ops = [old.ops[-1]]  # only the implicit terminator: the branch does nothing
    if_op.regions = (Region([fresh]),)
    assert list(_run(module)) == [0] * N
    if_op.regions[0].blocks = [old]
    assert list(_run(module)) == [11 * k for k in range(N)]
    fresh_ops = list(old.ops)
    old.ops = fresh_ops[-1:]
    assert list(_run(module)) == [0] * N


def test_editing_an_op_inserted_after_the_first_launch_is_seen() -> None:
    module = load("vector_add_i32")
    _run(module)
    block = _guarded_block(module)
    add = _op(module, "scalar.addi")
    twin = Operation(add.name, add.operands, (module.add_value(add.results[0].type),))
    block.ops.insert(block.ops.index(add), twin)
    store = _op(module, "view.store")
    store.operands = (twin.results[0], *store.operands[1:])
    assert list(_run(module)) == [11 * k for k in range(N)]
    twin.name = "scalar.muli"  # an op that arrived after tracking started
    assert list(_run(module)) == [10 * k * k for k in range(N)]


def test_retyping_a_value_and_changing_block_arguments_is_seen() -> None:
    module = load("vector_add_i32")
    _run(module)
    body = _op(module, "kernel.def").regions[1].blocks[0]
    body.args = body.args[:-1]  # the kernel now takes one argument fewer
    with pytest.raises(LoomRuntimeError, match="argument"):
        _run(module)


def test_symbol_table_edits_are_seen() -> None:
    module = load("vector_add_i32")
    _run(module)
    kernel = module.symbols.pop("vector_add_i32")
    with pytest.raises(LoomRuntimeError, match="no kernel named"):
        _run(module)
    module.symbols["vector_add_i32"] = kernel
    assert list(_run(module)) == [11 * k for k in range(N)]


def test_value_renames_refresh_the_printed_fallback() -> None:
    from loom.diagnostic_sources import PrintedModules
    from loom.diagnostics import fallback_range

    printed = PrintedModules()
    module = load("vector_add_i32")
    add = _op(module, "scalar.addi")
    before = fallback_range(module, add, printed)
    assert printed(module) is printed(module)  # unchanged: printed once
    add.results[0].name = "total"
    after = fallback_range(module, add, printed)
    assert "%sum = scalar.addi" in before.text and "%total = scalar.addi" in after.text
    add.comments = ("a comment moves the op one line down",)
    assert fallback_range(module, add, printed).line == after.line + 1


def test_an_unchanged_module_keeps_its_plan() -> None:
    from loom.interp.engine import _plan

    module = load("vector_add_i32")
    plan = _plan(module, "vector_add_i32")
    _run(module)
    assert _plan(module, "@vector_add_i32") is plan
    _op(module, "scalar.addi").location_id = _op(module, "scalar.addi").location_id
    assert _plan(module, "vector_add_i32") is not plan
