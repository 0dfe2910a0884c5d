"""The module verifier: one pass over the module, every problem collected as a diagnostic.

Each op is first checked on a fast path (precomputed :class:`~loom.verify.plan.OpPlan`, no
per-op allocation); only when something looks wrong does the slow path run and explain.

Codes: STRUCTURE/001 top-level op is not symbol-defining; /006 unknown op; /007 yield count;
/010 missing attribute; /011 undeclared attribute; /012 result count; /013 operand count;
/014 attribute value; /015 region count; /016 block count; /017 terminator not last;
/018 wrong or missing terminator; /029 placement; /038 barrier under non-uniform control;
/052 side effects in a side-effect-free region. SYMBOL/001 stale table entry; /002
unresolved; /003 wrong kind; /004 missing from the symbol table; /005 duplicate. TYPE/001 types
differ; /003 operand type; /004 result type; /009 yielded type; /013 region argument types.
DOMINANCE/001 use of a value not visible here; /002 use across an isolated-from-above op;
/003 value defined twice; /004 name defined twice in one scope; /005 foreign value.
"""

from __future__ import annotations

from collections.abc import Generator, Iterable, Sequence
from typing import Any

from loom.diagnostics import (
    Diagnostic,
    DiagnosticEngine,
    DiagnosticRelatedLocation,
    DiagnosticSeverity,
    PrintedText,
    a_or_an,
    count_of,
    op_source_range,
    source_order,
)
from loom.dsl import (
    ArgSource,
    Branch,
    HasAncestor,
    NoReturn,
    OpDef,
    PureWhen,
    Terminator,
    Violation,
)
from loom.ir import Block, Module, Operation, Region, Value
from loom.ir.types import same_type_along
from loom.ir.values import spelled_id
from loom.opview import SEGMENTS_ATTR, operand_groups, result_groups
from loom.registry import OpRegistry
from loom.typecheck import attr_problem, check_field_types
from loom.verify.plan import (
    F_CONVERGENT,
    F_EXTRA,
    F_HOOK,
    F_IMPURE,
    F_PLACEMENT,
    F_REGIONS,
    F_SEGMENTS,
    F_SYMBOL_USES,
    Layout,
    OpPlan,
    key_objects,
    plan_for,
)
from loom.verify.successors import check_successors, immediate_dominators, same_along_edge
from loom.verify.uniformity import check_convergent, derived_sources

_NO_PARENTS: frozenset[str] = frozenset()
MAX_NESTING = 1000
"""Deepest region nesting verified (the parser accepts 256 levels); deeper regions are reported
as STRUCTURE/099 and not entered. The walk keeps its own stack, so this is a rule, not a limit
of Python's recursion."""

Walk = Generator["Walk", None, None]
"""A step of the verifier's walk: it yields the nested steps (regions, blocks) to run before it
continues (see :func:`_run_walk`)."""


def _run_walk(root: Walk) -> None:
    """Run a walk with an explicit stack instead of recursion: each step yields the next nested
    step, which runs to its end before the yielding step continues. When a step raises, the
    steps still suspended are closed innermost first (their ``finally`` blocks run)."""
    stack = [root]
    try:
        while stack:
            for nested in stack[-1]:
                stack.append(nested)
                break
            else:
                stack.pop()
    finally:
        while stack:
            stack.pop().close()


class VerifyContext:
    """What per-op hooks may ask about: fields of ops, symbols, the module."""

    def __init__(self, module: Module, registry: OpRegistry) -> None:
        self.module = module
        self.registry = registry
        self._op: Operation | None = None
        self._layout: Layout | None = None

    def operand_values(self, op: Operation, field: str) -> tuple[Value, ...]:
        """The operands of ``op`` in field ``field`` (empty if unknown)."""
        if op is self._op and self._layout is not None:
            sl = self._layout.slices.get(field)
            return op.operands[sl[0] : sl[1]] if sl is not None else ()
        decl = self.registry.get(op.name)
        if decl is None:
            return ()
        try:
            return operand_groups(op, decl).get(field, ())
        except ValueError:
            return ()

    def region(self, op: Operation, field: str) -> Region | None:
        """Region ``field`` of ``op`` (None when absent)."""
        decl = self.registry.get(op.name)
        if decl is None:
            return None
        for i, rd in enumerate(decl.regions):
            if rd.name == field:
                return op.regions[i] if i < len(op.regions) else None
        return None

    def yield_violations(
        self, op: Operation, region: Region, where: str, field: str
    ) -> list[Violation]:
        """Problems of the values ``region``'s terminator passes on against the values of
        ``op``'s field ``field`` (count, then types; a type may name the passed values where
        the field's types name the field's own values). ``where`` names the region."""
        block = region.blocks[-1] if region.blocks else None
        last = block.ops[-1] if block is not None and block.ops else None
        tdecl = self.registry.get(last.name) if last is not None else None
        term = tdecl.trait(Terminator) if tdecl is not None else None
        if term is None or term.values is None:
            return []  # a wrong or missing terminator is reported on its own
        passed = self.operand_values(last, term.values)
        decl = self.registry.get(op.name)
        if decl is not None and decl.result(field) is not None:
            want = result_groups(op, decl).get(field, ())
        else:
            want = self.operand_values(op, field)
        if len(passed) != len(want):
            return [
                Violation(
                    "STRUCTURE/013",
                    f"{where} yields {len(passed)} values, but '{op.name}' {field} count is "
                    f"{len(want)}",
                    field,
                )
            ]
        rename = {id(a): b for a, b in zip(passed, want)}
        for i, (a, b) in enumerate(zip(passed, want)):
            if not same_along_edge(a.type, b.type, rename):
                return [
                    Violation(
                        "TYPE/001",
                        f"{where}.yield[{i}] has type {a.type} but '{op.name}' {field}[{i}] "
                        f"is {b.type}",
                        field,
                    )
                ]
        return []

    def symbol(self, name: Any) -> Operation | None:
        """The top-level op defining symbol ``name``."""
        return self.module.symbols.get(name) if isinstance(name, str) else None

    def defining_op(self, value: Value) -> Operation | None:
        """The op whose result ``value`` is (None for block arguments); the first call maps
        the module's results once."""
        owners = self.__dict__.get("_owners")
        if owners is None:
            owners = self.__dict__["_owners"] = {
                id(r): op for op in self.module.walk() for r in op.results
            }
        op = owners.get(id(value))
        return op if op is not None and value in op.results else None


