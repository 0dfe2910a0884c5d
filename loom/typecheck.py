"""Declaration-driven checks shared by the builder and the verifier.

Given an op's fields, report type-constraint, same-type and attribute-value violations. Both the
builder (before anything is created) and the verifier (on finished modules) call these, so the
rules live in one place.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from loom.diagnostics import count_of
from loom.dsl import AttrDef, AttrKind, OpDef, SameType, SameTypeAt, Violation
from loom.ir import DictAttr, Predicate, Type, Value
from loom.ir.attributes import PREDICATE_ARITY
from loom.ir.types import same_type_along

_INT64 = (-(2**63), 2**63 - 1)


def check_field_types(
    decl: OpDef,
    operands: Mapping[str, Sequence[Value]],
    results: Mapping[str, Sequence[Value] | Sequence[Type]],
) -> list[Violation]:
    """Operand/result constraints plus SameType / SameTypeAt traits."""
    out: list[Violation] = []
    for o in decl.operands:
        for i, v in enumerate(operands.get(o.name, ())):
            if not o.constraint(v.type):
                label = o.name if not o.variadic else f"{o.name}[{i}]"
                out.append(
                    Violation(
                        "TYPE/003",
                        f"operand '{label}' has type {v.type}, expected {o.constraint}",
                        o.name,
                    )
                )
    for r in decl.results:
        for i, v in enumerate(results.get(r.name, ())):
            t = v.type if isinstance(v, Value) else v
            if not r.constraint(t):
                label = r.name if not r.variadic else f"{r.name}[{i}]"
                out.append(
                    Violation(
                        "TYPE/004",
                        f"result '{label}' has type {t}, expected {r.constraint}",
                        r.name,
                    )
                )
    types: dict[str, list[Type]] = {}
    for name, vals in list(operands.items()) + list(results.items()):
        types[name] = [v.type if isinstance(v, Value) else v for v in vals]
    for trait in decl.traits:
        if isinstance(trait, SameType):
            out.extend(_same_type_problem(trait, types))
        elif isinstance(trait, SameTypeAt):
            out.extend(_same_type_at_problems(trait, decl, operands, results, types))
    return out


def _same_type_problem(trait: SameType, types: dict[str, list[Type]]) -> list[Violation]:
    """The first mismatch of a SameType group (the fields after it would only repeat it)."""
    first_field, first = None, None
    for f in trait.fields:
        for t in types.get(f, ()):
            if first is None:
                first_field, first = f, t
            elif t != first:
                return [
                    Violation(
                        "TYPE/001", f"'{f}' type {t} does not match '{first_field}' type {first}", f
                    )
                ]
    return []


def _same_type_at_problems(
    trait: SameTypeAt,
    decl: OpDef,
    operands: Mapping[str, Sequence[Value]],
    results: Mapping[str, Sequence[Value] | Sequence[Type]],
    types: dict[str, list[Type]],
) -> list[Violation]:
    """Lists ``a`` and ``b`` of a SameTypeAt trait: equal lengths, equal types by position."""
    a, b = types.get(trait.a, []), types.get(trait.b, [])
    if len(a) != len(b):
        return [
            Violation(
                "STRUCTURE/013",
                f"'{trait.b}' has {count_of(len(b), 'value')} but '{trait.a}' has {len(a)}",
                trait.b,
            )
        ]
    fa = decl.operand(trait.a)
    va = operands.get(trait.a) or results.get(trait.a, ())
    vb = results.get(trait.b) or operands.get(trait.b, ())
    # the tied values stand for each other in the types (a result's view type names the
    # result layout where the operand's names the operand layout)
    rename = {id(x): y for x, y in zip(va, vb) if isinstance(x, Value) and isinstance(y, Value)}
    out = []
    for i, (ta, tb) in enumerate(zip(a, b)):
        # a value already rejected by its constraint is not compared again
        if (
            ta != tb
            and not (rename and same_type_along(ta, tb, rename))
            and (fa is None or fa.constraint(ta))
        ):
            out.append(
                Violation(
                    "TYPE/001",
                    f"'{trait.b}[{i}]' type {tb} does not match '{trait.a}[{i}]' type {ta}",
                    trait.b,
                )
            )
    return out


def _number_problem(name: str, value: Any) -> str | None:
    """Why ``value`` is not an int, bool or float literal of attribute ``name``."""
    if not isinstance(value, (int, float)):
        return f"attribute '{name}' must be a number, got {value!r}"
    if isinstance(value, int) and not isinstance(value, bool) and not (-(2**64) < value < 2**64):
        return f"attribute '{name}' value {value} does not fit in 64 bits"
    if isinstance(value, float) and not (
        math.isfinite(value) or math.isnan(value) or math.isinf(value)
    ):
        return f"attribute '{name}' value {value!r} is not a float"
    return None


def _spec_problem(name: str, value: Any) -> str | None:
    """Why ``value`` is not the canonical text of a static encoding spec."""
    from loom.ir.encoding_spec import SpecError, canonical_spec

    try:
        if not isinstance(value, str) or canonical_spec(value) != value:
            return f"attribute '{name}' must be a canonical encoding spec, got {value!r}"
    except SpecError as e:
        return f"attribute '{name}' is not an encoding spec: {e}"
    return None


def attr_problem(a: AttrDef, value: Any) -> str | None:
    """Why ``value`` is not a valid value of attribute ``a`` (None when it is)."""
    kind = a.kind
    if kind == AttrKind.ENUM:
        if value not in a.enum.cases:
            return f"attribute '{a.name}' value {value!r} is not one of " + ", ".join(a.enum.cases)
    elif kind == AttrKind.DICT:
        if not isinstance(value, DictAttr):
            return f"attribute '{a.name}' must be a DictAttr, got {value!r}"
    elif kind == AttrKind.NAME:
        if not isinstance(value, str) or not value:
            return f"attribute '{a.name}' must be a non-empty name, got {value!r}"
    elif kind == AttrKind.FLAGS:
        try:
            if not isinstance(value, str) or a.flags.canonical(value) != value:
                return f"attribute '{a.name}' value {value!r} is not canonical flags"
        except ValueError as e:
            return str(e)
    elif kind == AttrKind.INT:
        if isinstance(value, bool) or not isinstance(value, int):
            return f"attribute '{a.name}' must be an integer, got {value!r}"
        if not _INT64[0] <= value <= _INT64[1]:
            return f"attribute '{a.name}' value {value} does not fit in 64 bits"
    elif kind == AttrKind.FLOAT:
        if not isinstance(value, float):
            return f"attribute '{a.name}' must be a float, got {value!r}"
    elif kind == AttrKind.NUMBER:
        return _number_problem(a.name, value)
    elif kind == AttrKind.LITERAL:
        for x in value if isinstance(value, tuple) else (value,):
            why = _spec_problem(a.name, x) if isinstance(x, str) else _number_problem(a.name, x)
            if why is not None:
                return why
    elif kind == AttrKind.BLOCK_LIST:
        if not isinstance(value, tuple) or not all(isinstance(x, str) and x for x in value):
            return f"attribute '{a.name}' must be a tuple of block labels, got {value!r}"
    elif kind in (AttrKind.STRING, AttrKind.SYMBOL, AttrKind.BLOCK):
        if not isinstance(value, str) or (kind != AttrKind.STRING and not value):
            return f"attribute '{a.name}' must be a non-empty string, got {value!r}"
    elif kind == AttrKind.ENCODING:
        return _spec_problem(a.name, value)
    elif kind == AttrKind.BOOL:
        if not isinstance(value, bool):
            return f"attribute '{a.name}' must be true or false, got {value!r}"
    elif kind == AttrKind.UNIT:
        if value is not True:
            return f"attribute '{a.name}' is a flag (True when present), got {value!r}"
    elif kind == AttrKind.I64_ARRAY:
        if not isinstance(value, tuple) or not all(
            isinstance(x, int) and not isinstance(x, bool) and _INT64[0] <= x <= _INT64[1]
            for x in value
        ):
            return f"attribute '{a.name}' must be a tuple of 64-bit integers, got {value!r}"
    elif kind == AttrKind.TYPE_ARRAY:
        if not isinstance(value, tuple) or not all(isinstance(x, Type) for x in value):
            return f"attribute '{a.name}' must be a tuple of types, got {value!r}"
    elif kind == AttrKind.PREDICATES:
        if not isinstance(value, tuple):
            return f"attribute '{a.name}' must be a tuple of predicates, got {value!r}"
        for p in value:
            if not isinstance(p, Predicate):
                return f"attribute '{a.name}' entry {p!r} is not a Predicate"
            arity = PREDICATE_ARITY.get(p.kind)
            if arity is None:
                return f"unknown predicate '{p.kind}'; expected one of " + ", ".join(
                    PREDICATE_ARITY
                )
            if len(p.args) != arity:
                return (
                    f"predicate '{p.kind}' takes {count_of(arity, 'argument')}, got {len(p.args)}"
                )
            for x in p.args:
                if not isinstance(x, (Value, int)) or isinstance(x, bool):
                    return f"predicate '{p.kind}' argument {x!r} must be a value or an int"
    return None
