"""Pure graph operations over a plan: indexes, topological order, cycles and closures.

Edges read "``to`` depends on ``from``". The topological order is :mod:`graphlib`'s (nodes
become ready in rounds), with ties broken by the position of nodes in the plan file so every
listing is stable; it is computed once per plan (``Plan.topological_order``).

:func:`reach` is the one traversal every graph walk of the package uses (upstream, downstream,
down the hierarchy, or over any adjacency a caller has computed): breadth first, iterative and
linear in the nodes and links it meets, since a plan may be tens of thousands of nodes deep.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Collection, Iterable

from ..values import dataclass, field
from .model import PROPAGATING_EDGES, Edge, Node, Plan


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
        from .order import rounds  # a plan read from its cache carries its order

        return rounds(list(self.nodes), self._dependency_pairs())

    def find_cycle(self) -> list[str] | None:
        """One dependency cycle as ``[a, b, …, a]``, or None."""
        import graphlib  # a plan read from its cache was found acyclic when it was kept

        sorter: graphlib.TopologicalSorter[str] = graphlib.TopologicalSorter()
        for node_id in self.nodes:
            sorter.add(node_id, *self._dependency_sources(node_id))
        try:
            sorter.prepare()
        except graphlib.CycleError as exc:
            cycle: list[str] = exc.args[1]
            return cycle
        return None

    def with_ancestors(self, start: Iterable[str]) -> set[str]:
        """*start* and every ancestor of its nodes; each node is met once, however deep the
        hierarchy (and a parent loop ends the walk up)."""
        nodes = self.nodes

        def parent(node_id: str) -> tuple[str, ...]:
            above = nodes[node_id].parent if node_id in nodes else None
            return (above,) if above is not None and above in nodes else ()

        return set(reach(start, parent))

    def upstream(
        self, start: Iterable[str], types: Collection[str] = PROPAGATING_EDGES
    ) -> list[str]:
        """Every node *start* depends on, over strong, active edges of *types*, nearest first;
        a node of *start* is in it only when a cycle leads back to it."""
        return self._closure(start, types, self.incoming, lambda e: e.from_)

    def downstream(
        self, start: Iterable[str], types: Collection[str] = PROPAGATING_EDGES
    ) -> list[str]:
        """Every node that depends on *start*, over strong, active edges of *types*, nearest
        first; a node of *start* is in it only when a cycle leads back to it."""
        return self._closure(start, types, self.outgoing, lambda e: e.to)

    def descendants(self, node_id: str) -> list[str]:
        """The nodes under *node_id* in the hierarchy, breadth first (never *node_id* itself,
        even on a parent loop)."""
        children = self.children
        found = reach(children.get(node_id, ()), lambda n: children.get(n, ()))
        return [n for n in found if n != node_id]

    def _closure(
        self,
        start: Iterable[str],
        types: Collection[str],
        edges: dict[str, list[Edge]],
        other: Callable[[Edge], str],
    ) -> list[str]:
        # one type given as a string would match its substrings ("requires" holds "require")
        kinds = frozenset([types] if isinstance(types, str) else types)

        def step(node_id: str) -> list[str]:
            return _unique(
                other(e)
                for e in edges.get(node_id, ())
                if e.type in kinds and e.status == "active" and e.strength == "strong"
            )

        return reach([n for s in dict.fromkeys(start) for n in step(s)], step)

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


def reach(start: Iterable[str], step: Callable[[str], Iterable[str]]) -> list[str]:
    """*start* and every node reached from it by repeating *step* (a node's neighbours), each
    once, breadth first: the nodes of *start* in their order, then each node's new neighbours
    in the order *step* gives them. The one graph traversal of the package."""
    found = dict.fromkeys(start)
    queue = deque(found)
    while queue:
        for neighbour in step(queue.popleft()):
            if neighbour not in found:
                found[neighbour] = None
                queue.append(neighbour)
    return list(found)


def _unique(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(items))
