"""Invalidation and the impact report (DESIGN §6), pure: changed paths in, consequences out.

Two entry points build an :class:`ImpactReport`:

* :func:`diff_impact` — what a set of changed paths (a git diff) *would* invalidate. Every node
  the paths reach, and everything downstream over strong, active ``requires``/``consumes``/
  ``validates`` edges of a node whose input digest they move (a file it makes, not one it only
  reads), is invalidated when it has acceptance criteria. No store is needed; when a state is
  given, the entries carry the ids of the evidence that would go stale.
* :func:`evidence_impact` — what the recorded evidence says now: the changed paths are the
  evidence subjects whose current sha256 differs from the recorded one, and the invalidated
  nodes are exactly those with a stale criterion in the derived state (a node re-verified after
  the change is not invalidated again).

A path reaches a node directly through the node's ``outputs`` (as written — a file, a directory
or a glob — and as expanded), the ``artifacts`` of strong consumes edges into it, its verifier
files (schema, artifact, path, the file part of ``tests:`` patterns) and its evidence subjects.
Each invalidated node carries reason chains back to the changed path, e.g.
``UPSTREAM_CHANGED via step-user-schema ← ARTIFACT_CHANGED src/auth/user_schema.json (commit
abc1234)``. Weak edges and ``related`` edges out of an invalidated node give review notices;
a claimed node that is not invalidated itself but waits on an invalidated strong prerequisite or
child is ``blocked``. Conflicts are the gate's business.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..memory import collector_paused
from ..plan.evidence import ABSENT
from ..plan.graph import Graph
from ..plan.model import PROPAGATING_EDGES, Edge, Event, LoggedEvent
from ..vcs.changes import Change
from .walk import PathIndex, Topology, Walk

if TYPE_CHECKING:
    from ..judge.states import CriterionState, PlanState
    from ..plan.edits import PlanEdit

__all__ = [
    "ChangedPath",
    "ImpactReport",
    "Invalidated",
    "Notice",
    "Observed",
    "describe",
    "diff_impact",
    "evidence_impact",
    "latest_subjects",
    "observed_changes",
]


@dataclass(frozen=True)
class ChangedPath:
    """One changed path, the nodes it reaches directly, and what is known of the change."""

    path: str
    change: str
    nodes: tuple[str, ...]
    old_path: str | None = None
    commit: str | None = None
    old: str | None = None
    new: str | None = None
    flows: tuple[str, ...] = ()
    """The nodes of ``nodes`` whose input digest the change moves: it goes downstream from
    them (from the others — a schema or test file read, a subject — it does not)."""

    def to_json(self) -> dict[str, Any]:
        """``{"path", "change", "nodes"}``, and ``"old_path"`` for a rename."""
        data: dict[str, Any] = {"path": self.path, "change": self.change, "nodes": list(self.nodes)}
        if self.old_path is not None:
            data["old_path"] = self.old_path
        return data


@dataclass(frozen=True)
class Invalidated:
    """A node whose evidence is (or would be) stale, with the reason chains and the changed
    paths they lead back to."""

    node: str
    evidence: tuple[str, ...]
    reasons: tuple[str, ...]
    paths: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        """``{"node", "evidence", "reasons"}``."""
        return {"node": self.node, "evidence": list(self.evidence), "reasons": list(self.reasons)}


@dataclass(frozen=True)
class Notice:
    """A node to review or a blocked node, and why."""

    node: str
    reason: str

    def to_json(self) -> dict[str, Any]:
        """``{"node", "reason"}``."""
        return {"node": self.node, "reason": self.reason}


@dataclass(frozen=True)
class ImpactReport:
    """changed → invalidated → review recommended → blocked; *notes* are said once to a person
    (hash-only mode, an evidence commit lost to a rebase) and are not part of the JSON."""

    changed: tuple[ChangedPath, ...]
    invalidated: tuple[Invalidated, ...]
    review_recommended: tuple[Notice, ...]
    blocked: tuple[Notice, ...]
    notes: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        """The report as the ``impact`` command prints it (without ``"format"``)."""
        return {
            "changed": [c.to_json() for c in self.changed],
            "invalidated": [i.to_json() for i in self.invalidated],
            "review_recommended": [n.to_json() for n in self.review_recommended],
            "blocked": [n.to_json() for n in self.blocked],
        }


@dataclass(frozen=True)
class Observed:
    """A change seen by comparing an evidence subject with the file now."""

    change: Change
    old: str | None
    new: str | None
    since: str | None


# --- entry points ----------------------------------------------------------------------------


def diff_impact(
    graph: Graph,
    changes: Sequence[Change],
    *,
    outputs: Mapping[str, Sequence[str]] | None = None,
    events: Sequence[LoggedEvent] = (),
    state: PlanState | None = None,
    commits: Mapping[str, str] | None = None,
    notes: Sequence[str] = (),
    ignore: Sequence[str] = (),
    edits: Mapping[str, Sequence[PlanEdit]] | None = None,
    plan_file: str | None = None,
    mapped: Mapping[str, Iterable[str]] | None = None,
) -> ImpactReport:
    """What *changes* would invalidate. *outputs* are the nodes' outputs expanded to files
    (the patterns as written match a diff without them), *events* give evidence subjects,
    *state* evidence ids and claims, *commits* the commit that last changed each path; the
    paths in *ignore* (the store's files), and those under an entry ending in ``/`` (the cache
    folder), are left out. *edits* are the plan edits of
    each node (:func:`~pytest_plangraph.plan.edits.plan_edits`) made in *plan_file*; *mapped*
    the test files each node's evidence ran (``details.tests`` of its latest records)."""
    with collector_paused():  # many small acyclic objects: collections would only rescan them
        topology = Topology.of(graph)
        subjects = latest_subjects(graph, events)
        index = PathIndex.of(graph, outputs or {}, subjects, topology, mapped)
        folders = tuple(p for p in ignore if p.endswith("/"))
        kept = [c for c in changes if c.path not in ignore and not c.path.startswith(folders)]
        changed = [_changed(index, c, (commits or {}).get(c.path)) for c in kept]
        direct = _direct(changed)
        if edits:
            changed = _with_edits(changed, edits, plan_file, (commits or {}), direct)
        walk = Walk(topology, direct, _flowing(changed, edits))
        affected = [
            n for n in walk.order if graph.nodes[n].acceptance and not _cancelled(graph, n, state)
        ]
        invalidated = [
            Invalidated(n, _evidence_ids(state, n, stale_only=False), *walk.reasons(n))
            for n in affected
        ]
        said = [*notes, *(c.note for c in changes if c.note)]  # submodules not looked into
        return _report(graph, changed, invalidated, state, said)


