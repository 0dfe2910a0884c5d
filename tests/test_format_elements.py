"""Format elements are one class each: declarations see the same vocabulary, and a new
element is one class that every path (printer, parser, plans, highlighter) picks up."""

from __future__ import annotations

import inspect
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

import loom.dsl as dsl
from loom.dsl import AttrDef, AttrKind, Example, op
from loom.format import elements
from loom.format.elements import ELEMENTS, FormatElement
from loom.format.text.parse_format import plan_for
from loom.format.text.parser import parse_module
from loom.format.text.printer import print_module, print_plan
from loom.highlight import loom_words


@pytest.mark.parametrize("cls", ELEMENTS, ids=lambda c: c.__name__)
def test_dsl_reexports_each_element_class(cls: type) -> None:
    assert getattr(dsl, cls.__name__) is cls
    assert getattr(elements, cls.__name__) is cls


@pytest.mark.parametrize("cls", ELEMENTS, ids=lambda c: c.__name__)
def test_each_element_prints_and_parses_itself(cls: type) -> None:
    # The generic printer and parser are drivers: every element brings its own two methods.
    for method in ("print_text", "parse_steps"):
        assert getattr(cls, method) is not getattr(FormatElement, method), method


def test_constructors_keep_their_declaration_spelling() -> None:
    assert dsl.Refs("a", "b").fields == ("a", "b")
    assert dsl.Subscript("i").fields == ("i",)
    assert dsl.TypesOf("a", "r").fields == ("a", "r")
    clause = dsl.Clause("align", dsl.Attr("base_alignment"))
    assert (clause.name, clause.inner) == ("align", (dsl.Attr("base_alignment"),))
    group = dsl.OptionalGroup("x", dsl.Kw(":"), dsl.TypeOf("x"))
    assert (group.anchor, group.inner) == ("x", (dsl.Kw(":"), dsl.TypeOf("x")))
    assert dsl.BlockArgs("body", omit_empty=True).omit_empty
    assert dsl.BindingList("inits", "body", skip=1).skip == 1
    assert not dsl.ResultTypeList("results", parens=False).parens
    assert dsl.RegionArg("body", index=0).index == 0
    assert dsl.IndexList("indices", "static_indices").static == "static_indices"
    # Elements stay values: equal when spelled alike, different across classes.
    assert dsl.Refs("a") == dsl.Refs("a") and dsl.Refs("a") != dsl.Subscript("a")
    assert dsl.Attr("k") != dsl.TemplateParam("k")
    assert len({dsl.Ref("a"), dsl.Ref("a"), dsl.TypeOf("a")}) == 2


def test_walk_visits_nested_elements() -> None:
    fmt = (dsl.Ref("a"), dsl.OptionalGroup("b", dsl.Clause("c", dsl.IndexList("d", "s"))))
    kinds = [type(e).__name__ for e in elements.walk(fmt)]
    assert kinds == ["Ref", "OptionalGroup", "Clause", "IndexList"]


@dataclass(frozen=True)
class Repeat(FormatElement):
    """``* N`` of an integer attribute (an element defined outside the library)."""

    field: str
    role = "attribute"

    def attrs_written(self) -> Iterator[str]:
        yield self.field

    def keywords(self) -> Iterator[str]:
        yield "times"

    def print_text(self, c: Any) -> None:
        c.tokens += ["times", str(c.attr(self.field))]

    def parse_steps(self, pc: Any) -> list[Any]:
        name = self.field

        def repeat(p: Any, s: Any) -> None:
            p.expect("times")
            s.attrs[name] = p.integer()

        return [repeat]


REP = op(
    "test.rep",
    "Repeats nothing (exercises a new format element).",
    attrs=[AttrDef("count", AttrKind.INT)],
    format=[Repeat("count"), dsl.AttrDict()],
    examples=[Example("test.rep times 3")],
)


def test_a_new_element_is_one_class() -> None:
    text = "test.rep times 3\ntest.rep   times 12\n"
    module = parse_module(text, ops=[REP])
    assert [o.attributes["count"] for o in module.ops] == [3, 12]
    assert print_module(module, ops=[REP]) == "test.rep times 3\ntest.rep times 12\n"
    # The generated paths decline an element without fragments; the generic ones take it.
    assert print_plan(REP).fn is None
    assert plan_for(REP).line_re is None
    assert "times" in loom_words([REP]).keywords
    with pytest.raises(Exception, match="expected 'times'"):
        parse_module("test.rep 3\n", ops=[REP])


def test_elements_module_is_a_leaf_of_the_text_layer() -> None:
    source = inspect.getsource(elements)
    assert "loom.format.text" not in source.split('"""', 2)[2]
    assert "loom.dsl" not in source.split('"""', 2)[2]
