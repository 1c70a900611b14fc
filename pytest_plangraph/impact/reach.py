"""From changed paths to nodes and down the graph, without the plan's classes: the index of
which node binds which path (:class:`PathIndex`), each node's strong prerequisites and
dependents (:class:`Topology`), and the :class:`Walk` from the directly reached nodes.

:mod:`.walk` builds these from a plan's graph; :mod:`.basis` keeps them, so that a report of
another diff over the same plan and store is made from them alone (no plan opened). This
runs once per node of a plan of tens of thousands of nodes, so the loops are kept flat and the
values are tuples of strings (the garbage collector stops tracking those). It imports neither
the plan's classes nor :mod:`dataclasses`.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

from ..plan.paths import glob_match, is_glob, normalize, path_problem

if TYPE_CHECKING:
    from ..plan.graph import Graph

__all__ = ["FLOWS", "MAPS", "MAX_REASONS", "MAX_SOURCES", "PathIndex", "Topology", "Walk"]

MAX_REASONS = 10
"""Reason chains kept per invalidated node; the rest are counted in a last ``… N more``."""
MAX_SOURCES = 3
"""Directly changed upstream nodes followed per node (the nearest ones)."""
FLOWS = 1
"""A change to the path moves the node's input digest: it goes downstream from the node."""
MAPS = 2
"""The node's criteria name the path (a ``tests:`` file, a schema, a checked artifact, a test
file its evidence ran): the node is listed under the path even when it is downstream of
another node the path reaches."""


class Topology:
    """Strong prerequisites (self-loops left out) and dependents of every node, and the plan's
    topological order, as tuples and lists ready for the walk."""

    __slots__ = ("dependents", "order", "prerequisites")

    def __init__(self, prerequisites: dict[str, tuple[str, ...]], order: list[str]) -> None:
        self.prerequisites = prerequisites
        self.order = order
        dependents: dict[str, list[str]] = {}
        for node_id, sources in prerequisites.items():
            for source in sources:
                dependents.setdefault(source, []).append(node_id)
        self.dependents = dependents

    @classmethod
    def of(cls, graph: Graph) -> Topology:
        """The topology of *graph*."""
        from ..judge.inputs import Links  # here: a kept basis walks without the plan's classes

        links = Links.of(graph)
        prerequisites = {
            node_id: tuple(p for p in links.prerequisites[node_id] if p != node_id)
            for node_id in graph.nodes
        }
        return cls(prerequisites, graph.topological_order())


class PathIndex:
    """Which nodes a path reaches directly. A plain path also matches as a directory. A node
    whose strong prerequisite the same path reaches is left out, unless its criteria name the
    path: the change reaches it from upstream (a consumed artifact, a shared file), and its
    reason chain says so. (:func:`.walk.index_of` makes one from a graph.)"""

    __slots__ = ("exact", "globs", "prerequisites")

    def __init__(
        self,
        prerequisites: Mapping[str, tuple[str, ...]],
        exact: dict[str, dict[str, int]] | None = None,
        globs: list[tuple[str, str, int]] | None = None,
    ) -> None:
        self.prerequisites = prerequisites
        self.exact: dict[str, dict[str, int]] = {} if exact is None else exact
        self.globs: list[tuple[str, str, int]] = [] if globs is None else globs

    def add(self, pattern: str, node_id: str, *, literal: bool = False, bits: int = FLOWS) -> None:
        """Let *pattern* (a path, a directory or a glob; with *literal*, a path whatever its
        characters) reach *node_id*; *bits* say whether a change to it flows downstream
        (:data:`FLOWS`) and whether the node's criteria name it (:data:`MAPS`)."""
        key = _clean(pattern)
        if key is None:
            return
        if key == "." or (not literal and is_glob(key)):  # `.`: the whole repository
            self.globs.append((key, node_id, bits))
            return
        nodes = self.exact.setdefault(key, {})
        nodes[node_id] = bits | nodes.get(node_id, 0)

    def nodes(self, *paths: str, below: bool = False) -> list[str]:
        """The nodes *paths* reach directly (see :meth:`reach`)."""
        return list(self.reach(*paths, below=below))

    def reach(self, *paths: str, below: bool = False) -> dict[str, bool]:
        """The nodes *paths* reach directly, each with whether the change flows downstream
        from it; with *below*, each path stands for every path under it too (a submodule
        whose changed files could not be listed). A node whose strong prerequisite the change
        flows from is left out, unless its criteria name the path: it is reached through that
        prerequisite."""
        found: dict[str, int] = {}
        for path in paths:
            parts = path.split("/")
            for depth in range(len(parts), 0, -1):
                _merge(found, self.exact.get("/".join(parts[:depth]), {}).items())
            _merge(found, ((n, b) for pattern, n, b in self.globs if glob_match(pattern, path)))
            if below:
                _merge(found, self._under(path).items())
        prerequisites = self.prerequisites
        return {
            n: bool(b & FLOWS)
            for n, b in found.items()
            if b & MAPS or not any(found.get(p, 0) & FLOWS for p in prerequisites[n])
        }

    def _under(self, folder: str) -> dict[str, int]:
        """The nodes of the paths under *folder*, and of the globs that may match one (those
        whose part before the first wildcard and *folder* lie on one line: ``*`` spans ``/``)."""
        start = folder.rstrip("/") + "/"
        found: dict[str, int] = {}
        for key, nodes in self.exact.items():
            if key.startswith(start):
                _merge(found, nodes.items())
        for pattern, node_id, bits in self.globs:
            fixed = re.split(r"[*?\[]", pattern, maxsplit=1)[0]
            if fixed.startswith(start) or start.startswith(fixed):
                _merge(found, [(node_id, bits)])
        return found


