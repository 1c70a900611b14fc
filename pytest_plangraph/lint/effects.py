"""The lint rules on side effects and integrity (DESIGN §3.4): irreversible steps, conflicts.

:data:`pytest_plangraph.lint.rules.RULES` lists them with the other rules that read the plan
alone.
"""

from __future__ import annotations

from collections.abc import Iterator

from ..plan.graph import Graph, reach
from .findings import Finding, LintContext


def side_effects(ctx: LintContext) -> Iterator[Finding]:
    for i, node in enumerate(ctx.loaded.plan.nodes):
        if node.effect == "write" and not node.compensate:
            hint = (
                f"{node.id} writes but names no undo: add `compensate: <undo tool>`, or set "
                f"`effect: read` if it changes nothing outside the repository"
            )
            yield ctx.finding("NO_COMPENSATION", node.id, hint, ("nodes", i, "effect"))
        if node.effect != "read" and not node.idempotent and node.max_retry > 0:
            field = "max_retry" if "max_retry" in node.fields_set else "effect"
            hint = (
                f"{node.id} has effect {node.effect}, is not idempotent, and may be retried "
                f"{node.max_retry} time(s): set `idempotent: true` if replaying it is safe, or "
                f"`max_retry: 0` so a person decides on each retry"
            )
            yield ctx.finding("RETRY_WITHOUT_IDEMPOTENCY", node.id, hint, ("nodes", i, field))


def irreversible_not_last(ctx: LintContext) -> Iterator[Finding]:
    nodes = ctx.graph.nodes
    for i, edge in enumerate(ctx.loaded.plan.edges):
        source = nodes.get(edge.from_)
        if source is None or source.effect != "irreversible":  # most sources: asked once
            continue
        target = nodes.get(edge.to)
        if target is None or not edge.propagates or source is target:
            continue
        if target.effect != "irreversible":
            hint = (
                f"{target.id} depends on irreversible {source.id}, which cannot be undone if "
                f"{target.id} fails; irreversible steps come last: make {source.id} depend on "
                f"{target.id} instead, or drop this edge"
            )
            yield ctx.finding("IRREVERSIBLE_NOT_LAST", target.id, hint, ("edges", i))


def conflicts_required(ctx: LintContext) -> Iterator[Finding]:
    for i, edge in enumerate(ctx.loaded.plan.edges):
        if edge.type != "conflicts" or edge.status != "active" or edge.from_ == edge.to:
            continue
        for upstream, downstream in ((edge.from_, edge.to), (edge.to, edge.from_)):
            route = _route(ctx.graph, upstream, downstream)
            if route:
                hint = (
                    f"{downstream} depends on {upstream} ({' -> '.join(route)}) but conflicts "
                    f"with it, so {downstream} can never complete; remove the conflicts edge or "
                    f"the dependency"
                )
                yield ctx.finding("CONFLICT_REQUIRED", downstream, hint, ("edges", i))
                break


def _route(graph: Graph, start: str, goal: str) -> list[str] | None:
    """Shortest dependency path ``start -> … -> goal``, or None; of paths equally short, the
    one :func:`~pytest_plangraph.plan.graph.reach` meets first (edges in plan order). Each node
    keeps the node it was reached from, so a long chain costs its length, not its square."""
    came_from: dict[str, str] = {}

    def step(node_id: str) -> list[str]:
        if goal in came_from or node_id == goal:  # found: the walk ends
            return []
        dependents = graph.dependents(node_id)
        for other in dependents:
            came_from.setdefault(other, node_id)
        return dependents

    if goal not in reach([start], step):
        return None
    route = [goal]
    while route[-1] != start:
        route.append(came_from[route[-1]])
    return route[::-1]