def evidence_impact(
    graph: Graph,
    observed: Sequence[Observed],
    state: PlanState,
    *,
    outputs: Mapping[str, Sequence[str]] | None = None,
    events: Sequence[LoggedEvent] = (),
    commits: Mapping[str, str] | None = None,
    notes: Sequence[str] = (),
    mapped: Mapping[str, Iterable[str]] | None = None,
) -> ImpactReport:
    """What the recorded evidence says: *observed* subject changes (see
    :func:`observed_changes`) explain the stale criteria of *state*; *mapped* as for
    :func:`diff_impact`."""
    with collector_paused():  # as in diff_impact: many small objects, no cycles
        topology = Topology.of(graph)
        subjects = latest_subjects(graph, events)
        index = PathIndex.of(graph, outputs or {}, subjects, topology, mapped)
        changed = [
            _changed(index, o.change, (commits or {}).get(o.change.path), o.old, o.new)
            for o in observed
        ]
        walk = Walk(topology, _direct(changed), _flowing(changed))
        invalidated = []
        for node_id, node_state in state.nodes.items():
            stale = [c for c in node_state.criteria if c.state == "stale"]
            if not stale or _cancelled(graph, node_id, state):
                continue
            reasons, paths = walk.reasons(node_id) if node_id in walk.reached else ((), ())
            extra = _state_reasons(stale, skip_artifacts=bool(reasons))
            evidence = _evidence_ids(state, node_id, stale_only=True)
            invalidated.append(Invalidated(node_id, evidence, (*reasons, *extra), paths))
        return _report(graph, changed, invalidated, state, notes)


