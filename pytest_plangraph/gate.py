"""Evidence validity and the completion gate (DESIGN §4, §5), pure.

* :func:`input_digests` — each node's input digest, the Merkle DAG of §5: its criteria digests,
  the current hashes of its outputs and of the files it consumes over strong ``consumes`` edges,
  and the input digests of its strong prerequisites. Content only, never status.
* :func:`validity` — whether one evidence record still holds, with the reason codes of §4.
* :class:`Completion` — which nodes pass. For every node it counts what still stands between it
  and completion (required criteria without a valid verdict, a cancel, strong prerequisites
  and — for objectives and milestones — non-cancelled children that do not pass). A node
  passes when its count is zero; a changed verdict adjusts the counts along the graph, so
  replaying a log costs the changes it makes, not a full derivation per event.
* :func:`final_completion` adds the conflicts rule: a node is completed when it passes while no
  conflicts-edge partner passes (without that rule), and its prerequisites and counted children
  are completed. Two conflicting nodes that both pass block each other — a contradiction a
  person resolves by cancelling one; deterministic, and it never recurses.
* :func:`replay_claims` judges each claim by the whole gate as it stood when the claim was
  made, keeping both layers current event by event (for the retry budget).
* :func:`gate` — the decision returned to a claim.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from typing import TYPE_CHECKING, Any, Literal, NamedTuple, Protocol

from .errors import UsageError
from .graph import Graph
from .model import (
    ArtifactVerifier,
    Criterion,
    Edge,
    Evidence,
    Node,
    SchemaVerifier,
)
from .paths import is_glob

if TYPE_CHECKING:
    from .state import PlanState


class LoggedEvent(Protocol):
    """What derivation reads of an event: a stored :class:`~pytest_plangraph.model.Event`, or
    the lighter row :meth:`Store.log <pytest_plangraph.store.Store.log>` reads for status."""

    @property
    def seq(self) -> int: ...
    @property
    def id(self) -> str: ...
    @property
    def kind(self) -> str: ...
    @property
    def node(self) -> str | None: ...
    @property
    def criterion(self) -> str | None: ...
    @property
    def by(self) -> str: ...
    @property
    def payload(self) -> Mapping[str, Any]: ...


CriterionStatus = Literal["valid", "stale", "failed", "missing", "awaiting_approval"]


@dataclass(frozen=True)
class Snapshot:
    """Current file hashes (None = missing) and each node's outputs expanded to files.

    It must hold every path of :func:`needed_paths`; a path it lacks counts as missing.
    A node absent from ``outputs`` uses its ``outputs`` from the plan as plain paths.
    """

    files: Mapping[str, str | None]
    outputs: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    def outputs_of(self, node: Node) -> tuple[str, ...]:
        """The files *node* produces."""
        return self.outputs.get(node.id, tuple(node.outputs))


@dataclass(frozen=True)
class Reason:
    """Why a criterion is not valid or a node is not completed: a code, a sentence, data."""

    code: str
    message: str
    data: Mapping[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """``{"code", "message", **data}``."""
        return {"code": self.code, "message": self.message, **self.data}

    def for_criterion(self, criterion_id: str) -> Reason:
        """This reason, tagged with the criterion it is about."""
        return Reason(
            self.code, f"{criterion_id}: {self.message}", {"criterion": criterion_id, **self.data}
        )


# --- paths and input digests -----------------------------------------------------------------


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
            or (is_glob(artifact) and fnmatchcase(f, artifact))
        ]
        chosen.extend(matches or ([] if is_glob(artifact) else [artifact]))
    return chosen


def needed_paths(
    graph: Graph, events: Sequence[LoggedEvent], outputs: Mapping[str, tuple[str, ...]]
) -> set[str]:
    """Every path a :class:`Snapshot` must hash: expanded outputs, consumed artifacts, verifier
    files (schema, artifact, path) and the subjects of every evidence event."""
    snapshot = Snapshot({}, outputs)
    paths: set[str] = set()
    links = Links.of(graph)
    for node_id, node in graph.nodes.items():
        paths.update(snapshot.outputs_of(node))
        paths.update(consumed_files(graph, node_id, snapshot, links=links))
        for criterion in node.acceptance:
            paths.update(_verifier_files(criterion))
    seen: set[int] = set()  # the store's log shares equal subjects between events
    for event in events:
        if event.kind == "evidence":
            subjects = event.payload.get("subjects")
            if subjects and id(subjects) not in seen:
                seen.add(id(subjects))
                paths.update(subjects)
    return paths


def _verifier_files(criterion: Criterion) -> tuple[str, ...]:
    verifier = criterion.verifier
    if isinstance(verifier, SchemaVerifier):
        return (verifier.schema_path, verifier.artifact)
    if isinstance(verifier, ArtifactVerifier):
        return (verifier.path,)
    return ()


def input_digests(
    graph: Graph,
    snapshot: Snapshot,
    *,
    criteria: Mapping[tuple[str, str], str] | None = None,
    order: Sequence[str] | None = None,
    links: Links | None = None,
) -> dict[str, str]:
    """Each node's input digest (DESIGN §5), computed upstream first.

    *criteria* (from :func:`criterion_digests`), *order* (the topological order) and *links*
    (:meth:`Links.of` the graph) may be passed when the caller already has them.
    """
    criteria = criterion_digests(graph) if criteria is None else criteria
    links = Links.of(graph) if links is None else links
    files_now = snapshot.files
    digests: dict[str, str] = {}
    for node_id in graph.topological_order() if order is None else order:
        node = graph.nodes[node_id]
        files = {*snapshot.outputs_of(node), *consumed_files(graph, node_id, snapshot, links=links)}
        digests[node_id] = _digest(
            {
                "criteria": {c.id: criteria[(node_id, c.id)] for c in node.acceptance},
                "files": {path: files_now.get(path) for path in files},
                "upstream": {p: digests.get(p) for p in links.prerequisites[node_id]},
            }
        )
    return digests


def criterion_digests(graph: Graph) -> dict[tuple[str, str], str]:
    """The digest of every criterion of the plan, keyed by (node id, criterion id); the same
    values as :func:`~pytest_plangraph.model.criterion_digest`."""
    digests: dict[tuple[str, str], str] = {}
    for node_id, node in graph.nodes.items():
        for criterion in node.acceptance:
            key = (node_id, criterion.id)
            if key not in digests:
                body = criterion.model_dump(mode="json", by_alias=True, exclude_defaults=True)
                body["verifier"] = criterion.verifier.model_dump(mode="json", by_alias=True)
                digests[key] = _digest({"node": node_id, "criterion": body})
    return digests


_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False)
"""The encoder of :func:`~pytest_plangraph.canonical.canonical_json`, built once."""


def _digest(value: Any) -> str:
    """:func:`~pytest_plangraph.canonical.digest`, without building an encoder per call."""
    return hashlib.sha256(_CANONICAL.encode(value).encode("utf-8")).hexdigest()


# --- evidence validity -----------------------------------------------------------------------


_RECORD_FIELDS = ("id", "outcome", "reason", "criterion_digest", "input_digest", "subjects")


def validity(
    evidence: Evidence,
    *,
    current_criterion_digest: str,
    snapshot: Snapshot,
    current_input_digest: str,
    graph: Graph,
    changed_upstream: Callable[[str], bool] | None = None,
) -> tuple[CriterionStatus, tuple[Reason, ...]]:
    """Judge one evidence record against the current plan and files (DESIGN §4).

    Returns ``valid``, ``stale`` or ``failed`` with the reasons. *changed_upstream* tells
    which strong prerequisites of the node changed since the record (for ``UPSTREAM_CHANGED``);
    without it a changed input digest that nothing else explains gives ``INPUT_CHANGED``.
    """
    test = changed_upstream or (lambda _node: False)
    return judge(
        {name: getattr(evidence, name) for name in _RECORD_FIELDS},
        criterion_digest=current_criterion_digest,
        input_digest=current_input_digest,
        files=snapshot.files,
        culprits=lambda: [p for p in graph.prerequisites(evidence.node) if test(p)],
    )


def holds(
    record: Mapping[str, Any],
    *,
    criterion_digest: str,
    input_digest: str,
    files: Mapping[str, str | None],
) -> bool:
    """The validity rule of DESIGN §4 for an evidence record in its JSON form: passed, same
    criterion digest, same input digest, every subject's current sha256 as recorded."""
    if (
        record.get("input_digest") != input_digest
        or record.get("outcome") != "passed"
        or record.get("criterion_digest") != criterion_digest
    ):
        return False
    return all(files.get(path) == sha for path, sha in (record.get("subjects") or {}).items())


