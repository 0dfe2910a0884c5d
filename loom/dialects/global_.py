"""global: module-level storage (constants, variables, read-only byte tables) and its access."""

from __future__ import annotations

from typing import Any

from loom.dialects._shapes import WHERE, WHERE_FORMAT
from loom.dialects.config import (
    DECLARED_TYPE,
    DECLARED_TYPE_FORMAT,
    NAMES_REGION,
    declared_type,
    literal_mismatch,
)
from loom.dsl import (
    ANY,
    Attr,
    AttrDef,
    AttrKind,
    Clause,
    CoResultType,
    Example,
    Kw,
    MemoryEffect,
    Operand,
    OptionalGroup,
    Ref,
    Result,
    Symbol,
    SymbolRef,
    SymbolUse,
    TypeOf,
    Violation,
    named_values,
    op,
)
from loom.ir import INDEX, BufferType, ScalarType, ShapedType, Type
from loom.ir.types import is_encoding_type

GLOBAL_KIND = "global"
"""Symbol kind of value globals (constants and variables)."""
RODATA_KIND = "rodata"
"""Symbol kind of read-only byte tables."""


def structural_mismatch(declared: Type, used: Type) -> str | None:
    """Why ``used`` does not match the declared type of a global (None when it does)."""
    if type(declared) is not type(used) or declared.kind is not used.kind:
        return f"{used} is not the declared {declared}"
    if not isinstance(declared, ShapedType):
        return None if declared == used else f"{used} is not the declared {declared}"
    assert isinstance(used, ShapedType)
    if declared.element_type != used.element_type or declared.rank != used.rank:
        return f"{used} does not have the element type and rank of the declared {declared}"
    g, u = declared.dims, used.dims
    for k, (a, b) in enumerate(zip(g, u)):
        if hasattr(a, "size") != hasattr(b, "size"):
            return f"dimension {k} of {used} is not {'static' if hasattr(a, 'size') else 'dynamic'}"
        if hasattr(a, "size") and a.size != b.size:
            return f"dimension {k} of {used} is {b.size}, declared {a.size}"
    for i in range(len(g)):
        for j in range(i + 1, len(g)):
            if hasattr(g[i], "size") or hasattr(g[j], "size"):
                continue
            if (g[i].value is g[j].value) != (u[i].value is u[j].value):
                return f"dimensions {i} and {j} of {used} do not repeat the declared {declared}"
    ge, ue = declared.encoding, used.encoding
    if (ge is None) != (ue is None) or isinstance(ge, str) != isinstance(ue, str):
        return f"the layout of {used} differs from the declared {declared}"
    if isinstance(ge, str) and ge != ue:
        return f"the layout of {used} differs from the declared {declared}"
    return None


def _verify_value_global(op: Any, ctx: Any) -> list[Violation]:
    types = op.attributes.get("type") or ()
    if len(types) != 1:
        return [Violation("STRUCTURE/014", f"declares {len(types)} types, expected one", "type")]
    t = types[0]
    if "initializer" not in op.attributes:
        return []
    if not isinstance(t, ScalarType):
        return [
            Violation(
                "TYPE/004",
                f"an inline initializer needs a scalar global, not {t}",
                "initializer",
            )
        ]
    why = literal_mismatch(t, op.attributes["initializer"])
    return [] if why is None else [Violation("TYPE/005", f"initializer: {why}", "initializer")]


def _verify_rodata(op: Any, ctx: Any) -> list[Violation]:
    out = []
    align = op.attributes.get("alignment")
    if align is not None and (align <= 0 or align & (align - 1)):
        out.append(
            Violation(
                "STRUCTURE/014",
                f"attribute 'alignment' value {align} (\"{align}\") requires a "
                "positive power-of-two byte alignment",
                "alignment",
            )
        )
    text = op.attributes.get("contents", "")
    if len(text) % 2 or any(c not in "0123456789abcdefABCDEF" for c in text):
        out.append(
            Violation(
                "STRUCTURE/014",
                "attribute 'contents' must be hex digits, two per byte",
                "contents",
            )
        )
    return out