def observed_changes(
    graph: Graph,
    events: Sequence[Event],
    files: Mapping[str, str | None],
    outputs: Mapping[str, Sequence[str]] | None = None,
    expected: Callable[[str, str], Iterable[str]] | None = None,
) -> list[Observed]:
    """Subjects of the latest evidence of each criterion whose current sha256 (in *files*)
    differs from the recorded one, sorted by path; *since* is that evidence's commit, which
    only whole records hold (the light log's rows do not: :func:`latest_evidence` of the log
    tells which events to read whole). With *outputs* (each node's outputs expanded now), a
    file of a node's outputs that its evidence does not name is ``added``: every record names
    the node's output files that existed when it was made. With *expected* (node and
    criterion → the files its ``tests:`` globs find now), such a file its evidence does not
    name is ``added`` too: a test file the evidence did not run."""
    found: dict[str, Observed] = {}
    for (node_id, criterion_id), event in latest_evidence(graph, events).items():
        payload = event.payload
        commit = (payload.get("git") or {}).get("commit")
        subjects = payload.get("subjects") or {}
        for path, old in subjects.items():
            new = files.get(path)
            if old == ABSENT:  # bound absent: a change once a file is there
                if new is not None and new != ABSENT and path not in found:
                    found[path] = Observed(Change(path, "added"), None, new, commit)
            elif new != old and path not in found:
                change = Change(path, "deleted") if new is None else Change(path, "modified")
                found[path] = Observed(change, old, new, commit)
        added = list((outputs or {}).get(node_id, ()))
        if expected is not None:
            added.extend(expected(node_id, criterion_id))
        for path in added:
            new = files.get(path)
            if path not in subjects and new is not None and path not in found:
                found[path] = Observed(Change(path, "added"), None, new, commit)
    return [found[p] for p in sorted(found)]


def latest_subjects(graph: Graph, events: Sequence[LoggedEvent]) -> dict[str, set[str]]:
    """The subject paths of each node's latest evidence per criterion."""
    subjects: dict[str, set[str]] = {}
    for (node_id, _), event in latest_evidence(graph, events).items():
        subjects.setdefault(node_id, set()).update(event.payload.get("subjects") or {})
    return subjects


def latest_evidence(
    graph: Graph, events: Sequence[LoggedEvent]
) -> dict[tuple[str, str], LoggedEvent]:
    """The latest evidence event of each (node, criterion) of a node of the plan."""
    latest: dict[tuple[str, str], LoggedEvent] = {}
    for event in events:
        if event.kind != "evidence":
            continue
        node_id = event.node or str(event.payload.get("node", ""))
        if node_id in graph.nodes:
            latest[(node_id, event.criterion or str(event.payload.get("criterion", "")))] = event
    return latest


# --- paths to nodes --------------------------------------------------------------------------


def _changed(
    index: PathIndex,
    change: Change,
    commit: str | None,
    old: str | None = None,
    new: str | None = None,
) -> ChangedPath:
    paths = (change.path,) if change.old_path is None else (change.path, change.old_path)
    reached = index.reach(*paths, below=change.subtree)
    flows = tuple(n for n, moves in reached.items() if moves)
    return ChangedPath(
        change.path, change.change, tuple(reached), change.old_path, commit, old, new, flows
    )


def _flowing(
    changed: Sequence[ChangedPath], edits: Mapping[str, Sequence[PlanEdit]] | None = None
) -> set[str]:
    """The directly reached nodes a change goes downstream from: those whose input digest a
    changed path moves, and the nodes edited in the plan."""
    return {n for entry in changed for n in entry.flows} | set(edits or ())


def _direct(changed: Sequence[ChangedPath]) -> dict[str, list[tuple[str, str]]]:
    """Node → (changed path, its description) for each path that reaches it directly."""
    direct: dict[str, list[tuple[str, str]]] = {}
    for entry in changed:
        described = (entry.path, describe(entry))
        for node_id in entry.nodes:
            direct.setdefault(node_id, []).append(described)
    return direct


def _with_edits(
    changed: list[ChangedPath],
    edits: Mapping[str, Sequence[PlanEdit]],
    plan_file: str | None,
    commits: Mapping[str, str],
    direct: dict[str, list[tuple[str, str]]],
) -> list[ChangedPath]:
    """Add the plan edits to *direct* (in place) and the edited nodes to the plan file's
    entry in *changed* (made when the diff lacks it)."""
    where = plan_file or "the plan"
    commit = commits.get(where)
    detail = (where, f"commit {commit[:7]}" if commit else None)
    for node_id, node_edits in edits.items():
        texts = [(where, edit.describe(*detail)) for edit in node_edits]
        direct.setdefault(node_id, []).extend(texts)
    found = [c for c in changed if c.path == where]
    entry = found[0] if found else ChangedPath(where, "modified", ())
    nodes = tuple(dict.fromkeys([*entry.nodes, *edits]))
    updated = ChangedPath(where, entry.change, nodes, entry.old_path, entry.commit, flows=nodes)
    if found:
        return [updated if c is entry else c for c in changed]
    return sorted([*changed, updated], key=lambda c: c.path)