def judge(
    record: Mapping[str, Any],
    *,
    criterion_digest: str,
    input_digest: str,
    files: Mapping[str, str | None],
    culprits: Callable[[], Sequence[str]],
) -> tuple[CriterionStatus, tuple[Reason, ...]]:
    """:func:`holds`, with the reasons when it does not; *culprits* names the prerequisites
    that changed (asked only when the input digest differs)."""
    if holds(record, criterion_digest=criterion_digest, input_digest=input_digest, files=files):
        return "valid", ()
    outcome, reason = record.get("outcome"), record.get("reason")
    if outcome != "passed":
        data = {"outcome": outcome, "reason": reason, "evidence": record.get("id")}
        because = f" ({reason})" if reason else ""
        message = f"the latest verdict is {outcome}{because}"
        return "failed", (Reason("EVIDENCE_FAILED", message, data),)
    reasons: list[Reason] = []
    old = record.get("criterion_digest")
    if old != criterion_digest:
        message = "the criterion's definition changed since the evidence was recorded"
        reasons.append(Reason("CRITERION_CHANGED", message, {"old": old, "new": criterion_digest}))
    reasons.extend(_subject_reasons(record.get("subjects") or {}, files))
    old = record.get("input_digest")
    if old != input_digest:
        reasons.extend(upstream_reason(p) for p in culprits())
        if not reasons:
            message = "the node's inputs changed since the evidence was recorded"
            reasons.append(Reason("INPUT_CHANGED", message, {"old": old, "new": input_digest}))
    return "stale", tuple(reasons)


