"""Reference text made from the op declarations: builder docstrings, the op reference, stubs.

Nothing here is written by hand per op: every line comes from an :class:`~loom.dsl.OpDef`.
``make docs`` (:func:`main` with ``--write``) regenerates ``docs/ops/<dialect>.md`` and
``loom/_builder_ops.pyi``; ``--check`` exits 1 when one is stale (a test checks the same).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable
from dataclasses import fields, is_dataclass
from pathlib import Path

from loom.dsl import AttrDef, AttrKind, OpDef, Operand, RegionDef, Result, python_name
from loom.registry import OpRegistry, default_registry, namespace_attr

ROOT = Path(__file__).resolve().parent.parent
DOCS_DIR = ROOT / "docs" / "ops"
STUB_PATH = Path(__file__).resolve().parent / "_builder_ops.pyi"


# --------------------------------------------------------------------------- field descriptions


def operand_text(o: Operand) -> str:
    """``i32`` / ``list of index`` / ``optional index`` for an operand or result field."""
    what = o.constraint.description
    if o.variadic:
        return f"list of {what}"
    if getattr(o, "optional", False):
        return f"optional {what}"
    return what


def attr_text(a: AttrDef) -> str:
    """The accepted values of an attribute, with enum cases or flags spelled out."""
    if a.kind == AttrKind.ENUM and a.enum is not None:
        what = f"one of {', '.join(repr(c) for c in a.enum.cases)}"
    elif a.kind == AttrKind.FLAGS and a.flags is not None:
        what = f"'|'-joined flags of {', '.join(a.flags.flags)}"
    elif a.kind == AttrKind.UNIT:
        what = "bool (present when true)"
    else:
        what = _ATTR_KINDS.get(a.kind, a.kind)
    if a.default is not None:
        what += f"; default {a.default!r}"
    elif a.optional and a.kind != AttrKind.UNIT:
        what += "; optional"
    return what


_ATTR_KINDS = {
    AttrKind.INT: "int",
    AttrKind.FLOAT: "float",
    AttrKind.NUMBER: "int, bool or float literal",
    AttrKind.LITERAL: "int, bool or float literal, encoding spec '#family<...>' (str) or a list",
    AttrKind.STRING: "str",
    AttrKind.ENCODING: "encoding spec '#family<...>' (str)",
    AttrKind.NAME: "dotted name (str, written bare)",
    AttrKind.DICT: "dict (str keys; str, number, bool, int list, u64(N)-style typed int, "
    'bytes("hex") or dict values)',
    AttrKind.BOOL: "bool",
    AttrKind.SYMBOL: "symbol name (str)",
    AttrKind.BLOCK: "block label (str)",
    AttrKind.BLOCK_LIST: "sequence of block labels (str)",
    AttrKind.I64_ARRAY: "sequence of int",
    AttrKind.TYPE_ARRAY: "sequence of types",
    AttrKind.PREDICATES: "sequence of predicates",
}


def region_text(r: RegionDef) -> str:
    """A one-line description of a region field."""
    parts = ["single block" if r.single_block else "blocks"]
    if r.terminator:
        parts.append(f"ends with {r.terminator}" + (" (implicit)" if r.implicit_terminator else ""))
    if r.optional:
        parts.append("optional")
    if r.variadic:
        parts.append("any number, as a list")
    if r.arg_keyword:
        parts.append(f"arguments from keyword {r.arg_keyword}")
    return ", ".join(parts)


def trait_text(t: object) -> str:
    """A trait as ``Name(field=value, ...)``, leaving out empty fields."""
    name = type(t).__name__
    if not is_dataclass(t):
        return name
    args = [f"{f.name}={getattr(t, f.name)!r}" for f in fields(t) if getattr(t, f.name)]
    return f"{name}({', '.join(args)})" if args else name


def _doc_suffix(field: Operand | Result | AttrDef | RegionDef) -> str:
    return f" - {field.doc}" if field.doc else ""


def _hidden_attrs(decl: OpDef) -> set[str]:
    return set(decl.index_lists.values())


# --------------------------------------------------------------------------- builder docstrings


def builder_docstring(decl: OpDef) -> str:
    """The docstring of the generated builder method for ``decl`` (cached per declaration)."""
    lines = [decl.doc, "", f"Builds ``{decl.name}``."]
    hidden = _hidden_attrs(decl)
    args = [f"{python_name(o.name)}: {operand_text(o)}{_doc_suffix(o)}" for o in decl.operands]
    args += [
        f"{a.keyword}: {attr_text(a)}{_doc_suffix(a)}" for a in decl.attrs if a.name not in hidden
    ]
    args += [f"{r.arg_keyword}: region arguments" for r in decl.regions if r.arg_keyword]
    args += [f"{python_name(r.name)}: region ({region_text(r)})" for r in decl.regions]
    if decl.results:
        kinds = ", ".join(f"{r.name}: {operand_text(r)}" for r in decl.results)
        args.append(f"results: result types ({kinds})")
        args.append("name / names / result_names: SSA names for the results")
    args.append("location_id: source location of the op")
    lines += ["", "Args:"] + [f"    {a}" for a in args]
    if decl.traits:
        lines += ["", "Traits: " + ", ".join(trait_text(t) for t in decl.traits)]
    lines += ["", "Example::", ""] + [f"    {t}" for t in decl.examples[0].text.splitlines()]
    return "\n".join(lines)


# --------------------------------------------------------------------------- the op reference


def _table(header: tuple[str, ...], rows: list[tuple[str, ...]]) -> list[str]:
    if not rows:
        return []
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(c.replace("|", "\\|") for c in row) + " |" for row in rows]
    return out + [""]


def op_reference(decl: OpDef, registry: OpRegistry) -> list[str]:
    """The Markdown section of one op."""
    ns = namespace_attr(decl.dialect)
    out = [f"## `{decl.name}`", "", decl.doc, ""]
    out.append(f"Builder: `builder.{ns}.{registry.builder_name(decl)}(...)`")
    out.append("")
    hidden = _hidden_attrs(decl)
    rows = [("operand", o.name, operand_text(o), o.doc) for o in decl.operands]
    rows += [("result", r.name, operand_text(r), r.doc) for r in decl.results]
    rows += [
        ("attribute", a.keyword, attr_text(a), a.doc) for a in decl.attrs if a.name not in hidden
    ]
    rows += [("region", r.name, region_text(r), r.doc) for r in decl.regions]
    out += _table(("kind", "name", "type", "doc"), rows)
    if decl.traits:
        out += ["Traits: " + ", ".join(f"`{trait_text(t)}`" for t in decl.traits), ""]
    for ex in decl.examples:
        out += ["```loom", ex.text.rstrip("\n"), "```", ""]
    return out


_GENERATED = "<!-- Generated by `make docs` from loom/dialects; do not edit. -->"


def dialect_reference(dialect: str, defs: Iterable[OpDef], registry: OpRegistry) -> str:
    """``docs/ops/<dialect>.md``: every op of one dialect, in declaration order."""
    defs = list(defs)
    out = [
        f"# The `{dialect}` dialect",
        "",
        _GENERATED,
        "",
        f"{len(defs)} ops: " + ", ".join(f"`{d.name}`" for d in defs) + ".",
        "",
    ]
    for d in defs:
        out += op_reference(d, registry)
    return "\n".join(out).rstrip("\n") + "\n"


# --------------------------------------------------------------------------- editor stubs


def _class_name(dialect: str) -> str:
    return "".join(p.capitalize() for p in dialect.split("_")) + "Builder"


def _stub_method(decl: OpDef, method: str) -> list[str]:
    hidden = _hidden_attrs(decl)
    params = ["self", "*"]
    for o in decl.operands:
        opt = o.variadic or o.optional
        params.append(
            f"{python_name(o.name)}: {'Sequence[Value]' if o.variadic else 'Value'}"
            + (" | None = None" if opt else "")
        )
    for a in decl.attrs:
        if a.name in hidden:
            continue
        required = not a.optional and a.kind != AttrKind.UNIT
        params.append(f"{a.keyword}: Any" + ("" if required else " = None"))
    for r in decl.regions:
        if r.arg_keyword:
            params.append(f"{r.arg_keyword}: Any = None")
    for r in decl.regions:
        kind = "Sequence[Region]" if r.variadic else "Region"
        params.append(f"{python_name(r.name)}: {kind} | None = None")
    if decl.results:
        fixed = all(not r.variadic and r.constraint.fixed is not None for r in decl.results)
        params.append("results: Sequence[Type]" + (" | None = None" if fixed else ""))
        params += ["name: str | None = None", "names: Sequence[str | None] | None = None"]
        params.append("result_names: Sequence[str | None] | None = None")
    params.append("location_id: int | None = None")
    if not decl.results:
        ret = "None"
    elif len(decl.results) == 1 and not decl.results[0].variadic:
        ret = "Value"
    else:
        ret = "list[Value]"
    doc = decl.doc.replace("\\", "\\\\").replace('"""', "'''")
    return [f"    def {method}({', '.join(params)}) -> {ret}:", f'        """{doc}"""']


