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
from typing import TYPE_CHECKING

from ..memory import collector_paused
from ..plan.evidence import ABSENT
from ..plan.graph import Graph
from ..plan.model import PROPAGATING_EDGES, Edge, Event, LoggedEvent
from ..values import dataclass
from ..vcs.changes import Change
from .basis import (
    ChangedPath,
    DiffBasis,
    ImpactReport,
    Invalidated,
    Notice,
    changed_path,
    describe,
    direct_paths,
    flowing,
)
from .walk import Topology, Walk, index_of

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
    "diff_basis",
    "diff_impact",
    "evidence_impact",
    "latest_subjects",
    "observed_changes",
]


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
    the test files each node's evidence ran (``details.tests`` of its latest records). The
    report carries the :class:`~.basis.DiffBasis` it was made from."""
    with collector_paused():  # many small acyclic objects: collections would only rescan them
        basis = diff_basis(
            graph,
            outputs=outputs,
            events=events,
            state=state,
            ignore=ignore,
            plan_file=plan_file,
            mapped=mapped,
        )
        return basis.report(changes, commits=commits, notes=notes, edits=edits)


def diff_basis(
    graph: Graph,
    *,
    outputs: Mapping[str, Sequence[str]] | None = None,
    events: Sequence[LoggedEvent] = (),
    state: PlanState | None = None,
    ignore: Sequence[str] = (),
    plan_file: str | None = None,
    mapped: Mapping[str, Iterable[str]] | None = None,
) -> DiffBasis:
    """What the report of any diff over *graph* and the store's *events* and *state* is made
    of besides the diff (the arguments as for :func:`diff_impact`)."""
    topology = Topology.of(graph)
    subjects = latest_subjects(graph, events)
    index = index_of(graph, outputs or {}, subjects, topology, mapped)
    nodes = graph.nodes
    judged = frozenset(n for n, node in nodes.items() if node.acceptance)
    judged = frozenset(n for n in judged if not _cancelled(graph, n, state))
    evidence = {}
    reviews: dict[str, list[tuple[str, str]]] = {}
    for node_id in nodes:
        ids = _evidence_ids(state, node_id, stale_only=False)
        if ids:
            evidence[node_id] = ids
        pairs = [
            (other, _review_kind(edge))
            for other, edge in _neighbours(graph, node_id)
            if other != node_id
            and edge.status == "active"
            and not edge.propagates
            and edge.type != "conflicts"
        ]
        if pairs:
            reviews[node_id] = pairs
    claimed: list[tuple[str, list[str], list[str]]] = []
    if state is not None:
        claimed = [
            (n, list(graph.prerequisites(n)), list(graph.descendants(n)))
            for n, node_state in state.nodes.items()
            if node_state.claimed
        ]
    return DiffBasis(
        topology, index, judged, evidence, reviews, list(nodes), claimed, ignore, plan_file
    )


def _review_kind(edge: Edge) -> str:
    """How a review notice names *edge*: ``weak requires``, ``related``..."""
    return f"{edge.strength} {edge.type}" if edge.type in PROPAGATING_EDGES else "related"


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
        basis = diff_basis(graph, outputs=outputs, events=events, state=state, mapped=mapped)
        changed = [
            changed_path(basis.index, o.change, (commits or {}).get(o.change.path), o.old, o.new)
            for o in observed
        ]
        walk = Walk(basis.topology, direct_paths(changed), flowing(changed))
        invalidated = []
        for node_id, node_state in state.nodes.items():
            stale = [c for c in node_state.criteria if c.state == "stale"]
            if not stale or _cancelled(graph, node_id, state):
                continue
            reasons, paths = walk.reasons(node_id) if node_id in walk.reached else ((), ())
            extra = _state_reasons(stale, skip_artifacts=bool(reasons))
            evidence = _evidence_ids(state, node_id, stale_only=True)
            invalidated.append(Invalidated(node_id, evidence, (*reasons, *extra), paths))
        gone = {i.node for i in invalidated}
        return ImpactReport(
            tuple(changed),
            tuple(invalidated),
            tuple(basis.review_notices(invalidated, gone)),
            tuple(basis.blocked_notices(gone)),
            tuple(notes),
        )


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


def _neighbours(graph: Graph, node_id: str) -> Iterator[tuple[str, Edge]]:
    """Targets of the edges out of *node_id*, then sources of ``related`` edges into it."""
    for edge in graph.outgoing.get(node_id, ()):
        yield edge.to, edge
    for edge in graph.incoming.get(node_id, ()):
        if edge.type == "related":
            yield edge.from_, edge


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
