"""test.split_func (a region projecting the signature) and pool<N> resources."""

from __future__ import annotations

import pytest

from loom import module_builder, verify_module
from loom.errors import LoomParseError
from loom.format.bytecode import read_module, write_module
from loom.format.text.parser import parse_module
from loom.format.text.printer import print_module
from loom.highlight import loom_words
from loom.ir import F32, INDEX, opaque_type


def _split(b, n, x):  # noqa: ANN001, ANN202
    body, launch = b.region(), b.region()
    with b.insertion_block(body.blocks[0]):
        b.test.use(values=[n, x])
        b.test.yield_()
    b.test.split_func(callee="f", args=[n, x], body=body, launch=launch)
    with b.insertion_block(launch.blocks[0]):
        b.test.use(values=list(launch.blocks[0].args))
        b.test.yield_()
    return body, launch


def test_builder_projects_signature_into_launch_region() -> None:
    module, b = module_builder()
    n, x = b.value("n", INDEX), b.value("x", F32)
    body, launch = _split(b, n, x)
    args = launch.blocks[0].args
    assert body.blocks[0].args == (n, x)
    assert [(a.name, a.type) for a in args] == [("n", INDEX), ("x", F32)]
    assert {a.id for a in args}.isdisjoint({n.id, x.id})
    assert not verify_module(module).errors
    text = print_module(module)
    assert "} launch {\n  test.use %n, %x : index, f32" in text
    assert print_module(parse_module(text)) == text
    assert print_module(read_module(write_module(module), verify=True)) == text


def test_verifier_rejects_launch_args_that_differ_from_the_signature() -> None:
    module, b = module_builder()
    n, x = b.value("n", INDEX), b.value("x", F32)
    _, launch = _split(b, n, x)
    launch.blocks[0].args = launch.blocks[0].args[:1]
    codes = [d.code for d in verify_module(module).errors]
    assert "TYPE/013" in codes


def test_pool_family_members_are_interned_and_survive_bytecode() -> None:
    assert opaque_type("pool<16>") is opaque_type("pool<16>")
    assert opaque_type("pool<16>") is not opaque_type("pool<32>")
    assert opaque_type("pool<0>") is None and opaque_type("pool") is None
    text = (
        "test.func @f(%n: index) {\n"
        "  %p = test.resource.alloc %n : index -> pool<32>\n"
        "  test.resource.consume %p : pool<32>\n"
        "  test.yield\n"
        "}\n"
    )
    module = parse_module(text)
    assert print_module(read_module(write_module(module), verify=True)) == text
    assert "pool" in loom_words().types


@pytest.mark.parametrize("spelling", ["pool<0>", "pool<x>", "pool<-3>"])
def test_bad_pool_spelling_is_a_parse_error(spelling: str) -> None:
    with pytest.raises(LoomParseError, match="PARSE/004|positive integer"):
        parse_module(f"test.func @f(%p: {spelling}) {{\n  test.yield\n}}\n")


def test_unnamed_signature_args_project_with_their_spelling() -> None:
    module, b = module_builder()
    n, x = b.value(None, INDEX), b.value(None, F32)
    _, launch = _split(b, n, x)
    assert [a.name for a in launch.blocks[0].args] == [str(n.id), str(x.id)]
    text = print_module(module)
    assert print_module(parse_module(text)) == text
    assert print_module(read_module(write_module(module), verify=True)) == text
