"""What a derivation indexes before judging (pure): the plan's context and the event log.

* :class:`Context` — everything that does not depend on events: topological order, links,
  criteria with their digests, and the current input digest of every node.
* :class:`Ledger` — the events read once and indexed: the latest evidence per criterion, the
  latest approval or revoke, cancels, claims, and the ticks a claim replay walks through.

:mod:`pytest_plangraph.state` turns both into statuses.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .gate import CriterionStatus, Reason, Tick, holds, judge
from .graph import Graph
from .inputs import Links, LoggedEvent, Snapshot, criterion_digests, input_digests
from .model import Criterion


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

    @classmethod
    def of(cls, graph: Graph, snapshot: Snapshot) -> Context:
        """The context of *graph* with the file hashes of *snapshot*."""
        order = graph.topological_order()
        digests = criterion_digests(graph)
        criteria: dict[tuple[str, str], tuple[Criterion, str]] = {}
        for node_id, node in graph.nodes.items():
            for criterion in node.acceptance:
                key = (node_id, criterion.id)
                criteria.setdefault(key, (criterion, digests[key]))
        links = Links.of(graph)
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
            )
        return found

    def verdict(
        self,
        key: tuple[str, str],
        record: Mapping[str, Any],
        culprits: Callable[[], Sequence[str]],
    ) -> tuple[CriterionStatus, tuple[Reason, ...]]:
        """Judge an evidence payload of criterion *key* against the current plan and files."""
        return judge(
            record,
            criterion_digest=self.criteria[key][1],
            input_digest=self.digests[key[0]],
            files=self.snapshot.files,
            culprits=culprits,
        )


class Ledger:
    """What the events say, indexed: the latest verdicts, cancels, claims and replay ticks.

    The log is read once; only the latest evidence per criterion is parsed later.
    """

    def __init__(self, context: Context, events: Sequence[LoggedEvent]) -> None:
        self.events = events
        self.evidence: dict[tuple[str, str], tuple[int, Mapping[str, Any]]] = {}
        self.approvals: dict[tuple[str, str], tuple[int, LoggedEvent]] = {}
        self.cancels: dict[str, LoggedEvent] = {}
        self.claimed: set[str] = set()
        self.ticks: list[Tick] = []
        self._on_record: dict[str, list[tuple[int, str]]] | None = None
        self._read_all(context)

    def _read_all(self, context: Context) -> None:
        # Evidence is most of the log: its pass does as little as it can. Claims without a
        # recorded verdict are judged by replay, which needs every verdict on the way: only
        # then is each evidence record turned into a tick, in log order.
        others: list[tuple[int, Tick]] = []
        unjudged = False
        for pos, event in enumerate(self.events):
            if event.kind == "evidence":
                key = self._counted(context, event)
                if key is not None:
                    self.evidence[key] = (pos, event.payload)
                continue
            tick = self._read(context, pos, event)
            if tick is not None:
                others.append((pos, tick))
                unjudged = unjudged or tick.kind == "claim"
        if unjudged:
            judged = [
                (pos, Tick("criterion", key[0], key[1], context.holds(key, event.payload)))
                for pos, event in enumerate(self.events)
                if event.kind == "evidence" and (key := self._counted(context, event))
            ]
            self.ticks = [tick for _, tick in heapq.merge(judged, others, key=_first)]
        else:  # verdicts of criteria matter only to claims judged by replay
            self.ticks = [tick for _, tick in others if tick.kind != "criterion"]
        # nothing after the last claim or retry changes a refusal count
        claims = [i for i, tick in enumerate(self.ticks) if tick.kind in _CLAIM_TICKS]
        del self.ticks[claims[-1] + 1 if claims else 0 :]

    @staticmethod
    def _counted(context: Context, event: LoggedEvent) -> tuple[str, str] | None:
        """The (node, criterion) an evidence event is about, when the plan has such a
        criterion that evidence decides (approval criteria are decided by approvals)."""
        payload = event.payload
        key = (
            event.node or str(payload.get("node", "")),
            event.criterion or str(payload.get("criterion", "")),
        )
        return key if key in context.criteria and key not in context.approvals else None

    def _read(self, context: Context, pos: int, event: LoggedEvent) -> Tick | None:
        """Index one event other than evidence; return its replay tick, if any."""
        kind, node_id = event.kind, event.node or ""
        if kind in ("approval", "revoke"):
            key = (node_id, event.criterion or "")
            if key not in context.approvals:
                return None
            self.approvals[key] = (pos, event)
            bound = event.payload.get("input_digest")
            ok = kind == "approval" and bound == context.digests[node_id]
            return Tick("criterion", node_id, key[1], ok)
        if node_id not in context.graph.nodes or kind == "change":
            return None
        if kind == "claim":
            self.claimed.add(node_id)
            verdict = _verdict_of(event)
            if verdict is None:
                return Tick("claim", node_id)
            return Tick("verdict", node_id, ok=verdict)
        if kind == "cancel":
            self.cancels.setdefault(node_id, event)
            return Tick("cancel", node_id)
        return Tick("retry", node_id)

    def active(self) -> set[str]:
        """Nodes with evidence or an approval in force."""
        approved = {key[0] for key, (_, e) in self.approvals.items() if e.kind == "approval"}
        return {key[0] for key in self.evidence} | approved

    def on_record(self) -> dict[str, list[tuple[int, str]]]:
        """Per node, the input digests on record (evidence and approvals) in log order."""
        if self._on_record is None:
            index: dict[str, list[tuple[int, str]]] = {}
            for pos, event in enumerate(self.events):
                if event.kind in ("evidence", "approval"):
                    node_id = event.node or str(event.payload.get("node", ""))
                    digest = str(event.payload.get("input_digest", ""))
                    index.setdefault(node_id, []).append((pos, digest))
            self._on_record = index
        return self._on_record


_CLAIM_TICKS = frozenset({"claim", "verdict", "retry"})


def _first(entry: tuple[int, Tick]) -> int:
    return entry[0]


def _verdict_of(claim: LoggedEvent) -> bool | None:
    """The gate verdict recorded with a claim (True = passed), or None when it has none."""
    verdict = claim.payload.get("verdict")
    return verdict == "PASSED" if verdict in ("PASSED", "FAILED") else None