def _merge(found: dict[str, int], reached: Iterable[tuple[str, int]]) -> None:
    """Add *reached* (node, bits) pairs to *found*: a change flows when any path says so."""
    for node_id, bits in reached:
        found[node_id] = bits | found.get(node_id, 0)


def _clean(pattern: str) -> str | None:
    """*pattern* normalized without a trailing slash, or None when it may not name a file.
    The common case — already clean — is recognized without :func:`path_problem`."""
    plain = (
        pattern
        and pattern.strip() == pattern
        and pattern[0] not in "/."
        and "\\" not in pattern
        and "/." not in pattern
        and "//" not in pattern
        and pattern[1:2] != ":"
    )
    if plain:
        return pattern.rstrip("/")
    if path_problem(pattern):
        return None
    return normalize(pattern).rstrip("/")


# --- walking the graph -----------------------------------------------------------------------


_Sources = tuple[tuple[str, tuple[str, ...]], ...]
"""Directly reached upstream nodes, each with the nodes between."""


class Walk:
    """Directly reached nodes, everything downstream of them over strong edges, and for each
    node the nearest directly reached upstream nodes with the path to them.

    *direct* maps each directly reached node to its (changed path, description) pairs; each
    description is written once, not once per downstream chain. *flowing* are the directly
    reached nodes whose input digest the change moves (all of them unless told): only from
    those does it go downstream.
    """

    def __init__(
        self,
        topology: Topology,
        direct: Mapping[str, Sequence[tuple[str, str]]],
        flowing: Collection[str] | None = None,
    ):
        self.direct = direct
        self.flowing = direct.keys() if flowing is None else flowing
        self.prerequisites = topology.prerequisites
        self.reached = set(direct) | _downstream(self.flowing, topology.dependents)
        self.order = [n for n in topology.order if n in self.reached]
        self.sources: dict[str, _Sources] = {}
        for node_id in self.order:
            self.sources[node_id] = self._nearest(node_id)

    def _nearest(self, node_id: str) -> _Sources:
        """Directly reached upstream nodes and the nodes between (nearest upstream first)."""
        best: dict[str, tuple[str, ...]] = {}
        length: dict[str, int] = {}  # len(best[source]), so that sorting calls no Python
        reached, flowing, sources = self.reached, self.flowing, self.sources
        for upstream in self.prerequisites[node_id]:
            if upstream not in reached:
                continue
            for source, between in sources.get(upstream, ()):  # absent on a cycle
                # a path is only built when it wins: this runs for every reached node
                steps = len(between) + 1
                if steps < length.get(source, steps + 1):
                    best[source] = (upstream, *between)
                    length[source] = steps
            if upstream in flowing:
                best[upstream] = (upstream,)
                length[upstream] = 1
        if len(best) < 2:
            return tuple(best.items())
        nearest = sorted(length, key=length.__getitem__)[:MAX_SOURCES]  # stable: ties keep order
        return tuple((source, best[source]) for source in nearest)

    def reasons(self, node_id: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """The reason chains of *node_id* and the changed paths they end at."""
        chains: list[str] = []
        paths: list[str] = []
        for path, text in self.direct.get(node_id, ()):
            chains.append(text)
            paths.append(path)
        for source, between in self.sources.get(node_id, ()):
            prefix = f"UPSTREAM_CHANGED via {' ← '.join(between)} ← "
            for path, text in self.direct[source]:
                chains.append(prefix + text)
                paths.append(path)
        if len(chains) > MAX_REASONS:
            chains[MAX_REASONS:] = [f"… {len(chains) - MAX_REASONS} more"]
        return tuple(chains), tuple(dict.fromkeys(paths))


def _downstream(start: Iterable[str], dependents: Mapping[str, Sequence[str]]) -> set[str]:
    """*start* and every node downstream of it over *dependents* (what
    :func:`~pytest_plangraph.plan.graph.reach` gives, as a set: the walk orders it by the
    plan)."""
    found = set(start)
    stack = list(found)
    while stack:
        for neighbour in dependents.get(stack.pop(), ()):
            if neighbour not in found:
                found.add(neighbour)
                stack.append(neighbour)
    return found
