"""Per-declaration check plans, compiled once and reused for every op of that kind.

A plan turns an :class:`~loom.dsl.OpDef` into flat tables (required attributes, value checkers,
placement traits, effects) and, per operand/result count, a :class:`Layout` that maps positions
to type constraints, same-type groups and field slices. The verifier's hot loop then needs no
per-op dicts.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any

from loom.dsl import (
    AttrDef,
    AttrKind,
    Call,
    ControlFlow,
    Convergent,
    DefersPlacement,
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
    Terminator,
    TypeConstraint,
    Uniformity,
)
from loom.format.text.codegen import compile_generated
from loom.ir import Type
from loom.opview import SEGMENTS_ATTR, _split, needs_segments
from loom.typecheck import attr_problem

_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1

F_SEGMENTS = 1
F_RULES = 2
F_REQUIRED = 4
F_PLACEMENT = 8
F_HOOK = 16
F_SYMBOL_USES = 32
F_REGIONS = 64
F_IMPURE = 128
F_CONVERGENT = 256
F_EXTRA = F_HOOK | F_SYMBOL_USES | F_REGIONS | F_IMPURE | F_CONVERGENT
"""Bits of :attr:`OpPlan.flags`: which checks an op of this kind needs beyond the basics."""
_MEMO_LIMIT = 4096


class Accept:
    """A type constraint with a memo of decisions (keyed by type identity)."""

    __slots__ = ("constraint", "fixed", "memo", "good")

    def __init__(self, constraint: TypeConstraint) -> None:
        self.constraint = constraint
        self.fixed = constraint.fixed
        self.memo: dict[int, tuple[Type, bool]] = {}
        self.good: set[int] = set()
        """Ids of accepted types; each is kept alive by ``memo`` so ids cannot be reused."""

    def admit(self, t: Type) -> bool:
        """True when ``t`` is accepted (remembered in ``good`` for the generated checkers)."""
        e = self.memo.get(id(t))
        if e is None or e[0] is not t:
            e = self.learn(t)
        return e[1]

    def learn(self, t: Type) -> tuple[Type, bool]:
        """Decide ``t`` and remember the decision (the entry keeps ``t`` alive)."""
        if len(self.memo) > _MEMO_LIMIT:
            self.memo.clear()
            self.good.clear()
        try:
            ok = bool(self.constraint(t))
        except Exception:  # a malformed type object: reject, the slow path explains
            ok = False
        entry = (t, ok)
        self.memo[id(t)] = entry
        if ok:
            self.good.add(id(t))
        return entry


class Layout:
    """Operand/result positions of one op shape: constraints, same-type groups, slices."""

    __slots__ = (
        "ocons", "rcons", "same", "slices", "rslices", "static_bad", "check", "check_def", "key",
    )  # fmt: skip

    def __init__(
        self,
        decl: OpDef,
        n_operands: int,
        n_results: int,
        segments: Any,
        accepts: Mapping[str, Accept],
    ) -> None:
        """``accepts`` maps each operand and result field to its declaration's checker."""
        oslices = _slices(decl.operands, n_operands, segments, "operand")
        rslices = _slices(decl.results, n_results, None, "result")
        self.slices = oslices
        self.rslices = rslices
        self.ocons = _per_position(decl.operands, oslices, n_operands, accepts)
        self.rcons = _per_position(decl.results, rslices, n_results, accepts)
        self.same, self.static_bad = _same_type_positions(decl, oslices, rslices)
        if self.static_bad:
            self.check = self.check_def = _never
        else:
            shape = _shape_name(n_operands, n_results, segments)
            self.check = _compile_check(self.ocons, self.rcons, self.same, False, decl, shape)
            self.check_def = _compile_check(
                self.ocons, self.rcons, self.same, True, decl, shape + "-def"
            )
        self.key = (
            _compile_key(n_operands, n_results, decl, _shape_name(n_operands, n_results, segments))
            if decl.verifier_cacheable
            else None
        )


def _per_position(
    fields: Any, slices: Mapping[str, tuple[int, int]], n: int, accepts: Mapping[str, Accept]
) -> tuple[Accept | None, ...]:
    """The checker of each operand (or result) position: its field's."""
    out: list[Accept | None] = [None] * n
    for f in fields:
        a, b = slices[f.name]
        for i in range(a, b):
            out[i] = accepts[f.name]
    return tuple(out)


def _same_type_positions(
    decl: OpDef,
    oslices: Mapping[str, tuple[int, int]],
    rslices: Mapping[str, tuple[int, int]],
) -> tuple[tuple[tuple[int, ...], ...], bool]:
    """Groups of positions (operands 0.., results -1, -2, ...) whose types must agree, from
    the SameType and SameTypeAt traits, and whether a SameTypeAt pair differs in length."""

    def positions(field: str) -> list[int]:
        if field in oslices:
            a, b = oslices[field]
            return list(range(a, b))
        if field in rslices:
            a, b = rslices[field]
            return [-(i + 1) for i in range(a, b)]
        return []

    same: list[tuple[int, ...]] = []
    bad = False
    for t in decl.traits:
        if isinstance(t, SameType):
            group = [p for f in t.fields for p in positions(f)]
            if len(group) > 1:
                same.append(tuple(group))
        elif isinstance(t, SameTypeAt):
            pa, pb = positions(t.a), positions(t.b)
            if len(pa) != len(pb):
                bad = True
            same.extend(zip(pa, pb))
    return tuple(same), bad


