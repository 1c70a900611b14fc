"""What a derivation reads besides the events: file hashes, the plan's links and digests (pure).

* :class:`Snapshot` — current sha256 of every file involved, and each node's outputs expanded.
* :class:`Links` — the adjacency the gate walks, built in one pass over the edges.
* :func:`input_digests` — each node's input digest, the Merkle DAG of DESIGN §5: its criteria
  digests, the current hashes of its outputs, of the artifacts its verifiers check (a schema
  verifier's ``artifact``, an artifact verifier's ``path``: products of the node even when
  ``outputs`` does not name them) and of the files it consumes over strong ``consumes`` edges,
  and the input digests of its strong prerequisites. Content only, never status.
* :func:`needed_paths` — every path a snapshot must hash (and the ``tests:`` patterns whose
  globs it lists again).
* :func:`subject_files` — what a record's subjects say the files are (a subject bound
  absent: no file).
"""

from __future__ import annotations

import weakref
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence

from ..canonical import digest
from ..plan.evidence import ABSENT
from ..plan.graph import Graph
from ..plan.model import (
    ArtifactVerifier,
    Edge,
    LoggedEvent,
    Node,
    SchemaVerifier,
    TestVerifier,
)
from ..plan.paths import glob_match, is_glob
from ..plan.patterns import glob_files_of
from ..values import dataclass, field


@dataclass(frozen=True)
class Snapshot:
    """Current file hashes (None = missing) and each node's outputs expanded to files.

    It must hold every path of :func:`needed_paths`; a path it lacks counts as missing.
    A node absent from ``outputs`` uses its ``outputs`` from the plan as plain paths.
    """

    files: Mapping[str, str | None]
    outputs: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    globs: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """Each ``tests:`` glob of the plan → the files it could find tests in now (their hashes
    are in ``files``): evidence that did not bind one of them is stale (see
    :mod:`pytest_plangraph.vcs.testglob`). Empty when the plan has no ``tests:`` glob."""
    listed: tuple[str, ...] = ()
    """The directories listed to find the files of ``globs`` (a file added to one changes
    its mtime: the kept answer watches them)."""

    def outputs_of(self, node: Node) -> tuple[str, ...]:
        """The files *node* produces."""
        return self.outputs.get(node.id, tuple(node.outputs))

    def glob_files(self, verifier: object) -> list[str]:
        """The files the ``tests:`` globs of *verifier* (a test verifier; any other finds
        none) could find tests in now, less those its ``exclude:`` takes out whole."""
        if not self.globs or not isinstance(verifier, TestVerifier):
            return []
        return glob_files_of(verifier.tests, verifier.exclude, self.globs)


class ReadLog(Mapping[str, "str | None"]):
    """File hashes that remember which path was asked for while each node was judged: call
    :meth:`judging` before judging one, and its paths gather in ``reads[node]``."""

    __slots__ = ("current", "files", "reads")

    def __init__(self, files: Mapping[str, str | None], reads: dict[str, set[str]]) -> None:
        self.files = files
        self.reads = reads
        self.current: set[str] = set()

    def judging(self, node: str) -> None:
        """Count the paths asked for from now on as read by *node*."""
        self.current = self.reads.setdefault(node, set())

    def __getitem__(self, path: str) -> str | None:
        self.current.add(path)
        return self.files[path]

    def get(self, path: str, default: object = None) -> object:  # type: ignore[override]
        self.current.add(path)
        return self.files.get(path, default)

    def __contains__(self, path: object) -> bool:
        if isinstance(path, str):
            self.current.add(path)
        return path in self.files

    def __iter__(self) -> Iterator[str]:
        raise TypeError("a judgement reads named paths, not the whole snapshot")

    def __len__(self) -> int:
        return len(self.files)


PARENT_KINDS = frozenset({"objective", "milestone"})
"""Node kinds that are completed only when all their non-cancelled children are."""