def describe(changed: ChangedPath) -> str:
    """``ARTIFACT_CHANGED path (details)`` or ``ARTIFACT_DELETED path (details)``."""
    code = "ARTIFACT_DELETED" if changed.change == "deleted" else "ARTIFACT_CHANGED"
    details = []
    if changed.change == "renamed":
        details.append(f"renamed from {changed.old_path}")
    elif changed.change in ("added", "untracked"):
        details.append(changed.change)
    if changed.commit:
        details.append(f"commit {changed.commit[:7]}")
    return f"{code} {changed.path}" + (f" ({', '.join(details)})" if details else "")


# --- the report ------------------------------------------------------------------------------


def _report(
    graph: Graph,
    changed: Sequence[ChangedPath],
    invalidated: Sequence[Invalidated],
    state: PlanState | None,
    notes: Sequence[str],
) -> ImpactReport:
    gone = {i.node for i in invalidated}
    return ImpactReport(
        tuple(changed),
        tuple(invalidated),
        tuple(_reviews(graph, invalidated, gone)),
        tuple(_blocked(graph, gone, state)),
        tuple(notes),
    )


def _reviews(graph: Graph, invalidated: Sequence[Invalidated], gone: set[str]) -> list[Notice]:
    """Targets of weak and ``related`` edges out of invalidated nodes (related: both ways)."""
    notices: dict[str, Notice] = {}
    for entry in invalidated:
        source = entry.node
        for other, edge in _neighbours(graph, source):
            # the cheap test first: most edges out of an invalidated node lead to another one
            if other in gone or other in notices or other == source:
                continue
            if edge.status != "active" or edge.propagates or edge.type == "conflicts":
                continue
            kind = f"{edge.strength} {edge.type}" if edge.type in PROPAGATING_EDGES else "related"
            cause = f" ({entry.reasons[0]})" if entry.reasons else ""
            reason = f"REVIEW_RECOMMENDED {kind} edge with {source}, which is invalidated{cause}"
            notices[other] = Notice(other, reason)
    return [notices[n] for n in graph.nodes if n in notices]


def _neighbours(graph: Graph, node_id: str) -> Iterator[tuple[str, Edge]]:
    """Targets of the edges out of *node_id*, then sources of ``related`` edges into it."""
    for edge in graph.outgoing.get(node_id, ()):
        yield edge.to, edge
    for edge in graph.incoming.get(node_id, ()):
        if edge.type == "related":
            yield edge.from_, edge


def _blocked(graph: Graph, gone: set[str], state: PlanState | None) -> list[Notice]:
    """Claimed nodes, not invalidated themselves, that wait on an invalidated strong
    prerequisite or (objectives and milestones) an invalidated child."""
    if state is None:
        return []
    blocked: list[Notice] = []
    for node_id, node_state in state.nodes.items():
        if not node_state.claimed or node_id in gone:
            continue
        upstream = [p for p in graph.prerequisites(node_id) if p in gone]
        children = [c for c in graph.descendants(node_id) if c in gone]
        if upstream:
            blocked.append(Notice(node_id, f"PREREQUISITE_INVALIDATED {', '.join(upstream)}"))
        elif children:
            blocked.append(Notice(node_id, f"CHILD_INVALIDATED {', '.join(children)}"))
    return blocked


def _cancelled(graph: Graph, node_id: str, state: PlanState | None) -> bool:
    """A cancelled node needs no evidence, so nothing of it can be invalidated."""
    node = state.nodes.get(node_id) if state is not None else None
    return graph.nodes[node_id].cancelled or (node is not None and node.status == "cancelled")


def _evidence_ids(state: PlanState | None, node_id: str, *, stale_only: bool) -> tuple[str, ...]:
    if state is None or node_id not in state.nodes:
        return ()
    return tuple(
        c.evidence
        for c in state.nodes[node_id].criteria
        if c.evidence and (c.state == "stale" or not stale_only)
    )


def _state_reasons(stale: Sequence[CriterionState], *, skip_artifacts: bool) -> list[str]:
    """Reasons of stale criteria that the changed paths do not explain (a changed criterion,
    an input that is not a subject), as ``CODE criterion: detail``."""
    covered = {"ARTIFACT_CHANGED", "ARTIFACT_DELETED", "UPSTREAM_CHANGED"}
    reasons: list[str] = []
    for criterion in stale:
        for reason in criterion.reasons:
            if skip_artifacts and reason.code in covered:
                continue
            detail = reason.data.get("path") or reason.data.get("node") or ""
            text = f"{reason.code} {criterion.id}" + (f": {detail}" if detail else "")
            reasons.append(text)
    return list(dict.fromkeys(reasons))
