"""The verifier's dominator and control-dependence computations against brute force on random
control-flow graphs (blocks ending in cfg.switch with random targets, or func.return)."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from loom.format.text.parser import parse_module
from loom.registry import default_registry
from loom.verify.successors import immediate_dominators
from loom.verify.uniformity import CfgShape


class _V:
    """The little of a verifier the graph functions use."""

    registry = default_registry()

    def plan(self, name: str):  # noqa: ANN201
        from loom.verify.plan import OpPlan

        return OpPlan(self.registry.lookup(name))


def _graph(seed: int) -> tuple[list[list[int]], object]:
    rng = random.Random(seed)
    n = rng.randrange(2, 12)
    succ = []
    lines = ["func.def @g(%s: index) {"]
    for i in range(n):
        if i:
            lines.append(f"^b{i}:")
        if rng.random() < 0.25:
            succ.append([])
            lines.append("  func.return")
            continue
        targets = [rng.randrange(1, n) for _ in range(rng.randrange(1, 4))]
        succ.append(targets)
        cases = ", ".join(str(k) for k in range(len(targets) - 1))
        dests = ", ".join(f"^b{t}" for t in targets[1:])
        lines.append(f"  cfg.switch %s cases [{cases}] -> [{dests}] default ^b{targets[0]}")
    lines.append("}")
    module = parse_module("\n".join(lines) + "\n")
    return succ, module.ops[0].regions[0]


def _reachable(succ: list[list[int]], start: int, without: int | None = None) -> set[int]:
    seen, stack = set(), [start]
    while stack:
        x = stack.pop()
        if x in seen or x == without:
            continue
        seen.add(x)
        stack.extend(succ[x])
    return seen


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 2**32))
def test_immediate_dominators_match_brute_force(seed: int) -> None:
    succ, region = _graph(seed)
    n = len(succ)
    idom = immediate_dominators(_V(), region)
    reach = _reachable(succ, 0)
    for b in range(1, n):
        if b not in reach:
            assert idom[b] == 0
            continue
        # d dominates b when b cannot be reached from the entry without passing d
        doms = {d for d in reach if d == b or (d == 0 or b not in _reachable(succ, 0, d))}
        strict = doms - {b}
        # the immediate dominator is the strict dominator every other strict one dominates
        want = next(d for d in strict if all(e == d or e in _doms(succ, d) for e in strict))
        assert idom[b] == want, (succ, b)


def _doms(succ: list[list[int]], b: int) -> set[int]:
    reach = _reachable(succ, 0)
    return {d for d in reach if d == b or d == 0 or b not in _reachable(succ, 0, d)}


def _post_dominated_by(succ: list[list[int]], x: int, p: int) -> bool:
    """Every path from x to an exit (a block without successors) passes p."""
    if x == p:
        return True
    seen, stack = set(), [x]
    while stack:
        y = stack.pop()
        if y in seen or y == p:
            continue
        seen.add(y)
        if not succ[y]:
            return False
        stack.extend(succ[y])
    return any(not succ[y] for y in _reachable(succ, x)) or x == p


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 2**32))
def test_control_dependences_match_the_definition(seed: int) -> None:
    succ, region = _graph(seed)
    n = len(succ)
    shape = CfgShape(_V(), region)
    exits = {y for y in range(n) if not succ[y]}
    for x in range(n):
        if not (_reachable(succ, x) & exits):
            continue  # blocks that reach no exit have no post-dominators to speak of
        want = set()
        for a in range(n):
            if not (_reachable(succ, a) & exits):
                continue
            strictly = x != a and _post_dominated_by(succ, a, x)
            if not strictly and any(
                _post_dominated_by(succ, s, x) for s in succ[a] if _reachable(succ, s) & exits
            ):
                want.add(a)
        assert shape.deps[x] == want, (succ, x)
