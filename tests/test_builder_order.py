"""Builder order: create a region-holding op first, fill its regions afterwards (the order a
frontend walking its syntax tree uses). Ops land before an elided terminator; a terminator
built into such a block takes its place; appending after any other terminator is refused."""

from __future__ import annotations

import pytest

from loom import LoomBuilderError, module_builder
from loom.format.text.parser import parse_module
from loom.format.text.printer import print_module
from loom.ir import BUFFER_TYPE, F32, I1, INDEX
from loom.verify import verify_module


def _kernel():
    """A kernel whose body is open for building: (module, builder, body block, n, buf)."""
    module, b = module_builder()
    b.target.generic(symbol="t", kind="reference")
    n = b.value("n", INDEX)
    buf = b.value("buf", BUFFER_TYPE)
    config = b.region()
    with b.insertion_block(config.blocks[0]):
        one = b.index.constant(value=1, results=[INDEX], name="one")
        b.kernel.config(
            workgroup_count_x=one,
            workgroup_count_y=one,
            workgroup_count_z=one,
            workgroup_size_x=one,
            workgroup_size_y=one,
            workgroup_size_z=one,
        )
    body = b.region()
    b.kernel.def_(target="t", callee="k", args=[n, buf], config=config, body=body)
    return module, b, body.blocks[0], n, buf


def _names(block) -> list[str]:  # noqa: ANN001
    return [op.name for op in block.ops]


def _clean(module) -> None:  # noqa: ANN001
    diags = verify_module(module)
    assert not diags.has_errors, diags.render()


def test_scf_if_filled_after_creation() -> None:
    module, b, block, n, _ = _kernel()
    with b.insertion_block(block):
        c = b.index.cmp(predicate="slt", lhs=n, rhs=n, name="c")
        assert b.scf.if_(condition=c, results=[]) == []
        if_op = b.last_op
        then = if_op.regions[0].blocks[0]
        assert _names(then) == ["scf.yield"]  # the builder adds the elided terminator
        with b.insertion_block(then):
            b.index.add(lhs=n, rhs=n, results=[INDEX], name="twice")
            b.index.mul(lhs=n, rhs=n, results=[INDEX], name="square")
        b.kernel.return_()
    assert _names(then) == ["index.add", "index.mul", "scf.yield"]
    _clean(module)
    assert "  scf.if %c {\n    %twice = index.add %n, %n : index\n" in print_module(module)


def test_scf_if_with_results_and_else_filled_after_creation() -> None:
    module, b, block, n, _ = _kernel()
    with b.insertion_block(block):
        c = b.index.cmp(predicate="slt", lhs=n, rhs=n, name="c")
        (r,) = b.scf.if_(condition=c, results=[INDEX], else_region=b.region(), names=["r"])
        if_op = b.last_op
        then, other = (reg.blocks[0] for reg in if_op.regions)
        with b.insertion_block(then):
            x = b.index.add(lhs=n, rhs=n, results=[INDEX], name="x")
            b.scf.yield_(values=[x])  # replaces the bare yield, does not follow it
        with b.insertion_block(other):
            b.scf.yield_(values=[n])
        b.index.add(lhs=r, rhs=r, results=[INDEX], name="use")
        b.kernel.return_()
    assert _names(then) == ["index.add", "scf.yield"]
    assert [len(op.operands) for op in then.ops] == [2, 1]
    assert _names(other) == ["scf.yield"] and other.ops[0].operands == (n,)
    _clean(module)


def test_scf_for_body_filled_after_creation() -> None:
    module, b, block, n, _ = _kernel()
    with b.insertion_block(block):
        zero = b.index.constant(value=0, results=[INDEX], name="zero")
        init = b.scalar.constant(value=0.0, results=[F32], name="init")
        (total,) = b.scf.for_(
            lower_bound=zero, upper_bound=n, step=n, iter_args=[init], results=[F32]
        )
        loop = b.last_op
        body = loop.regions[0].blocks[0]
        iv, acc = body.args
        assert iv.type == INDEX and acc.type == F32
        with b.insertion_block(body):
            nxt = b.scalar.addf(lhs=acc, rhs=acc, results=[F32], name="next")
            b.scf.yield_(values=[nxt])
        b.kernel.return_()
    assert _names(body) == ["scalar.addf", "scf.yield"]
    assert total.type == F32
    _clean(module)


def test_scf_while_filled_after_creation() -> None:
    module, b, block, n, _ = _kernel()
    with b.insertion_block(block):
        zero = b.index.constant(value=0, results=[INDEX], name="zero")
        (out,) = b.scf.while_(iter_args=[zero], results=[INDEX], names=["out"])
        loop = b.last_op
        before, after = (reg.blocks[0] for reg in loop.regions)
        with b.insertion_block(before):
            i = before.args[0]
            go = b.index.cmp(predicate="slt", lhs=i, rhs=n, name="go")
            b.scf.condition(condition=go, forwarded=[i])
        with b.insertion_block(after):
            j = after.args[0]
            step = b.index.add(lhs=j, rhs=j, results=[INDEX], name="step")
            b.scf.yield_(values=[step])
        b.kernel.return_()
    assert _names(before) == ["index.cmp", "scf.condition"]
    assert _names(after) == ["index.add", "scf.yield"]
    _clean(module)


