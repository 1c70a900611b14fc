"""What an event log says for status derivation, folded one event at a time (pure).

A :class:`LogFold` keeps of the events read so far only what a derivation can ask about, for any
plan: the latest evidence and the latest approval or revoke per (node, criterion), the first
cancel per node, the nodes ever claimed, the claims refused since each node's last retry grant,
the input digests on record per node (they name the prerequisites that changed since a record),
the nodes held for a person (a patch refused with ``REPLAN_BUDGET_EXHAUSTED`` since their last
retry grant), and the criteria that were ever satisfied (``status --check``). After
:meth:`LogFold.compacted` its size follows the plan, not the history, which is what lets a
checkpoint of it (:mod:`pytest_plangraph.checkpoint`) spare status from reading every event ever
recorded.

With keys configured, events whose signature does not count (:mod:`pytest_plangraph.store.trust`)
are not folded: :meth:`LogFold.ignore` keeps only the latest of them per (node, criterion), with
its code, so that status can say why newer evidence was not taken.

A claim recorded without the gate's verdict (appended through the API as a bare event, or merged
from another store) can only be judged by replaying the log from the start: a fold that has seen
one is ``unjudged``, and keeps every event it was given for
:class:`~pytest_plangraph.judge.ledger.Ledger` to replay.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable, Mapping
from typing import Any

from ..plan.model import LoggedEvent
from ..values import dataclass, field

Key = tuple[str, str]
"""(node id, criterion id) as an event names them."""

REPLAN_BUDGET_EXHAUSTED = "REPLAN_BUDGET_EXHAUSTED"
"""The code of a patch refused because a node's replan rounds are spent: the node is held for a
person (it shows ``blocked`` and never completes) until a retry grant."""


def holds_for_person(event: LoggedEvent) -> bool:
    """Whether *event* is a patch refused with ``REPLAN_BUDGET_EXHAUSTED`` for its node."""
    return event.kind == "patch" and event.payload.get("code") == REPLAN_BUDGET_EXHAUSTED


def evidence_key(event: LoggedEvent) -> Key:
    """The (node, criterion) an evidence event is about: its columns, else its record's."""
    payload = event.payload
    return (
        event.node or str(payload.get("node", "")),
        event.criterion or str(payload.get("criterion", "")),
    )