def _target(op: Any, ctx: Any) -> Any:
    target = ctx.symbol(op.attributes.get("global"))
    if target is None or ctx.registry.get(target.name) is None:
        return None
    return target


def _verify_load(op: Any, ctx: Any) -> list[Violation]:
    results = op.results
    if not results:
        return [Violation("STRUCTURE/002", "needs a result (0 results, expected 1)")]
    t = results[0].type
    named = named_values(t)
    co = list(results[1:])
    if len(co) != len(named) or any(a is not b for a, b in zip(co, named)):
        return [
            Violation(
                "STRUCTURE/002",
                f"has {len(results)} results, expected {1 + len(named)}: the "
                "value and, in order, each name its type uses",
            )
        ]
    out = []
    for k, v in enumerate(co, 1):
        if v.type != INDEX and any(getattr(d, "value", None) is v for d in t.dims):
            out.append(Violation("TYPE/004", f"result {k} is a dimension and must be index"))
        elif v is getattr(t, "encoding", None) and not is_encoding_type(v.type):
            out.append(Violation("TYPE/004", f"result {k} is the encoding and must be an encoding"))
    target = _target(op, ctx)
    if target is None:
        return out
    decl = ctx.registry.get(target.name)
    if decl.symbol_trait.kind == RODATA_KIND:
        if not isinstance(t, BufferType):
            out.append(Violation("TYPE/004", f"result 0 of a read-only table is a buffer, not {t}"))
        return out
    want = declared_type(target)
    if want is not None:
        why = structural_mismatch(want, t)
        if why is not None:
            out.append(
                Violation("TYPE/001", f"loaded value: {why} (@{target.attributes['symbol']})")
            )
    return out


def _verify_store(op: Any, ctx: Any) -> list[Violation]:
    target = _target(op, ctx)
    if target is None or not op.operands:
        return []
    want = declared_type(target)
    if want is None:
        return []
    why = structural_mismatch(want, op.operands[0].type)
    if why is None:
        return []
    return [Violation("TYPE/001", f"stored value: {why} (@{target.attributes['symbol']})", "value")]


def _value_global(name: str, doc: str, examples: list[Example]) -> Any:
    return op(
        name,
        doc,
        attrs=[
            AttrDef("symbol", AttrKind.SYMBOL),
            DECLARED_TYPE,
            WHERE,
            AttrDef("initializer", AttrKind.LITERAL, optional=True),
        ],
        regions=[NAMES_REGION],
        traits=[Symbol("symbol", kind=GLOBAL_KIND)],
        format=[
            SymbolRef("symbol"),
            *DECLARED_TYPE_FORMAT,
            WHERE_FORMAT,
            OptionalGroup("initializer", Kw("="), Attr("initializer")),
        ],
        examples=examples,
        verifier=_verify_value_global,
    )


CONSTANT = _value_global(
    "global.constant",
    "A module-level value that only initializers write; a launch reads it (or supplies it).",
    [
        Example("global.constant @pi : f32 = 3.14159265358979", top_level=True),
        Example("global.constant @table : view<[%n]xf32> where [mul(%n, 16)]", top_level=True),
    ],
)
VARIABLE = _value_global(
    "global.variable",
    "A module-level value a launch may read and write; its initializer is the starting value.",
    [
        Example("global.variable @step_count : index = 0", top_level=True),
        Example("global.variable @square : view<[%n]x[%n]xf32>", top_level=True),
    ],
)

_RODATA_ATTRS = [
    AttrDef("symbol", AttrKind.SYMBOL),
    AttrDef("contents", AttrKind.STRING, doc="the payload as hex digits, two per byte"),
    AttrDef("alignment", AttrKind.INT, optional=True, doc="base alignment in bytes (default 1)"),
]
_TRAILING_ALIGN = OptionalGroup("alignment", Kw(","), Kw("align"), Attr("alignment"))

