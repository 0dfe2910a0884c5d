"""Checks of branch terminators (ops with the Branch trait) against the blocks they jump to.

A successor names a block of the branch's own region by label; the values passed along an edge
must match the destination block's arguments in count and type. Types that mention values
(``view<4xf32, %layout>``) are compared after renaming the source values to the destination's
arguments, so an edge may carry a value together with the layout its type depends on.
"""

from __future__ import annotations

from typing import Any

from loom.dsl import Branch
from loom.ir import Block, Region
from loom.ir.types import same_type_along
from loom.opview import operand_groups


def check_successors(v: Any, region: Region) -> None:
    """Report successor problems of every branch ending a block of ``region`` on verifier ``v``."""
    labels = {b.label: b for b in region.blocks if b.label is not None}
    for block in region.blocks:
        if not block.ops:
            continue
        op = block.ops[-1]
        decl = v.registry.get(op.name)
        branch = decl.trait(Branch) if decl is not None else None
        if branch is None:
            continue
        try:
            groups = operand_groups(op, decl)
        except ValueError:
            continue
        for k, (label, f) in enumerate(branch.edges(op.attributes)):
            if not isinstance(label, str):
                continue
            dest = labels.get(label)
            if dest is None:
                _missing(v, op, k, label)
                continue
            field = branch.args_of(f)
            passed = groups.get(field, ()) if field is not None else ()
            _check_edge(v, op, k, passed, dest)


def _missing(v: Any, op: Any, k: int, label: str) -> None:
    elsewhere = any(b.label == label for p in v.parents for r in p.regions for b in r.blocks)
    if elsewhere:
        v.error(
            op,
            "STRUCTURE/024",
            f"'{op.name}' successor {k} '^{label}' is a block of another region; a branch "
            "may only jump within its own region",
            params={"op_name": op.name, "successor_index": str(k), "block_label": label},
        )
    else:
        v.error(
            op,
            "STRUCTURE/023",
            f"'{op.name}' successor {k} '^{label}' names no block of this region",
            params={"op_name": op.name, "successor_index": str(k), "block_label": label},
        )


def _check_edge(v: Any, op: Any, k: int, passed: tuple, dest: Block) -> None:
    if len(passed) != len(dest.args):
        v.error(
            op,
            "STRUCTURE/025",
            f"'{op.name}' passes {len(passed)} values to successor {k} '^{dest.label}', which "
            f"takes {len(dest.args)} (actual_count={len(passed)}, "
            f"expected_count={len(dest.args)})",
            params={
                "op_name": op.name,
                "successor_index": str(k),
                "actual_count": str(len(passed)),
                "expected_count": str(len(dest.args)),
            },
        )
        return
    rename = {id(a): b for a, b in zip(passed, dest.args)}
    for i, (a, b) in enumerate(zip(passed, dest.args)):
        if not same_along_edge(a.type, b.type, rename):
            v.error(
                op,
                "STRUCTURE/026",
                f"'{op.name}' successor {k} '^{dest.label}' argument {i} has type "
                f"{a.type} but the block argument is {b.type}",
                params={
                    "op_name": op.name,
                    "successor_index": str(k),
                    "argument_index": str(i),
                    "actual_type": str(a.type),
                    "expected_type": str(b.type),
                },
            )
            return


def same_along_edge(a: Any, b: Any, rename: dict[int, Any]) -> bool:
    """``a == b`` once the values ``a`` mentions are replaced by their edge destinations."""
    return same_type_along(a, b, rename)


def immediate_dominators(v: Any, region: Region) -> list[int]:
    """For each block of ``region``, the index of its immediate dominator (the entry block's is
    itself; an unreachable block's is the entry block, so it sees only the entry's values), by
    :func:`dominator_tree` over the branch edges."""
    n = len(region.blocks)
    labels = {b.label: i for i, b in enumerate(region.blocks) if b.label is not None}
    succs: list[list[int]] = [[] for _ in range(n)]
    preds: list[list[int]] = [[] for _ in range(n)]
    for i, block in enumerate(region.blocks):
        op = block.ops[-1] if block.ops else None
        decl = v.registry.get(op.name) if op is not None else None
        branch = decl.trait(Branch) if decl is not None else None
        for label, _ in branch.edges(op.attributes) if branch is not None else ():
            j = labels.get(label)
            if j is not None:
                succs[i].append(j)
                preds[j].append(i)
    idom = dominator_tree(succs, preds, 0)
    return [d if d >= 0 else 0 for d in idom]


def dominator_tree(succs: list[list[int]], preds: list[list[int]], entry: int) -> list[int]:
    """For each node of a graph (successor and predecessor lists), its immediate dominator
    from ``entry`` (``entry``'s is itself; -1 for a node ``entry`` does not reach).

    The iterative algorithm of Cooper, Harvey and Kennedy over a reverse postorder: linear for
    the usual shapes (a long chain included). Post-dominators are this on the reversed graph."""
    n = len(succs)
    # reverse postorder from the entry (iterative DFS)
    order: list[int] = []
    seen = [False] * n
    seen[entry] = True
    stack = [(entry, 0)]
    while stack:
        node, k = stack[-1]
        if k < len(succs[node]):
            stack[-1] = (node, k + 1)
            nxt = succs[node][k]
            if not seen[nxt]:
                seen[nxt] = True
                stack.append((nxt, 0))
        else:
            stack.pop()
            order.append(node)
    order.reverse()
    rank = [n] * n
    for r, node in enumerate(order):
        rank[node] = r
    idom = [-1] * n
    idom[entry] = entry
    changed = True
    while changed:
        changed = False
        for node in order[1:]:
            new = -1
            for p in preds[node]:
                if idom[p] < 0:
                    continue
                if new < 0:
                    new = p
                    continue
                a, b = p, new
                while a != b:  # the nearest common dominator of two processed nodes
                    while rank[a] > rank[b]:
                        a = idom[a]
                    while rank[b] > rank[a]:
                        b = idom[b]
                new = a
            if new >= 0 and idom[node] != new:
                idom[node] = new
                changed = True
    return idom
