"""Conservative uniformity analysis: convergent ops (barriers) must sit under uniform control.

Values are ``uniform`` (0), ``subgroup``-uniform (1) or ``lane``-varying (2). Ops with a
:class:`~loom.dsl.Uniformity` trait produce results of that level (workitem ids are ``lane``,
workgroup ids ``uniform``); every other op is as varying as its most varying operand. Region
arguments and results of region ops join their sources, what the regions yield and the op's
control values; loops are iterated to a fixed point. Region arguments of ops that derive no
argument types (kernel launch arguments, config arguments) are uniform.

A convergent op whose scope attribute asks for uniformity at some scope is reported
(STRUCTURE/038) when an enclosing op with a :class:`~loom.dsl.ControlFlow` trait decides on a
value more varying than that scope allows.

In a multi-block region (cfg branches) a block runs under the branches it is control dependent
on (it post-dominates a successor of the branch but not the branch itself): an arm of a branch
on a varying selector is divergent, the join both arms reach is not, and a loop header whose
back edge is taken on a varying condition is divergent. Arguments of a block reached along
divergent edges are as varying as that control.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from loom.dsl import ArgSource, Branch
from loom.ir import Operation, Region, Value
from loom.opview import operand_groups
from loom.verify.successors import dominator_tree

if TYPE_CHECKING:
    from loom.verify.core import ModuleVerifier
    from loom.verify.plan import OpPlan

LEVELS = {"uniform": 0, "subgroup": 1, "lane": 2}
_SCOPE_TOLERANCE = {"thread": 2, "subgroup": 1}
"""How varying control may be under a convergent op of this scope (others: uniform only)."""


class UniformityInfo:
    """Levels of the values under one isolated root op, and their defining ops."""

    def __init__(self, verifier: ModuleVerifier, root: Operation) -> None:
        self.v = verifier
        self.level: dict[int, int] = {}
        self.def_op: dict[int, Operation] = {}
        self.cfgs: dict[int, CfgShape] = {}
        for _ in range(8):  # levels only grow and have height 2: this converges quickly
            self.changed = False
            self._op(root, 0)
            if not self.changed:
                break

    def of(self, v: Any) -> int:
        """The level of value ``v``."""
        return self.level.get(getattr(v, "id", -1), 0)

    def _raise(self, v: Any, lvl: int, op: Operation) -> None:
        vid = getattr(v, "id", None)
        if vid is None:
            return
        self.def_op.setdefault(vid, op)
        if lvl > self.level.get(vid, 0):
            self.level[vid] = lvl
            self.changed = True

    def control_values(self, op: Operation) -> list[Value]:
        """The values that decide whether/how often ``op``'s regions run."""
        plan = self.v.plan(op.name)
        if plan is None or plan.control is None:
            return []
        ctl = plan.control
        out: list[Value] = []
        layout = plan.layout_of(op)
        if layout is not None:
            for f in ctl.operands:
                a, b = layout.slices.get(f, (0, 0))
                out.extend(op.operands[a:b])
        if ctl.terminator_operand:
            for last, tplan in self._terminators(op):
                got = tplan.operands_of(last, ctl.terminator_operand)
                if got is not None:
                    out.extend(got)
        return out

    def _terminators(self, op: Operation) -> Iterator[tuple[Operation, OpPlan]]:
        """The last op of each block of ``op``'s regions, with its plan (declared ones only)."""
        for region in op.regions:
            for block in region.blocks:
                if block.ops:
                    last = block.ops[-1]
                    tplan = self.v.plan(last.name)
                    if tplan is not None:
                        yield last, tplan

    def _carry(self, op: Operation) -> list[int]:
        carry: list[int] = []
        for last, tplan in self._terminators(op):
            for j, val in enumerate(tplan.passed_on(last) or ()):
                if j >= len(carry):
                    carry.append(0)
                carry[j] = max(carry[j], self.of(val))
        return carry

    def _op(self, op: Operation, ctl_level: int) -> None:
        plan = self.v.plan(op.name)
        if plan is None:
            lvl = 2
        elif plan.uniformity is not None:
            lvl = LEVELS.get(plan.uniformity, 2)
        else:
            lvl = max((self.of(x) for x in op.operands), default=0)
        if op.regions:
            control = max((self.of(x) for x in self.control_values(op)), default=0)
            carry = self._carry(op)
            rdefs = plan.decl.regions if plan is not None else ()
            layout = plan.layout_of(op) if plan is not None else None
            for ri, region in enumerate(op.regions):
                rd = rdefs[ri] if ri < len(rdefs) else None
                if rd is None and plan is not None:
                    rd = plan.decl.region_def_at(ri)
                derived = rd is not None and rd.arg_source == ArgSource.DERIVED
                sources = derived_sources(rd, op, layout, plan.decl) if derived else None
                tilde = sum(1 for s in rd.derived_from if s.startswith("~")) if derived else 0
                shape = self.cfg(region) if len(region.blocks) > 1 else None
                for bi, block in enumerate(region.blocks):
                    edge_lvl = self._edge_levels(shape, bi, control) if shape and bi else None
                    for i, arg in enumerate(block.args):
                        if edge_lvl is not None:
                            a_lvl = edge_lvl[i] if i < len(edge_lvl) else 2
                        elif sources is None:
                            a_lvl = 0 if rd is not None else 2
                        else:
                            a_lvl = max(self.of(sources[i]) if i < len(sources) else 2, control)
                            j = i - tilde
                            if 0 <= j < len(carry):
                                a_lvl = max(a_lvl, carry[j])
                        self._raise(arg, a_lvl, op)
                    for inner in block.ops:
                        self._op(inner, max(ctl_level, control))
            for j, r in enumerate(op.results):
                self._raise(r, max(lvl, control, carry[j] if j < len(carry) else 0), op)
        else:
            for r in op.results:
                self._raise(r, lvl, op)

    def cfg(self, region: Region) -> CfgShape:
        """The branch structure of a multi-block region (computed once)."""
        shape = self.cfgs.get(id(region))
        if shape is None:
            shape = self.cfgs[id(region)] = CfgShape(self.v, region)
        return shape

    def selector_level(self, shape: CfgShape, a: int) -> int:
        """How varying the choice of block ``a``'s branch is (0 when it has one target)."""
        if len(set(t for t, _ in shape.succ[a])) < 2:
            return 0
        return max((self.of(x) for x in shape.selectors[a]), default=2)

    def divergence(self, shape: CfgShape, b: int) -> tuple[int, int | None]:
        """How varying the control deciding whether block ``b`` runs is, and the block whose
        branch decides it (None when ``b`` runs under uniform control)."""
        best, who = 0, None
        seen: set[int] = set()
        stack = [b]
        while stack:
            x = stack.pop()
            for a in shape.deps[x]:
                if a in seen:
                    continue
                seen.add(a)
                lvl = self.selector_level(shape, a)
                if lvl > best:
                    best, who = lvl, a
                stack.append(a)  # the branch's own block may run under divergent control
        return best, who

    def _edge_levels(self, shape: CfgShape, b: int, control: int) -> list[int]:
        """Levels of block ``b``'s arguments: the passed values, joined with the divergence
        of the edges that reach the block."""
        out: list[int] = []
        for a, vals in shape.incoming[b]:
            reach = max(self.selector_level(shape, a), self.divergence(shape, a)[0], control)
            for i, v in enumerate(vals):
                lvl = max(self.of(v), reach)
                if i < len(out):
                    out[i] = max(out[i], lvl)
                else:
                    out.append(lvl)
        return out


