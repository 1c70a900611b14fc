"""``plangraph verify``: run the verifiers that need no pytest and turn verdicts into evidence.

Every subject is hashed before the verifiers run and again after all of them finished; a subject
that changed in between voids that evidence (:func:`~pytest_plangraph.judge.records.voided`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from ..judge.records import changed_during_run, voided
from ..plan.evidence import Evidence
from ..plan.model import Criterion, Node
from ..vcs.environment import now, run_info
from . import runnable_criteria

if TYPE_CHECKING:
    from ..judge.inputs import Snapshot
    from ..judge.records import RecordMaker
    from ..plan.evidence import RunInfo
    from ..plan.graph import Graph
    from ..vcs.workspace import Workspace
    from . import Registry, VerifierResult


def run_verifiers(
    graph: Graph,
    registry: Registry,
    workspace: Workspace,
    snapshot: Snapshot,
    nodes: list[str] | None,
    *,
    started: str,
    maker: Callable[[RunInfo], RecordMaker],
) -> list[Evidence]:
    """Run the verifiers and return one evidence record per criterion (not yet recorded).
    *snapshot* was taken before they ran, at *started*; *maker* gives the record maker of the
    run once it has finished."""
    from ..progress import Progress  # `plangraph verify` alone runs verifiers here

    verdicts: list[tuple[Node, Criterion, VerifierResult, dict[str, str | None]]] = []
    chosen = runnable_criteria(graph, registry, nodes)
    with Progress("verify", len(chosen)) as progress:
        for node, criterion in chosen:
            progress.stage(f"running {node.id}/{criterion.id}")
            declared = registry.declared_subjects(criterion)
            before = {p: _current(workspace, snapshot, p) for p in declared}
            result = registry.run_safely(node, criterion, workspace)
            for path in result.subjects:
                before.setdefault(path, workspace.hash_file(path))
            verdicts.append((node, criterion, result, before))
            progress.step(f"{node.id}/{criterion.id} {result.outcome}")
    records = maker(run_info(started, now()))
    evidence = []
    for node, criterion, result, before in verdicts:
        after = {path: workspace.hash_file(path) for path in before}
        moved = changed_during_run(before, after)
        outcome: str = result.outcome
        reason, details = result.reason, dict(result.details)
        if result.message:
            details.setdefault("message", result.message)
        if moved:
            outcome, reason, details = voided(details, moved)
        evidence.append(
            records.make(
                node.id,
                criterion.id,
                outcome=outcome,
                reason=reason,
                details=details,
                subjects=before,
            )
        )
    return evidence


def _current(workspace: Workspace, snapshot: Snapshot, path: str) -> str | None:
    if path in snapshot.files:
        return snapshot.files[path]
    return workspace.hash_file(path)
