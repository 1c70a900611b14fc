"""The topological order of a plan's nodes, over plain ids and dependency pairs (pure).

Both :class:`pytest_plangraph.plan.model.Plan` (which keeps the order once computed) and
:class:`pytest_plangraph.plan.graph.Graph` use it; it imports neither, so neither imports the
other.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

__all__ = ["dependency_sources", "rounds"]


def dependency_sources(
    node_ids: Sequence[str], pairs: Iterable[tuple[str, str]]
) -> dict[str, list[str]]:
    """For each node id, the ids it depends on, once each, in edge order. *pairs* are
    ``(from, to)`` of the active dependency edges ("``to`` depends on ``from``"); a pair with
    an unknown end, or from a node to itself, does not count."""
    known = set(node_ids)
    sources: dict[str, dict[str, None]] = {node_id: {} for node_id in node_ids}
    for source, target in pairs:
        if source in known and target in known and source != target:
            sources[target].setdefault(source, None)
    return {node_id: list(found) for node_id, found in sources.items()}


def rounds(node_ids: Sequence[str], pairs: Iterable[tuple[str, str]]) -> list[str]:
    """Upstream before downstream: nodes become ready in rounds, as with
    :class:`graphlib.TopologicalSorter`; each round holds the nodes whose every dependency was
    in an earlier round, in the order of *node_ids*. Falls back to that order when there is a
    cycle (lint reports it)."""
    index = {node_id: i for i, node_id in enumerate(node_ids)}
    waiting: dict[str, int] = {}
    users: dict[str, list[str]] = {node_id: [] for node_id in node_ids}
    for node_id, sources in dependency_sources(node_ids, pairs).items():
        waiting[node_id] = len(sources)
        for source in sources:
            users[source].append(node_id)
    ready = [node_id for node_id, count in waiting.items() if count == 0]
    order: list[str] = []
    while ready:
        ready.sort(key=index.__getitem__)
        order.extend(ready)
        following = []
        for node_id in ready:
            for user in users[node_id]:
                waiting[user] -= 1
                if not waiting[user]:
                    following.append(user)
        ready = following
    return order if len(order) == len(node_ids) else list(node_ids)
