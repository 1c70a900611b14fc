"""``plangraph verify``: run the verifiers that need no pytest and turn verdicts into evidence.

Every subject is hashed before the verifiers run and again after all of them finished; a subject
that changed in between voids that evidence (``ARTIFACT_CHANGED_DURING_RUN``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..plan.model import Criterion, Evidence, Node

if TYPE_CHECKING:
    from ..api import PlanGraph
    from ..judge.derive import Snapshot
    from . import VerifierResult


def runnable_criteria(graph: PlanGraph, nodes: list[str] | None) -> list[tuple[Node, Criterion]]:
    """Criteria of *nodes* (all when None) whose verifier runs outside pytest, in plan order."""
    registry = graph.registry
    known = set(registry.names())
    chosen: list[tuple[Node, Criterion]] = []
    for node_id in graph.graph.topological_order():
        node = graph.graph.nodes[node_id]
        if (nodes is not None and node_id not in nodes) or node.cancelled:
            continue
        for criterion in node.acceptance:
            kind = criterion.verifier.type
            if kind in known and registry.runnable(kind):
                chosen.append((node, criterion))
    return chosen


def run_verifiers(graph: PlanGraph, nodes: list[str] | None, *, by: str) -> list[Evidence]:
    """Run the verifiers and return one evidence record per criterion (not yet recorded)."""
    from ..judge.derive import input_digests
    from ..vcs.environment import git_info, now, run_info

    started = now()
    snapshot = graph.snapshot()
    plan = graph.plan_ref()
    git = git_info(graph.root, graph.store_path)
    digests = input_digests(graph.graph, snapshot)
    verdicts: list[tuple[Node, Criterion, VerifierResult, dict[str, str | None]]] = []
    for node, criterion in runnable_criteria(graph, nodes):
        declared = graph.registry.declared_subjects(criterion)
        before = {p: _current(graph, snapshot, p) for p in declared}
        result = graph.registry.run_safely(node, criterion, graph.workspace)
        for path in result.subjects:
            before.setdefault(path, graph.workspace.hash_file(path))
        verdicts.append((node, criterion, result, before))
    run = run_info(started, now())
    evidence = []
    for node, criterion, result, before in verdicts:
        after = {path: graph.workspace.hash_file(path) for path in before}
        moved = sorted(p for p in before if before[p] != after[p])
        outcome, reason, details = result.outcome, result.reason, dict(result.details)
        if result.message:
            details.setdefault("message", result.message)
        if moved:
            outcome, reason = "error", "ARTIFACT_CHANGED_DURING_RUN"
            details["changed_during_run"] = moved
        evidence.append(
            graph.make_evidence(
                node.id,
                criterion.id,
                outcome=outcome,
                reason=reason,
                details=details,
                subjects=before,
                run=run,
                recorded_by=by,
                snapshot=snapshot,
                plan=plan,
                git=git,
                digests=digests,
            )
        )
    return evidence


def _current(graph: PlanGraph, snapshot: Snapshot, path: str) -> str | None:
    if path in snapshot.files:
        return snapshot.files[path]
    return graph.workspace.hash_file(path)
