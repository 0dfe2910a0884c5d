"""Verifier checks on builder-made modules (what the text parser cannot express or rejects)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from loom.builder import module_builder
from loom.diagnostics import DiagnosticEngine, LoomDiagnosticError
from loom.importers import (
    KernelArgumentSpec,
    KernelModuleSpec,
    create_kernel_module,
)
from loom.ir import BUFFER_TYPE, F32, I1, I32, INDEX, OFFSET, Block, Module, Operation, Region
from loom.ir.operations import freeze_attributes
from loom.registry import default_ops, default_registry
from loom.verify import ModuleVerifier, verify_module

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
from common import make_module  # noqa: E402


def kernel(args=(("n", INDEX), ("data", None))):  # noqa: ANN001, ANN201
    """A kernel shell; returns (module, builder, body block, arguments)."""
    shell = create_kernel_module(
        KernelModuleSpec(
            target_preset="reference",
            export_symbol="k",
            callee="k",
            arguments=tuple(
                KernelArgumentSpec(i, name, t) if t is not None else KernelArgumentSpec(i, name)
                for i, (name, t) in enumerate(args)
            ),
        )
    )
    args_ = [shell.body_arguments_by_ordinal[i] for i in range(len(args))]
    return shell.module, shell.builder, shell.body_block, args_


def codes(module: Module) -> list[str]:
    return verify_module(module).codes


def test_valid_modules_have_no_diagnostics() -> None:
    assert codes(make_module(3000)) == []
    module, b, body, (n, data) = kernel()
    with b.insertion_block(body):
        b.kernel.return_()
    assert codes(module) == []


def test_use_before_definition() -> None:
    module, b, body, (n, _) = kernel()
    with b.insertion_block(body):
        one = b.index.constant(value=1, results=[INDEX], name="one")
        b.index.add(lhs=n, rhs=one, results=[INDEX], name="sum")
        b.kernel.return_()
    body.ops[0], body.ops[1] = body.ops[1], body.ops[0]
    diags = verify_module(module)
    assert diags.codes == ["DOMINANCE/001"]
    assert "uses %one before its definition" in diags[0].message


def test_use_of_value_from_a_closed_region() -> None:
    module, b, body, (n, _) = kernel()
    with b.insertion_block(body):
        c = b.index.cmp(predicate="slt", lhs=n, rhs=n, results=[I1])
        then = b.region()
        with b.insertion_block(then.blocks[0]):
            inner = b.index.add(lhs=n, rhs=n, results=[INDEX], name="inner")
        b.scf.if_(condition=c, results=[], then_region=then)
        b.index.add(lhs=inner, rhs=n, results=[INDEX])
        b.kernel.return_()
    diags = verify_module(module)
    assert diags.codes == ["DOMINANCE/001"]
    assert "region that does not enclose this use" in diags[0].message


def test_use_across_isolated_from_above_boundary() -> None:
    module, b, body, (n, _) = kernel()
    with b.insertion_block(body):
        b.kernel.return_()
    # A function whose body uses the kernel's argument: not visible through func.def.
    region = b.region()
    with b.insertion_block(region.blocks[0]):
        b.index.add(lhs=n, rhs=n, results=[INDEX])
        b.func.return_(operands=[])
    b.func.def_(callee="f", body=region)
    diags = verify_module(module)
    assert diags.codes == ["DOMINANCE/002", "DOMINANCE/002"]
    assert "isolated-from-above 'func.def' boundary" in diags[0].message


def test_value_defined_twice_and_name_reused() -> None:
    module, b, body, (n, _) = kernel()
    with b.insertion_block(body):
        x = b.index.add(lhs=n, rhs=n, results=[INDEX], name="x")
        b.index.add(lhs=n, rhs=n, results=[INDEX], name="y")
        b.kernel.return_()
    body.ops[1].results = (x,)  # the same value as the result of two ops
    module.values[body.ops[0].results[0].id].name = "x"
    diags = verify_module(module)
    assert diags.codes == ["DOMINANCE/003"]

    module, b, body, (n, _) = kernel()
    with b.insertion_block(body):
        b.index.add(lhs=n, rhs=n, results=[INDEX], name="x")
        b.index.add(lhs=n, rhs=n, results=[INDEX], name="x")
        b.kernel.return_()
    diags = verify_module(module)
    assert diags.codes == ["DOMINANCE/004"]
    assert "'%x'" in diags[0].message


def test_a_digit_name_must_not_spell_a_visible_unnamed_value() -> None:
    # Text spells an unnamed value by its id (%7), so a value *named* "7" next to it would make
    # the printed module ambiguous. Both orders are reported, and block arguments too.
    def build(rename):  # noqa: ANN001, ANN202
        module, b, body, (n, _) = kernel()
        with b.insertion_block(body):
            made = [b.index.add(lhs=n, rhs=n, results=[INDEX]) for _ in range(3)]
            b.kernel.return_()
        rename(module, n, made)
        return verify_module(module)

    def earlier(module, n, made):  # noqa: ANN001, ANN202
        made[0].name = str(made[2].id)  # named first, the unnamed value comes later

    def later(module, n, made):  # noqa: ANN001, ANN202
        made[2].name = str(made[0].id)  # the unnamed value is already visible

    def argument(module, n, made):  # noqa: ANN001, ANN202
        n.name = str(made[1].id)

    def own_id(module, n, made):  # noqa: ANN001, ANN202
        made[1].name = str(made[1].id)  # spells itself: not ambiguous

    def unused_id(module, n, made):  # noqa: ANN001, ANN202
        made[1].name = str(len(module.values) + 5)

    for rename in (earlier, later, argument):
        diags = build(rename)
        assert diags.codes == ["DOMINANCE/004"], rename.__name__
        assert "ambiguous" in diags[0].message
    for rename in (own_id, unused_id):
        assert build(rename).codes == [], rename.__name__


def test_same_name_in_sibling_regions_is_fine() -> None:
    module, b, body, (n, _) = kernel()
    with b.insertion_block(body):
        c = b.index.cmp(predicate="slt", lhs=n, rhs=n, results=[I1])
        then, other = b.region(), b.region()
        for r in (then, other):
            with b.insertion_block(r.blocks[0]):
                b.index.add(lhs=n, rhs=n, results=[INDEX], name="t")
        b.scf.if_(condition=c, results=[], then_region=then, else_region=other)
        b.kernel.return_()
    assert codes(module) == []


def test_foreign_value() -> None:
    other, ob = module_builder()
    foreign = ob.value("z", INDEX)
    module, b, body, (n, _) = kernel()
    with b.insertion_block(body):
        added = b.index.add(lhs=n, rhs=n, results=[INDEX])
        b.kernel.return_()
    op = body.ops[0]
    op.operands = (n, foreign)
    assert foreign.id < len(module.values) and module.values[foreign.id] is not foreign
    assert codes(module) == ["DOMINANCE/005"]
    assert added is op.results[0]


def test_counts_regions_attributes_and_unknown_ops() -> None:
    module, b, body, (n, _) = kernel()
    with b.insertion_block(body):
        b.index.add(lhs=n, rhs=n, results=[INDEX])
        b.index.constant(value=3, results=[INDEX])
        b.index.constant(value=4, results=[INDEX])
        b.index.constant(value=5, results=[INDEX])
        b.kernel.return_()
    add, c3, c4, c5 = body.ops[:4]
    add.operands = (n,)
    c3.attributes = freeze_attributes({"value": 3, "colour": "red"})
    c4.attributes = freeze_attributes({})
    c5.regions = (Region(),)
    body.ops.insert(0, Operation("index.addd", (n,), ()))
    diags = verify_module(module)
    assert sorted(diags.codes) == sorted(
        ["STRUCTURE/006", "STRUCTURE/013", "STRUCTURE/011", "STRUCTURE/010", "STRUCTURE/015"]
        + ["TYPE/005"]  # index.constant's hook also rejects the missing value
    )
    unknown = next(d for d in diags if d.code == "STRUCTURE/006")
    assert "did you mean" in unknown.message


def test_region_and_block_counts_and_terminators() -> None:
    module, b, body, (n, _) = kernel()
    with b.insertion_block(body):
        c = b.index.cmp(predicate="slt", lhs=n, rhs=n, results=[I1])
        b.scf.if_(condition=c, results=[], then_region=b.region())
        b.kernel.return_()
    if_op = body.ops[1]
    if_op.regions[0].blocks.append(Block())
    body.ops.pop()  # the body no longer ends with kernel.return
    diags = verify_module(module)
    assert "STRUCTURE/016" in diags.codes
    assert "STRUCTURE/018" in diags.codes


def test_symbol_table_problems() -> None:
    module, b = module_builder()
    b.target.generic(kind="reference", symbol="t")
    b.target.generic(kind="reference", symbol="u")
    module.ops[1].attributes = freeze_attributes({"kind": "reference", "symbol": "t"})
    stale = Operation("target.generic", attributes={"kind": "reference", "symbol": "gone"})
    module.symbols["gone"] = stale
    diags = verify_module(module)
    assert diags.codes == ["SYMBOL/005", "SYMBOL/001"]
    assert "first definition" in diags[0].render()


def test_config_region_purity_from_builder() -> None:
    module, b, body, (n, data) = kernel()
    with b.insertion_block(body):
        b.kernel.return_()
    cfg = module.symbols["k"].regions[0].blocks[0]
    src = b.value("src", BUFFER_TYPE)
    cfg.args = (*cfg.args, src)
    scratch = Block()
    with b.insertion_block(scratch):
        zero = b.index.constant(value=0, results=[OFFSET])
        b.buffer.load_i8_u(source=src, byte_offset=zero)
        b.buffer.store_i8(value=b.last_op.results[0], target=src, byte_offset=zero)
    cfg.ops[-1:-1] = scratch.ops
    diags = verify_module(module)
    assert diags.codes == ["STRUCTURE/052"]
    purity = diags[0]
    assert purity.params["read_count"] == 1 and purity.params["write_count"] == 1
    text = purity.render()
    assert "buffer.load.i8.u' is read" in text and "buffer.store.i8' is write" in text


def test_all_errors_in_one_pass_and_raise() -> None:
    module, b, body, (n, _) = kernel()
    with b.insertion_block(body):
        b.index.add(lhs=n, rhs=n, results=[INDEX])
        b.scalar.constant(value=1, results=[I32])
        b.kernel.return_()
    body.ops[0].results[0].type = OFFSET
    body.ops[1].attributes = freeze_attributes({"value": 1.5})
    diags = verify_module(module)
    assert diags.has_errors and diags.codes == ["TYPE/001", "TYPE/005"]
    with pytest.raises(LoomDiagnosticError) as info:
        diags.raise_if_errors()
    assert len(info.value.diagnostics) == len(diags)
    for d in diags:
        assert d.render() in str(info.value)


def test_explicit_engine_collects() -> None:
    module, b, body, (n, _) = kernel()
    with b.insertion_block(body):
        b.kernel.return_()
    body.ops.append(Operation("kernel.return"))
    engine = DiagnosticEngine()
    result = ModuleVerifier(module, default_registry(), engine).run()
    assert result is engine
    assert engine.codes == ["STRUCTURE/017"]


# --------------------------------------------------------------------------- caches are sound


_MUTATIONS = ("type", "swap", "attr", "drop", "dup")


def _mutate(module: Module, picks: list[tuple[int, str]]) -> None:
    ops = [op for op in module.walk() if op.name != "kernel.def" and op.name != "target.generic"]
    for index, kind in picks:
        op = ops[index % len(ops)]
        if kind == "type" and op.results:
            op.results[0].type = F32 if op.results[0].type is not F32 else I32
        elif kind == "swap" and len(op.operands) >= 2:
            op.operands = (op.operands[1], op.operands[0], *op.operands[2:])
        elif kind == "attr" and op.attributes:
            key = sorted(op.attributes)[0]
            op.attributes = freeze_attributes({**op.attributes, key: "bogus"})
        elif kind == "drop" and op.operands:
            op.operands = op.operands[:-1]
        elif kind == "dup" and op.results and op.operands:
            op.operands = (op.results[0], *op.operands[1:])


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.integers(0, 10_000), st.sampled_from(_MUTATIONS)), max_size=6))
def test_cached_verdicts_match_fresh_verifier(picks: list[tuple[int, str]]) -> None:
    warm = make_module(200)
    verify_module(warm)  # fill the plan caches with verdicts about valid ops
    module = make_module(200)
    _mutate(module, picks)
    cached = [(d.code, d.message) for d in verify_module(module)]
    for d in default_ops():
        d.drop_plans()  # the plans hold every verdict cache, type checkers included
    fresh = [(d.code, d.message) for d in verify_module(module)]
    assert cached == fresh
    if picks:
        for d in verify_module(module):
            assert d.render()  # every diagnostic renders


def test_no_ancestor_and_custom_declarations() -> None:
    from loom.dsl import Example, NoAncestor, op
    from loom.registry import default_ops

    host_only = op(
        "test.host_only",
        "An op that must not appear inside a kernel.",
        traits=[NoAncestor("kernel.def")],
        examples=[Example("test.host_only")],
    )
    ops = (*default_ops(), host_only)
    module, b, body, (n, _) = kernel()
    with b.insertion_block(body):
        b.kernel.return_()
    body.ops.insert(0, Operation("test.host_only"))
    diags = verify_module(module, ops=ops)
    assert diags.codes == ["STRUCTURE/029"]
    assert "forbidden ancestor placement for 'kernel.def'" in diags[0].message
    assert diags[0].op_path == (
        "module operation[1] kernel.def.regions[1].blocks[0].ops[0] test.host_only"
    )
    # Outside the declaration set the same op is unknown.
    assert verify_module(module).codes == ["STRUCTURE/006"]


def _if_yielding_a_sized_view(tie_results: bool) -> Module:
    """``%n2, %v2 = scf.if`` yielding a size and a view of that size in each arm."""
    from loom.ir import view_type

    module, b = module_builder()
    c, buf, off = b.value("c", I1), b.value("buf", BUFFER_TYPE), b.value("off", OFFSET)
    body = b.region()
    with b.insertion_block(body.blocks[0]):
        arms = []
        for size in (4, 8):
            r = b.region()
            with b.insertion_block(r.blocks[0]):
                n = b.index.constant(value=size, results=[INDEX], name=f"n{size}")
                v = b.buffer.view(buffer=buf, byte_offset=off, results=[view_type(F32, n)])
                b.scf.yield_(values=[n, v])
            arms.append(r)
        outer = b.index.constant(value=4, results=[INDEX], name="outer")
        n2, v2 = b.scf.if_(
            condition=c,
            results=[INDEX, view_type(F32, outer)],
            then_region=arms[0],
            else_region=arms[1],
            names=["n2", "v2"],
        )
        if tie_results:
            v2.type = view_type(F32, n2)  # the view's size is its sibling result
        b.func.return_()
    b.func.def_(callee="f", args=[c, buf, off], body=body)
    return module


def test_yielded_types_may_name_sibling_yielded_values() -> None:
    # each arm yields (n, view<[%n]xf32>) for the results (n2, view<[%n2]xf32>): the same
    # once the yielded size is renamed to the result it becomes
    assert not verify_module(_if_yielding_a_sized_view(True)).has_errors
    # sized by a value that is not the yielded one: a real mismatch
    diags = verify_module(_if_yielding_a_sized_view(False))
    assert "TYPE/001" in diags.codes
