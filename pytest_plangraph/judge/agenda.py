"""What to work on next (pure): the nodes ready to be worked on, in topological order, each with
what still stands between it and completion (``plangraph next``, the MCP ``next`` tool).

A node is ready to work on when every strong prerequisite (an active, strong ``requires``,
``consumes`` or ``validates`` edge into it) is completed and the node itself is neither
completed, cancelled nor blocked (its retry budget spent, a conflicting node completed, or an
upstream node that stopped being completed under its evidence). Failed and stale nodes are
listed: they are work to do again. Each entry is the node's :class:`~.explain.Explanation`,
so ``next`` names the same criteria and commands as ``plangraph explain``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..plan.graph import Graph
from .explain import Explanation
from .states import PlanState

__all__ = ["NOT_READY", "Agenda", "ready_nodes"]

NOT_READY = ("completed", "cancelled", "blocked")
"""Statuses that leave a node out of ``next`` whatever its prerequisites."""


def ready_nodes(graph: Graph, state: PlanState) -> list[str]:
    """The nodes of *state* ready to work on (module docstring), in *state*'s order, which is
    the plan's topological order."""
    nodes = state.nodes

    def done(node_id: str) -> bool:
        found = nodes.get(node_id)
        return found is not None and found.status == "completed"

    return [
        node_id
        for node_id, node in nodes.items()
        if node.status not in NOT_READY and all(done(p) for p in graph.prerequisites(node_id))
    ]


@dataclass(frozen=True)
class Agenda:
    """The answer of ``next``: the plan it was judged against and the ready nodes."""

    plan: dict[str, Any]
    """The plan's ``id``, ``version`` (as the store numbers it) and ``digest``: the version a
    writer passes as ``expected_plan_version``."""
    nodes: tuple[Explanation, ...]

    def to_json(self) -> dict[str, Any]:
        """The JSON of ``plangraph next --format json`` (without the ``format`` key)."""
        return {"plan": dict(self.plan), "next": [entry.to_json() for entry in self.nodes]}

    def text(self) -> str:
        """Each ready node with its status, then the commands that move it on."""
        if not self.nodes:
            return f"nothing is ready to work on in {self.plan['id']} v{self.plan['version']}"
        lines = [f"ready to work on in {self.plan['id']} v{self.plan['version']}:"]
        for entry in self.nodes:
            lines.append(f"{entry.node} ({entry.kind}) is {entry.status}: {entry.summary}")
            lines += [f"  - {step.why}" + (f"\n    run: {step.run}" if step.run else "")
                      for step in entry.steps]  # fmt: skip
        return "\n".join(lines)


def agenda(
    graph: Graph,
    state: PlanState,
    plan: dict[str, Any],
    explained: Callable[[str], Explanation],
) -> Agenda:
    """The :class:`Agenda` of *state*: *explained* tells each ready node's explanation."""
    return Agenda(dict(plan), tuple(explained(n) for n in ready_nodes(graph, state)))
