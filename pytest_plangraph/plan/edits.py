"""Plan edits between two versions of a plan (pure): what changed in each node's definition.

Only what the evidence of a node is bound to counts (DESIGN §4, §5): its criteria (their
digests), its outputs, and what it takes from upstream — its strong, active
``requires``/``consumes``/``validates`` prerequisites and the artifacts of its consumes edges.
A new title, owner or risk invalidates nothing. Nodes that are new in the plan have no evidence
from before to invalidate; nodes that are gone have nothing left to report.

Each edit is a reason with details, e.g. ``CRITERION_CHANGED step-token-endpoint/ac-http-200``
or ``NODE_CHANGED step-token-endpoint (outputs)``; :func:`plan_edits` gives them per node.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from .graph import Graph


@dataclass(frozen=True)
class PlanEdit:
    """One edit of a node's definition: ``CODE subject`` and what is known of it."""

    reason: str
    details: tuple[str, ...] = ()

    def describe(self, *where: str | None) -> str:
        """``CODE subject (details…, where…)``: *where* names the plan file and commit."""
        details = [*self.details, *(w for w in where if w)]
        return self.reason + (f" ({', '.join(details)})" if details else "")


def plan_edits(old: Graph, new: Graph) -> dict[str, tuple[PlanEdit, ...]]:
    """For each node of *new* that was in *old* and whose definition changed in a way its
    evidence depends on, the edits (criteria first, in plan order)."""
    # The plan keeps its criterion digests (computed once per plan, or read from its cache).
    before, after = old.plan.criterion_digests, new.plan.criterion_digests
    edits: dict[str, tuple[PlanEdit, ...]] = {}
    for node_id in new.nodes:
        if node_id not in old.nodes:
            continue
        found = _criteria(node_id, before, after, old, new)
        parts = _definition(old, new, node_id)
        if parts:
            found.append(PlanEdit(f"NODE_CHANGED {node_id}", tuple(parts)))
        if found:
            edits[node_id] = tuple(found)
    return edits


def _criteria(
    node_id: str,
    before: Mapping[tuple[str, str], str],
    after: Mapping[tuple[str, str], str],
    old: Graph,
    new: Graph,
) -> list[PlanEdit]:
    """``CRITERION_CHANGED node/criterion`` for changed, added and removed criteria."""
    found: dict[str, PlanEdit] = {}
    for criterion in new.nodes[node_id].acceptance:
        key = (node_id, criterion.id)
        reason = f"CRITERION_CHANGED {node_id}/{criterion.id}"
        if key not in before:
            found.setdefault(reason, PlanEdit(reason, ("added",)))
        elif before[key] != after[key]:
            found.setdefault(reason, PlanEdit(reason))
    for criterion in old.nodes[node_id].acceptance:
        reason = f"CRITERION_CHANGED {node_id}/{criterion.id}"
        if (node_id, criterion.id) not in after:
            found.setdefault(reason, PlanEdit(reason, ("removed",)))
    return list(found.values())


def _definition(old: Graph, new: Graph, node_id: str) -> list[str]:
    """Which inputs of the node's digest other than its criteria changed."""
    parts = []
    if set(old.nodes[node_id].outputs) != set(new.nodes[node_id].outputs):  # order: no change
        parts.append("outputs")
    upstream = _upstream(old, node_id) != _upstream(new, node_id)
    if upstream:
        parts.append("prerequisites")
    before, after = _consumed(old, node_id), _consumed(new, node_id)
    # what is taken from a node upstream in both, or from whom when the upstream is the same
    # (a renamed or replaced prerequisite is told as such)
    if any(before[n] != after[n] for n in before.keys() & after.keys()) or (
        not upstream and before.keys() != after.keys()
    ):
        parts.append("consumed artifacts")
    return parts


def _upstream(graph: Graph, node_id: str) -> set[str]:
    return set(graph.prerequisites(node_id))


def _consumed(graph: Graph, node_id: str) -> dict[str, set[frozenset[str] | None]]:
    # per node upstream, the artifacts as sets: listed in another order, they are the same
    # (None: all its outputs)
    found: dict[str, set[frozenset[str] | None]] = {}
    for edge in graph.incoming.get(node_id, ()):
        if edge.type == "consumes" and edge.propagates:
            chosen = None if edge.artifacts is None else frozenset(edge.artifacts)
            found.setdefault(edge.from_, set()).add(chosen)
    return found
