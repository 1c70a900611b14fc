"""Lint rules of the node hierarchy (DESIGN §3.4): ``HIERARCHY_CYCLE`` and ``UNREACHABLE``.

A parent chain may be thousands of nodes deep, so each rule walks every node a bounded number of
times: one walk up per node that stops at the first node already walked, one walk down per
hierarchy root.
"""

from __future__ import annotations

from collections.abc import Iterator

from ..plan.graph import Graph
from .findings import Finding, LintContext


def hierarchy_cycles(ctx: LintContext) -> Iterator[Finding]:
    """One finding per parent loop, on its member first in the plan, in plan order. Each node
    is walked over once (a parent chain may be thousands of nodes deep)."""
    nodes, index = ctx.graph.nodes, ctx.graph.index
    walked: dict[str, bool] = {}  # True while on the current walk up
    loops: list[list[str]] = []
    for start in nodes:
        walk: list[str] = []
        current: str | None = start
        while current in nodes and current not in walked:
            walked[current] = True
            walk.append(current)
            current = nodes[current].parent
        if current is not None and walked.get(current):  # the walk came back to itself
            loop = walk[walk.index(current) :]
            first = loop.index(min(loop, key=index.__getitem__))
            loops.append([*loop[first:], *loop[:first]])
        walked.update(dict.fromkeys(walk, False))
    for chain in sorted(loops, key=lambda found: index[found[0]]):
        node_id = chain[0]
        hint = (
            f"parent chain loops: {' -> '.join([*chain, node_id])}; a node cannot be its own "
            f"ancestor: change the parent of one of them"
        )
        path = (*ctx.loaded.node_path(node_id), "parent")
        yield ctx.finding("HIERARCHY_CYCLE", node_id, hint, path)


def _count_below(graph: Graph, root: str) -> int:
    """How many nodes lie under *root*, a node without a parent (no loop reaches below one)."""
    return len(graph.descendants(root))


def unreachable(ctx: LintContext) -> Iterator[Finding]:
    """Report roots of the hierarchy that are not objectives (their subtrees go with them)."""
    nodes = ctx.graph.nodes
    objectives = [n for n, node in nodes.items() if node.kind == "objective"]
    if not objectives:
        return
    for node_id, node in nodes.items():
        if node.kind == "objective" or node.parent is not None:
            continue  # a parent that is missing or loops is reported by its own rule
        below = _count_below(ctx.graph, node_id)
        carried = f" (and the {below} nodes under it)" if below else ""
        hint = (
            f"{node_id}{carried} is not under any objective; set `parent:` to one of "
            f"{', '.join(objectives)}"
        )
        yield ctx.finding("UNREACHABLE", node_id, hint, ctx.loaded.node_path(node_id))
