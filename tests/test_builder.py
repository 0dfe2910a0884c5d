"""Generated builders: naming rules, keyword checking, and nothing half-built on misuse."""

import inspect

import pytest

from loom import LoomBuilderError, module_builder
from loom.format.text.printer import print_module
from loom.ir import (
    BUFFER_TYPE,
    F32,
    I1,
    I32,
    INDEX,
    OFFSET,
    FileLocation,
    Predicate,
    view_type,
)
from loom.registry import OpRegistry, default_registry, namespace_attr


def _kernel_body():
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


@pytest.mark.parametrize(
    "op_name, method",
    [
        ("kernel.workitem.dispatch.id", "workitem_dispatch_id"),
        ("kernel.workitem.id", "workitem_id"),
        ("kernel.workgroup.size", "workgroup_size"),
        ("kernel.launch.config", "config"),
        ("kernel.def", "def_"),
        ("kernel.return", "return_"),
        ("kernel.assert", "assert_"),
        ("scf.if", "if_"),
        ("scf.for", "for_"),
        ("scf.yield", "yield_"),
        ("buffer.load.i8.u", "load_i8_u"),
        ("buffer.store.i8", "store_i8"),
        ("buffer.assume.noalias", "noalias"),
        ("buffer.assume.alignment", "alignment"),
        ("func.return", "return_"),
    ],
)
def test_builder_method_names_follow_the_naming_rule(op_name: str, method: str) -> None:
    reg = default_registry()
    assert reg.builder_name(reg.lookup(op_name)) == method


def test_naming_rule_depends_on_registered_ops() -> None:
    reg = default_registry()
    only_dispatch = OpRegistry([reg.lookup("kernel.workitem.dispatch.id")])
    # Alone in its dialect the last segment is unique.
    assert only_dispatch.builder_name(reg.lookup("kernel.workitem.dispatch.id")) == "id"


def test_every_declared_op_has_a_builder_method() -> None:
    _, b = module_builder()
    reg = default_registry()
    for d in reg:
        method = getattr(getattr(b, namespace_attr(d.dialect)), reg.builder_name(d))
        assert method.op_def is d
        params = inspect.signature(method).parameters.values()
        assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in params)


def test_signature_lists_fields_keyword_only() -> None:
    _, b = module_builder()
    sig = inspect.signature(b.scalar.addi)
    assert list(sig.parameters) == [
        "lhs",
        "rhs",
        "overflow",
        "results",
        "name",
        "names",
        "result_names",
        "location_id",
    ]
    assert sig.parameters["lhs"].default is inspect.Parameter.empty
    assert sig.parameters["overflow"].default is None


def _snapshot(module):
    return (
        len(module.values),
        len(module.ops),
        [len(op.regions[1].blocks[0].ops) for op in module.ops if len(op.regions) == 2],
    )


@pytest.mark.parametrize(
    "call, fragment",
    [
        (lambda b, n, buf: b.index.add(lhs=n, rhs=n, result=[INDEX]), "unknown keyword 'result'"),
        (lambda b, n, buf: b.index.add(lhs=n, results=[INDEX]), "missing operand 'rhs'"),
        (lambda b, n, buf: b.index.add(lhs=n, rhs=n), "missing 'results='"),
        (
            lambda b, n, buf: b.index.add(lhs=n, rhs=n, results=[INDEX, INDEX]),
            "expected 1 result type, got 2",
        ),
        (
            lambda b, n, buf: b.index.add(lhs=n, rhs=n, results=[F32]),
            "result 'result' has type f32",
        ),
        (
            lambda b, n, buf: b.index.add(lhs=n, rhs=buf, results=[INDEX]),
            "operand 'rhs' has type buffer",
        ),
        (
            lambda b, n, buf: b.index.add(lhs=n, rhs=3, results=[INDEX]),
            "operand 'rhs' must be a value",
        ),
        (
            lambda b, n, buf: b.kernel.workitem_id(dimension="w", results=[INDEX]),
            "attribute 'dimension' value 'w' is not one of x, y, z",
        ),
        (
            lambda b, n, buf: b.scalar.addi(lhs=n, rhs=n, results=[I32]),
            "operand 'lhs' has type index",
        ),
        (
            lambda b, n, buf: b.scalar.addf(lhs=n, rhs=n, results=[F32], fastmath="quick"),
            "fastmath",
        ),
        (
            lambda b, n, buf: b.index.constant(value=1, results=[INDEX], name="1bad"),
            "invalid SSA name",
        ),
        (
            lambda b, n, buf: b.index.constant(value=1, results=[INDEX], location_id=99),
            "location_id 99",
        ),
    ],
)
def test_misuse_names_op_and_field_and_leaves_module_unchanged(call, fragment) -> None:
    module, b, block, n, buf = _kernel_body()
    before = _snapshot(module)
    with b.insertion_block(block):
        with pytest.raises(LoomBuilderError) as err:
            call(b, n, buf)
    message = str(err.value)
    assert fragment in message
    assert message.split(":")[0] in {
        "index.add",
        "index.constant",
        "kernel.workitem.id",
        "scalar.addi",
        "scalar.addf",
    }
    assert _snapshot(module) == before


