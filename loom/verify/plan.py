"""Per-declaration check plans, compiled once and reused for every op of that kind.

A plan turns an :class:`~loom.dsl.OpDef` into flat tables (required attributes, value checkers,
placement traits, effects) and, per operand/result count, a :class:`Layout` that maps positions
to type constraints, same-type groups and field slices. The verifier's hot loop then needs no
per-op dicts.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from loom.dsl import (
    AttrDef,
    AttrKind,
    Call,
    ControlFlow,
    Convergent,
    HasAncestor,
    HasParent,
    IsolatedFromAbove,
    MemoryEffect,
    NoAncestor,
    OpDef,
    RequiresAttr,
    RequiresTogether,
    SameType,
    SameTypeAt,
    SymbolUse,
    TypeConstraint,
    Uniformity,
)
from loom.ir import Type
from loom.opview import SEGMENTS_ATTR, _split, needs_segments
from loom.typecheck import attr_problem

_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1
_MEMO_LIMIT = 4096


class Accept:
    """A type constraint with a memo of decisions (keyed by type identity)."""

    __slots__ = ("constraint", "fixed", "memo")

    def __init__(self, constraint: TypeConstraint) -> None:
        self.constraint = constraint
        self.fixed = constraint.fixed
        self.memo: dict[int, tuple[Type, bool]] = {}

    def learn(self, t: Type) -> tuple[Type, bool]:
        """Decide ``t`` and remember the decision (the entry keeps ``t`` alive)."""
        if len(self.memo) > _MEMO_LIMIT:
            self.memo.clear()
        try:
            ok = bool(self.constraint(t))
        except Exception:  # a malformed type object: reject, the slow path explains
            ok = False
        entry = (t, ok)
        self.memo[id(t)] = entry
        return entry


_ACCEPTS: dict[int, tuple[TypeConstraint, Accept]] = {}


def accept_for(constraint: TypeConstraint) -> Accept:
    """The shared memoizing checker of ``constraint``."""
    entry = _ACCEPTS.get(id(constraint))
    if entry is None or entry[0] is not constraint:
        entry = (constraint, Accept(constraint))
        _ACCEPTS[id(constraint)] = entry
    return entry[1]


class Layout:
    """Operand/result positions of one op shape: constraints, same-type groups, slices."""

    __slots__ = ("ocons", "rcons", "same", "slices", "rslices", "static_bad")

    def __init__(self, decl: OpDef, n_operands: int, n_results: int, segments: Any) -> None:
        oslices = _slices(decl.operands, n_operands, segments, "operand")
        rslices = _slices(decl.results, n_results, None, "result")
        self.slices = oslices
        self.rslices = rslices
        ocons: list[Accept | None] = [None] * n_operands
        for o in decl.operands:
            a, b = oslices[o.name]
            for i in range(a, b):
                ocons[i] = accept_for(o.constraint)
        rcons: list[Accept | None] = [None] * n_results
        for r in decl.results:
            a, b = rslices[r.name]
            for i in range(a, b):
                rcons[i] = accept_for(r.constraint)
        self.ocons = tuple(ocons)
        self.rcons = tuple(rcons)

        def positions(field: str) -> list[int]:
            # operands are 0.., results are encoded as -1, -2, ...
            if field in oslices:
                a, b = oslices[field]
                return list(range(a, b))
            if field in rslices:
                a, b = rslices[field]
                return [-(i + 1) for i in range(a, b)]
            return []

        same: list[tuple[int, ...]] = []
        self.static_bad = False
        for t in decl.traits:
            if isinstance(t, SameType):
                group = [p for f in t.fields for p in positions(f)]
                if len(group) > 1:
                    same.append(tuple(group))
            elif isinstance(t, SameTypeAt):
                pa, pb = positions(t.a), positions(t.b)
                if len(pa) != len(pb):
                    self.static_bad = True
                for x, y in zip(pa, pb):
                    same.append((x, y))
        self.same = tuple(same)


def _slices(fields, n: int, segments: Any, what: str) -> dict[str, tuple[int, int]]:  # noqa: ANN001
    groups = _split(tuple(range(n)), fields, segments, what)
    out: dict[str, tuple[int, int]] = {}
    pos = 0
    for f in fields:
        g = groups.get(f.name, ())
        start = g[0] if g else pos
        out[f.name] = (start, start + len(g))
        pos = start + len(g)
    return out


def _attr_checker(a: AttrDef) -> Callable[[Any], bool]:
    kind = a.kind
    if kind == AttrKind.ENUM:
        cases = frozenset(a.enum.cases)
        return lambda v: type(v) is str and v in cases
    if kind == AttrKind.INT:
        return lambda v: type(v) is int and _INT64_MIN <= v <= _INT64_MAX
    if kind == AttrKind.FLAGS:
        good: set[str] = set()

        def flags(v: Any) -> bool:
            if type(v) is str and v in good:
                return True
            if attr_problem(a, v) is None:
                if len(good) < 256:
                    good.add(v)
                return True
            return False

        return flags
    if kind == AttrKind.UNIT:
        return lambda v: v is True
    if kind in (AttrKind.STRING,):
        return lambda v: type(v) is str
    if kind == AttrKind.SYMBOL:
        return lambda v: type(v) is str and v != ""
    return lambda v: attr_problem(a, v) is None


class OpPlan:
    """Everything the verifier needs about one declaration, precomputed."""

    __slots__ = (
        "decl", "name", "n_operands", "n_results", "fixed_layout", "segmented", "layouts",
        "required", "attr_ok", "attr_rules", "has_parent", "has_ancestor", "no_ancestor",
        "symbol", "symbol_uses", "hook", "is_terminator", "isolated", "n_req_regions",
        "n_max_regions", "impure", "reads", "writes", "convergent", "call", "uniformity",
        "control", "needs_walk",
    )  # fmt: skip

    def __init__(self, decl: OpDef) -> None:
        self.decl = decl
        self.name = decl.name
        self.segmented = needs_segments(decl)
        fixed = not any(o.variadic or o.optional for o in decl.operands) and not any(
            r.variadic for r in decl.results
        )
        self.n_operands = len(decl.operands) if fixed else -1
        self.n_results = len(decl.results) if fixed else -1
        self.layouts: dict[Any, Layout | None] = {}
        self.fixed_layout = self.layout(self.n_operands, self.n_results, None) if fixed else None
        self.required = tuple(
            a.name for a in decl.attrs if not a.optional and a.kind != AttrKind.UNIT
        )
        self.attr_ok = {a.name: _attr_checker(a) for a in decl.attrs}
        if self.segmented:
            self.attr_ok[SEGMENTS_ATTR] = lambda v: type(v) is tuple
        self.attr_rules = tuple(
            t for t in decl.traits if isinstance(t, (RequiresTogether, RequiresAttr))
        )
        hp = decl.trait(HasParent)
        self.has_parent = hp.parents if hp is not None else None
        self.has_ancestor = tuple(t.ancestor for t in decl.traits_of(HasAncestor))
        self.no_ancestor = tuple(t.ancestor for t in decl.traits_of(NoAncestor))
        self.symbol = decl.symbol_trait
        self.symbol_uses = tuple(decl.traits_of(SymbolUse))
        self.hook = decl.verifier
        self.is_terminator = decl.is_terminator
        self.isolated = decl.trait(IsolatedFromAbove) is not None
        self.n_req_regions = sum(1 for r in decl.regions if not r.optional)
        self.n_max_regions = len(decl.regions)
        effects = decl.traits_of(MemoryEffect)
        self.reads = any(e.reads for e in effects)
        self.writes = any(e.writes for e in effects)
        conv = decl.trait(Convergent)
        self.convergent = conv
        call = decl.trait(Call)
        self.call = call.callee if call is not None else None
        self.impure = self.reads or self.writes or conv is not None or self.call is not None
        u = decl.trait(Uniformity)
        self.uniformity = u.level if u is not None else None
        self.control = decl.trait(ControlFlow)
        self.needs_walk = bool(decl.regions)

    def layout(self, n_operands: int, n_results: int, segments: Any) -> Layout | None:
        """The layout for this shape, or None when the counts do not fit the declaration."""
        key = (n_operands, n_results, segments)
        try:
            return self.layouts[key]
        except KeyError:
            pass
        except TypeError:  # unhashable segments
            return None
        try:
            lay: Layout | None = Layout(self.decl, n_operands, n_results, segments)
        except (ValueError, TypeError):
            lay = None
        if len(self.layouts) < 256:
            self.layouts[key] = lay
        return lay

    def layout_of(self, op: Any) -> Layout | None:
        """The layout of ``op``'s shape."""
        segments = op.attributes.get(SEGMENTS_ATTR) if self.segmented else None
        return self.layout(len(op.operands), len(op.results), segments)

    def rules_ok(self, attrs: Any) -> bool:
        """RequiresTogether / RequiresAttr hold."""
        for t in self.attr_rules:
            if isinstance(t, RequiresTogether):
                n = sum(1 for a in t.attrs if a in attrs)
                if n and n != len(t.attrs):
                    return False
            elif t.attr in attrs and t.requires not in attrs:
                return False
        return True


_PLANS: dict[int, OpPlan] = {}


def plan_for(decl: OpDef) -> OpPlan:
    """The cached plan of ``decl``."""
    plan = _PLANS.get(id(decl))
    if plan is None or plan.decl is not decl:
        plan = _PLANS[id(decl)] = OpPlan(decl)
    return plan