class ModuleVerifier:
    """Runs every check over one module."""

    def __init__(
        self,
        module: Module,
        registry: OpRegistry,
        diagnostics: DiagnosticEngine | None = None,
        printed: PrintedText | None = None,
    ) -> None:
        self.module = module
        self.registry = registry
        self.engine = diagnostics if diagnostics is not None else DiagnosticEngine()
        self.printed = printed
        """Handed to every diagnostic, to show location-less ops in the printed module."""
        self.ctx = VerifyContext(module, registry)
        self._plans: dict[str, OpPlan | None] = {}
        self.branch_names = frozenset(d.name for d in registry if d.trait(Branch) is not None)

    # ------------------------------------------------------------------ reporting

    def error(
        self,
        op: Operation | None,
        code: str,
        message: str,
        path: str | None = None,
        severity: DiagnosticSeverity = DiagnosticSeverity.ERROR,
        params: dict[str, Any] | None = None,
        notes: list[DiagnosticRelatedLocation] | None = None,
    ) -> Diagnostic:
        """Record a diagnostic about ``op``."""
        rng = op_source_range(self.module, op) if op is not None else None
        if rng is None and op is not None:
            # An op without a location (an implicit terminator the builder added) is shown
            # at the nearest enclosing op that has one.
            for outer, *_ in reversed(getattr(self, "_trail", ())):
                rng = op_source_range(self.module, outer)
                if rng is not None:
                    break
        if path is None and op is not None:
            path = self._path_of(op)
        d = Diagnostic(
            severity,
            code,
            message,
            rng,
            notes=notes or [],
            op_path=path,
            op=op,
            module=self.module,
            location_id=op.location_id if op is not None else 0,
            params=params or {},
            printed=self.printed,
        )
        self.engine.add(d)
        return d

    def _path_of(self, op: Operation) -> str | None:
        """``module operation[i] x.y.regions[r].blocks[b].ops[o] z`` for an op being visited."""
        trail = self._trail + [(op, *self._cursor)] if self._cursor else self._trail
        parts = []
        for i, (o, ri, bi, oi) in enumerate(trail):
            if i == 0:
                parts.append(f"module operation[{oi}] {o.name}")
            else:
                parts.append(f".regions[{ri}].blocks[{bi}].ops[{oi}] {o.name}")
            if o is op:
                return "".join(parts)
        return None

    # ------------------------------------------------------------------ walk

    def run(self) -> DiagnosticEngine:
        """Verify the whole module."""
        module = self.module
        self.values = module.values
        self.stamp: list[int] = [-1] * len(module.values)
        self.active = bytearray(b"\x01")
        self.tok_root: list[Operation | None] = [None]
        self.root: Operation | None = None
        self.names: dict[str, int] = {}
        self.digit_names: dict[int, list[int]] = {}
        """Value id -> tokens of the blocks defining a digit name that spells it (``%7``)."""
        self.hidden: dict[int, Operation] = {}
        self.tokens: list[int] = [0]
        self.parents: list[Operation] = []
        self.scope_names: frozenset[str] = _NO_PARENTS
        self.all_names: frozenset[str] = _NO_PARENTS
        self.pure_depth = 0
        self.impure_hits: list[Operation] = []
        self.convergent: list[tuple[Operation, tuple[Operation, ...], str | None]] = []
        self._trail: list[tuple[Operation, int, int, int]] = []
        self._cursor: tuple[int, int, int] | None = None
        self._defined: set[int] | None = None
        self._name_sets: dict[tuple[frozenset[str], str], frozenset[str]] = {}
        self._check_symbols()
        first = len(self.engine.diagnostics)
        _run_walk(self._walk_block(module.body, 0, "module", 0, 0))
        if self.convergent:
            check_convergent(self, self.convergent)
        # Found in walk order (symbols first, barriers last); people read them in source order.
        found = self.engine.diagnostics
        found[first:] = source_order(found[first:])
        return self.engine

    def plan(self, name: str) -> OpPlan | None:
        """The plan for op ``name`` (None for ops outside the declaration set)."""
        try:
            return self._plans[name]
        except KeyError:
            decl = self.registry.get(name)
            plan = plan_for(decl) if decl is not None else None
            self._plans[name] = plan
            return plan

    def _walk_block(self, block: Block, tok: int, parent_name: str, ri: int, bi: int) -> Walk:
        plans = self._plans
        stamp = self.stamp
        active = self.active
        values = self.values
        names = self.names
        digit_names = self.digit_names
        pure = self.pure_depth
        top = not self.parents
        ops = block.ops
        last = len(ops) - 1
        for oi, op in enumerate(ops):
            plan = plans.get(op.name)
            if plan is None:
                plan = self.plan(op.name)
                if plan is None:
                    self._cursor = (ri, bi, oi)
                    yield self._unknown(op, tok)
                    continue
            operands = op.operands
            results = op.results
            attrs = op.attributes
            flags = plan.flags
            layout = plan.cur_layout
            if len(operands) != plan.cur_no or len(results) != plan.cur_nr or flags & F_SEGMENTS:
                layout = plan.layout_of(op)
            if layout is None:
                ok = defined = False
            else:
                # While digit names exist, unnamed results take the checked path below.
                defined = not (flags & F_REGIONS or op.regions or digit_names)
                try:
                    ok = (layout.check_def if defined else layout.check)(
                        operands, results, stamp, active, values, tok, names
                    )
                except (IndexError, AttributeError, TypeError):
                    ok = False
                defined = defined and ok
            if ok and id(attrs) not in plan.good_attrs and not plan.attrs_ok(attrs):
                ok = False
            if ok and (flags & F_PLACEMENT or top):
                ok = self._placement_ok(plan, parent_name, top, oi == last)
            if not ok:
                self._cursor = (ri, bi, oi)
                self._slow(op, plan, layout, parent_name, top, oi == last)
            if (flags & F_EXTRA or op.regions) and not (
                plan.quick_hook
                and not pure
                and defined
                and layout.key(operands, results, attrs) in plan.hook_ok
            ):
                self._cursor = (ri, bi, oi)
                self._extra(op, plan, flags, layout, ri, bi, oi)
                if op.regions or flags & F_REGIONS:
                    self._cursor = (ri, bi, oi)
                    yield self._regions(op, plan, layout, ri, bi, oi)
            if not defined and results:
                self._define_results(op, tok, (ri, bi, oi))
        self._cursor = None

    def _define_results(self, op: Operation, tok: int, cursor: tuple[int, int, int]) -> None:
        """Define the op's results in scope ``tok`` (the checked path: names, digit names)."""
        stamp, values, names, active = self.stamp, self.values, self.names, self.active
        for r in op.results:
            try:
                rid = r.id
                if stamp[rid] != -1 or values[rid] is not r:
                    raise IndexError
                stamp[rid] = tok
            except (IndexError, AttributeError, TypeError):
                self._cursor = cursor
                self._bad_definition(op, r)
                continue
            n = r.name
            if n is not None:
                prev = names.get(n)
                if prev is not None and active[prev]:
                    self._cursor = cursor
                    self.error(
                        op,
                        "DOMINANCE/004",
                        f"'{op.name}' defines '%{n}', a name already defined in this scope",
                    )
                names[n] = tok
                if n[:1].isdigit():
                    self._cursor = cursor
                    self._digit_name(op, r, tok, "defines")
            elif self.digit_names and rid in self.digit_names:
                self._cursor = cursor
                self._spelled_by_a_name(op, r, "defines")

    def _digit_name(self, owner: Operation, v: Value, tok: int, what: str) -> None:
        """A value named by digits must not spell an unnamed value visible with it."""
        name = v.name
        k = spelled_id(name)  # type: ignore[arg-type]
        if k is None:
            return
        self.digit_names.setdefault(k, []).append(tok)
        if k < len(self.values):
            other = self.values[k]
            s = self.stamp[k]
            if other is not v and other.name is None and s >= 0 and self.active[s]:
                self.error(
                    owner,
                    "DOMINANCE/004",
                    f"'{owner.name}' {what} '%{name}', which also spells unnamed value %{k} "
                    "visible here (the printed text would be ambiguous)",
                )

    def _spelled_by_a_name(self, owner: Operation, v: Value, what: str) -> None:
        """An unnamed value must not be spelled like a digit name visible with it."""
        if any(self.active[t] for t in self.digit_names.get(v.id, ())):
            self.error(
                owner,
                "DOMINANCE/004",
                f"'{owner.name}' {what} unnamed value %{v.id}, spelled like a digit name "
                "visible here (the printed text would be ambiguous)",
            )

    def _placement_ok(self, plan: OpPlan, parent_name: str, top: bool, is_last: bool) -> bool:
        if (plan.symbol is None) is top:
            return False
        if plan.has_parent is not None and parent_name not in plan.has_parent:
            return False
        for a in plan.has_ancestor:
            if a not in self.scope_names:
                return False
        for a in plan.no_ancestor:
            if a in self.all_names:
                return False
        return not (plan.is_terminator and not is_last)

    def _extra(
        self, op: Operation, plan: OpPlan, flags: int, layout: Layout | None, ri: int, bi: int,
        oi: int,
    ) -> None:  # fmt: skip
        """Hooks, symbol uses and effects: the checks only some ops need (the walk enters the
        regions next)."""
        if flags & F_IMPURE and self.pure_depth:
            self.impure_hits.append(op)
        if flags & F_CONVERGENT:
            self._cursor = (ri, bi, oi)
            self.convergent.append((op, tuple(self.parents), self._path_of(op)))
        if flags & F_HOOK:
            self._hook(op, plan, layout, ri, bi, oi)
        if flags & F_SYMBOL_USES:
            self._cursor = (ri, bi, oi)
            self._check_symbol_uses(op, plan)

    def _hook(
        self, op: Operation, plan: OpPlan, layout: Layout | None, ri: int, bi: int, oi: int
    ) -> None:
        key = None
        if layout is not None and layout.key is not None:
            try:
                key = layout.key(op.operands, op.results, op.attributes)
            except (IndexError, AttributeError):
                key = None
            if key is not None and key in plan.hook_ok:
                return
        ctx = self.ctx
        ctx._op, ctx._layout = op, layout
        try:
            found = plan.hook(op, ctx)
        except Exception as e:  # a hook tripping over a malformed op
            found = [Violation("INTERNAL/001", f"could not be checked ({e!r})")]
        if found:
            self._cursor = (ri, bi, oi)
            self._report(op, found)
        elif key is not None and len(plan.hook_ok) < 4096:
            plan.hook_ok[key] = key_objects(op)  # keeps them alive: their ids stay theirs

    # ------------------------------------------------------------------ definitions and uses

    def _define_args(self, owner: Operation, block: Block, tok: int) -> None:
        for a in block.args:
            try:
                if self.stamp[a.id] != -1 or self.values[a.id] is not a:
                    raise IndexError
                self.stamp[a.id] = tok
            except (IndexError, AttributeError, TypeError):
                self._bad_definition(owner, a, block_arg=True)
                continue
            if a.name is not None:
                prev = self.names.get(a.name)
                if prev is not None and self.active[prev]:
                    self.error(
                        owner,
                        "DOMINANCE/004",
                        f"'{owner.name}' block argument '%{a.name}' reuses a name already "
                        "defined in this scope",
                    )
                self.names[a.name] = tok
                if a.name[:1].isdigit():
                    self._digit_name(owner, a, tok, "has block argument")
            elif self.digit_names and a.id in self.digit_names:
                self._spelled_by_a_name(owner, a, "has block argument")

    def _bad_definition(self, op: Operation, v: Any, block_arg: bool = False) -> None:
        what = "block argument" if block_arg else "result"
        if not isinstance(v, Value):
            self.error(op, "DOMINANCE/005", f"'{op.name}' {what} {v!r} is not a value")
            return
        vid = v.id
        if not (0 <= vid < len(self.values)) or self.values[vid] is not v:
            self.error(
                op,
                "DOMINANCE/005",
                f"'{op.name}' {what} %{v.display_name} is not in this module's value table",
            )
            return
        self.error(
            op,
            "DOMINANCE/003",
            f"'{op.name}' {what} %{v.display_name} is already defined elsewhere "
            "(a value has exactly one definition)",
        )

    def _check_use(self, op: Operation, v: Any, label: str) -> None:
        if not isinstance(v, Value):
            self.error(op, "DOMINANCE/005", f"'{op.name}' operand '{label}' is not a value: {v!r}")
            return
        vid = v.id
        name = f"%{v.display_name}"
        if not (0 <= vid < len(self.values)) or self.values[vid] is not v:
            self.error(
                op,
                "DOMINANCE/005",
                f"'{op.name}' operand '{label}' ({name}) is not in this module's value table",
            )
            return
        s = self.stamp[vid]
        if s >= 0 and self.active[s]:
            return
        iso = self.hidden.get(s) if s >= 0 else None
        if iso is None and s >= 0 and self.tok_root[s] is not self.root:
            iso = self.tok_root[s] if self.root is None else self.root
        if iso is not None:
            self.error(
                op,
                "DOMINANCE/002",
                f"'{op.name}' operand '{label}' uses {name}, which does not cross the "
                f"isolated-from-above '{iso.name}' boundary",
                params={"value": name, "boundary": iso.name},
            )
            return
        if s >= 0:
            msg = f"uses {name}, which is defined in a region that does not enclose this use"
        elif vid in self._defined_ids():
            msg = f"uses {name} before its definition"
        else:
            msg = f"uses {name}, which no op or block of the module defines"
        self.error(
            op, "DOMINANCE/001", f"'{op.name}' operand '{label}' {msg}", params={"value": name}
        )

    def _defined_ids(self) -> set[int]:
        if self._defined is None:
            ids: set[int] = set()
            for op in self.module.walk():
                ids.update(getattr(r, "id", -1) for r in op.results)
                for region in op.regions:
                    for block in region.blocks:
                        ids.update(getattr(a, "id", -1) for a in block.args)
            self._defined = ids
        return self._defined

    # ------------------------------------------------------------------ slow path

    def _unknown(self, op: Operation, tok: int) -> Walk:
        self.error(op, "STRUCTURE/006", self.registry.unknown_message(op.name))
        for i, v in enumerate(op.operands):
            self._check_use(op, v, f"#{i}")
        if op.regions:
            yield self._regions(op, None, None, *self._cursor)  # type: ignore[misc]
        for r in op.results:
            if isinstance(r, Value) and 0 <= r.id < len(self.stamp) and self.stamp[r.id] == -1:
                self.stamp[r.id] = tok

    def _slow(
        self,
        op: Operation,
        plan: OpPlan,
        layout: Layout | None,
        parent_name: str,
        top: bool,
        is_last: bool,
    ) -> None:
        decl = plan.decl
        if top and plan.symbol is None:
            self.error(
                op,
                "STRUCTURE/001",
                f"'{op.name}' is not allowed at top level; only symbol-defining ops "
                "(targets, kernels, functions) are",
            )
        elif not top and plan.symbol is not None:
            self.error(
                op,
                "STRUCTURE/029",
                f"'{op.name}' defines a symbol and must be at top level (observed inside "
                f"'{parent_name}')",
            )
        if layout is None:
            try:
                operand_groups(op, decl)
            except ValueError as e:
                self.error(op, "STRUCTURE/013", f"'{op.name}': {e}")
            try:
                result_groups(op, decl)
            except ValueError as e:
                self.error(op, "STRUCTURE/012", f"'{op.name}': {e}")
            for i, v in enumerate(op.operands):
                self._check_use(op, v, f"#{i}")
        else:
            labels = _labels(decl, layout)
            for v, label in zip(op.operands, labels):
                self._check_use(op, v, label)
            try:
                groups = {f: op.operands[a:b] for f, (a, b) in layout.slices.items()}
                rgroups = {f: op.results[a:b] for f, (a, b) in layout.rslices.items()}
                self._report(op, check_field_types(decl, groups, rgroups))
            except AttributeError:
                pass  # operands that are not values were reported above
        self._check_attrs(op, decl)
        self._check_placement(op, plan, parent_name)
        if plan.is_terminator and not is_last:
            self.error(
                op, "STRUCTURE/017", f"terminator '{op.name}' must be the last op of its block"
            )

    def _report(self, op: Operation, violations: Iterable[Violation]) -> None:
        for v in violations:
            at = op if v.at is None else v.at
            # the cursor is the verified op's: another op's path is not known here
            path = None if v.at is None else ""
            self.error(at, v.code, f"'{at.name}' {v.message}", path=path, params={"field": v.field})

    def _check_attrs(self, op: Operation, decl: OpDef) -> None:
        attrs = op.attributes
        for a in decl.attrs:
            value = attrs.get(a.name)
            if value is None:
                if not a.optional and a.kind != "unit":
                    self.error(
                        op,
                        a.missing_code,
                        f"'{op.name}' is missing required attribute '{a.name}'",
                        params={"attribute": a.name},
                    )
                continue
            problem = attr_problem(a, value)
            if problem:
                self.error(
                    op, "STRUCTURE/014", f"'{op.name}' {problem}", params={"attribute": a.name}
                )
        for k in attrs:
            if decl.attr(k) is None and k != SEGMENTS_ATTR:
                self.error(
                    op,
                    "STRUCTURE/011",
                    f"'{op.name}' has undeclared attribute '{k}'"
                    + (
                        f"; it declares {', '.join(a.name for a in decl.attrs)}"
                        if decl.attrs
                        else ""
                    ),
                    params={"attribute": k},
                )
        plan = plan_for(decl)
        for t in plan.attr_rules:
            if hasattr(t, "attrs"):
                present = [a for a in t.attrs if a in attrs]
                if present and len(present) != len(t.attrs):
                    missing = [a for a in t.attrs if a not in attrs]
                    self.error(
                        op,
                        "STRUCTURE/014",
                        f"'{op.name}' attribute '{present[0]}' requires '{missing[0]}'",
                    )
            elif t.attr in attrs and t.requires not in attrs:
                self.error(
                    op, "STRUCTURE/014", f"'{op.name}' attribute '{t.attr}' requires '{t.requires}'"
                )

    def _check_placement(self, op: Operation, plan: OpPlan, parent_name: str) -> None:
        if plan.has_parent is not None and parent_name not in plan.has_parent:
            self.error(
                op,
                "STRUCTURE/029",
                f"'{op.name}' violates direct parent placement for "
                f"'{' or '.join(plan.has_parent)}' (observed '{parent_name}')",
            )
        for a in plan.has_ancestor:
            if a not in self.scope_names:
                self.error(
                    op,
                    "STRUCTURE/029",
                    f"'{op.name}' violates required ancestor placement for '{a}' (observed "
                    f"'{parent_name}')",
                )
        for a in plan.no_ancestor:
            if a in self.all_names:
                self.error(
                    op,
                    "STRUCTURE/029",
                    f"'{op.name}' violates forbidden ancestor placement for '{a}'",
                )

    # ------------------------------------------------------------------ symbols

    def _check_symbols(self) -> None:
        seen: dict[str, Operation] = {}
        module = self.module
        top = {id(op) for op in module.ops}
        for i, op in enumerate(module.ops):
            decl = self.registry.get(op.name)
            if decl is None or decl.symbol_trait is None:
                continue
            name = op.attributes.get(decl.symbol_trait.attr)
            if not isinstance(name, str) or not name:
                continue
            path = f"module operation[{i}] {op.name}"
            if name in seen:
                self.error(
                    op,
                    "SYMBOL/005",
                    f"duplicate symbol: symbol '@{name}' is already defined",
                    path,
                    notes=[DiagnosticRelatedLocation("first definition", op=seen[name])],
                )
                continue
            seen[name] = op
            if module.symbols.get(name) is not op:
                self.error(
                    op,
                    "SYMBOL/004",
                    f"symbol '@{name}' is missing from the module's symbol table",
                    path,
                )
        for name, op in module.symbols.items():
            if id(op) not in top:
                self.error(
                    None,
                    "SYMBOL/001",
                    f"the symbol table names '@{name}', but its op is not in the module body",
                )

    def _check_symbol_uses(self, op: Operation, plan: OpPlan) -> None:
        for t in plan.symbol_uses:
            name = op.attributes.get(t.attr)
            if name is None:
                continue
            target = self.module.symbols.get(name) if isinstance(name, str) else None
            if target is None:
                self.error(
                    op,
                    "SYMBOL/002",
                    f"'{op.name}' unresolved symbol reference '@{name}' in '{t.attr}'",
                    params={"symbol": name},
                )
                continue
            tdecl = self.registry.get(target.name)
            kind = tdecl.symbol_trait.kind if tdecl and tdecl.symbol_trait else None
            if kind not in t.kinds:
                self.error(
                    op,
                    "SYMBOL/003",
                    f"'{op.name}' attribute '{t.attr}' expected "
                    f"{t.what or a_or_an(' or '.join(t.kinds))} symbol, "
                    f"but '@{name}' is a '{target.name}'",
                    params={"symbol": name},
                )

    # ------------------------------------------------------------------ regions

    def _regions(
        self,
        op: Operation,
        plan: OpPlan | None,
        layout: Layout | None,
        ri: int,
        bi: int,
        oi: int,
    ) -> Walk:
        rdefs: tuple[Any, ...] = plan.decl.regions if plan is not None else ()
        if len(self.parents) >= MAX_NESTING:
            self.error(
                op,
                "STRUCTURE/099",
                f"regions are nested too deeply to verify (more than {MAX_NESTING} levels)",
            )
            return
        if plan is not None and not plan.n_req_regions <= len(op.regions) <= plan.n_max_regions:
            nreq, nmax = plan.n_req_regions, plan.n_max_regions
            self.error(
                op,
                "STRUCTURE/015",
                f"'{op.name}' has {count_of(len(op.regions), 'region')}, expected "
                f"{nreq if nreq == nmax else f'{nreq} to {nmax}'}",
            )
        isolated = plan is not None and plan.isolated
        saved = (self.scope_names, self.all_names, self.tokens, self.root)
        if isolated:
            self.root = op
            for t in self.tokens:
                self.active[t] = 0
                self.hidden[t] = op
            self.tokens = []
            self.scope_names = frozenset((op.name,))
            d = plan.defers_placement
            if d is not None and op.attributes.get(d.attr) == d.value:
                self.scope_names |= self._deferred_ancestors()  # checked where it is inlined
        else:
            self.scope_names = self._with_name(self.scope_names, op.name)
        self.all_names = self._with_name(self.all_names, op.name)
        self._trail.append((op, ri, bi, oi))
        self.parents.append(op)
        try:
            for r_index, region in enumerate(op.regions):
                rd = rdefs[r_index] if r_index < len(rdefs) else None
                if rd is None and plan is not None:
                    rd = plan.decl.region_def_at(r_index)
                yield self._region(op, plan, layout, rd, r_index, region)
        finally:
            self.parents.pop()
            self._trail.pop()
            self.scope_names, self.all_names, self.tokens, self.root = saved
            if isolated:
                for t in self.tokens:
                    self.active[t] = 1
                    self.hidden.pop(t, None)

    def _deferred_ancestors(self) -> frozenset[str]:
        """Every op some declaration requires as an ancestor (assumed present inside a
        function whose placement checks are deferred)."""
        names = getattr(self, "_ancestor_names", None)
        if names is None:
            names = self._ancestor_names = frozenset(
                t.ancestor for d in self.registry for t in d.traits_of(HasAncestor)
            )
        return names

    def _with_name(self, names: frozenset[str], name: str) -> frozenset[str]:
        key = (names, name)
        out = self._name_sets.get(key)
        if out is None:
            out = self._name_sets[key] = names | {name}
        return out

    def _region(
        self, op: Operation, plan: OpPlan | None, layout: Layout | None, rd: Any, r_index: int,
        region: Region,
    ) -> Walk:  # fmt: skip
        if not self._region_shape_ok(op, plan, layout, rd, r_index, region):
            return
        pure = rd is not None and rd.side_effect_free
        hits_before = len(self.impure_hits)
        if pure:
            self.pure_depth += 1
        multi = len(region.blocks) > 1
        path = _DominatorPath(self.active, immediate_dominators(self, region)) if multi else None
        try:
            for b_index, block in enumerate(region.blocks):
                if path is not None:
                    path.move_to(b_index)
                tok = len(self.active)
                self.active.append(1)
                self.tok_root.append(self.root)
                self.tokens.append(tok)
                self._define_args(op, block, tok)
                yield self._walk_block(block, tok, op.name, r_index, b_index)
                if path is not None:
                    path.push(b_index, tok)
                else:
                    self.active[tok] = 0
                    self.tokens.pop()
                if rd is not None:
                    self._cursor = (r_index, b_index, len(block.ops) - 1) if block.ops else None
                    self._check_terminator(op, plan, layout, rd, block)
                    self._cursor = None
            if multi or any(b.ops and b.ops[-1].name in self.branch_names for b in region.blocks):
                check_successors(self, region)
        finally:
            if path is not None:
                for t in path.tokens():
                    self.active[t] = 0
                    self.tokens.remove(t)
            if pure:
                self.pure_depth -= 1
        if pure and len(self.impure_hits) > hits_before:
            self._report_impure(op, rd, self.impure_hits[hits_before:])
            del self.impure_hits[hits_before:]

    def _region_shape_ok(
        self, op: Operation, plan: OpPlan | None, layout: Layout | None, rd: Any, r_index: int,
        region: Region,
    ) -> bool:  # fmt: skip
        """Report a region that is no Region, has no or too many blocks, or whose derived
        arguments have the wrong types; False when its contents cannot be walked."""
        label = f"'{rd.name}'" if rd is not None else str(r_index)
        if not isinstance(region, Region):
            self.error(op, "STRUCTURE/016", f"'{op.name}' region {label} is not a Region")
            return False
        if rd is None:
            return True
        if not region.blocks:
            self.error(op, "STRUCTURE/016", f"'{op.name}' region {label} has no blocks")
            return False
        if rd.single_block and len(region.blocks) != 1:
            self.error(
                op,
                "STRUCTURE/016",
                f"'{op.name}' region {label} must have exactly one block, has {len(region.blocks)}",
            )
        if rd.arg_source == ArgSource.DERIVED and layout is not None:
            expected = _derived_types(rd, op, layout, plan.decl if plan is not None else None)
            got = [a.type for a in region.blocks[0].args]
            if expected is not None and got != expected:
                self.error(
                    op,
                    "TYPE/013",
                    f"'{op.name}' region {label} arguments ({', '.join(map(str, got))}) "
                    f"must be ({', '.join(map(str, expected))})",
                )
        return True

    def _report_impure(self, op: Operation, rd: Any, hits: list[Operation]) -> None:
        counts = {"read": 0, "write": 0, "convergent": 0, "observable": 0}
        notes = []
        bad = 0
        for h in hits:
            p = self.plan(h.name)
            if p is None:
                continue
            kinds = []
            if p.reads:
                kinds.append("read")
            if p.writes:
                kinds.append("write")
            if p.convergent is not None:
                kinds.append("convergent")
            if p.call is not None and not self._pure_call(h, p):
                kinds.append("observable")
            if not kinds:
                continue
            bad += 1
            for k in kinds:
                counts[k] += 1
            notes.append(DiagnosticRelatedLocation(f"'{h.name}' is {'/'.join(kinds)}", op=h))
        if not bad:
            return
        self.error(
            op,
            "STRUCTURE/052",
            f"'{op.name}' region '{rd.name}' must be side-effect free, but it has "
            f"{count_of(counts['read'], 'memory read')}, "
            f"{count_of(counts['write'], 'memory write')}, "
            f"{count_of(counts['convergent'], 'convergent op')} and "
            f"{count_of(counts['observable'], 'call')} to functions that are not pure",
            params={
                "op_name": op.name,
                "region": rd.name,
                **{f"{k}_count": v for k, v in counts.items()},
            },
            notes=notes,
        )

    def _pure_call(self, op: Operation, plan: OpPlan) -> bool:
        callee = self.ctx.symbol(op.attributes.get(plan.call))
        if callee is None:
            return False
        cdecl = self.registry.get(callee.name)
        if cdecl is None:
            return False
        rules = cdecl.traits_of(PureWhen)
        return bool(rules) and all(callee.attributes.get(r.attr) == r.value for r in rules)

    def _ends_with_terminator(self, op: Operation, rd: Any, block: Block) -> bool:
        """True when ``block`` ends with region ``rd``'s terminator (else STRUCTURE/018, unless
        it ends with a branch or a no-return op, which may end any block)."""
        last = block.ops[-1] if block.ops else None
        if last is not None and last.name == rd.terminator:
            return True
        found = last.name if last is not None else "nothing"
        lplan = self.plan(last.name) if last is not None else None
        if lplan is not None and (
            lplan.decl.trait(Branch) is not None or lplan.decl.trait(NoReturn) is not None
        ):
            return False  # a branch or a no-return op may end any block
        wrong = lplan is not None and lplan.decl.is_terminator
        r_index = next((i for i, r in enumerate(op.regions) if block in r.blocks), 0)
        # a wrong terminator is the parent's problem (anchored there); a missing one is
        # reported at the op that should have been followed by it
        self.error(
            op if wrong or last is None else last,
            "STRUCTURE/018",
            f"'{op.name}' region {r_index} ('{rd.name}') must end with "
            f"'{rd.terminator}' but found '{found}'",
            params={
                "op_name": op.name,
                "region_index": str(r_index),
                "expected_terminator": rd.terminator,
                "actual_terminator": found,
            },
        )
        return False

    def _check_terminator(
        self, op: Operation, plan: OpPlan | None, layout: Layout | None, rd: Any, block: Block
    ) -> None:
        if rd.terminator is None or not self._ends_with_terminator(op, rd, block):
            return
        last = block.ops[-1]
        if rd.yields is None or plan is None:
            return
        target = rd.yields
        if not last.operands and layout is not None:
            sl = layout.rslices.get(rd.yields) or layout.slices.get(rd.yields)
            if sl is not None and sl[0] == sl[1]:
                return  # nothing passed on, nothing expected
        tplan = self.plan(last.name)
        passed = tplan.passed_on(last) if tplan else None
        if passed is None:
            return
        field = tplan.decl.trait(Terminator).values  # type: ignore[union-attr]
        wanted = _yielded_types_wanted(op, plan, layout, rd, passed)
        if wanted is None:
            return
        want, count_target, rename = wanted
        got = [getattr(v, "type", None) for v in passed]
        if len(got) != len(want):
            self.error(
                last,
                "STRUCTURE/013",
                f"'{last.name}' {field} count {len(got)} does not match '{op.name}' "
                f"{count_target} count {len(want)}",
                params={
                    "field_name": field,
                    "actual_count": str(len(got)),
                    "expected_constraint": count_target,
                    "expected_count": str(len(want)),
                },
            )
        elif got != want and any(
            x != y and not same_type_along(x, y, rename) for x, y in zip(got, want)
        ):
            i = next(
                i
                for i, (x, y) in enumerate(zip(got, want))
                if x != y and not same_type_along(x, y, rename)
            )
            self.error(
                last,
                "TYPE/001",
                f"'{last.name}' {field}[{i}] has type {got[i]} but '{op.name}' "
                f"{target}[{i}] is {want[i]}",
                params={
                    "field_a": f"{field}[{i}]",
                    "type_a": str(got[i]),
                    "field_b": f"{target}[{i}]",
                    "type_b": str(want[i]),
                },
            )