def test_nested_regions_filled_outside_in() -> None:
    module, b, block, n, _ = _kernel()
    with b.insertion_block(block):
        zero = b.index.constant(value=0, results=[INDEX], name="zero")
        b.scf.for_(lower_bound=zero, upper_bound=n, step=n, results=[])
        outer = b.last_op.regions[0].blocks[0]
        b.kernel.return_()
    with b.insertion_block(outer):
        iv = outer.args[0]
        c = b.index.cmp(predicate="slt", lhs=iv, rhs=n, name="c")
        b.scf.if_(condition=c, results=[])
        inner = b.last_op.regions[0].blocks[0]
        with b.insertion_block(inner):
            b.index.add(lhs=iv, rhs=iv, results=[INDEX], name="deep")
            b.scf.for_(lower_bound=zero, upper_bound=iv, step=n, results=[])
            innermost = b.last_op.regions[0].blocks[0]
        # back in the outer loop after filling the if: still before its elided yield
        b.index.mul(lhs=iv, rhs=iv, results=[INDEX], name="after_if")
    with b.insertion_block(innermost):
        b.index.sub(lhs=n, rhs=n, results=[INDEX], name="innermost")
    assert _names(outer) == ["index.cmp", "scf.if", "index.mul", "scf.yield"]
    assert _names(inner) == ["index.add", "scf.for", "scf.yield"]
    assert _names(innermost) == ["index.sub", "scf.yield"]
    assert _names(block)[-2:] == ["scf.for", "kernel.return"]
    _clean(module)


def test_explicit_yield_construction_still_works() -> None:
    module, b, block, n, _ = _kernel()
    with b.insertion_block(block):
        c = b.index.cmp(predicate="slt", lhs=n, rhs=n, name="c")
        then = b.region()
        with b.insertion_block(then.blocks[0]):
            x = b.index.add(lhs=n, rhs=n, results=[INDEX], name="x")
            b.scf.yield_(values=[x])
        other = b.region()
        with b.insertion_block(other.blocks[0]):
            b.scf.yield_(values=[n])
        b.scf.if_(condition=c, results=[INDEX], then_region=then, else_region=other)
        b.kernel.return_()
    assert _names(then.blocks[0]) == ["index.add", "scf.yield"]
    _clean(module)


def test_a_bare_kernel_return_is_elided_so_ops_go_before_it() -> None:
    module, b, block, n, _ = _kernel()
    with b.insertion_block(block):
        b.kernel.return_()
        b.index.add(lhs=n, rhs=n, results=[INDEX], name="late")
    assert _names(block) == ["index.add", "kernel.return"]
    _clean(module)


def test_nothing_may_follow_a_terminator_that_passes_values() -> None:
    module, b, block, n, _ = _kernel()
    with b.insertion_block(block):
        zero = b.index.constant(value=0, results=[INDEX], name="zero")
        b.scf.for_(lower_bound=zero, upper_bound=n, step=n, iter_args=[n], results=[INDEX])
        body = b.last_op.regions[0].blocks[0]
        with b.insertion_block(body):
            b.scf.yield_(values=[body.args[1]])
            values_before = len(module.values)
            with pytest.raises(LoomBuilderError) as e:
                b.index.add(lhs=n, rhs=n, results=[INDEX], name="late")
        b.kernel.return_()
    message = str(e.value)
    assert message.startswith("index.add: the insertion block already ends with its terminator")
    assert "build the block's other ops first and 'scf.yield' last" in message
    assert _names(body) == ["scf.yield"] and len(module.values) == values_before
    _clean(module)


def test_yield_passing_values_is_explicit_and_closes_the_block() -> None:
    module, b, block, n, _ = _kernel()
    with b.insertion_block(block):
        c = b.index.cmp(predicate="slt", lhs=n, rhs=n, name="c")
        b.scf.if_(condition=c, results=[INDEX], else_region=b.region(), names=["r"])
        then = b.last_op.regions[0].blocks[0]
        with b.insertion_block(then):
            b.scf.yield_(values=[n])
            with pytest.raises(LoomBuilderError, match="already ends with its terminator"):
                b.scf.yield_(values=[n])
    assert _names(then) == ["scf.yield"]


def test_parsed_blocks_with_elided_terminators_accept_new_ops() -> None:
    module = parse_module(
        "kernel.def @k() {\n"
        "  %c1 = index.constant 1 : index\n"
        "  kernel.launch.config workgroups(%c1, %c1, %c1) workgroup_size(%c1, %c1, %c1) : index\n"
        "} launch(%n: index, %c: i1) {\n"
        "  scf.if %c {\n"
        "  }\n"
        "  kernel.return\n"
        "}\n"
    )
    kernel = module.ops[0]
    body = kernel.regions[1].blocks[0]
    n, c = body.args
    assert c.type == I1
    then = body.ops[0].regions[0].blocks[0]
    _, b = module_builder(module=module)
    with b.insertion_block(then):
        b.index.add(lhs=n, rhs=n, results=[INDEX], name="added")
    assert _names(then) == ["index.add", "scf.yield"]
    _clean(module)
    assert "  scf.if %c {\n    %added = index.add %n, %n : index\n  }\n" in print_module(module)