@dataclass
class LogFold:
    """What the events folded so far say (positions count events in recording order).

    ``last_seq`` is the highest ``seq`` folded (an event appended later has a higher one);
    ``events`` holds every event folded when the fold began at the log's start (None when it
    began at a checkpoint); ``unjudged`` says a claim without a recorded verdict was folded.
    """

    count: int = 0
    last_seq: int = 0
    evidence: dict[Key, tuple[int, LoggedEvent]] = field(default_factory=dict)
    approvals: dict[Key, tuple[int, LoggedEvent]] = field(default_factory=dict)
    cancels: dict[str, LoggedEvent] = field(default_factory=dict)
    claimed: set[str] = field(default_factory=set)
    refused: dict[str, int] = field(default_factory=dict)
    on_record: dict[str, list[tuple[int, str]]] = field(default_factory=dict)
    passed: set[Key] = field(default_factory=set)
    unjudged: bool = False
    events: list[LoggedEvent] | None = field(default_factory=list)
    ignored: dict[Key, tuple[int, LoggedEvent, str]] = field(default_factory=dict)
    origin: str = field(default="", compare=False)
    """What the fold began from: empty from the log's start, else the sha256 of the body of
    the checkpoint it was read from (a derived state kept for it names it)."""
    held: dict[str, LoggedEvent] = field(default_factory=dict)
    """Per node held for a person, the patch refused with ``REPLAN_BUDGET_EXHAUSTED`` since
    its last retry grant (the latest such refusal)."""

    @classmethod
    def of(cls, events: Iterable[LoggedEvent]) -> LogFold:
        """The fold of a whole log, from its first event."""
        fold = cls()
        fold.extend(events)
        return fold

    def extend(
        self, events: Iterable[LoggedEvent], untrusted: Mapping[int, str] | None = None
    ) -> None:
        """Fold *events*, which follow the ones folded so far in recording order; those
        whose seq is in *untrusted* are ignored with the code it gives."""
        if not untrusted:
            for event in events:
                self.add(event)
            return
        for event in events:
            code = untrusted.get(event.seq)
            if code is None:
                self.add(event)
            else:
                self.ignore(event, code)

    def ignore(self, event: LoggedEvent, code: str) -> None:
        """Remember *event*, which does not count (*code* says why), as the latest ignored
        event of its (node, criterion); the next event folded is positioned after it."""
        self.last_seq = max(self.last_seq, event.seq)
        key = evidence_key(event) if event.kind == "evidence" else (event.node or "", "")
        if event.kind in ("approval", "revoke"):
            key = (event.node or "", event.criterion or "")
        self.ignored[key] = (self.count, event, code)

    def unverified(self, key: Key, counted: int | None) -> tuple[LoggedEvent, str] | None:
        """The event of *key* ignored after the one counted at position *counted* (or with
        none counted), with its code; None when there is none."""
        found = self.ignored.get(key)
        if found is None or (counted is not None and found[0] <= counted):
            return None
        return found[1], found[2]

    def add_stored(
        self, events: Iterable[LoggedEvent], untrusted: Mapping[int, str] | None = None
    ) -> None:
        """Fold events just stored by this process (in any order: they are taken by
        ``seq``), leaving out those folded already: a write that the store answers with an
        event it held (a repeated idempotency key, a record already there) returns one with a
        ``seq`` seen here. Those whose seq is in *untrusted* are ignored (see :meth:`extend`)."""
        fresh = [e for e in sorted(events, key=lambda stored: stored.seq) if e.seq > self.last_seq]
        self.extend(fresh, untrusted)

    def add(self, event: LoggedEvent) -> None:
        """Fold one event recorded after every event folded so far."""
        pos = self.count
        self.count += 1
        self.last_seq = max(self.last_seq, event.seq)
        if self.events is not None:
            self.events.append(event)
        kind, payload = event.kind, event.payload
        if kind == "evidence":
            key = evidence_key(event)
            self.evidence[key] = (pos, event)
            self._on_record(key[0], pos, payload)
            if payload.get("outcome") == "passed":
                self.passed.add(key)
            return
        node = event.node or ""
        if kind in ("approval", "revoke"):
            key = (node, event.criterion or "")
            self.approvals[key] = (pos, event)
            if kind == "approval":
                self._on_record(node or str(payload.get("node", "")), pos, payload)
                self.passed.add(key)
        elif kind == "claim":
            self.claimed.add(node)
            verdict = payload.get("verdict")
            if verdict in ("PASSED", "FAILED"):
                self.refused[node] = self.refused.get(node, 0) + (verdict == "FAILED")
            else:
                self.unjudged = True
        elif kind == "cancel":
            self.cancels.setdefault(node, event)
        elif kind == "retry":
            self.refused[node] = 0
            self.held.pop(node, None)
        elif holds_for_person(event):
            self.held[node] = event

    def _on_record(self, node: str, pos: int, payload: Mapping[str, Any]) -> None:
        entry = (pos, str(payload.get("input_digest", "")))
        found = self.on_record.get(node)
        if found is None:
            self.on_record[node] = [entry]
        else:
            found.append(entry)

    def latest(self) -> list[LoggedEvent]:
        """The latest evidence event of each (node, criterion)."""
        return [event for _, event in self.evidence.values()]

    def judged(self) -> list[LoggedEvent]:
        """The evidence events a derivation judges, whose subjects a snapshot must hash: the
        latest of each criterion, or every one when a claim without a verdict is replayed."""
        if self.unjudged and self.events is not None:
            return [event for event in self.events if event.kind == "evidence"]
        return self.latest()

    def copy(self) -> LogFold:
        """A fold that can go on without changing this one."""
        return LogFold(
            self.count,
            self.last_seq,
            dict(self.evidence),
            dict(self.approvals),
            dict(self.cancels),
            set(self.claimed),
            dict(self.refused),
            {node: list(entries) for node, entries in self.on_record.items()},
            set(self.passed),
            self.unjudged,
            None if self.events is None else list(self.events),
            dict(self.ignored),
            held=dict(self.held),
        )

    def compacted(self) -> LogFold:
        """The same answers from less: of each node's digests on record, only the latest and
        those a later record can ask about (the last before each latest evidence or approval);
        no event list. Events folded later still get the same answers (they ask about the
        latest record only). Only a judged fold (no ``unjudged`` claim) can be compacted."""
        if self.unjudged:
            raise ValueError("a fold with claims to replay keeps every event")
        asked = sorted({pos for pos, _ in self.evidence.values()} | self._approval_positions())
        kept: dict[str, list[tuple[int, str]]] = {}
        for node, entries in self.on_record.items():
            kept[node] = [
                entry
                for i, entry in enumerate(entries)
                if i == len(entries) - 1 or _asked_between(asked, entry[0], entries[i + 1][0])
            ]
        events, self.events = self.events, None
        try:
            fold = self.copy()
        finally:
            self.events = events
        fold.on_record = kept
        return fold

    def _approval_positions(self) -> set[int]:
        return {pos for pos, _ in self.approvals.values()}


def _asked_between(asked: list[int], after: int, upto: int) -> bool:
    """Whether a position in *asked* (sorted) lies in ``(after, upto]``: a record there asks
    for the last digest before it, which is the one at *after*."""
    i = bisect_right(asked, after)
    return i < len(asked) and asked[i] <= upto