def test_no_insertion_block_is_an_error() -> None:
    module, b = module_builder()
    with pytest.raises(LoomBuilderError, match="index.constant: no insertion block"):
        b.index.constant(value=1, results=[INDEX])
    assert module.values == [] and module.ops == []


def test_value_from_another_module_is_rejected() -> None:
    module, b, block, n, buf = _kernel_body()
    other, b2, _, n2, _ = _kernel_body()
    with b.insertion_block(block), pytest.raises(LoomBuilderError, match="another module"):
        b.index.add(lhs=n, rhs=n2, results=[INDEX])


def test_duplicate_symbol_is_rejected() -> None:
    module, b = module_builder()
    b.target.generic(symbol="t", kind="reference")
    with pytest.raises(LoomBuilderError, match="already defined"):
        b.target.generic(symbol="t", kind="reference")
    assert len(module.ops) == 1


def test_return_shapes_and_fixed_result_inference() -> None:
    module, b, block, n, buf = _kernel_body()
    with b.insertion_block(block):
        off = b.index.constant(value=0, results=[OFFSET])
        byte = b.buffer.load_i8_u(source=buf, byte_offset=off)  # i32 inferred
        assert byte.type == I32
        p = b.index.cmp(predicate="ult", lhs=n, rhs=n)  # i1 inferred
        assert p.type == I1
        pair = b.buffer.noalias(buffers=[buf], results=[BUFFER_TYPE], names=["b2"])
        assert isinstance(pair, list) and pair[0].name == "b2"
        assert b.buffer.store_i8(value=byte, target=buf, byte_offset=off) is None


def test_regions_get_derived_args_and_implicit_terminators() -> None:
    module, b, block, n, buf = _kernel_body()
    with b.insertion_block(block):
        zero = b.index.constant(value=0, results=[INDEX], name="zero")
        init = b.scalar.constant(value=0.0, results=[F32], name="init")
        body = b.region(args=[("iv", INDEX), ("acc", F32)])
        with b.insertion_block(body.blocks[0]):
            acc = body.blocks[0].args[1]
            nxt = b.scalar.addf(lhs=acc, rhs=acc, results=[F32], name="next")
            b.scf.yield_(values=[nxt])
        (total,) = b.scf.for_(
            lower_bound=zero,
            upper_bound=n,
            step=n,
            iter_args=[init],
            results=[F32],
            body=body,
            names=["total"],
        )
        cond = b.index.cmp(predicate="slt", lhs=zero, rhs=n, name="c")
        b.scf.if_(condition=cond, results=[])
        b.kernel.return_()
    text = print_module(module)
    assert (
        "  %total = scf.for %iv = [%zero to %n step %n](%acc = %init : f32) -> (f32) {\n"
        "    %next = scalar.addf %acc, %acc : f32\n"
        "    scf.yield %next : f32\n"
        "  }\n"
    ) in text
    assert "  scf.if %c {\n  }\n" in text
    if_op = block.ops[-2]
    assert [op.name for op in if_op.regions[0].blocks[0].ops] == ["scf.yield"]


def test_region_arg_types_are_checked() -> None:
    module, b, block, n, buf = _kernel_body()
    with b.insertion_block(block):
        body = b.region(args=[("iv", F32)])
        with pytest.raises(LoomBuilderError, match=r"scf.for: region 'body' arguments"):
            b.scf.for_(lower_bound=n, upper_bound=n, step=n, results=[], body=body)


def test_index_lists_mix_static_and_dynamic_entries() -> None:
    module, b, block, n, buf = _kernel_body()
    with b.insertion_block(block):
        off = b.index.constant(value=0, results=[OFFSET], name="off")
        v = b.buffer.view(buffer=buf, byte_offset=off, results=[view_type(F32, 4, n)], name="v")
        x = b.view.load(view=v, indices=[2, n], results=[F32], name="x")
        b.view.store(value=x, view=v, indices=[0, n])
    text = print_module(module)
    assert "%v = buffer.view %buf[%off] : buffer -> view<4x[%n]xf32>" in text
    assert "%x = view.load %v[2, %n] : view<4x[%n]xf32> -> f32" in text
    assert "view.store %x, %v[0, %n] : f32, view<4x[%n]xf32>" in text


def test_predicates_and_locations_print() -> None:
    module, b, block, n, buf = _kernel_body()
    src = module.add_source("front.py")
    loc = module.add_location(FileLocation(src, 12, 5, 12, 20))
    assert module.add_location(FileLocation(src, 12, 5, 12, 20)) == loc  # deduplicated
    with b.insertion_block(block), b.location(loc):
        b.index.assume(
            values=[n], predicates=[Predicate("range", (n, 1, 4))], results=[INDEX], name="n2"
        )
    plain = print_module(module)
    located = print_module(module, print_locations=True)
    assert "%n2 = index.assume %n [range(%n, 1, 4)] : index\n" in plain
    assert (
        '%n2 = index.assume %n [range(%n, 1, 4)] : index loc("front.py":12:5 to 12:20)' in located
    )
    assert block.ops[-1].location_id == loc
