"""What a derivation indexes before judging (pure): the plan's context and the event log.

* :class:`Context` — everything that does not depend on events: topological order, links,
  criteria with their digests, and the current input digest of every node.
* :class:`Ledger` — what the log says about this plan (from a
  :class:`~pytest_plangraph.judge.logfold.LogFold`): the latest evidence per criterion, the latest
  approval or revoke, cancels, claims and refusals, or the ticks a claim replay walks through.

:mod:`pytest_plangraph.judge.derive` turns both into statuses.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..plan.graph import Graph
from ..plan.model import Criterion, LoggedEvent
from ..values import dataclass, field
from .gate import holds, judge
from .inputs import Links, Snapshot, criterion_digests, input_digests
from .logfold import LogFold, evidence_key, holds_for_person
from .states import CriterionStatus, Reason
from .subjects import missing_as_absent

if TYPE_CHECKING:
    from .ticks import Tick


@dataclass(frozen=True)
class Context:
    """What does not depend on events: the plan's criteria, links and input digests.

    ``held`` remembers verdicts of evidence payloads already judged (see :meth:`holds`).
    """

    graph: Graph
    snapshot: Snapshot
    order: list[str]
    links: Links
    criteria: dict[tuple[str, str], tuple[Criterion, str]]
    digests: dict[str, str]
    approvals: frozenset[tuple[str, str]]
    held: dict[tuple[Any, ...], bool] = field(default_factory=dict)
    views: dict[str, Mapping[str, str | None]] = field(default_factory=dict)
    """The snapshot's files with each missing file as ``ABSENT`` (:meth:`missing_as_absent`),
    made once, when a record first needs it."""

    @classmethod
    def of(cls, graph: Graph, snapshot: Snapshot, inputs: dict[str, str] | None = None) -> Context:
        """The context of *graph* with the file hashes of *snapshot* (and the input digests
        *inputs*, when the caller computed them for that snapshot)."""
        order = graph.topological_order()
        digests = criterion_digests(graph)
        criteria: dict[tuple[str, str], tuple[Criterion, str]] = {}
        for node_id, node in graph.nodes.items():
            for criterion in node.acceptance:
                key = (node_id, criterion.id)
                criteria.setdefault(key, (criterion, digests[key]))
        links = Links.of(graph)
        if inputs is None:
            inputs = input_digests(graph, snapshot, criteria=digests, order=order, links=links)
        approvals = {key for key, (c, _) in criteria.items() if c.verifier.type == "approval"}
        return cls(graph, snapshot, order, links, criteria, inputs, frozenset(approvals))

    def holds(self, key: tuple[str, str], record: Mapping[str, Any]) -> bool:
        """Whether an evidence payload of criterion *key* is valid now (remembered per verdict
        fields: the store's log shares equal subjects between events, so a criterion verified
        again and again with nothing changed is judged once)."""
        subjects = record.get("subjects")
        memo = (
            key,
            record.get("outcome"),
            record.get("criterion_digest"),
            record.get("input_digest"),
            id(subjects),
        )
        found = self.held.get(memo)
        if found is None:
            found = self.held[memo] = holds(
                record,
                criterion_digest=self.criteria[key][1],
                input_digest=self.digests[key[0]],
                files=self.snapshot.files,
                expected=self.glob_files(key),
                missing_as_absent=self.missing_as_absent,
            )
        return found

    def holds_now(self, key: tuple[str, str], record: Mapping[str, Any]) -> bool:
        """Whether an evidence payload of criterion *key* is valid now: :func:`holds`, not
        remembered (a criterion's latest record is judged once a derivation)."""
        return holds(
            record,
            criterion_digest=self.criteria[key][1],
            input_digest=self.digests[key[0]],
            files=self.snapshot.files,
            expected=self.glob_files(key),
            missing_as_absent=self.missing_as_absent,
        )

    def missing_as_absent(self) -> Mapping[str, str | None]:
        """The snapshot's files with each missing file as ``ABSENT``: made once per context,
        so that a record's subjects bound absent are checked in one comparison
        (:func:`~.gate.subjects_hold`)."""
        view = self.views.get("absent")
        if view is None:
            view = self.views["absent"] = missing_as_absent(self.snapshot.files)
        return view

    def glob_files(self, key: tuple[str, str]) -> list[str]:
        """The files the ``tests:`` globs of criterion *key* find now: its evidence must
        have bound them (:meth:`Snapshot.glob_files`)."""
        if not self.snapshot.globs:
            return []
        return self.snapshot.glob_files(self.criteria[key][0].verifier)

    def verdict(
        self,
        key: tuple[str, str],
        record: Mapping[str, Any],
        culprits: Callable[[], Sequence[str]],
        upstream: Callable[[str], Reason] | None = None,
    ) -> tuple[CriterionStatus, tuple[Reason, ...]]:
        """Judge an evidence payload of criterion *key* against the current plan and files
        (*upstream* tells each prerequisite that changed, see :func:`judge`)."""
        return judge(
            record,
            criterion_digest=self.criteria[key][1],
            input_digest=self.digests[key[0]],
            files=self.snapshot.files,
            culprits=culprits,
            expected=self.glob_files(key),
            missing_as_absent=self.missing_as_absent,
            upstream=upstream,
        )


class Ledger:
    """What the events say about this plan: the latest verdicts, cancels, claims and refusals.

    Built from a :class:`~pytest_plangraph.judge.logfold.LogFold` (or from events, folded first) and
    kept to the plan's nodes and criteria. Only the latest evidence per criterion is judged
    later. ``refused`` counts the claims refused since each node's last retry grant; when a
    claim carries no verdict it is None and ``ticks`` holds the replay of the whole log.
    """

    def __init__(self, context: Context, events: Sequence[LoggedEvent] | LogFold) -> None:
        fold = events if isinstance(events, LogFold) else LogFold.of(events)
        nodes = context.graph.nodes
        self.fold = fold
        self.evidence: dict[tuple[str, str], tuple[int, Mapping[str, Any]]] = {
            key: (pos, event.payload)
            for key, (pos, event) in fold.evidence.items()
            if key in context.criteria and key not in context.approvals
        }
        self.approvals = {
            k: v
            for k, v in fold.approvals.items()
            if k in context.approvals and _for_role(v[1], context.criteria[k][0])
        }
        self.cancels = {n: e for n, e in fold.cancels.items() if n in nodes}
        self.claimed = {n for n in fold.claimed if n in nodes}
        self.held = {n: e for n, e in fold.held.items() if n in nodes}
        self.refused: dict[str, int] | None = None
        self.ticks: list[Tick] = []
        if not fold.unjudged:
            self.refused = {n: count for n, count in fold.refused.items() if n in nodes}
        elif fold.events is None:
            raise ValueError("claims without a verdict are judged by replaying every event")
        else:
            self.ticks = _replay_ticks(context, fold.events)

    def active(self) -> set[str]:
        """Nodes with evidence or an approval in force."""
        approved = {key[0] for key, (_, e) in self.approvals.items() if e.kind == "approval"}
        return {key[0] for key in self.evidence} | approved

    def on_record(self) -> dict[str, list[tuple[int, str]]]:
        """Per node, the input digests on record (evidence and approvals) in log order."""
        return self.fold.on_record


def _for_role(event: LoggedEvent, criterion: Criterion) -> bool:
    """Whether an approval was given for the role its criterion asks for: the criterion's
    ``role``, else ``approver`` (an approval given as another role does not count — with keys
    configured it was vouched for by a key trusted for that other role; a revoke withdraws
    whatever was in force)."""
    from ..plan.untrusted import DECISION_ROLE  # an approval's: not a run's of test criteria

    role = getattr(criterion.verifier, "role", None) or DECISION_ROLE
    return event.kind != "approval" or (event.payload.get("role") or DECISION_ROLE) == role


def _replay_ticks(context: Context, events: Sequence[LoggedEvent]) -> list[Tick]:
    """Every verdict, claim, cancel and retry grant of the plan's nodes in log order, up to the
    last claim or grant (nothing after it changes a refusal count): what a replay of the gate
    walks through when some claim carries no verdict."""
    from .ticks import Tick  # a replay: some claim carries no verdict

    ticks: list[Tick] = []
    nodes, criteria, approvals = context.graph.nodes, context.criteria, context.approvals
    for event in events:
        kind, node_id = event.kind, event.node or ""
        if kind == "evidence":
            key = evidence_key(event)
            if key in criteria and key not in approvals:
                ticks.append(Tick("criterion", key[0], key[1], context.holds(key, event.payload)))
        elif kind in ("approval", "revoke"):
            key = (node_id, event.criterion or "")
            if key in approvals:
                bound = event.payload.get("input_digest")
                ok = kind == "approval" and bound == context.digests[node_id]
                ticks.append(Tick("criterion", node_id, key[1], ok))
        elif node_id not in nodes or kind == "change":
            continue
        elif kind == "patch":
            if holds_for_person(event):
                ticks.append(Tick("hold", node_id))
        elif kind == "claim":
            verdict = _verdict_of(event)
            if verdict is None:
                ticks.append(Tick("claim", node_id))
            else:
                ticks.append(Tick("verdict", node_id, ok=verdict))
        elif kind == "cancel":
            ticks.append(Tick("cancel", node_id))
        else:
            ticks.append(Tick("retry", node_id))
    claims = [i for i, tick in enumerate(ticks) if tick.kind in _CLAIM_TICKS]
    del ticks[claims[-1] + 1 if claims else 0 :]
    return ticks


_CLAIM_TICKS = frozenset({"claim", "verdict", "retry"})


def _verdict_of(claim: LoggedEvent) -> bool | None:
    """The gate verdict recorded with a claim (True = passed), or None when it has none."""
    verdict = claim.payload.get("verdict")
    return verdict == "PASSED" if verdict in ("PASSED", "FAILED") else None