class CfgShape:
    """Successors, edge values and control dependences of the blocks of one region."""

    def __init__(self, verifier: ModuleVerifier, region: Region) -> None:
        blocks = region.blocks
        n = len(blocks)
        labels = {b.label: i for i, b in enumerate(blocks) if b.label is not None}
        self.succ: list[list[tuple[int, int]]] = [[] for _ in range(n)]
        self.selectors: list[list[Value]] = [[] for _ in range(n)]
        self.branch: list[Operation | None] = [None] * n
        self.incoming: list[list[tuple[int, tuple]]] = [[] for _ in range(n)]
        for i, block in enumerate(blocks):
            last = block.ops[-1] if block.ops else None
            plan = verifier.plan(last.name) if last is not None else None
            br = plan.decl.trait(Branch) if plan is not None else None
            if br is None:
                continue
            self.branch[i] = last
            try:
                groups = operand_groups(last, plan.decl)
            except ValueError:
                continue
            passed = {br.args_of(k) for k in range(len(br.successors))} - {None}
            self.selectors[i] = [v for f, vs in groups.items() if f not in passed for v in vs]
            for k, (label, f) in enumerate(br.edges(last.attributes)):
                j = labels.get(label)
                if j is None:
                    continue
                self.succ[i].append((j, k))
                field = br.args_of(f)
                self.incoming[j].append((i, groups.get(field, ()) if field else ()))
        ipdom = _immediate_post_dominators(self.succ, n)
        # block x depends on branch block a: x post-dominates a successor of a, but does not
        # strictly post-dominate a (the post-dominator tree path from the successor up to, not
        # including, a's immediate post-dominator)
        self.deps: list[set[int]] = [set() for _ in range(n)]
        for a in range(n):
            for s, _ in self.succ[a]:
                x = s
                while x != ipdom[a] and x != n:
                    self.deps[x].add(a)
                    x = ipdom[x]

    def block_of(self, region: Region, op: Operation) -> int | None:
        """The index of the block of ``region`` holding ``op``."""
        for i, b in enumerate(region.blocks):
            if any(o is op for o in b.ops):
                return i
        return None


