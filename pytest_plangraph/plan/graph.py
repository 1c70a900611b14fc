"""Pure graph operations over a plan: indexes, topological order, cycles and ancestors.

Edges read "``to`` depends on ``from``". The topological order is :mod:`graphlib`'s (nodes
become ready in rounds), with ties broken by the position of nodes in the plan file so every
listing is stable; it is computed once per plan (``Plan.topological_order``).
"""

from __future__ import annotations

import graphlib
from collections.abc import Iterable
from dataclasses import dataclass, field

from .model import PROPAGATING_EDGES, Edge, Node, Plan
from .order import rounds


@dataclass(frozen=True)
class Graph:
    """Indexes of one plan. Build with :meth:`of`; ids that repeat keep their first node."""

    plan: Plan
    nodes: dict[str, Node]
    index: dict[str, int]
    children: dict[str, list[str]]
    incoming: dict[str, list[Edge]] = field(default_factory=dict)
    outgoing: dict[str, list[Edge]] = field(default_factory=dict)

    @classmethod
    def of(cls, plan: Plan) -> Graph:
        """Index *plan*."""
        nodes: dict[str, Node] = {}
        for node in plan.nodes:
            nodes.setdefault(node.id, node)
        index = {node_id: i for i, node_id in enumerate(nodes)}
        children: dict[str, list[str]] = {node_id: [] for node_id in nodes}
        for node in nodes.values():
            if node.parent in children:
                children[node.parent].append(node.id)
        incoming: dict[str, list[Edge]] = {node_id: [] for node_id in nodes}
        outgoing: dict[str, list[Edge]] = {node_id: [] for node_id in nodes}
        for edge in plan.edges:
            if edge.from_ in nodes and edge.to in nodes:
                outgoing[edge.from_].append(edge)
                incoming[edge.to].append(edge)
        return cls(plan, nodes, index, children, incoming, outgoing)

    def prerequisites(self, node_id: str) -> list[str]:
        """Upstream nodes of strong, active requires/consumes/validates edges into *node_id*."""
        return _unique(e.from_ for e in self.incoming.get(node_id, ()) if e.propagates)

    def dependents(self, node_id: str) -> list[str]:
        """Downstream nodes reached by strong, active propagating edges out of *node_id*."""
        return _unique(e.to for e in self.outgoing.get(node_id, ()) if e.propagates)

    def conflicts(self, node_id: str) -> list[str]:
        """Nodes joined to *node_id* by an active conflicts edge, in either direction."""
        edges = [*self.incoming.get(node_id, ()), *self.outgoing.get(node_id, ())]
        return _unique(
            e.to if e.from_ == node_id else e.from_
            for e in edges
            if e.type == "conflicts" and e.status == "active"
        )

    def topological_order(self) -> list[str]:
        """Upstream before downstream over active requires/consumes/validates edges.

        Nodes become ready in rounds, as with :class:`graphlib.TopologicalSorter`: each round
        holds the nodes whose every dependency was in an earlier round, in plan order. Falls
        back to plan order when there is a cycle (lint reports it).
        """
        return list(self.plan.topological_order)

    def rounds(self) -> list[str]:
        """The topological order computed afresh (:meth:`topological_order` keeps it)."""
        return rounds(list(self.nodes), self._dependency_pairs())

    def find_cycle(self) -> list[str] | None:
        """One dependency cycle as ``[a, b, …, a]``, or None."""
        sorter: graphlib.TopologicalSorter[str] = graphlib.TopologicalSorter()
        for node_id in self.nodes:
            sorter.add(node_id, *self._dependency_sources(node_id))
        try:
            sorter.prepare()
        except graphlib.CycleError as exc:
            cycle: list[str] = exc.args[1]
            return cycle
        return None

    def ancestors(self, node_id: str) -> list[str]:
        """Parents of *node_id*, nearest first; stops at a hierarchy cycle."""
        chain: list[str] = []
        seen = {node_id}  # a set: a parent chain may be thousands of nodes deep
        current = self.nodes[node_id].parent if node_id in self.nodes else None
        while current in self.nodes and current not in seen:
            chain.append(current)
            seen.add(current)
            current = self.nodes[current].parent
        return chain

    def with_ancestors(self, start: Iterable[str]) -> set[str]:
        """*start* and every ancestor of its nodes. Each walk up stops at the first node
        already found, so the cost follows the nodes found, however deep the hierarchy (one
        :meth:`ancestors` per node would cost the square of a long chain)."""
        found = set(start)
        for node_id in list(found):
            current = self.nodes[node_id].parent if node_id in self.nodes else None
            while current in self.nodes and current not in found:
                found.add(current)
                current = self.nodes[current].parent
        return found

    def _dependency_sources(self, node_id: str) -> list[str]:
        return _unique(
            e.from_
            for e in self.incoming.get(node_id, ())
            if e.type in PROPAGATING_EDGES and e.status == "active" and e.from_ != node_id
        )

    def _dependency_pairs(self) -> list[tuple[str, str]]:
        return [
            (e.from_, node_id)
            for node_id in self.nodes
            for e in self.incoming.get(node_id, ())
            if e.type in PROPAGATING_EDGES and e.status == "active"
        ]


def _unique(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(items))
