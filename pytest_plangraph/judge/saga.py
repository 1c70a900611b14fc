"""The saga view (seed 001, issue 20 §5), pure: how to undo the side effects of the steps that ran.

For every node with a side effect (``effect: write`` or ``irreversible``) whose work has begun
— any status but ``pending`` and ``ready`` — the compensation plan lists its ``compensate``
action, downstream first (the reverse of the plan's topological order), so that each undo runs
before the undo of what it was built on, as a saga rolls back. Irreversible steps are flagged:
they cannot be compensated (the plan's lint rule ``IRREVERSIBLE_NOT_LAST`` keeps them at the end,
where nothing after them has to be undone). Whether each action may be repeated safely
(``idempotent``) is noted. Nothing is executed: this is a plan for a person or an orchestrator.

With a node, only that node, its descendants and everything downstream of them (over active
``requires``/``consumes``/``validates`` edges, weak ones too: data flowed along them) are listed:
what rolling that node back would have to undo.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..plan.graph import Graph
from ..plan.model import FORMAT_VERSION, PROPAGATING_EDGES
from .states import PlanState

__all__ = ["Saga", "SagaStep", "saga"]

NOT_STARTED = frozenset({"pending", "ready"})
"""Statuses of a node whose work has not begun: nothing of it to undo."""


@dataclass(frozen=True)
class SagaStep:
    """One step of the compensation plan."""

    node: str
    title: str
    status: str
    effect: str
    compensate: str | None
    idempotent: bool
    note: str

    @property
    def irreversible(self) -> bool:
        """True when the step's effect cannot be undone."""
        return self.effect == "irreversible"

    def to_json(self) -> dict[str, Any]:
        """The JSON form of one step."""
        return {
            "node": self.node,
            "title": self.title,
            "status": self.status,
            "effect": self.effect,
            "compensate": self.compensate,
            "idempotent": self.idempotent,
            "irreversible": self.irreversible,
            "note": self.note,
        }


@dataclass(frozen=True)
class Saga:
    """The compensation plan: its steps in the order to run them, for *node* (None: all)."""

    plan: str
    node: str | None
    steps: tuple[SagaStep, ...]

    def to_json(self) -> dict[str, Any]:
        """The JSON shape of ``plangraph saga``."""
        return {
            "format": FORMAT_VERSION,
            "plan": self.plan,
            "node": self.node,
            "executes": False,
            "steps": [s.to_json() for s in self.steps],
        }


def saga(graph: Graph, state: PlanState, node: str | None = None) -> Saga:
    """The compensation plan of *graph* in *state* (for *node* and what depends on it)."""
    scope = set(graph.nodes) if node is None else _scope(graph, node)
    steps: list[SagaStep] = []
    for node_id in reversed(graph.topological_order()):
        definition = graph.nodes[node_id]
        status = state.nodes[node_id].status
        if node_id not in scope or definition.effect == "read" or status in NOT_STARTED:
            continue
        steps.append(
            SagaStep(
                node=node_id,
                title=definition.title,
                status=status,
                effect=definition.effect,
                compensate=definition.compensate,
                idempotent=definition.idempotent,
                note=_note(definition.effect, definition.compensate, definition.idempotent),
            )
        )
    return Saga(graph.plan.plan, node, tuple(steps))


def _note(effect: str, compensate: str | None, idempotent: bool) -> str:
    if effect == "irreversible":
        extra = f"; {compensate} can only mitigate it" if compensate else ""
        return f"IRREVERSIBLE: cannot be undone{extra} — a person decides (say, a correction)"
    if compensate is None:
        return "NO_COMPENSATION: the plan names no undo action — a person undoes it by hand"
    if idempotent:
        return "idempotent: safe to run again if the undo is interrupted"
    return "not idempotent: before running the undo again, check whether it already ran"


def _scope(graph: Graph, node: str) -> set[str]:
    """*node*, its descendants, and every node downstream of any of them."""
    found, stack = {node}, [node]
    while stack:
        current = stack.pop()
        downstream = [
            e.to
            for e in graph.outgoing.get(current, ())
            if e.type in PROPAGATING_EDGES and e.status == "active"
        ]
        for other in (*graph.children.get(current, ()), *downstream):
            if other not in found:
                found.add(other)
                stack.append(other)
    return found