def _yielded_types_wanted(
    op: Operation, plan: OpPlan, layout: Layout | None, rd: Any, passed: Sequence[Any]
) -> tuple[list[Any], str, dict[int, Value]] | None:
    """The types a region's terminator must pass on (to the op's results or operands, or to
    another region's entry arguments), what the count is compared against, and the renaming
    from each passed value to the value it stands for (a type may name the passed values where
    the wanted one names the op's own); None when they cannot be known."""
    target = rd.yields
    fed = plan.decl.region(target) if plan.decl.regions else None
    if fed is not None:
        # the values become another region's entry arguments (scf.while before -> after)
        # against what those arguments must be, so a wrong argument list is reported once
        derived = _derived_types(fed, op, layout, plan.decl) if layout is not None else None
        return None if derived is None else (derived, f"{target} block args", {})
    if layout is not None and target in layout.rslices:
        a, b = layout.rslices[target]
        vals = op.results[a:b]
    elif layout is not None and target in layout.slices:
        a, b = layout.slices[target]
        vals = op.operands[a:b]
    else:
        return list(op.attributes.get(target, ())), target, {}
    return [v.type for v in vals], target, {id(x): y for x, y in zip(passed, vals)}


def _labels(decl: OpDef, layout: Layout) -> list[str]:
    labels: list[str] = []
    for o in decl.operands:
        a, b = layout.slices[o.name]
        for i in range(a, b):
            labels.append(o.name if not o.variadic else f"{o.name}[{i - a}]")
    return labels


