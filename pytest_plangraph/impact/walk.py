"""From a plan's graph to what the walk of :mod:`.reach` runs on (pure): :func:`index_of`
makes the :class:`PathIndex` of which node binds which path, :meth:`Topology.of` each node's
strong prerequisites and dependents and the plan's order; the :class:`Walk` (in
:mod:`.reach`, with them, so that a kept basis walks without the plan's classes) follows
strong edges from the directly reached nodes and keeps, for every node it reaches, the
nearest directly reached upstream nodes, from which the reason chains are written.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from ..plan.graph import Graph
from ..plan.model import Criterion, SchemaVerifier
from .reach import FLOWS, MAPS, MAX_REASONS, MAX_SOURCES, PathIndex, Topology, Walk

__all__ = [
    "FLOWS",
    "MAPS",
    "MAX_REASONS",
    "MAX_SOURCES",
    "PYTEST_CONFIGS",
    "PYTEST_FILES",
    "PathIndex",
    "Topology",
    "Walk",
    "index_of",
    "verifier_paths",
]

PYTEST_CONFIGS = ("pytest.ini", ".pytest.ini", "pyproject.toml", "tox.ini", "setup.cfg")
"""The files at the root pytest may read its configuration from."""


# --- paths to nodes --------------------------------------------------------------------------


PYTEST_FILES = ("**/conftest.py", *PYTEST_CONFIGS)
"""Files that bind the evidence of every test of a run (the conftest files pytest loads, the
configuration file it reads): a node with test criteria and no evidence yet is reached by them,
as its evidence, once recorded, would name them."""


def index_of(
    graph: Graph,
    outputs: Mapping[str, Sequence[str]],
    subjects: Mapping[str, Iterable[str]],
    topology: Topology | None = None,
    mapped: Mapping[str, Iterable[str]] | None = None,
) -> PathIndex:
    """The :class:`PathIndex` of *graph* with expanded *outputs*, evidence *subjects* and the
    test files each node's evidence ran (*mapped*).

    What a node makes — its outputs, the artifacts its verifiers check, the artifacts
    consumed over strong edges into it — is part of its input digest, so a change to it
    flows downstream; the other files of its verifiers (a schema, test files) and its
    evidence subjects bind only its own criteria (DESIGN §5, "What binds")."""
    topology = topology or Topology.of(graph)
    index = PathIndex(topology.prerequisites)
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