def _subject_reasons(subjects: Mapping[str, str], files: Mapping[str, str | None]) -> list[Reason]:
    reasons: list[Reason] = []
    for path, old in sorted(subjects.items()):
        new = files.get(path)
        if new is None:
            reasons.append(
                Reason("ARTIFACT_DELETED", f"{path} is missing", {"path": path, "old": old})
            )
        elif new != old:
            reasons.append(
                Reason(
                    "ARTIFACT_CHANGED",
                    f"{path} changed since the evidence was recorded",
                    {"path": path, "old": old, "new": new},
                )
            )
    return reasons


def upstream_reason(node_id: str) -> Reason:
    """``UPSTREAM_CHANGED`` naming *node_id*."""
    return Reason(
        "UPSTREAM_CHANGED", f"upstream node {node_id} changed since then", {"node": node_id}
    )


# --- the gate ---------------------------------------------------------------------------------


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
        if _LAST_LINKS and _LAST_LINKS[0][0] is graph:
            return _LAST_LINKS[0][1]
        links = cls._build(graph)
        _LAST_LINKS[:] = [(graph, links)]
        return links

    @classmethod
    def _build(cls, graph: Graph) -> Links:
        nodes = graph.nodes
        parent: dict[str, str] = {}
        for node_id, node in nodes.items():
            if node.parent in nodes and nodes[node.parent].kind in PARENT_KINDS:
                parent[node_id] = nodes[node.parent].id
        prerequisites: dict[str, dict[str, None]] = {n: {} for n in nodes}
        dependents: dict[str, dict[str, None]] = {n: {} for n in nodes}
        conflicts: dict[str, dict[str, None]] = {n: {} for n in nodes}
        consumes: dict[str, list[Edge]] = {}
        for node_id in nodes:  # incoming edges in graph order, as graph.prerequisites reads
            for edge in graph.incoming.get(node_id, ()):
                if edge.propagates:
                    prerequisites[node_id][edge.from_] = None
                    if edge.type == "consumes":
                        consumes.setdefault(node_id, []).append(edge)
        for node_id in nodes:
            for edge in graph.outgoing.get(node_id, ()):
                if edge.propagates:
                    dependents[node_id][edge.to] = None
        for node_id in nodes:
            for edge in (*graph.incoming.get(node_id, ()), *graph.outgoing.get(node_id, ())):
                if edge.type == "conflicts" and edge.status == "active":
                    conflicts[node_id][edge.to if edge.from_ == node_id else edge.from_] = None
        return cls(
            {n: list(p) for n, p in prerequisites.items()},
            {n: list(d) for n, d in dependents.items()},
            {n: list(c) for n, c in conflicts.items()},
            parent,
            consumes,
        )


_LAST_LINKS: list[tuple[Graph, Links]] = []
"""The last graph :meth:`Links.of` was asked about, and its links (a graph is never changed
once built, and one command asks several times: paths, input digests, derivation)."""