def _derived_types(rd: Any, op: Operation, layout: Layout, decl: Any = None) -> list[Any] | None:
    sources = derived_sources(rd, op, layout, decl)
    return None if sources is None else [getattr(v, "type", None) for v in sources]


class _DominatorPath:
    """The blocks of a multi-block region walked so far on the current block's
    dominator-tree path: a block sees the values of the blocks that dominate it, and going
    from one block to the next only changes the path below their nearest common dominator.
    ``active[token]`` says whether a block's values are visible."""

    def __init__(self, active: list[int], idom: list[int]) -> None:
        self.active = active
        self.idom = idom
        self.tok_of: dict[int, int] = {}
        self.path: list[int] = []
        self.on_path: set[int] = set()

    def move_to(self, b_index: int) -> None:
        """Make exactly the walked dominators of block ``b_index`` visible."""
        climb: list[int] = []
        x = b_index
        while x not in self.on_path:
            if x in self.tok_of:
                climb.append(x)
            up = self.idom[x]
            if up == x:
                break
            x = up
        keep = x if x in self.on_path else None
        while self.path and self.path[-1] != keep:
            gone = self.path.pop()
            self.on_path.discard(gone)
            self.active[self.tok_of[gone]] = 0
        for y in reversed(climb):
            self.path.append(y)
            self.on_path.add(y)
            self.active[self.tok_of[y]] = 1

    def push(self, b_index: int, tok: int) -> None:
        """Block ``b_index`` (values under ``tok``) was walked and is on the path now."""
        self.tok_of[b_index] = tok
        self.path.append(b_index)
        self.on_path.add(b_index)

    def tokens(self) -> list[int]:
        """The tokens of every walked block, in walk order."""
        return list(self.tok_of.values())