def builder_stubs(registry: OpRegistry) -> str:
    """``loom/_builder_ops.pyi``: typed dialect namespaces for editors and type checkers."""
    out = [
        '"""Typed builder namespaces, generated by ``make docs`` from loom/dialects."""',
        "",
        "from collections.abc import Sequence",
        "from typing import Any",
        "",
        "from loom.builder import DialectBuilder",
        "from loom.ir import Region, Type, Value",
        "",
    ]
    dialects = registry.dialects()
    for dialect, defs in dialects.items():
        out += ["", f"class {_class_name(dialect)}(DialectBuilder):"]
        for d in defs:
            out += _stub_method(d, registry.builder_name(d))
    out += ["", "", "class DialectNamespaces:"]
    out.append('    """The dialect attributes of a LoomBuilder."""')
    out.append("")
    for dialect in dialects:
        out.append(f"    {namespace_attr(dialect)}: {_class_name(dialect)}")
    return "\n".join(out) + "\n"


# --------------------------------------------------------------------------- files


def generated_files(registry: OpRegistry | None = None) -> dict[Path, str]:
    """Every generated file and its current content."""
    registry = registry or default_registry()
    files = {
        DOCS_DIR / f"{dialect}.md": dialect_reference(dialect, defs, registry)
        for dialect, defs in registry.dialects().items()
    }
    index = ["# Op reference", "", _GENERATED, ""]
    index += [
        f"- [`{dialect}`]({dialect}.md): {len(defs)} ops"
        for dialect, defs in registry.dialects().items()
    ]
    files[DOCS_DIR / "README.md"] = "\n".join(index) + "\n"
    files[STUB_PATH] = builder_stubs(registry)
    return files


