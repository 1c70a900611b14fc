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

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from . import apicheck
from .errors import ConflictError, StoreTamperedError, UsageError
from .judge.derive import derive, derive_node
from .judge.gate import GateDecision, decide, gate
from .judge.inputs import LoggedEvent, Snapshot, input_digests, node_files
from .judge.ledger import Context
from .judge.logfold import LogFold
from .judge.lookup import choices
from .judge.states import PlanState, Reason
from .judge.untrusted import DECISION_ROLE
from .memory import collector_paused
from .plan.evidence import Evidence, GitInfo, PlanRef, RunInfo
from .plan.model import EVENT_KINDS, Event
from .repository import Repository
from .vcs.environment import actor, git_info, now

if TYPE_CHECKING:
    from datetime import timedelta

    from .audit import AuditReport
    from .impact.report import ImpactReport
    from .judge.rerun import Selection
    from .store.tail import Head

__all__ = ["PlanGraph"]


class PlanGraph(Repository):
    """A repository's plan, evidence store and files, with status derived on demand."""

    def status(self, events: Sequence[LoggedEvent] | LogFold | None = None) -> PlanState:
        """The derived state of every node, from *events* when the caller has read the log
        already (:meth:`fold`, or :meth:`Store.log <pytest_plangraph.store.Store.log>`, whose
        events are screened as the store's log is: see :mod:`pytest_plangraph.store.trust`), else
        from the store."""
        if not (events is None or isinstance(events, LogFold) or _sequence(events)):
            raise UsageError(
                "status() takes the events read from the store (graph.fold() or "
                f"graph.store.log()), or nothing; not {type(events).__name__}"
            )
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
            return derive(self.graph, events, self.snapshot(events))

    def claims(self) -> set[str]:
        """Nodes that have been claimed as done (none, and no store made, without a store)."""
        if not self.has_store():
            return set()
        return {e.node for e in self.store.events(kinds=["claim"]) if e.node}

    def head(self) -> Head:
        """The last event of the store's chain, ``SEQ:HASH`` as ``str()`` gives it: what CI
        publishes so that ``plangraph audit --expect-head`` can tell a store rolled back or cut
        short. ``Head(0, "", None)`` without events (and no store is made)."""
        from .store.tail import Head

        if not self.has_store():
            return Head(0, "", None)
        return self.store.head()

    def gate(self, node: str, state: PlanState | None = None) -> GateDecision:
        """The completion gate's decision for *node*."""
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

        Pass *snapshot*, *plan*, *git* and *digests* (from :func:`state.input_digests`) when
        making many records at once, so they are computed once.
        """
        from .judge.records import RecordMaker

        self.require_criterion(node, criterion)
        snapshot = snapshot or self.snapshot()
        maker = RecordMaker(
            self,
            snapshot,
            plan=plan or self.plan_ref(),
            git=git or git_info(self.root, self.store_path),
            run=run,
            recorded_by=recorded_by,
            digests=digests or input_digests(self.graph, snapshot),
        )
        return maker.make(
            node, criterion, outcome=outcome, reason=reason, details=details, subjects=subjects
        )

    def node_files(self, node: str, snapshot: Snapshot) -> list[str]:
        """The node's outputs and the files it consumes from upstream."""
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

    def record_run(self, evidence: Sequence[Evidence]) -> list[Event]:
        """:meth:`record` for the records of a run made against the plan as this object read
        it when the run began (``pytest --plangraph``): the plan file is not read again, so an
        edit during the run (a test writing it) loses none of them."""
        self._ready(reread=False)
        return self._record(evidence, None)

    def _record(
        self, evidence: Sequence[Evidence], expected_plan_version: int | None
    ) -> list[Event]:
        from .judge.records import checked_payloads

        payloads = checked_payloads(self.graph, evidence)
        self._expect(apicheck.version(expected_plan_version, "expected_plan_version"))
        at = now()
        events = [
            Event(
                kind="evidence",
                node=payload["node"],
                criterion=payload["criterion"],
                at=at,
                by=payload["recorded_by"],
                plan_digest=payload["plan"]["digest"],
                payload=payload,
            )
            for payload in payloads
        ]
        rank = {node: i for i, node in enumerate(self.graph.topological_order())}
        order = sorted(range(len(events)), key=lambda i: rank.get(events[i].node or "", -1))
        appended = self.store.append_many([events[i] for i in order])
        stored = appended[:]
        for slot, event in zip(order, appended, strict=True):
            stored[slot] = event
        from .hooks.manager import notify

        store = str(self.store_path)  # a plugin that raises is warned about, never our failure
        notify(
            "plangraph_evidence_recorded", [{"evidence": e, "store_path": store} for e in evidence]
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
        if kind not in EVENT_KINDS:
            raise UsageError(f"unknown event kind {kind!r}; {choices(EVENT_KINDS)}")
        if payload is not None and not isinstance(payload, Mapping):
            raise UsageError(f"payload must be a mapping, not {type(payload).__name__}")
        self._ready()
        self.require_node(node)
        if criterion is not None:
            self.require_criterion(node, criterion)
        key = idempotency_key
        event = Event(
            kind=kind,  # checked above
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

    def _expect(self, expected: int | None) -> None:
        """:class:`ConflictError` unless the plan in the repository is version *expected*."""
        if expected is None:
            return
        current = self.plan_ref().version
        if expected != current:
            raise ConflictError(
                f"PLAN_VERSION_CONFLICT: the writer expected plan version {expected}, but the "
                f"plan in the repository is version {current}; reload the plan and decide again"
            )

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
        # The verdict at claim time goes into the claim itself: the retry budget counts refused
        # claims, and only now are the files as they were when the claim was made.
        # Only the claimed node's state is built: the gate decides from it alone.
        try:
            fold = self.fold()
        except StoreTamperedError as exc:  # nothing is judged from, or written to, such a store
            return _tampered(node, exc)
        with collector_paused():
            snapshot = self.snapshot(fold)
            context = Context.of(self.graph, snapshot)  # shared by both derivations
            before = derive_node(self.graph, fold, snapshot, node, context=context)
        claim = self.append(
            "claim",
            node,
            by=by,
            payload={"verdict": decide(before).verdict},
            idempotency_key=idempotency_key,
            expected_plan_version=expected_plan_version,
        )
        fold.add_stored([claim])
        if fold.unjudged and fold.events is None:  # another writer's bare claim, just now
            from .checkpoint import read_fold

            fold = read_fold(self.store, None)
            snapshot = self.snapshot(fold)
            context = Context.of(self.graph, snapshot)
        with collector_paused():
            after = derive_node(self.graph, fold, snapshot, node, context=context)
        decision = decide(after)
        from .hooks.manager import notify

        notify("plangraph_gate_decision", [{"decision": decision}])  # a raising plugin: warned
        return decision

    def approve(
        self, node: str, criterion: str, *, by: str, note: str = "", role: str | None = None
    ) -> Event:
        """Record an approval of an ``approval`` criterion, bound to the node's input digest,
        given as *role* (by default the role the criterion names, else ``approver``; another is
        refused). With
        keys configured it counts only when signed by a key trusted for that role."""
        self._ready()
        definition = self._approval(node, criterion)
        apicheck.name(by, "by")
        apicheck.text(note, "note")
        if role is not None:
            apicheck.name(role, "role")
            if role != (wanted := definition or DECISION_ROLE):  # the only role that counts
                raise UsageError(
                    f"{node}/{criterion} needs an approval as {wanted!r}, not {role!r}; "
                    f"approve with --role {wanted}"
                )
        digest = input_digests(self.graph, self.snapshot())[node]
        payload = {"input_digest": digest, "note": note, "role": role or definition}
        return self.append("approval", node, criterion=criterion, by=by, payload=payload)

    def revoke(self, node: str, criterion: str, *, by: str, note: str = "") -> Event:
        """Withdraw the approval of an ``approval`` criterion."""
        self._ready()
        self._approval(node, criterion)
        apicheck.name(by, "by")
        apicheck.text(note, "note")
        decisions = [
            e.kind
            for e in self.store.events(node=node, kinds=["approval", "revoke"])
            if e.criterion == criterion
        ]
        if not decisions or decisions[-1] != "approval":
            raise UsageError(f"{node}/{criterion} has no approval in force to revoke")
        return self.append("revoke", node, criterion=criterion, by=by, payload={"note": note})

    def allow_retry(self, node: str, *, by: str, note: str = "") -> Event:
        """Grant a node whose retry budget is spent a fresh budget (a person's decision)."""
        apicheck.text(note, "note")
        return self.append("retry", node, by=by, payload={"note": note})

    def cancel(self, node: str, *, by: str, note: str = "") -> Event:
        """Cancel a node: it no longer needs to be completed."""
        apicheck.text(note, "note")
        return self.append("cancel", node, by=by, payload={"note": note})

    def _approval(self, node: str, criterion: str) -> str | None:
        self.require_criterion(node, criterion)
        definition = self.graph.nodes[node].criterion(criterion)
        assert definition is not None
        if definition.verifier.type != "approval":
            raise UsageError(
                f"{node}/{criterion} is verified by {definition.verifier.type!r}, not by approval; "
                "only approval criteria can be approved"
            )
        role: str | None = getattr(definition.verifier, "role", None)
        return role

    def verify(self, nodes: Iterable[str] = (), *, by: str | None = None) -> list[Evidence]:
        """Run every non-pytest verifier of *nodes* (all nodes when empty) and record evidence."""
        from .judge.records import RecordMaker
        from .verifiers.run import run_verifiers

        selected = apicheck.texts(nodes, "nodes")
        by = actor() if by is None else apicheck.name(by, "by")
        self._ready()
        for node in selected:
            self.require_node(node)
        started = now()
        snapshot = self.snapshot()
        plan = self.plan_ref()
        git = git_info(self.root, self.store_path)
        digests = input_digests(self.graph, snapshot)

        def maker(run: RunInfo) -> RecordMaker:
            return RecordMaker(
                self, snapshot, plan=plan, git=git, run=run, recorded_by=by, digests=digests
            )

        evidence = run_verifiers(
            self.graph,
            self.registry,
            self.workspace,
            snapshot,
            selected or None,
            started=started,
            maker=maker,
        )
        if evidence:
            self.record(evidence)
        return evidence

    def impact(self, since: str | None = None, *, commits: bool = True) -> ImpactReport:
        """What changed and what it invalidates (DESIGN §6). With *since*: the diff from that
        revision to the working tree, plan edits included, no store needed (a store's evidence
        ids and claims are used when one exists). Without: every evidence subject against the
        files now. *commits* names the commit behind each change (a ``git log`` over the
        range, the slowest part of a preview of a long range)."""
        from .survey import impact_now, impact_since

        apicheck.optional_text(since, "since")
        self._ready()
        if since is not None:
            return impact_since(self, since, commits=commits)
        return impact_now(self, commits=commits)

    def rerun_selection(self) -> Selection:
        """What to run so that every criterion whose evidence is missing, stale or failed is
        verified again (``plangraph impact --select``): a
        :class:`~pytest_plangraph.judge.rerun.Selection` of pytest node ids (relative to the
        repository root) and the criteria no evidence resolves to tests. ``pytest --plangraph
        --plangraph-stale`` runs the same criteria, each with its whole collected test set."""
        from .survey import rerun_selection

        self._ready()
        return rerun_selection(self)

    def audit(
        self, *, expect_head: tuple[int, str] | None = None, max_age: timedelta | None = None
    ) -> AuditReport:
        """What ``plangraph audit`` reports, as data (:class:`~pytest_plangraph.audit.AuditReport`):
        the store's chain, signatures and checkpoint checked, and what every event says
        derived afresh. *expect_head* is a ``(seq, chain hash)`` the store must still hold;
        *max_age* also reports evidence behind valid criteria recorded longer ago than that.
        Without a store, nothing is audited and none is made."""
        from .audit import audit

        self._ready()
        return audit(self, expected_head=expect_head, max_age=max_age)


def _tampered(node: str, exc: StoreTamperedError) -> GateDecision:
    """The refusal of a claim on a store whose events do not match their ids or chain: no
    status was derived and no claim was recorded."""
    data = {"seq": exc.seq, "event": exc.event_id}
    reason = Reason(exc.reason, str(exc).removeprefix(f"{exc.reason}: "), data)
    return GateDecision(node, "FAILED", "blocked", (reason,), [])


def _sequence(value: object) -> bool:
    return isinstance(value, Sequence) and not isinstance(value, str | bytes)