def _immediate_post_dominators(succ: list[list[tuple[int, int]]], n: int) -> list[int]:
    """For each block, its immediate post-dominator; ``n`` stands for the exit every block
    without successors leads to (also the answer for a block that reaches no exit):
    :func:`~loom.verify.successors.dominator_tree` on the reversed graph."""
    preds: list[list[int]] = [[] for _ in range(n + 1)]  # predecessors in the reversed graph
    rsucc: list[list[int]] = [[] for _ in range(n + 1)]
    for a in range(n):
        targets = {s for s, _ in succ[a]} or {n}
        for s in targets:
            preds[a].append(s)
            rsucc[s].append(a)
    ipdom = dominator_tree(rsucc, preds, n)
    return [d if d >= 0 else n for d in ipdom[:n]]


def derived_sources(rd: Any, op: Operation, layout: Any, decl: Any = None) -> list[Any] | None:
    """The values whose types a DERIVED region's entry arguments take (None if undecidable);
    with ``decl``, a source may also be another region (its entry args are projected)."""
    if layout is None:
        return None
    out: list[Any] = []
    for src in rd.derived_from:
        name = src.lstrip("~")
        if name in layout.slices:
            a, b = layout.slices[name]
            vals = op.operands[a:b]
        elif name in layout.rslices:
            a, b = layout.rslices[name]
            vals = op.results[a:b]
        elif decl is not None and (k := _region_index(decl, name)) is not None:
            if k >= len(op.regions) or not op.regions[k].blocks:
                return None
            vals = op.regions[k].blocks[0].args
        else:
            return None
        out.extend(vals[:1] if src.startswith("~") else vals)
    return out


def _region_index(decl: Any, name: str) -> int | None:
    for k, r in enumerate(decl.regions):
        if r.name == name:
            return k
    return None


_DISTRIBUTION = {1: "subgroup", 2: "lane_varying"}


def check_convergent(
    verifier: ModuleVerifier, found: list[tuple[Operation, tuple[Operation, ...], str | None]]
) -> None:
    """Report convergent ops under control that varies more than their scope allows."""
    infos: dict[int, UniformityInfo] = {}
    for op, parents, path in found:
        if not parents:
            continue
        plan = verifier.plan(op.name)
        conv = plan.convergent if plan is not None else None
        if conv is None or conv.scope_attr is None:
            continue
        scope = op.attributes.get(conv.scope_attr)
        tolerance = _SCOPE_TOLERANCE.get(scope, 0)
        root = _root(verifier, parents)
        info = infos.get(id(root))
        if info is None:
            info = infos[id(root)] = UniformityInfo(verifier, root)
        chain = (*parents, op)
        for depth in range(len(parents) - 1, -1, -1):
            anc = parents[depth]
            found_at = _cfg_control(info, anc, chain[depth + 1], tolerance)
            if found_at is not None:
                anc, value = found_at
            elif anc is root:
                break
            else:
                bad = [v for v in info.control_values(anc) if info.of(v) > tolerance]
                if not bad:
                    continue
                value = bad[0]
            lvl = info.of(value)
            src = info.def_op.get(value.id)
            dist = _DISTRIBUTION.get(lvl, "unknown")
            if lvl == 2 and getattr(value.type, "spelling", "") == "i1":
                dist = "lane_predicate"
            aplan = verifier.plan(anc.name)
            kind = aplan.control.kind if aplan and aplan.control else "region_selector"
            name = f"%{value.display_name}"
            src_name = src.name if src is not None else "block argument"
            params = {
                "op_name": op.name,
                "required_uniform_scope": scope,
                "control_kind": kind,
                "control_value": name,
                "control_op_name": src_name,
                "control_distribution": dist,
            }
            verifier._cursor = None
            verifier.error(
                op,
                "STRUCTURE/038",
                f"'{op.name}' needs control that is uniform across the {scope}, but it is "
                f"under the {kind.replace('_', ' ')} {name} of '{anc.name}', which is {dist} "
                f"(derived from '{src_name}')",
                path,
                params=params,
            )
            break


def _cfg_control(
    info: UniformityInfo, anc: Operation, child: Operation, tolerance: int
) -> tuple[Operation, Value] | None:
    """The branch (and its selector) that makes the block of ``anc`` holding ``child`` run
    under control more varying than ``tolerance`` (None when there is none)."""
    for region in anc.regions:
        if len(region.blocks) < 2:
            continue
        shape = info.cfg(region)
        b = shape.block_of(region, child)
        if b is None:
            continue
        lvl, who = info.divergence(shape, b)
        if who is None or lvl <= tolerance:
            return None
        branch = shape.branch[who]
        sel = [v for v in shape.selectors[who] if info.of(v) > tolerance]
        if branch is None or not sel:
            return None
        return branch, sel[0]
    return None


def _root(verifier: ModuleVerifier, parents: tuple[Operation, ...]) -> Operation:
    for p in reversed(parents):
        plan = verifier.plan(p.name)
        if plan is not None and plan.isolated:
            return p
    return parents[0]
