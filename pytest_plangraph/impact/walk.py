"""From changed paths to nodes and down the graph (pure): the engine of :mod:`.report`.

:class:`PathIndex` says which nodes a path reaches directly; :class:`Topology` holds each
node's strong prerequisites and dependents and the plan's order;
:class:`Walk` follows strong edges from the directly reached nodes and keeps, for every node it
reaches, the nearest directly reached upstream nodes, from which the reason chains are written.

This runs once per node of a plan of tens of thousands of nodes, so the loops are kept flat and
the values are tuples of strings (the garbage collector stops tracking those).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from ..judge.inputs import Links
from ..plan.graph import Graph, reach
from ..plan.model import Criterion, SchemaVerifier
from ..plan.paths import glob_match, is_glob, normalize, path_problem

PYTEST_CONFIGS = ("pytest.ini", ".pytest.ini", "pyproject.toml", "tox.ini", "setup.cfg")
"""The files at the root pytest may read its configuration from."""
MAX_REASONS = 10
"""Reason chains kept per invalidated node; the rest are counted in a last ``… N more``."""
MAX_SOURCES = 3
"""Directly changed upstream nodes followed per node (the nearest ones)."""


@dataclass(frozen=True)
class Topology:
    """Strong prerequisites (self-loops left out) and dependents of every node, and the plan's
    topological order, as tuples and lists ready for the walk."""

    prerequisites: dict[str, tuple[str, ...]]
    dependents: dict[str, list[str]]
    order: list[str]

    @classmethod
    def of(cls, graph: Graph) -> Topology:
        """The topology of *graph*."""
        links = Links.of(graph)
        prerequisites = {
            node_id: tuple(p for p in links.prerequisites[node_id] if p != node_id)
            for node_id in graph.nodes
        }
        dependents: dict[str, list[str]] = {}
        for node_id, sources in prerequisites.items():
            for source in sources:
                dependents.setdefault(source, []).append(node_id)
        return cls(prerequisites, dependents, graph.topological_order())


# --- paths to nodes --------------------------------------------------------------------------


FLOWS = 1
"""A change to the path moves the node's input digest: it goes downstream from the node."""
MAPS = 2
"""The node's criteria name the path (a ``tests:`` file, a schema, a checked artifact, a test
file its evidence ran): the node is listed under the path even when it is downstream of
another node the path reaches."""


PYTEST_FILES = ("**/conftest.py", *PYTEST_CONFIGS)
"""Files that bind the evidence of every test of a run (the conftest files pytest loads, the
configuration file it reads): a node with test criteria and no evidence yet is reached by them,
as its evidence, once recorded, would name them."""


@dataclass
class PathIndex:
    """Which nodes a path reaches directly. A plain path also matches as a directory. A node
    whose strong prerequisite the same path reaches is left out, unless its criteria name the
    path: the change reaches it from upstream (a consumed artifact, a shared file), and its
    reason chain says so."""

    prerequisites: Mapping[str, tuple[str, ...]]
    exact: dict[str, dict[str, int]] = field(default_factory=dict)
    globs: list[tuple[str, str, int]] = field(default_factory=list)

    @classmethod
    def of(
        cls,
        graph: Graph,
        outputs: Mapping[str, Sequence[str]],
        subjects: Mapping[str, Iterable[str]],
        topology: Topology | None = None,
        mapped: Mapping[str, Iterable[str]] | None = None,
    ) -> PathIndex:
        """The index of *graph* with expanded *outputs*, evidence *subjects* and the test
        files each node's evidence ran (*mapped*).

        What a node makes — its outputs, the artifacts its verifiers check, the artifacts
        consumed over strong edges into it — is part of its input digest, so a change to it
        flows downstream; the other files of its verifiers (a schema, test files) and its
        evidence subjects bind only its own criteria (DESIGN §5, "What binds")."""
        topology = topology or Topology.of(graph)
        index = cls(topology.prerequisites)
        checked = graph.plan.checked_artifacts
        for node_id, node in graph.nodes.items():  # once per node of a large plan: kept flat
            made = [*node.outputs, *checked.get(node_id, ())]
            for edge in graph.incoming.get(node_id, ()):
                if edge.type == "consumes" and edge.artifacts and edge.propagates:
                    made.extend(edge.artifacts)
            read = [path for c in node.acceptance for path in verifier_paths(c)]
            for pattern in dict.fromkeys(made):
                index.add(pattern, node_id)
            for pattern in dict.fromkeys(read):
                index.add(pattern, node_id, bits=MAPS)
            # files found on disk or named by evidence: paths, even with a `[` in their name
            for path in dict.fromkeys(outputs.get(node_id, ())):
                index.add(path, node_id, literal=True)
            for path in dict.fromkeys(subjects.get(node_id, ())):
                index.add(path, node_id, literal=True, bits=0)
            for path in dict.fromkeys((mapped or {}).get(node_id, ())):
                index.add(path, node_id, literal=True, bits=MAPS)
            if node_id not in subjects and any(c.verifier.type == "test" for c in node.acceptance):
                for pattern in PYTEST_FILES:  # what evidence of its tests would name
                    index.add(pattern, node_id, bits=0)
        return index

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


def verifier_paths(criterion: Criterion) -> tuple[str, ...]:
    """Files a criterion's verifier reads: schema and artifact, the artifact path, the file
    part of each ``tests:`` pattern, a command's ``subjects``."""
    verifier = criterion.verifier
    if isinstance(verifier, SchemaVerifier):
        return (verifier.schema_path, verifier.artifact)
    if verifier.type == "artifact":
        return (str(getattr(verifier, "path", "")),)
    if verifier.type == "test":
        tests: list[str] = getattr(verifier, "tests", [])
        return tuple(dict.fromkeys(t.split("::", 1)[0] for t in tests))
    if verifier.type == "command":  # the files it checks: a change to one makes it stale
        return tuple(getattr(verifier, "subjects", ()))
    return ()


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
        dependents = topology.dependents
        self.reached = set(direct) | set(reach(self.flowing, lambda n: dependents.get(n, ())))
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