class Completion:
    """Which nodes pass, counted and kept current as verdicts change (see the module text).

    ``flipped`` collects every node whose ``done`` changed, for whoever mirrors it.
    """

    def __init__(
        self, links: Links, required: Mapping[str, Iterable[str]], cancelled: Iterable[str]
    ) -> None:
        self._links = links
        self.cancelled = set(cancelled)
        self._required = {n: frozenset(required.get(n, ())) for n in links.prerequisites}
        self._missing = {n: set(ids) for n, ids in self._required.items()}
        self._count = {
            n: len(self._missing[n]) + (n in self.cancelled) + len(prerequisites)
            for n, prerequisites in links.prerequisites.items()
        }
        for child, parent in links.parent.items():
            self._count[parent] += child not in self.cancelled
        self.done = dict.fromkeys(links.prerequisites, False)
        self.flipped: list[str] = []
        for node_id in links.prerequisites:
            self._adjust(node_id, 0)

    def set_ok(self, node_id: str, criterion_id: str, ok: bool) -> None:
        """Record whether the required criterion *criterion_id* of *node_id* is satisfied."""
        if criterion_id not in self._required[node_id]:
            return
        missing = self._missing[node_id]
        if ok and criterion_id in missing:
            missing.discard(criterion_id)
            self._adjust(node_id, -1)
        elif not ok and criterion_id not in missing:
            missing.add(criterion_id)
            self._adjust(node_id, 1)

    def cancel(self, node_id: str) -> None:
        """Cancel *node_id*: it never passes, and its parent stops waiting for it."""
        if node_id in self.cancelled:
            return
        self.cancelled.add(node_id)
        parent = self._links.parent.get(node_id)
        if parent is not None and not self.done[node_id]:
            self._adjust(parent, -1)
        self._adjust(node_id, 1)

    def unopposed(self, node_id: str) -> bool:
        """The node passes and no conflicts-edge partner does."""
        return self.done[node_id] and not any(self.done[q] for q in self._links.conflicts[node_id])

    def conflict_partners(self, node_id: str) -> list[str]:
        """Conflicts-edge partners of *node_id* that pass."""
        return [q for q in self._links.conflicts[node_id] if self.done[q]]

    def _adjust(self, node_id: str, delta: int) -> None:
        # An explicit stack: a flip ripples down chains thousands of nodes long.
        stack = [(node_id, delta)]
        while stack:
            current, change = stack.pop()
            self._count[current] += change
            now = self._count[current] == 0
            if now == self.done[current]:
                continue
            self.done[current] = now
            self.flipped.append(current)
            step = -1 if now else 1
            stack.extend((m, step) for m in self._links.dependents[current])
            parent = self._links.parent.get(current)
            if parent is not None and current not in self.cancelled:
                stack.append((parent, step))


def final_completion(links: Links, raw: Completion) -> Completion:
    """Completion under the conflicts rule too: a node is completed when it passes *raw*
    unopposed and every strong prerequisite and counted child is completed."""
    final = Completion(links, dict.fromkeys(links.prerequisites, ("unopposed",)), raw.cancelled)
    for node_id in links.prerequisites:
        final.set_ok(node_id, "unopposed", raw.unopposed(node_id))
    raw.flipped.clear()
    return final


class Tick(NamedTuple):
    """One step of a claim replay: a criterion verdict, a cancel, a retry grant, a claim to
    judge, or a claim whose gate verdict was recorded with it (``verdict``, ``ok`` = passed)."""

    kind: Literal["criterion", "cancel", "retry", "claim", "verdict"]
    node: str
    criterion: str = ""
    ok: bool = False


def replay_claims(links: Links, raw: Completion, ticks: Iterable[Tick]) -> dict[str, int]:
    """Apply *ticks* in order to *raw*; return refused claims since the last retry grant.

    A claim is refused when the node is not completed at that moment — the whole gate,
    conflicts rule included (DESIGN §5) — or when the verdict recorded with it says so.
    """
    final = final_completion(links, raw)
    refused: dict[str, int] = {}
    for tick in ticks:
        if tick.kind == "retry":
            refused[tick.node] = 0
        elif tick.kind in ("claim", "verdict"):
            passed = tick.ok if tick.kind == "verdict" else final.done[tick.node]
            refused[tick.node] = refused.get(tick.node, 0) + (not passed)
        elif tick.kind == "criterion":
            raw.set_ok(tick.node, tick.criterion, tick.ok)
        else:
            raw.cancel(tick.node)
            final.cancel(tick.node)
        while raw.flipped:
            changed = raw.flipped.pop()
            for node_id in (changed, *links.conflicts[changed]):
                final.set_ok(node_id, "unopposed", raw.unopposed(node_id))
    return refused


@dataclass(frozen=True)
class GateDecision:
    """The gate's answer to a claim: verdict, the node's status, why, and the evidence used."""

    node: str
    verdict: Literal["PASSED", "FAILED"]
    status: str
    reasons: tuple[Reason, ...]
    evidence: list[str]

    def to_json(self) -> dict[str, Any]:
        """The JSON shape of ``plangraph claim`` (without the ``format`` key)."""
        return {
            "node": self.node,
            "verdict": self.verdict,
            "status": self.status,
            "reasons": [r.to_json() for r in self.reasons],
            "evidence": list(self.evidence),
        }


def gate(graph: Graph, state: PlanState, node_id: str) -> GateDecision:
    """Decide whether *node_id* is completed in *state*; raise UsageError for an unknown node."""
    node_state = state.nodes.get(node_id)
    if node_id not in graph.nodes or node_state is None:
        known = ", ".join(list(graph.nodes)[:10])
        raise UsageError(f"unknown node {node_id!r}; the plan has: {known}")
    used = [c.evidence for c in node_state.criteria if c.state == "valid" and c.evidence]
    return GateDecision(
        node=node_id,
        verdict="PASSED" if node_state.status == "completed" else "FAILED",
        status=node_state.status,
        reasons=node_state.reasons,
        evidence=used,
    )
