"""Whether one evidence record still holds (DESIGN §4): :func:`validity` and :func:`holds`
with the reason codes, :func:`judge` for a criterion's latest record against the files now,
and :func:`upstream_reason`. Pure; :mod:`pytest_plangraph.judge.gate` re-exports them."""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any

from ..plan.evidence import ABSENT, Evidence
from ..plan.graph import Graph
from ..plan.paths import COLLECT
from ..vcs.quotes import quoted_reference
from .inputs import Snapshot
from .states import CriterionStatus, Reason
from .subjects import subjects_hold

__all__ = ["holds", "judge", "upstream_reason", "validity"]


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
    The files the criterion's ``tests:`` globs find now (:meth:`Snapshot.glob_files`) must
    be among the record's subjects.
    """
    test = changed_upstream or (lambda _node: False)
    node = graph.nodes.get(evidence.node)
    criterion = node.criterion(evidence.criterion) if node is not None else None
    return judge(
        {name: getattr(evidence, name) for name in _RECORD_FIELDS},
        criterion_digest=current_criterion_digest,
        input_digest=current_input_digest,
        files=snapshot.files,
        culprits=lambda: [p for p in graph.prerequisites(evidence.node) if test(p)],
        expected=snapshot.glob_files(criterion.verifier) if criterion is not None else (),
    )


def holds(
    record: Mapping[str, Any],
    *,
    criterion_digest: str,
    input_digest: str,
    files: Mapping[str, str | None],
    expected: Collection[str] = (),
    missing_as_absent: Callable[[], Mapping[str, str | None]] | None = None,
) -> bool:
    """The validity rule of DESIGN §4 for an evidence record in its JSON form: passed, same
    criterion digest, same input digest, every subject's current sha256 as recorded (a
    subject recorded :data:`~pytest_plangraph.plan.evidence.ABSENT`: still no file), and
    every path of *expected* (the files the criterion's ``tests:`` globs find now) among
    its subjects. *missing_as_absent* gives *files* with each missing file (None) as
    ``ABSENT``, made once for many records (:func:`~.subjects.missing_as_absent`)."""
    if (
        record.get("input_digest") != input_digest
        or record.get("outcome") != "passed"
        or record.get("criterion_digest") != criterion_digest
    ):
        return False
    subjects = record.get("subjects") or {}
    if expected and any(path not in subjects for path in expected):
        return False
    return subjects_hold(subjects, files, missing_as_absent)


def judge(
    record: Mapping[str, Any],
    *,
    criterion_digest: str,
    input_digest: str,
    files: Mapping[str, str | None],
    culprits: Callable[[], Sequence[str]],
    expected: Collection[str] = (),
    missing_as_absent: Callable[[], Mapping[str, str | None]] | None = None,
    upstream: Callable[[str], Reason] | None = None,
) -> tuple[CriterionStatus, tuple[Reason, ...]]:
    """:func:`holds`, with the reasons when it does not; *culprits* names the prerequisites
    that changed (asked only when the input digest differs), each told by *upstream*
    (:func:`upstream_reason`, or one a derivation makes once per prerequisite)."""
    if holds(
        record,
        criterion_digest=criterion_digest,
        input_digest=input_digest,
        files=files,
        expected=expected,
        missing_as_absent=missing_as_absent,
    ):
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
    subjects = record.get("subjects") or {}
    changed = _subject_reasons(subjects, files)
    changed.extend(_unbound_reasons(subjects, files, expected))
    # what a folder holds: told when no file the change there made says it already; which
    # of its files quote the reference, when the folder's files are the same
    specific = [r for r in changed if "folder" not in r.data]
    walks = [r for r in changed if "quotes" not in r.data]
    reasons.extend(specific or walks or changed)
    old = record.get("input_digest")
    if old != input_digest:
        reasons.extend(map(upstream or upstream_reason, culprits()))
        if not reasons:
            message = "the node's inputs changed since the evidence was recorded"
            reasons.append(Reason("INPUT_CHANGED", message, {"old": old, "new": input_digest}))
    return "stale", tuple(reasons)


def _subject_reasons(subjects: Mapping[str, str], files: Mapping[str, str | None]) -> list[Reason]:
    reasons: list[Reason] = []
    for path, old in sorted(subjects.items()):
        new = files.get(path)
        if old == ABSENT:
            if new is not None and new != ABSENT:
                message = f"{path} appeared since the evidence was recorded (it was absent then)"
                reasons.append(
                    Reason("ARTIFACT_CHANGED", message, {"path": path, "old": old, "new": new})
                )
        elif new is None:
            reasons.append(
                Reason("ARTIFACT_DELETED", f"{path} is missing", {"path": path, "old": old})
            )
        elif new != old and COLLECT in path:  # what pytest could collect under a folder
            data = {"path": path, "folder": path.partition(COLLECT)[0], "old": old, "new": new}
            quoted = quoted_reference(path)
            if quoted is not None:  # which of its test files quote the criterion's reference
                data["quotes"] = quoted[1]
            message = _QUOTED if quoted is not None else _COLLECTED
            reasons.append(Reason("ARTIFACT_CHANGED", message.format(**data), data))
        elif new != old:
            reasons.append(
                Reason(
                    "ARTIFACT_CHANGED",
                    f"{path} changed since the evidence was recorded",
                    {"path": path, "old": old, "new": new},
                )
            )
    return reasons


_COLLECTED = (
    "the files pytest could collect under {folder}/ changed since the evidence was recorded "
    "(a conftest.py or test file added, moved or removed there: it did not run them)"
)

_QUOTED = (
    "the test files under {folder}/ that quote {quotes} changed since the evidence was "
    "recorded (a criterion marker for it added or removed there: tests it did not run)"
)


def _unbound_reasons(
    subjects: Mapping[str, str], files: Mapping[str, str | None], expected: Collection[str]
) -> list[Reason]:
    """``ARTIFACT_CHANGED`` (old ``absent``) for each file a ``tests:`` glob of the criterion
    finds now that the evidence did not bind: a test file added since, which it did not run."""
    reasons: list[Reason] = []
    for path in sorted(p for p in expected if p not in subjects):
        message = (
            f"{path} appeared where a tests: glob of the criterion matches since the evidence "
            "was recorded (the evidence did not run its tests)"
        )
        data = {"path": path, "old": ABSENT, "new": files.get(path)}
        reasons.append(Reason("ARTIFACT_CHANGED", message, data))
    return reasons


def upstream_reason(node_id: str) -> Reason:
    """``UPSTREAM_CHANGED`` naming *node_id*."""
    return Reason(
        "UPSTREAM_CHANGED", f"upstream node {node_id} changed since then", {"node": node_id}
    )
