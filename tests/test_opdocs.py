"""Docs made from the declarations: builder docstrings, docs/ops/*.md and the editor stubs."""

from __future__ import annotations

import ast
import inspect
import pydoc

from loom.builder import module_builder
from loom.dsl import AttrKind
from loom.opdocs import STUB_PATH, builder_stubs, dialect_reference, stale_files
from loom.registry import default_registry, namespace_attr


def test_generated_files_are_current() -> None:
    stale = stale_files()
    assert not stale, f"regenerate with `make docs`: {[str(p) for p in stale]}"


def test_help_shows_doc_fields_enum_values_and_example() -> None:
    _, b = module_builder()
    for decl in default_registry():
        method = getattr(
            getattr(b, namespace_attr(decl.dialect)), default_registry().builder_name(decl)
        )
        text = pydoc.render_doc(method, renderer=pydoc.plaintext)
        assert decl.doc.splitlines()[0] in text
        assert decl.examples[0].text.splitlines()[0] in text
        for o in decl.operands:
            assert f"{o.name}: " in text
        for a in decl.attrs:
            if a.kind == AttrKind.ENUM and a.name not in decl.index_lists.values():
                assert all(repr(c) in text for c in a.enum.cases), (decl.name, a.name)


def test_stub_methods_match_the_runtime_signatures() -> None:
    tree = ast.parse(STUB_PATH.read_text())
    classes = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}
    namespaces = {
        node.target.id: node.annotation.id
        for node in classes["DialectNamespaces"].body
        if isinstance(node, ast.AnnAssign)
    }
    _, b = module_builder()
    registry = default_registry()
    seen = 0
    for dialect, defs in registry.dialects().items():
        cls = classes[namespaces[namespace_attr(dialect)]]
        methods = {f.name: f for f in cls.body if isinstance(f, ast.FunctionDef)}
        for decl in defs:
            name = registry.builder_name(decl)
            stub = methods[name]
            runtime = inspect.signature(getattr(getattr(b, namespace_attr(dialect)), name))
            stub_params = [a.arg for a in stub.args.kwonlyargs]
            assert stub_params == list(runtime.parameters), decl.name
            required = {
                a.arg for a, d in zip(stub.args.kwonlyargs, stub.args.kw_defaults) if d is None
            }
            runtime_required = {
                p.name for p in runtime.parameters.values() if p.default is inspect.Parameter.empty
            }
            assert required == runtime_required, decl.name
            seen += 1
    assert seen == len(registry)


def test_reference_lists_every_op_once() -> None:
    registry = default_registry()
    for dialect, defs in registry.dialects().items():
        text = dialect_reference(dialect, defs, registry)
        for d in defs:
            assert text.count(f"\n## `{d.name}`\n") == 1
    assert builder_stubs(registry) == STUB_PATH.read_text()
