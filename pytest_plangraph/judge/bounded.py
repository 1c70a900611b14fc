"""The gate over some nodes only (DESIGN §5): what each node must satisfy, and the links of the
gate bounded to the judged nodes and the nodes around them taken as kept.

:mod:`pytest_plangraph.judge.derive` judges a whole plan, or a part of it whose completion is
closed (the nodes that read a changed file, their dependents, parents and partners); the nodes
around such a part are taken as kept, completed exactly when they were kept completed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ..plan.model import Node
from .inputs import Links
from .ledger import Context

__all__ = ["KEPT_OPEN", "NO_ACCEPTANCE", "bounded", "required_ids"]

NO_ACCEPTANCE = "(no acceptance criteria)"
"""Stands for the missing criterion of a step without any (or of an objective or milestone
with no criteria, children or strong prerequisites): it is never satisfied, so such a node never
completes on someone's word alone (objectives and milestones complete through their children
and prerequisites)."""


KEPT_OPEN = "(not completed, as kept)"
"""Stands for what keeps a node around the judged ones from completing when its state is
taken as kept (:func:`bounded`): never satisfied."""


def bounded(
    context: Context, judged: Sequence[str], around: Mapping[str, bool]
) -> tuple[Links, dict[str, list[str]]]:
    """The links of the gate over the *judged* nodes and the nodes *around* them (each
    strong prerequisite and child of a judged node that is not one), and what each must
    satisfy: a node around is completed exactly when it was kept completed (*around*), its
    own links left out. The judged nodes must hold every dependent, parent and
    conflicts-edge partner of theirs: a ValueError otherwise, as for a node around that
    *around* does not name."""
    graph, links = context.graph, context.links
    inside = set(judged)
    prerequisites: dict[str, list[str]] = {}
    dependents: dict[str, list[str]] = {}
    conflicts: dict[str, list[str]] = {}
    parent: dict[str, str] = {}
    required: dict[str, list[str]] = {}
    for node_id in judged:
        node = graph.nodes[node_id]
        ups = links.prerequisites[node_id]
        if not inside.issuperset(links.dependents[node_id]) or not inside.issuperset(
            links.conflicts[node_id]
        ):
            raise ValueError(f"{node_id} has a dependent or partner that is not judged")
        above = links.parent.get(node_id)
        if above is not None and above not in inside:
            raise ValueError(f"{node_id} has a parent that is not judged")
        required[node_id] = required_ids(node, bool(graph.children[node_id] or ups))
        prerequisites[node_id] = list(ups)
        conflicts[node_id] = list(links.conflicts[node_id])
        dependents.setdefault(node_id, [])
        for up in ups:
            dependents.setdefault(up, []).append(node_id)
        for child in graph.children[node_id]:
            if links.parent.get(child) == node_id:
                parent[child] = node_id
                dependents.setdefault(child, [])
    if any(conflicts.values()) and not all(around.values()):
        # a node around not completed may still pass but for its own conflicts edges, and a
        # judged node that passes but for conflicts opposes its partners: not kept
        raise ValueError("conflicts edges among the judged nodes")
    for node_id in dependents.keys() - inside:
        if node_id not in around:
            raise ValueError(f"{node_id} is around the judged nodes but not kept")
        prerequisites[node_id] = []
        conflicts[node_id] = []
        required[node_id] = [] if around[node_id] else [KEPT_OPEN]
    bounded = Links(prerequisites, dependents, conflicts, parent, links.consumes)
    return bounded, required


def required_ids(node: Node, gathers: bool) -> list[str]:
    """The ids a node must satisfy. A step without required criteria needs the impossible,
    and so does an objective or milestone that *gathers* nothing either (no children, no
    strong prerequisites): nothing at all would stand behind its completion."""
    ids = [c.id for c in node.acceptance if c.required]
    return ids if ids or (node.kind != "step" and gathers) else [NO_ACCEPTANCE]
