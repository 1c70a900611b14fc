"""Evidence validity and the completion gate (DESIGN §4, §5), pure.

* :func:`validity` — whether one evidence record still holds, with the reason codes of §4.
* :class:`Completion` — which nodes pass. For every node it counts what still stands between it
  and completion (required criteria without a valid verdict, a cancel, strong prerequisites
  and — for objectives and milestones — children that do not pass, except those cancelled in
  the plan). A node passes when its count is zero; a changed verdict adjusts the counts along
  the graph, so replaying a log costs the changes it makes, not a full derivation per event.
  Only a cancel in the plan file (a reviewed change) settles a child for its parent; a
  ``cancel`` event stops the node itself from passing and leaves its parent waiting.
* :func:`final_completion` adds the conflicts rule: a node is completed when it passes while no
  conflicts-edge partner passes (without that rule), and its prerequisites and counted children
  are completed. Two conflicting nodes that both pass block each other — a contradiction a
  person resolves by cancelling one; deterministic, and it never recurses.
* :func:`replay_claims` judges each claim by the whole gate as it stood when the claim was
  made, keeping both layers current event by event (for the retry budget).
* :func:`gate` — the decision returned to a claim.

Snapshots, input digests and the plan's links live in :mod:`pytest_plangraph.judge.inputs` and are
re-exported here.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from typing import Any, Literal, NamedTuple

from ..errors import StoreTamperedError, UsageError, quoted
from ..plan.evidence import ABSENT, Evidence
from ..plan.graph import Graph
from ..plan.model import LoggedEvent
from ..plan.paths import COLLECT
from ..values import dataclass
from ..vcs.quotes import quoted_reference
from .inputs import Links, Snapshot
from .states import CriterionStatus, NodeState, PlanState, Reason
from .subjects import subjects_hold

__all__ = [
    "CHILD_CODES",
    "Completion",
    "GateDecision",
    "Tick",
    "child_reasons",
    "final_completion",
    "gate",
    "holds",
    "judge",
    "replay_claims",
    "upstream_reason",
    "validity",
]


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
) -> tuple[CriterionStatus, tuple[Reason, ...]]:
    """:func:`holds`, with the reasons when it does not; *culprits* names the prerequisites
    that changed (asked only when the input digest differs)."""
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
        reasons.extend(upstream_reason(p) for p in culprits())
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


# --- the gate ---------------------------------------------------------------------------------


class Completion:
    """Which nodes pass, counted and kept current as verdicts change (see the module text).

    ``flipped`` collects every node whose ``done`` changed, for whoever mirrors it.
    """

    def __init__(
        self, links: Links, required: Mapping[str, Iterable[str]], settled: Iterable[str]
    ) -> None:
        """*settled* are the nodes cancelled in the plan: their parents do not wait for them.
        Cancels recorded as events come through :meth:`cancel`."""
        self._links = links
        self.settled = frozenset(settled)
        self.cancelled = set(self.settled)
        self.exhausted: set[str] = set()
        self.held: set[str] = set()
        self._required = {n: frozenset(required.get(n, ())) for n in links.prerequisites}
        self._missing = {n: set(ids) for n, ids in self._required.items()}
        self._count = {
            n: len(self._missing[n]) + (n in self.cancelled) + len(prerequisites)
            for n, prerequisites in links.prerequisites.items()
        }
        for child, parent in links.parent.items():
            self._count[parent] += child not in self.settled
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
        """Cancel *node_id* by an event: it never passes, and its parent (which a cancel
        event never settles) goes on waiting for it."""
        if node_id in self.cancelled:
            return
        self.cancelled.add(node_id)
        self._adjust(node_id, 1)

    def exhaust(self, node_id: str, spent: bool) -> None:
        """Mark whether *node_id*'s retry budget is spent: while it is, the node never passes
        whatever its evidence (DESIGN §5), so its dependents and its parent wait for it."""
        if spent == (node_id in self.exhausted):
            return
        if spent:
            self.exhausted.add(node_id)
        else:
            self.exhausted.discard(node_id)
        self._adjust(node_id, 1 if spent else -1)

    def hold(self, node_id: str, held: bool) -> None:
        """Mark whether *node_id* is held for a person (its replan rounds are spent and a
        further patch was refused, ``REPLAN_BUDGET_EXHAUSTED``): while it is, the node never
        passes whatever its evidence, as with a spent retry budget."""
        if held == (node_id in self.held):
            return
        if held:
            self.held.add(node_id)
        else:
            self.held.discard(node_id)
        self._adjust(node_id, 1 if held else -1)

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
            if parent is not None and current not in self.settled:
                stack.append((parent, step))


def final_completion(links: Links, raw: Completion) -> Completion:
    """Completion under the conflicts rule too: a node is completed when it passes *raw*
    unopposed and every strong prerequisite and counted child is completed."""
    final = Completion(links, dict.fromkeys(links.prerequisites, ("unopposed",)), raw.settled)
    for node_id in raw.cancelled - raw.settled:
        final.cancel(node_id)
    for node_id in links.prerequisites:
        final.set_ok(node_id, "unopposed", raw.unopposed(node_id))
    raw.flipped.clear()
    return final


class Tick(NamedTuple):
    """One step of a claim replay: a criterion verdict, a cancel, a retry grant, a claim to
    judge, a claim whose gate verdict was recorded with it (``verdict``, ``ok`` = passed), or
    a node held for a person (``hold``: a patch refused with ``REPLAN_BUDGET_EXHAUSTED``)."""

    kind: Literal["criterion", "cancel", "retry", "claim", "verdict", "hold"]
    node: str
    criterion: str = ""
    ok: bool = False


def replay_claims(
    links: Links, raw: Completion, ticks: Iterable[Tick], budgets: Mapping[str, int]
) -> dict[str, int]:
    """Apply *ticks* in order to *raw*; return refused claims since the last retry grant.

    A claim is refused when the node is not completed at that moment — the whole gate,
    conflicts rule included (DESIGN §5), and a spent retry budget (more refusals than the
    node's ``max_retry`` in *budgets*) keeps a node from completing until a retry grant — or
    when the verdict recorded with it says so. When every claim carries its verdict, *raw* is
    left as it is.
    """
    ticks = list(ticks)
    refused: dict[str, int] = {}
    if not any(tick.kind == "claim" for tick in ticks):
        # every claim carries its verdict: nothing needs the gate as it stood back then
        for tick in ticks:
            if tick.kind == "retry":
                refused[tick.node] = 0
            elif tick.kind == "verdict":
                refused[tick.node] = refused.get(tick.node, 0) + (not tick.ok)
        return refused
    final = final_completion(links, raw)
    for tick in ticks:
        if tick.kind == "retry":
            refused[tick.node] = 0
            raw.exhaust(tick.node, False)
            raw.hold(tick.node, False)
        elif tick.kind == "hold":
            raw.hold(tick.node, True)
        elif tick.kind in ("claim", "verdict"):
            passed = tick.ok if tick.kind == "verdict" else final.done[tick.node]
            count = refused[tick.node] = refused.get(tick.node, 0) + (not passed)
            raw.exhaust(tick.node, count > budgets[tick.node])
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


CHILD_CODES = frozenset({"CHILD_NOT_COMPLETED", "CHILD_CANCELLED_BY_EVENT"})
"""Codes of an objective's or milestone's children that keep it from completing."""


def child_reasons(
    children: Iterable[str],
    completed: Collection[str],
    completion: Completion,
    cancels: Mapping[str, LoggedEvent],
) -> list[Reason]:
    """Why *children* keep their parent from completing: ``CHILD_NOT_COMPLETED``, or
    ``CHILD_CANCELLED_BY_EVENT`` naming who cancelled (from *cancels*, the first cancel
    event of each node). A child cancelled in the plan file (a
    reviewed change) settles its parent; a ``cancel`` event is anyone's word, so it never
    does (DESIGN §5)."""
    reasons: list[Reason] = []
    for child in children:
        if child in completed or child in completion.settled:
            continue
        event = cancels.get(child) if child in completion.cancelled else None
        if event is None:
            message = f"child {child} is not completed"
            reasons.append(Reason("CHILD_NOT_COMPLETED", message, {"node": child}))
            continue
        message = (
            f"child {child} was cancelled by {event.by} with a cancel event, which never "
            "settles a parent; cancel it in the plan file (`cancelled: true`) or complete it"
        )
        data = {"node": child, "by": event.by}
        reasons.append(Reason("CHILD_CANCELLED_BY_EVENT", message, data))
    return reasons


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
        raise UsageError(f"unknown node {quoted(node_id)}; the plan has: {known}")
    return decide(node_state)


def decide(node_state: NodeState) -> GateDecision:
    """The gate's decision for a node in the derived state *node_state*."""
    used = [c.evidence for c in node_state.criteria if c.state == "valid" and c.evidence]
    return GateDecision(
        node=node_state.id,
        verdict="PASSED" if node_state.status == "completed" else "FAILED",
        status=node_state.status,
        reasons=node_state.reasons,
        evidence=used,
    )


def refused_on_tampering(node: str, exc: StoreTamperedError) -> GateDecision:
    """The refusal of a claim on a store whose events do not match their ids or chain: no
    status was derived and no claim was recorded."""
    data = {"seq": exc.seq, "event": exc.event_id}
    reason = Reason(exc.reason, str(exc).removeprefix(f"{exc.reason}: "), data)
    return GateDecision(node, "FAILED", "blocked", (reason,), [])