def _shape_name(n_operands: int, n_results: int, segments: Any) -> str:
    """``2-1`` (operands-results), with the segment sizes when the op has segments."""
    seg = "".join(f"-{k}" for k in segments) if segments else ""
    return f"{n_operands}-{n_results}{seg}"


def _compile_check(
    ocons: tuple[Accept | None, ...],
    rcons: tuple[Accept | None, ...],
    same: tuple[tuple[int, ...], ...],
    define: bool,
    decl: OpDef,
    shape: str,
) -> Callable[..., bool]:
    """Generate straight-line code checking one op shape: every operand is visible and a
    value of this module, every type satisfies its constraint, same-type groups agree; with
    ``define``, results are also checked to be fresh and then defined (all or nothing).
    Returns False on the first problem (the slow path then explains); may raise on malformed
    ops (also handled by the slow path)."""
    env: dict[str, Any] = {}
    lines = ["def check(ops, res, stamp, active, values, tok, names):"]
    for i, acc in enumerate(ocons):
        lines += [
            f"    v = ops[{i}]",
            "    i = v.id",
            "    s = stamp[i]",
            "    if s < 0 or not active[s] or values[i] is not v:",
            "        return False",
            f"    o{i} = v.type",
        ]
        lines += _type_test(f"o{i}", f"oa{i}", acc, env)
    for i, acc in enumerate(rcons):
        lines.append(f"    v{i} = res[{i}]")
        lines.append(f"    r{i} = v{i}.type")
        lines += _type_test(f"r{i}", f"ra{i}", acc, env)
        if define:
            lines += [
                f"    d{i} = v{i}.id",
                f"    if stamp[d{i}] != -1 or values[d{i}] is not v{i}:",
                "        return False",
                f"    n{i} = v{i}.name",
                f"    if n{i} is not None:",
                f"        p = names.get(n{i})",
                "        if p is not None and active[p]:",
                "            return False",
                f"        if n{i}[:1].isdigit():",  # a digit name: the checked path
                "            return False",
            ]
    for group in same:
        vars_ = [f"o{p}" if p >= 0 else f"r{-p - 1}" for p in group]
        for other in vars_[1:]:
            lines += [
                f"    if {other} is not {vars_[0]} and {other} != {vars_[0]}:",
                "        return False",
            ]
    if define:
        if len(rcons) > 1:  # two results of one op must not share a value or a name
            ids = ", ".join(f"d{i}" for i in range(len(rcons)))
            lines += [f"    if len({{{ids}}}) != {len(rcons)}:", "        return False"]
            nm = ", ".join(f"n{i}" for i in range(len(rcons)))
            lines += [
                f"    named = [n for n in ({nm},) if n is not None]",
                "    if len(set(named)) != len(named):",
                "        return False",
            ]
        for i in range(len(rcons)):
            lines += [
                f"    stamp[d{i}] = tok",
                f"    if n{i} is not None:",
                f"        names[n{i}] = tok",
            ]
    lines.append("    return True")
    compile_generated("\n".join(lines) + "\n", "verify", decl.name, env, shape)
    return env["check"]


def _never(*args: Any) -> bool:
    return False


def _compile_key(
    n_operands: int, n_results: int, decl: OpDef, shape: str
) -> Callable[..., tuple[int, ...]]:
    """Generate ``key(ops, res, attrs)``: the ids of the attribute mapping and of every type
    of the op (a cache entry must keep those objects alive, see :func:`key_objects`)."""
    parts = ["id(attrs)"] + [f"id(ops[{i}].type)" for i in range(n_operands)]
    parts += [f"id(res[{i}].type)" for i in range(n_results)]
    env: dict[str, Any] = {}
    src = f"def key(ops, res, attrs):\n    return ({', '.join(parts)},)\n"
    compile_generated(src, "verify", decl.name, env, shape + "-key")
    return env["key"]


def key_objects(op: Any) -> tuple[Any, ...]:
    """The objects whose ids make up a hook cache key of ``op``."""
    return (op.attributes, *(v.type for v in op.operands), *(v.type for v in op.results))


def _type_test(var: str, name: str, acc: Accept | None, env: dict[str, Any]) -> list[str]:
    if acc is None:
        return []
    env[name] = acc
    env[name + "_good"] = acc.good
    if acc.fixed is not None:
        env[name + "_fixed"] = acc.fixed
        return [
            f"    if {var} is not {name}_fixed and not {name}.admit({var}):",
            "        return False",
        ]
    return [
        f"    if id({var}) not in {name}_good and not {name}.admit({var}):",
        "        return False",
    ]


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
    if kind in (AttrKind.SYMBOL, AttrKind.BLOCK):
        return lambda v: type(v) is str and v != ""
    return lambda v: attr_problem(a, v) is None