@dataclass(frozen=True)
class Links:
    """The adjacency the gate walks, computed once per plan: strong prerequisites and
    dependents, conflicts-edge partners, the parent (objective or milestone) that waits
    for each child, and each node's strong incoming ``consumes`` edges."""

    prerequisites: dict[str, list[str]]
    dependents: dict[str, list[str]]
    conflicts: dict[str, list[str]]
    parent: dict[str, str]
    consumes: dict[str, list[Edge]] = field(default_factory=dict)

    @classmethod
    def of(cls, graph: Graph) -> Links:
        """The links of *graph* (the same lists as its ``prerequisites``, ``dependents`` and
        ``conflicts``), in one pass over the edges; kept for the graph last asked about."""
        if _LAST_LINKS and _LAST_LINKS[0][0]() is graph:
            return _LAST_LINKS[0][1]
        links = cls._build(graph)
        _LAST_LINKS[:] = [(weakref.ref(graph, _forget), links)]
        return links

    @classmethod
    def _build(cls, graph: Graph) -> Links:
        nodes = graph.nodes
        parent: dict[str, str] = {}
        for node_id, node in nodes.items():
            if node.parent in nodes and nodes[node.parent].kind in PARENT_KINDS:
                parent[node_id] = nodes[node.parent].id
        prerequisites: dict[str, list[str]] = {n: [] for n in nodes}
        dependents: dict[str, list[str]] = {n: [] for n in nodes}
        conflicts: dict[str, list[str]] = {n: [] for n in nodes}
        consumes: dict[str, list[Edge]] = {}
        opposed: list[tuple[str, str]] = []
        linked: set[tuple[str, str]] = set()  # an edge written twice links once
        # The graph keeps each node's incoming and outgoing edges in plan order, so one pass
        # over the plan's edges gives every list in the order the graph's methods give it.
        for edge in graph.plan.edges:  # once per edge of a large plan: kept flat
            source, target = edge.from_, edge.to
            if source not in nodes or target not in nodes:
                continue
            if edge.propagates:
                if edge.type == "consumes":
                    consumes.setdefault(target, []).append(edge)
                if (source, target) not in linked:
                    linked.add((source, target))
                    prerequisites[target].append(source)
                    dependents[source].append(target)
            elif edge.type == "conflicts" and edge.status == "active":
                opposed.append((source, target))
        # incoming before outgoing, as graph.conflicts reads them
        for one, other in [*((t, s) for s, t in opposed), *opposed]:
            if other not in conflicts[one]:  # few: conflicts edges are rare
                conflicts[one].append(other)
        return cls(prerequisites, dependents, conflicts, parent, consumes)


_LAST_LINKS: list[tuple[weakref.ref[Graph], Links]] = []
"""The last graph :meth:`Links.of` was asked about, and its links (a graph is never changed
once built, and one command asks several times: paths, input digests, derivation). Only a
weak reference: the links go when the graph does, so a large plan is not kept alive."""


def _forget(gone: weakref.ref[Graph]) -> None:
    if _LAST_LINKS and _LAST_LINKS[0][0] is gone:
        _LAST_LINKS.clear()


def consumed_files(
    graph: Graph, node_id: str, snapshot: Snapshot, *, links: Links | None = None
) -> list[str]:
    """Files of upstream nodes that *node_id* consumes over strong, active consumes edges:
    the edge's ``artifacts`` (a path, a directory or an fnmatch glob over the upstream
    outputs), or all upstream outputs when the edge names none. *links* (of *graph*) saves
    looking the edges up again."""
    edges = (
        [e for e in graph.incoming.get(node_id, ()) if e.type == "consumes" and e.propagates]
        if links is None
        else links.consumes.get(node_id, ())
    )
    files: list[str] = []
    for edge in edges:
        upstream = snapshot.outputs_of(graph.nodes[edge.from_])
        files.extend(upstream if edge.artifacts is None else _select(edge.artifacts, upstream))
    return list(dict.fromkeys(files))


def _select(artifacts: Sequence[str], upstream: Sequence[str]) -> list[str]:
    chosen: list[str] = []
    for artifact in artifacts:
        folder = artifact.rstrip("/") + "/"
        matches = [
            f
            for f in upstream
            if f == artifact
            or f.startswith(folder)
            or (is_glob(artifact) and glob_match(artifact, f))
        ]
        chosen.extend(matches or ([] if is_glob(artifact) else [artifact]))
    return chosen


def needed_paths(
    graph: Graph,
    events: Sequence[LoggedEvent],
    outputs: Mapping[str, tuple[str, ...]],
    absent: set[str] | None = None,
    tests: dict[str, None] | None = None,
) -> set[str]:
    """Every path a :class:`Snapshot` must hash: expanded outputs, consumed artifacts, verifier
    files (schema, artifact, path) and the subjects of every evidence event (those bound
    :data:`~pytest_plangraph.plan.evidence.ABSENT` go into *absent* as well, when given).
    *tests*, when given, gets every ``tests:`` pattern of the plan's test criteria, in the
    same pass (their globs are listed again: :attr:`Snapshot.globs`)."""
    snapshot = Snapshot({}, outputs)
    paths: set[str] = set()
    links = Links.of(graph)
    for node_id, node in graph.nodes.items():  # once per node of a large plan: kept flat
        paths.update(outputs.get(node_id, node.outputs))
        if node_id in links.consumes:
            paths.update(consumed_files(graph, node_id, snapshot, links=links))
        for criterion in node.acceptance:
            verifier = criterion.verifier
            if isinstance(verifier, ArtifactVerifier):
                paths.add(verifier.path)
            elif isinstance(verifier, SchemaVerifier):
                paths.update((verifier.schema_path, verifier.artifact))
            elif tests is not None and isinstance(verifier, TestVerifier):
                tests.update(dict.fromkeys(verifier.tests))
    # the store's log shares equal subjects between events: each distinct object once
    distinct = {
        id(subjects): subjects
        for event in events
        if event.kind == "evidence" and (subjects := event.payload.get("subjects"))
    }
    for subjects in distinct.values():
        paths.update(subjects)
        if absent is not None and ABSENT in subjects.values():
            absent.update(path for path, sha in subjects.items() if sha == ABSENT)
    return paths


