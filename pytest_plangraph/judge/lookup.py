"""Looking a node or criterion up in a plan's graph, with the error a caller of the API sees
when it is not there (the list of known ids)."""

from __future__ import annotations

from collections.abc import Iterable

from .. import apicheck
from ..errors import UsageError, quoted
from ..plan.graph import Graph

__all__ = ["choices", "require_criterion", "require_node"]


def require_node(graph: Graph, node: str) -> None:
    """Raise :class:`UsageError` unless *node* is in the plan of *graph*."""
    if apicheck.text(node, "a node id") not in graph.nodes:
        raise UsageError(f"unknown node {quoted(node)}; {choices(graph.nodes)}")


def require_criterion(graph: Graph, node: str, criterion: str) -> None:
    """Raise :class:`UsageError` unless *node/criterion* is in the plan of *graph*."""
    require_node(graph, node)
    if graph.nodes[node].criterion(apicheck.text(criterion, "a criterion id")) is None:
        ids = [c.id for c in graph.nodes[node].acceptance]
        raise UsageError(f"node {node!r} has no criterion {quoted(criterion)}; {choices(ids)}")


def choices(names: Iterable[str]) -> str:
    """The known names, for an error message: sorted, the first twenty shown."""
    names = sorted(names)
    shown = ", ".join(names[:20]) + (" …" if len(names) > 20 else "")
    return f"known: {shown}" if names else "the plan has none"