class OpPlan:
    """Everything the verifier needs about one declaration, precomputed."""

    __slots__ = (
        "decl", "name", "n_operands", "n_results", "fixed_layout", "segmented", "layouts",
        "required", "attr_ok", "attr_rules", "has_parent", "has_ancestor", "no_ancestor",
        "symbol", "symbol_uses", "hook", "is_terminator", "isolated", "n_req_regions",
        "n_max_regions", "impure", "reads", "writes", "convergent", "call", "uniformity",
        "control", "needs_walk", "flags", "cur_no", "cur_nr", "cur_layout", "good_attrs",
        "_kept_attrs", "hook_ok", "quick_hook", "accepts", "defers_placement",
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
        self.accepts = {f.name: Accept(f.constraint) for f in (*decl.operands, *decl.results)}
        """Each operand and result field's memoizing type checker (shared by all layouts)."""
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
        self.defers_placement = decl.trait(DefersPlacement)
        self.n_req_regions = sum(1 for r in decl.regions if not (r.optional or r.variadic))
        self.n_max_regions = decl.max_regions
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
        self.flags = flags = self._flags(conv is not None, bool(decl.regions))
        self.good_attrs: set[int] = set()
        self._kept_attrs: list[Any] = []
        self.hook_ok: dict[Any, tuple[Any, ...]] = {}
        self.quick_hook = decl.verifier_cacheable and (flags & F_EXTRA & ~F_IMPURE) == F_HOOK
        """Only a cacheable hook is left to run (when not in a side-effect-free region)."""
        """Keys (see :func:`_compile_key`) of op shapes a cacheable hook accepted."""
        self.cur_no, self.cur_nr, self.cur_layout = self.n_operands, self.n_results, None
        if self.fixed_layout is not None:
            self.cur_layout = self.fixed_layout

    def _flags(self, convergent: bool, has_regions: bool) -> int:
        """The ``F_*`` bits saying which checks beyond the operand types this op needs."""
        flags = 0
        if self.segmented:
            flags |= F_SEGMENTS
        if self.attr_rules:
            flags |= F_RULES
        if self.required:
            flags |= F_REQUIRED
        if (
            self.has_parent is not None
            or self.has_ancestor
            or self.no_ancestor
            or self.is_terminator
            or self.symbol is not None
        ):
            flags |= F_PLACEMENT
        if self.hook is not None:
            flags |= F_HOOK
        if self.symbol_uses:
            flags |= F_SYMBOL_USES
        if has_regions:
            flags |= F_REGIONS
        if self.impure:
            flags |= F_IMPURE
        if convergent:
            flags |= F_CONVERGENT
        return flags

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
            lay: Layout | None = Layout(self.decl, n_operands, n_results, segments, self.accepts)
        except (ValueError, TypeError):
            lay = None
        if len(self.layouts) < 256:
            self.layouts[key] = lay
        return lay

    def operands_of(self, op: Any, field: str) -> tuple[Any, ...] | None:
        """The operands of ``op`` (an op of this plan) in operand field ``field``, or None when
        its shape is not one the declaration allows."""
        lay = self.layout_of(op)
        if lay is None or field not in lay.slices:
            return None
        a, b = lay.slices[field]
        return op.operands[a:b]

    def passed_on(self, op: Any) -> tuple[Any, ...] | None:
        """The values the terminator ``op`` (an op of this plan) passes on to its parent (its
        ``Terminator`` trait's field), or None when it passes none or its shape is unknown."""
        term = self.decl.trait(Terminator)
        if term is None or term.values is None:
            return None
        return self.operands_of(op, term.values)

    def layout_of(self, op: Any) -> Layout | None:
        """The layout of ``op``'s shape (remembered as the current one for the next op)."""
        segments = op.attributes.get(SEGMENTS_ATTR) if self.segmented else None
        lay = self.layout(len(op.operands), len(op.results), segments)
        if lay is not None and not self.segmented:
            self.cur_no, self.cur_nr, self.cur_layout = len(op.operands), len(op.results), lay
        return lay

    def attrs_ok(self, attrs: Any) -> bool:
        """Every attribute is declared and valid, required ones are present, rules hold.

        Immutable attribute mappings (shared between ops by the IR) are remembered by
        identity, so each distinct mapping is checked once."""
        attr_ok = self.attr_ok
        for k, val in attrs.items():
            chk = attr_ok.get(k)
            if chk is None or not chk(val):
                return False
        for k in self.required:
            if k not in attrs:
                return False
        if self.attr_rules and not self.rules_ok(attrs):
            return False
        if type(attrs) is MappingProxyType and len(self._kept_attrs) < _MEMO_LIMIT:
            self._kept_attrs.append(attrs)
            self.good_attrs.add(id(attrs))
        return True

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


def plan_for(decl: OpDef) -> OpPlan:
    """The cached plan of ``decl``."""
    return decl.plan(OpPlan)