UNREADABLE = "unreadable"
"""A snapshot's value for a path bound absent where a file now is that cannot be hashed (a
link that leaves the repository, a file that cannot be read): pytest would still load it."""


def subject_files(subjects: Mapping[str, str]) -> Mapping[str, str | None]:
    """*subjects* as file hashes: a subject bound :data:`~pytest_plangraph.plan.evidence.ABSENT`
    is a path without a file (None); *subjects* itself when none is."""
    if ABSENT not in subjects.values():
        return subjects
    return {path: None if sha == ABSENT else sha for path, sha in subjects.items()}


def input_digests(
    graph: Graph,
    snapshot: Snapshot,
    *,
    criteria: Mapping[tuple[str, str], str] | None = None,
    order: Sequence[str] | None = None,
    links: Links | None = None,
    only: Collection[str] | None = None,
    prior: Mapping[str, str] | None = None,
    reads: dict[str, set[str]] | None = None,
) -> dict[str, str]:
    """Each node's input digest (DESIGN §5), computed upstream first.

    *criteria* (from :func:`criterion_digests`), *order* (the topological order) and *links*
    (:meth:`Links.of` the graph) may be passed when the caller already has them. With *only*,
    the digests of the other nodes are taken from *prior* (digests computed before, for the
    same plan and for files of theirs that did not change). *reads*, when given, gets the
    paths each computed digest read, by node.
    """
    criteria = criterion_digests(graph) if criteria is None else criteria
    links = Links.of(graph) if links is None else links
    files_now, outputs, nodes = snapshot.files, snapshot.outputs, graph.nodes
    consumes, prerequisites = links.consumes, links.prerequisites
    checked = graph.plan.checked_artifacts
    digests: dict[str, str] = {}
    for node_id in graph.topological_order() if order is None else order:  # kept flat
        if only is not None and node_id not in only and prior is not None:
            digests[node_id] = prior[node_id]
            continue
        node = nodes[node_id]
        files: Iterable[str] = outputs.get(node_id, node.outputs)
        if node_id in checked:
            files = {*files, *checked[node_id]}
        if node_id in consumes:
            files = {*files, *consumed_files(graph, node_id, snapshot, links=links)}
        if reads is not None:
            reads[node_id] = set(files)
        digests[node_id] = digest(
            {
                "criteria": {c.id: criteria[(node_id, c.id)] for c in node.acceptance},
                "files": {path: files_now.get(path) for path in files},
                "upstream": {p: digests.get(p) for p in prerequisites[node_id]},
            }
        )
    return digests


def digests_since(
    graph: Graph,
    was: Snapshot,
    now: Snapshot,
    prior: Mapping[str, str],
    *,
    criteria: Mapping[tuple[str, str], str] | None = None,
) -> dict[str, str]:
    """:func:`input_digests` of *graph* for the snapshot *now*, given *prior*, its digests for
    the snapshot *was*: a node whose files are the same in both (as nearly all are between
    the start and the end of a run, or between the records' snapshot and the state after
    them) keeps its digest, unless a strong prerequisite's changed; the rest are computed
    again. With other outputs expanded, every digest is computed again."""
    if was.outputs != now.outputs or prior.keys() != graph.nodes.keys():
        return input_digests(graph, now, criteria=criteria)
    links = Links.of(graph)
    before, after, outputs = was.files, now.files, now.outputs
    checked, consumes = graph.plan.checked_artifacts, links.consumes
    dirty: set[str] = set()
    for node_id, node in graph.nodes.items():  # once per node of a large plan: kept flat
        files: Iterable[str] = outputs.get(node_id, node.outputs)
        if node_id in checked:
            files = {*files, *checked[node_id]}
        if node_id in consumes:
            files = {*files, *consumed_files(graph, node_id, now, links=links)}
        if any(before.get(path) != after.get(path) for path in files):
            dirty.add(node_id)
    if not dirty:
        return dict(prior)
    dependents, todo = links.dependents, list(dirty)
    while todo:  # what lies downstream reads the changed digests
        for dependent in dependents[todo.pop()]:
            if dependent not in dirty:
                dirty.add(dependent)
                todo.append(dependent)
    return input_digests(graph, now, criteria=criteria, links=links, only=dirty, prior=prior)


def criterion_digests(graph: Graph) -> Mapping[tuple[str, str], str]:
    """The digest of every criterion of the plan, keyed by (node id, criterion id); the same
    values as :func:`~pytest_plangraph.plan.model.criterion_digest`, computed once per plan."""
    return graph.plan.criterion_digests


def node_files(graph: Graph, node: str, snapshot: Snapshot) -> list[str]:
    """The node's outputs and the files it consumes from upstream, sorted."""
    return sorted({*snapshot.outputs.get(node, ()), *consumed_files(graph, node, snapshot)})
