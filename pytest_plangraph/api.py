"""The Python API: one object over a repository's plan, store and files.

Agent runtimes, the CLI and the pytest plugin all go through :class:`PlanGraph`::

    graph = PlanGraph.open(Path("."))
    decision = graph.claim("step-token-endpoint", by="agent-42")
    if decision.verdict == "FAILED":
        print(decision.reasons)

Status is never stored: every call derives it from the plan, the store's events and the current
hashes of the files involved. A plan file edited while the object is open is read again by the
next call that judges, claims or records anything, and nothing is judged, claimed or recorded
against a plan that lint rejects. Wrong values (a blank ``by``, a number where a node id belongs)
raise :class:`~pytest_plangraph.errors.UsageError`. One object serves one thread.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

from . import apicheck
from .attest.attesting import Attesting
from .decisions import Decisions
from .errors import StoreTamperedError, UsageError
from .intake import Intake
from .judge.logfold import LogFold
from .memory import collector_paused
from .plan.model import EVENT_KINDS, Event
from .replan import Replanning
from .starters import Starters
from .vcs.environment import now
from .views import Views

# What each call needs beyond opening the repository is imported by that call: a command
# pays for its own machinery alone (tests/test_lean_imports.py reads what a claim imports).
if TYPE_CHECKING:
    from .judge.explain import Explanation
    from .judge.gate import GateDecision
    from .judge.inputs import Snapshot
    from .judge.ledger import Context
    from .judge.records import RecordMaker
    from .judge.states import NodeState, PlanState
    from .plan.evidence import Evidence, GitInfo, PlanRef, RunInfo
    from .plan.model import EventKind, LoggedEvent

__all__ = ["PlanGraph"]


class PlanGraph(Replanning, Attesting, Starters, Views, Intake, Decisions):
    """A repository's plan, evidence store and files, with status derived on demand (and
    re-planned by patches: :class:`~pytest_plangraph.replan.Replanning`; attested:
    :class:`~pytest_plangraph.attest.attesting.Attesting`; starter plans:
    :class:`~pytest_plangraph.starters.Starters`; reports read from the store and the files:
    :class:`~pytest_plangraph.views.Views`; signed evidence received from elsewhere:
    :class:`~pytest_plangraph.intake.Intake`; people's decisions:
    :class:`~pytest_plangraph.decisions.Decisions`)."""

    def status(self, events: Sequence[LoggedEvent] | LogFold | None = None) -> PlanState:
        """The derived state of every node, from *events* when the caller has read the log
        already (:meth:`fold`, or :meth:`Store.log <pytest_plangraph.store.Store.log>`, whose
        events are screened as the store's log is: see :mod:`pytest_plangraph.store.trust`), else
        from the store."""
        if not (events is None or isinstance(events, LogFold) or apicheck.is_sequence(events)):
            raise UsageError(
                "status() takes the events read from the store (graph.fold() or "
                f"graph.store.log()), or nothing; not {type(events).__name__}"
            )
        from .judge.derive import derive

        self._ready()
        # Reading, hashing and deriving make no reference cycles; a collection triggered in
        # between would walk every event read so far, again and again.
        with collector_paused():
            if events is not None and not isinstance(events, LogFold) and self.has_store():
                from .store.trust import policy_from_env, screen

                fold = LogFold()  # the store's events, as the store's log is read
                fold.extend(events, screen(self.store, events, policy_from_env()))
                events = fold
            events = self.fold() if events is None else events
            if not isinstance(events, LogFold):
                return derive(self.graph, events, self.snapshot(events))
            from .derived import derived_state  # derive(), or the state kept for the same inputs

            return derived_state(self, events, self.snapshot(events))

    def explain(self, node: str) -> Explanation:
        """Why *node* is not completed, in plain words, and what to run to fix it (the test
        ids, the ``verify``/``approve``/``retry`` command, the nodes to finish first)."""
        from .judge.explain import UNSETTLED, explain

        self._ready()
        self.require_node(node)
        fold = self.fold()
        state = self.status(fold)
        keys = [(node, c.id) for c in state.nodes[node].criteria if c.state in UNSETTLED]
        found = self.evidence_details(fold, keys)
        return explain(self.graph, state, node, {c: d for (_, c), d in found.items()})

    def claims(self) -> set[str]:
        """Nodes that have been claimed as done (none, and no store made, without a store)."""
        if not self.has_store():
            return set()
        return {e.node for e in self.store.events(kinds=["claim"]) if e.node}

    def gate(self, node: str, state: PlanState | None = None) -> GateDecision:
        """The completion gate's decision for *node*."""
        from .judge.gate import gate

        self._ready()
        self.require_node(node)
        return gate(self.graph, state or self.status(), node)

    # --- writing -----------------------------------------------------------------------------

    def make_evidence(
        self,
        node: str,
        criterion: str,
        *,
        outcome: str,
        reason: str | None,
        details: Mapping[str, Any],
        subjects: Mapping[str, str | None],
        run: RunInfo,
        recorded_by: str,
        snapshot: Snapshot | None = None,
        plan: PlanRef | None = None,
        git: GitInfo | None = None,
        digests: Mapping[str, str] | None = None,
    ) -> Evidence:
        """Build an evidence record bound to the plan, the criterion, the node's input digest,
        the git state and the sha256 of every subject (the node's own files are added here).

        Pass *snapshot*, *plan*, *git* and *digests* (from :func:`.judge.inputs.input_digests`) when
        making many records at once, so they are computed once.
        """
        self.require_criterion(node, criterion)
        snapshot = snapshot or self.snapshot()
        maker = self._record_maker(snapshot, plan=plan, git=git, digests=digests)(run, recorded_by)
        return maker.make(
            node, criterion, outcome=outcome, reason=reason, details=details, subjects=subjects
        )

    def _record_maker(
        self,
        snapshot: Snapshot,
        *,
        plan: PlanRef | None = None,
        git: GitInfo | None = None,
        digests: Mapping[str, str] | None = None,
    ) -> Callable[[RunInfo, str], RecordMaker]:
        """The record maker of a run against *snapshot*, once the run's information and who
        records it are known: the plan reference, the git state and the input digests are
        taken now (those not given)."""
        from .judge.inputs import input_digests
        from .judge.records import RecordMaker
        from .vcs.environment import git_info

        plan = plan or self.plan_ref()
        git = git or git_info(self.root, self.store_path)
        digests = digests or input_digests(self.graph, snapshot)

        def maker(run: RunInfo, recorded_by: str) -> RecordMaker:
            return RecordMaker(
                self,
                snapshot,
                plan=plan,
                git=git,
                run=run,
                recorded_by=recorded_by,
                digests=digests,
            )

        return maker

    def node_files(self, node: str, snapshot: Snapshot) -> list[str]:
        """The node's outputs and the files it consumes from upstream."""
        from .judge.inputs import node_files

        return node_files(self.graph, node, snapshot)

    def record(
        self, evidence: Sequence[Evidence], *, expected_plan_version: int | None = None
    ) -> list[Event]:
        """Append evidence records to the store; plugins hear of each one. The batch is
        stored upstream first (the plan's topological order): a stale record's culprits are the
        upstream nodes whose latest record before it differs from today, so a record of the
        same run must not come before its upstream's. The events come back in *evidence*'s
        order. Each record must be one :meth:`make_evidence` made for a criterion of the plan
        (:class:`UsageError` otherwise, and nothing is stored); *expected_plan_version* as for
        :meth:`append`."""
        self._ready()
        return self._record(evidence, expected_plan_version)

    def record_run(
        self,
        evidence: Sequence[Evidence],
        *,
        made: Mapping[int, tuple[Any, ...]] | None = None,
    ) -> list[Event]:
        """:meth:`record` for the records of a run made against the plan as this object read
        it when the run began (``pytest --plangraph``): the plan file is not read again, so an
        edit during the run (a test writing it) loses none of them. *made* maps ``id(record)``
        to the record and its JSON payload (and, third, that payload's canonical JSON text)
        for the records the run's own record maker made
        (:class:`~pytest_plangraph.judge.records.RecordMaker` checks what it makes): when
        every record of *evidence* is that very object, its payload is stored as made, not
        dumped, validated and hashed again (nor encoded again, when every text is there); any
        other record is checked as :meth:`record` checks it."""
        if made is not None and not isinstance(made, Mapping):
            raise UsageError(
                f"made must be a mapping of id(record) to (record, payload), not "
                f"{type(made).__name__}"
            )
        self._ready(reread=False)
        return self._record(evidence, None, made or {})

    def _record(
        self,
        evidence: Sequence[Evidence],
        expected_plan_version: int | None,
        made: Mapping[int, tuple[Any, ...]] | None = None,
    ) -> list[Event]:
        found = _made_payloads(evidence, made) if made else None
        payloads, texts = found if found is not None else (None, None)
        if payloads is None:
            from .judge.payloads import checked_payloads  # records made or changed by hand

            payloads = checked_payloads(self.graph, evidence)
        self._expect(apicheck.version(expected_plan_version, "expected_plan_version"))
        at = now()
        from .plan.frozen import builder_of

        # stored as given, the others their defaults: a record always names its node and
        # criterion and its payload is never empty, so the fields given are those that differ
        # from their defaults, what the constructor would find by comparing each one
        build = builder_of(Event)
        events: list[Event] = [
            build(
                {
                    "kind": "evidence",
                    "node": payload["node"],
                    "criterion": payload["criterion"],
                    "at": at,
                    "by": payload["recorded_by"],
                    "plan_digest": payload["plan"]["digest"],
                    "payload": payload,
                }
            )
            for payload in payloads
        ]
        rank = {node: i for i, node in enumerate(self.graph.topological_order())}
        ranks = [rank.get(event.node or "", -1) for event in events]
        order = sorted(range(len(events)), key=ranks.__getitem__)  # each rank looked up once
        appended = self.store.append_many(
            [events[i] for i in order], texts=None if texts is None else [texts[i] for i in order]
        )
        stored = appended[:]
        for slot, event in zip(order, appended, strict=True):
            stored[slot] = event
        from .hooks.manager import notify

        store = str(self.store_path)  # a plugin that raises is warned about, never our failure
        notify(  # each call's keywords made only when a plugin listens
            "plangraph_evidence_recorded", ({"evidence": e, "store_path": store} for e in evidence)
        )
        return stored

    def append(
        self,
        kind: str,
        node: str,
        *,
        by: str,
        criterion: str | None = None,
        payload: Mapping[str, Any] | None = None,
        idempotency_key: str | None = None,
        expected_plan_version: int | None = None,
    ) -> Event:
        """Append one event of *kind* about *node* (evidence goes through :meth:`record`).

        *by* and *idempotency_key* follow the rules of ``--by``: not blank, no control
        characters. *expected_plan_version* is the plan version the writer decided against;
        when the plan now in the repository has another version (as this store numbers it:
        ``plan_ref().version``), the write is refused (``ConflictError``).
        """
        if kind == "evidence":
            raise UsageError(
                "evidence is recorded with record(), which checks each record; append() "
                "writes the other kinds of event"
            )
        if kind == "patch":
            raise UsageError("patch events are recorded by patch(), which applies the patch")
        if kind not in EVENT_KINDS:
            from .judge.lookup import choices

            raise UsageError(f"unknown event kind {kind!r}; {choices(EVENT_KINDS)}")
        if payload is not None and not isinstance(payload, Mapping):
            raise UsageError(f"payload must be a mapping, not {type(payload).__name__}")
        self._ready()
        self.require_node(node)
        if criterion is not None:
            self.require_criterion(node, criterion)
        key = idempotency_key
        event = Event(
            kind=cast("EventKind", kind),  # checked above
            node=node,
            criterion=criterion,
            at=now(),
            by=apicheck.name(by, "by"),
            plan_digest=self.plan.digest,
            payload=dict(payload or {}),
            idempotency_key=None if key is None else apicheck.name(key, "idempotency_key"),
        )
        self._expect(apicheck.version(expected_plan_version, "expected_plan_version"))
        return self.store.append(event)

    def claim(
        self,
        node: str,
        *,
        by: str,
        idempotency_key: str | None = None,
        expected_plan_version: int | None = None,
    ) -> GateDecision:
        """Record that *by* claims *node* is done, and answer with the gate's decision."""
        self._ready()
        self.require_node(node)
        apicheck.name(by, "by")
        if idempotency_key is not None:
            apicheck.name(idempotency_key, "idempotency_key")
        expected = apicheck.version(expected_plan_version, "expected_plan_version")
        if not self.has_store():  # a conflict found before the fold creates no store
            self._expect(expected)
        from .checkpoint import fold_with
        from .judge.gate import decide, refused_on_tampering

        try:
            fold = self.fold()
        except StoreTamperedError as exc:  # nothing is judged from, or written to, such a store
            return refused_on_tampering(node, exc)
        # The verdict at claim time goes into the claim itself: the retry budget counts refused
        # claims, and only now are the files as they were when the claim was made.
        before, basis = self._claimed_state(fold, node)
        claim = self.append(
            "claim",
            node,
            by=by,
            payload={"verdict": decide(before).verdict},
            idempotency_key=idempotency_key,
            expected_plan_version=expected,
        )
        after_fold = fold_with(self.store, fold, [claim])
        # a fold read again from every event is judged against the files as they are now
        after, _ = self._claimed_state(after_fold, node, basis if after_fold is fold else None)
        decision = decide(after)
        from .hooks.manager import notify

        notify("plangraph_gate_decision", [{"decision": decision}])  # a raising plugin: warned
        return decision

    def _claimed_state(
        self, fold: LogFold, node: str, basis: tuple[Snapshot, Context] | None = None
    ) -> tuple[NodeState, tuple[Snapshot, Context]]:
        """The state of *node* alone from *fold* (the gate decides from it alone), with the
        snapshot and the context it was derived against: *basis* when given, so that both
        derivations of a claim hash the files once."""
        from .judge.derive import derive_node
        from .judge.ledger import Context

        with collector_paused():
            if basis is None:
                snapshot = self.snapshot(fold)
                basis = (snapshot, Context.of(self.graph, snapshot))
            state = derive_node(self.graph, fold, basis[0], node, context=basis[1])
        return state, basis

    def verify(
        self,
        nodes: Iterable[str] = (),
        *,
        by: str | None = None,
        record: bool = True,
        expected_plan_version: int | None = None,
    ) -> list[Evidence]:
        """Run every non-pytest verifier of *nodes* (all nodes when empty) and record evidence
        (without *record*, only answer with the records, storing nothing: a dry run).
        *expected_plan_version* as for :meth:`append`, checked before anything runs."""
        from .vcs.environment import actor
        from .verifiers.run import run_verifiers

        selected = apicheck.texts(nodes, "nodes")
        by = actor() if by is None else apicheck.name(by, "by")
        if not isinstance(record, bool):
            raise UsageError(f"record must be True or False, not {record!r}")
        expected = apicheck.version(expected_plan_version, "expected_plan_version")
        self._ready()
        for node in selected:
            self.require_node(node)
        self._expect(expected)
        started = now()
        snapshot = self.snapshot()
        maker = self._record_maker(snapshot)
        evidence = run_verifiers(
            self.graph,
            self.registry,
            self.workspace,
            snapshot,
            selected or None,
            started=started,
            maker=lambda run: maker(run, by),
        )
        if evidence and record:
            self.record(evidence, expected_plan_version=expected)
        return evidence


def _made_payloads(
    evidence: Sequence[Evidence], made: Mapping[int, tuple[Any, ...]]
) -> tuple[list[dict[str, Any]], list[str] | None] | None:
    """The payloads *made* holds for every record of *evidence* (the same objects: the records
    a run's own record maker made, stored as made), with their canonical JSON texts when
    every entry carries one (``(record, payload, text)``: the text the maker joined from the
    members it encoded, stored as it is), or None (then they are checked:
    :func:`~pytest_plangraph.judge.payloads.checked_payloads`)."""
    from .plan.evidence import Evidence  # imported with the records it was given

    if isinstance(evidence, Evidence | str | bytes) or not isinstance(evidence, Sequence):
        return None  # checked_payloads says what is wrong
    payloads = []
    texts: list[str] | None = []
    for record in evidence:
        entry = made.get(id(record))
        if not isinstance(entry, tuple) or len(entry) not in (2, 3) or entry[0] is not record:
            return None
        if not isinstance(entry[1], dict):
            return None
        payloads.append(entry[1])
        if texts is not None and len(entry) == 3 and type(entry[2]) is str:
            texts.append(entry[2])
        else:
            texts = None
    return payloads, texts