RODATA_DEF = op(
    "global.rodata.def",
    "A named read-only byte table (compiler tables such as sanitizer sites); loads give a "
    "constant-space buffer.",
    attrs=_RODATA_ATTRS,
    traits=[Symbol("symbol", kind=RODATA_KIND)],
    format=[
        SymbolRef("symbol"),
        Kw("="),
        OptionalGroup("alignment", Clause("align", Attr("alignment"))),
        Clause("bytes", Attr("contents")),
    ],
    legacy_formats=[
        [SymbolRef("symbol"), Kw("="), Clause("bytes", Attr("contents")), _TRAILING_ALIGN]
    ],
    builder="def_",
    examples=[
        Example('global.rodata.def @sites = align(8) bytes("4c53495401000000")', top_level=True),
        Example('global.rodata.def @empty = bytes("")', top_level=True),
    ],
    verifier=_verify_rodata,
)

LOAD = op(
    "global.load",
    "Reads a global's current value; further results are the extents (and layout) its type "
    "names, in order of first use.",
    attrs=[AttrDef("global", AttrKind.SYMBOL)],
    results=[Result("results", ANY, variadic=True)],
    traits=[
        MemoryEffect(reads=True),
        SymbolUse("global", (GLOBAL_KIND, RODATA_KIND), what="global"),
    ],
    format=[SymbolRef("global"), Kw(":"), CoResultType("results")],
    examples=[
        Example(
            "global.constant @pi : f32 = 3.25\n\n"
            "func.def @read() -> (f32) {\n"
            "  %v = global.load @pi : f32\n"
            "  func.return %v : f32\n"
            "}",
            top_level=True,
        ),
        Example(
            "global.variable @sq : view<[%n]x[%n]xf32>\n\n"
            "func.def @read() {\n"
            "  %v, %n = global.load @sq : view<[%n]x[%n]xf32>\n"
            "  func.return\n"
            "}",
            top_level=True,
        ),
    ],
    verifier=_verify_load,
)

STORE = op(
    "global.store",
    "Replaces a global's value.",
    operands=[Operand("value", ANY)],
    attrs=[AttrDef("global", AttrKind.SYMBOL)],
    traits=[MemoryEffect(writes=True), SymbolUse("global", (GLOBAL_KIND,), what="global")],
    format=[Ref("value"), Kw(","), SymbolRef("global"), Kw(":"), TypeOf("value")],
    examples=[
        Example(
            "global.variable @counter : index\n\n"
            "func.def @bump(%n: index) {\n"
            "  global.store %n, @counter : index\n"
            "  func.return\n"
            "}",
            top_level=True,
        )
    ],
    verifier=_verify_store,
)

RODATA_DECL = op(
    "global.rodata.decl",
    "A read-only byte table supplied at link time (a launch passes it in ``globals``).",
    attrs=[AttrDef("symbol", AttrKind.SYMBOL)],
    traits=[Symbol("symbol", kind=RODATA_KIND)],
    format=[SymbolRef("symbol")],
    builder="decl",
    examples=[Example("global.rodata.decl @asan_config", top_level=True)],
)

RODATA = op(
    "global.rodata",
    "The older spelling of global.rodata.def (alignment written after the payload).",
    attrs=_RODATA_ATTRS,
    traits=[Symbol("symbol", kind=RODATA_KIND)],
    format=[SymbolRef("symbol"), Kw("="), Clause("bytes", Attr("contents")), _TRAILING_ALIGN],
    builder="rodata",
    examples=[Example('global.rodata @sites = bytes("4c53495401000000"), align 8', top_level=True)],
    verifier=_verify_rodata,
)

OPS = (CONSTANT, VARIABLE, RODATA_DEF, LOAD, STORE, RODATA_DECL, RODATA)