def stale_files(registry: OpRegistry | None = None) -> list[Path]:
    """Generated files whose content differs from what the declarations give (or are extra)."""
    want = generated_files(registry)
    stale = [p for p, text in want.items() if not p.is_file() or p.read_text() != text]
    if DOCS_DIR.is_dir():
        stale += sorted(p for p in DOCS_DIR.glob("*.md") if p not in want)
    return stale


def main(argv: list[str] | None = None) -> int:
    """Write or check the generated reference files."""
    parser = argparse.ArgumentParser(prog="loom.opdocs", description=__doc__)
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--write", action="store_true", help="regenerate the files")
    group.add_argument("--check", action="store_true", help="exit 1 when a file is stale")
    args = parser.parse_args(argv)
    if args.check:
        stale = stale_files()
        for p in stale:
            print(f"stale: {p.relative_to(ROOT)}", file=sys.stderr)
        if stale:
            print("run: make docs", file=sys.stderr)
        return 1 if stale else 0
    want = generated_files()
    DOCS_DIR.mkdir(parents=True, exist_ok=True)
    for p in sorted(DOCS_DIR.glob("*.md")):
        if p not in want:
            p.unlink()
    for p, text in want.items():
        if not p.is_file() or p.read_text() != text:
            p.write_text(text)
            print(f"wrote {p.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
