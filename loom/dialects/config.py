"""config: named compile-time values a program reads and a launch may override by name."""

from __future__ import annotations

from typing import Any

from loom.dialects._shapes import WHERE, WHERE_FORMAT
from loom.dialects.encoding import ENCODING_TYPES, spec_mismatch
from loom.dsl import (
    ArgSource,
    Attr,
    AttrDef,
    AttrKind,
    Example,
    Kw,
    LocalType,
    Pure,
    RegionDef,
    Result,
    Symbol,
    SymbolRef,
    SymbolUse,
    TypeConstraint,
    TypeOf,
    Violation,
    op,
)
from loom.ir import ScalarType, Type

SCALAR_OR_ENCODING = TypeConstraint(
    "a scalar or encoding type", lambda t: isinstance(t, ScalarType) or t in ENCODING_TYPES
)
CONFIG_KIND = "config"
"""Symbol kind of config declarations and definitions."""

# The declaration-local names of a declared type (``%value`` of ``%value: index where [...]``,
# the extents of a shaped global): entry arguments of a region without ops.
NAMES_REGION = RegionDef(
    "locals",
    arg_source=ArgSource.VALUES,
    arg_keyword="local_names",
    optional=True,
    doc="the declaration-local names the type and predicates use",
)


DECLARED_TYPE = AttrDef(
    "type",
    AttrKind.TYPE_ARRAY,
    builder_keyword="results",
    doc="the one declared type; the %names it spells are local names (region locals)",
)
DECLARED_TYPE_FORMAT = [Kw(":"), LocalType("type", "locals")]
"""``: %value: T``: a symbol's declared type, its local names in region ``locals``."""


def literal_mismatch(t: Type, value: Any) -> str | None:
    """Why literal ``value`` cannot be a value of scalar or encoding type ``t`` (None when it
    can): an encoding takes a static spec of its role."""
    if t in ENCODING_TYPES:
        return spec_mismatch(t, value)
    if not isinstance(t, ScalarType):
        return f"a literal cannot initialise a value of type {t}"
    if isinstance(value, (str, tuple)):
        return f"type {t} takes a scalar literal, got {value!r}"
    if t.is_float:
        if isinstance(value, bool) or not isinstance(value, float):
            return f"type {t} takes a float literal, got {value!r}"
        return None
    if isinstance(value, float):
        return f"type {t} takes an integer literal, got {value!r}"
    if t.bit_width == 1:
        if isinstance(value, bool) or value in (0, 1):
            return None
        return f"type {t} takes true, false, 0 or 1, got {value!r}"
    if isinstance(value, bool):
        return f"type {t} takes an integer literal, got {value!r}"
    return None


def declared_type(op: Any) -> Type | None:
    """The one type a record declaration (config, global) declares, or None."""
    types = op.attributes.get("type") or ()
    return types[0] if len(types) == 1 else None


def _verify_record(op: Any, ctx: Any) -> list[Violation]:
    types = op.attributes.get("type") or ()
    if len(types) != 1:
        return [Violation("STRUCTURE/014", f"declares {len(types)} types, expected one", "type")]
    t = types[0]
    out = []
    if not isinstance(t, ScalarType) and t not in ENCODING_TYPES:
        out.append(
            Violation(
                "TYPE/004",
                f"config type {t} is not a scalar or encoding type",
                "type",
            )
        )
    elif "value" in op.attributes:
        why = literal_mismatch(t, op.attributes["value"])
        if why is not None:
            out.append(Violation("TYPE/005", f"value: {why}", "value"))
    return out


def _verify_get(op: Any, ctx: Any) -> list[Violation]:
    target = ctx.symbol(op.attributes.get("config"))
    if target is None or not op.results:
        return []
    want = declared_type(target)
    got = op.results[0].type
    if want is not None and want != got:
        return [
            Violation(
                "TYPE/001",
                f"result type {got} differs from the referenced config's type {want} "
                f"(@{op.attributes.get('config')})",
                "result",
            )
        ]
    return []


DECL = op(
    "config.decl",
    "A required compile-time value without a default; a launch must supply it by name.",
    attrs=[
        AttrDef("symbol", AttrKind.SYMBOL),
        DECLARED_TYPE,
        WHERE,
    ],
    regions=[NAMES_REGION],
    traits=[Symbol("symbol", kind=CONFIG_KIND), Pure()],
    format=[
        SymbolRef("symbol"),
        *DECLARED_TYPE_FORMAT,
        WHERE_FORMAT,
    ],
    builder="decl",
    examples=[
        Example("config.decl @model.hidden_size : index", top_level=True),
        Example(
            "config.decl @model.max_context : %value: index where [range(%value, 1, 131072)]",
            top_level=True,
        ),
    ],
    verifier=_verify_record,
)

DEF = op(
    "config.def",
    "A compile-time value with its default; a launch may override it by name.",
    attrs=[
        AttrDef("symbol", AttrKind.SYMBOL),
        AttrDef("value", AttrKind.LITERAL),
        DECLARED_TYPE,
    ],
    regions=[NAMES_REGION],
    traits=[Symbol("symbol", kind=CONFIG_KIND), Pure()],
    format=[SymbolRef("symbol"), Kw("="), Attr("value"), *DECLARED_TYPE_FORMAT],
    builder="def_",
    examples=[
        Example("config.def @model.hidden_size = 2048 : index", top_level=True),
        Example("config.def @model.rope_theta = 1000000.0 : f32", top_level=True),
        Example("config.def @features.enable_mtp = true : i1", top_level=True),
    ],
    verifier=_verify_record,
)

GET = op(
    "config.get",
    "Reads a config value (the launch's override, else the config.def default).",
    attrs=[AttrDef("config", AttrKind.SYMBOL)],
    results=[Result("result", SCALAR_OR_ENCODING)],
    traits=[Pure(), SymbolUse("config", (CONFIG_KIND,), what="config")],
    format=[SymbolRef("config"), Kw(":"), TypeOf("result")],
    builder="get",
    examples=[
        Example(
            "config.def @tile = 64 : index\n\n"
            "func.def @read() -> (index) {\n"
            "  %t = config.get @tile : index\n"
            "  func.return %t : index\n"
            "}",
            top_level=True,
        )
    ],
    verifier=_verify_get,
)

OPS = (DECL, DEF, GET)
