"""Status derivation (DESIGN §4, §5), pure: plan, events and current file hashes in, states out.

Nothing stores a status; :func:`derive` computes every node's status from the plan
(:class:`~pytest_plangraph.plan.graph.Graph`), the store's events in order, and a :class:`Snapshot`
of current sha256s, so it can never disagree with them.

Decisions worth knowing:

* The latest evidence event per (node, criterion) counts. A failed or errored latest verdict is
  ``failed`` even when its subjects changed since: it has to be run again either way. Approval
  criteria are decided by ``approval``/``revoke`` events only.
* ``UPSTREAM_CHANGED`` names each strong prerequisite whose input digest is no longer the one it
  had when the evidence was recorded, read from that prerequisite's own latest evidence or
  approval before it. A prerequisite with no such record counts as changed when it drifted from
  its latest record, or — never verified — when one of its prerequisites did. When neither a
  subject, the criterion nor a prerequisite explains a changed input digest, the reason is
  ``INPUT_CHANGED`` (an output that is not a subject, or a sibling criterion's definition).
* An approval bound to an older input digest is ``stale`` with ``APPROVAL_STALE``, plus
  ``UPSTREAM_CHANGED`` for the prerequisites that changed since it was given.
* A claim counts against the retry budget when the gate refused it. A verdict recorded in the
  claim's payload (``{"verdict": "PASSED"|"FAILED"}``) is taken as is; otherwise the whole gate
  is replayed at the moment of the claim — events up to it, but the *current* file hashes,
  since older contents are not known (see :func:`~pytest_plangraph.judge.gate.replay_claims`).
* A cancelled prerequisite is not completed: its dependents wait until the plan drops the edge;
  a child cancelled by an event, not in the plan, keeps its parent waiting (see the gate).

The events may be full :class:`~pytest_plangraph.plan.model.Event` objects or the light rows of
``Store.log()`` (evidence payloads cut down to their verdict fields): derivation reads only what
:class:`~pytest_plangraph.plan.model.LoggedEvent` names, and only through what they say folded
(:class:`~pytest_plangraph.judge.logfold.LogFold`, which may come from the log's checkpoint). The
plan's context and the indexed log are built in :mod:`pytest_plangraph.judge.ledger`.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Collection, Mapping, Sequence

from ..errors import UsageError, quoted
from ..memory import collector_paused
from ..plan.graph import Graph, reach
from ..plan.model import Criterion, LoggedEvent, Node
from .bounded import NO_ACCEPTANCE, bounded, required_ids
from .gate import (
    CHILD_CODES,
    Completion,
    child_reasons,
    final_completion,
    replay_claims,
    upstream_reason,
)
from .inputs import PARENT_KINDS, ReadLog, Snapshot
from .ledger import Context, Ledger
from .logfold import LogFold
from .states import CriterionState, CriterionStatus, NodeState, NodeStatus, PlanState, Reason

__all__ = ["derive", "derive_node", "derive_nodes"]

Known = Mapping[str, tuple[CriterionState, ...]]
"""Criteria states of nodes known unchanged since they were derived, by node."""


# --- derivation ------------------------------------------------------------------------------


def derive(
    graph: Graph,
    events: Sequence[LoggedEvent] | LogFold,
    snapshot: Snapshot,
    *,
    until_seq: int | None = None,
    context: Context | None = None,
) -> PlanState:
    """The state of every node from the plan, the events (in store order) and current hashes.

    *events* are the store's :class:`~pytest_plangraph.plan.model.Event` objects or the lighter
    rows of ``Store.log()``, or what they say already folded (:class:`LogFold`, e.g. from
    ``PlanGraph.fold()``). With *until_seq*, only events whose ``seq`` is at most that count
    (a replay of a sequence). *context*, when given, is ``Context.of(graph, snapshot)``, made
    once for several derivations over the same plan and files.
    """
    if until_seq is not None:
        if isinstance(events, LogFold):
            raise TypeError("a replay until a seq needs the events, not their fold")
        events = [e for e in events if e.seq <= until_seq]
    with collector_paused():
        context = Context.of(graph, snapshot) if context is None else context
        return _Derivation(context, events).result()


def derive_node(
    graph: Graph,
    events: Sequence[LoggedEvent] | LogFold,
    snapshot: Snapshot,
    node_id: str,
    *,
    context: Context | None = None,
) -> NodeState:
    """The state of *node_id* alone, as :func:`derive` would give it: only the criteria of
    the nodes it depends on are judged (:func:`_cone`), and no other node's state is built."""
    if node_id not in graph.nodes:
        raise UsageError(f"unknown node {quoted(node_id)}")
    with collector_paused():
        context = Context.of(graph, snapshot) if context is None else context
        return _Derivation(context, events, only=_cone(context, node_id))._node(node_id)


def derive_nodes(
    context: Context,
    fold: LogFold,
    nodes: Collection[str],
    known: Known | None = None,
    *,
    done: Mapping[str, bool] | None = None,
) -> dict[str, NodeState]:
    """The states of *nodes* alone, as :func:`derive` would give them with *context*: only
    the criteria of their cones are judged (:func:`_cone`), but for the nodes whose criteria
    states are *known* (unchanged since they were derived).

    With *done*, the cone stops at the nodes around *nodes*: *done* tells, for each strong
    prerequisite and child of a node of *nodes* that is not one of them, whether it is
    completed (as kept: its completion cannot have changed), and only the criteria of
    *nodes* are judged. That holds only when *nodes* hold every conflicts-edge partner,
    parent and dependent of theirs (the closure :func:`~.rederive.rederive` judges again);
    a node of *done* missing, or kept completed while cancelled, held or out of retries, is
    a ValueError (the caller derives in full)."""
    if done is None:
        cone = set(reach(nodes, lambda n: _deciding(context, n)))
        with collector_paused():
            derivation = _Derivation(context, fold, only=cone, known=known)
            return {n: derivation._node(n) for n in context.order if n in nodes}
    with collector_paused():
        derivation = _Derivation(context, fold, only=set(nodes), around=done)
        return {n: derivation._node(n) for n in context.order if n in nodes}


def _deciding(context: Context, current: str) -> tuple[str, ...]:
    links = context.links
    return (
        *links.prerequisites[current],
        *context.graph.children[current],
        *links.conflicts[current],
    )


def deciding(context: Context, current: str) -> tuple[str, ...]:
    """The nodes whose verdicts decide whether *current* completes, one step: its strong
    prerequisites, children and conflicts-edge partners (:func:`_cone` is their closure)."""
    return _deciding(context, current)


def _cone(context: Context, node_id: str) -> set[str]:
    """*node_id* and every node whose verdicts can decide whether it completes: its strong
    prerequisites, children and conflicts-edge partners, and theirs in turn."""
    return set(reach([node_id], lambda n: _deciding(context, n)))


class _Derivation:
    """One derivation: index the events, judge every criterion (of the nodes in *only*, when
    given: their completion must not depend on any other node), then every node.

    A criterion is judged the short way where the general one could only say the same: with
    no event left uncounted in the log (nothing ignored for its signature), no criterion asks
    why a newer event was not counted; a record that holds is ``valid`` without the reasons'
    machinery (:meth:`Context.holds_now`); the gate is told only of the criteria that are
    valid (one not valid is missing already, unless a replay of claims said otherwise); a
    prerequisite that changed is told by one reason however many records it changed under.
    *general* takes the general way for every criterion (what the short ways are compared
    with)."""

    def __init__(
        self,
        context: Context,
        events: Sequence[LoggedEvent] | LogFold,
        only: Collection[str] | None = None,
        known: Known | None = None,
        around: Mapping[str, bool] | None = None,
        *,
        general: bool = False,
    ) -> None:
        graph = context.graph
        self.context = context
        self.ledger = Ledger(context, events)
        files = context.snapshot.files
        self._reads = files if isinstance(files, ReadLog) else None
        self._screened = general or bool(self.ledger.fold.ignored)
        self._short = not general
        self._changed_upstream: dict[str, Reason] | None = None if general else {}
        self._drifted: dict[str, bool] | None = None
        self._waiting: dict[str, Reason] = {}
        self._tagged: dict[tuple[int, str], Reason] = {}
        judged = context.order if only is None else [n for n in context.order if n in only]
        known = {} if known is None else known
        self.criteria = {
            n: known[n]
            if n in known
            else tuple(self._criterion(n, c) for c in graph.nodes[n].acceptance)
            for n in judged
        }
        children, prerequisites = graph.children, context.links.prerequisites
        links = context.links
        if around is None:
            self.required = {
                n: required_ids(node, bool(children[n] or prerequisites[n]))
                for n, node in graph.nodes.items()
            }
        else:  # the gate over the judged nodes, those around them taken as kept
            links, self.required = bounded(context, judged, around)
        counted = links.prerequisites
        self.completion = Completion(
            links, self.required, [n for n in counted if graph.nodes[n].cancelled]
        )
        budgets = {n: node.max_retry for n, node in graph.nodes.items()}
        refused = self.ledger.refused
        replayed = refused is None  # the replay leaves its verdicts in the gate
        if refused is None:  # a claim without its verdict: the gate is replayed
            if around is not None:
                raise ValueError("a replay of claims needs the whole gate")
            refused = replay_claims(context.links, self.completion, self.ledger.ticks, budgets)
        self.refused = refused
        for node_id, count in refused.items():
            if node_id in counted:
                self.completion.exhaust(node_id, count > budgets[node_id])
        for node_id in self.ledger.held:
            if node_id in counted:
                self.completion.hold(node_id, True)
        set_ok = self.completion.set_ok
        for node_id, states in self.criteria.items():
            satisfied: set[str] = set()  # not valid: still missing, unless set valid before
            for state in states:
                ok = state.state == "valid"
                if ok or general or replayed or state.id in satisfied:
                    set_ok(node_id, state.id, ok)
                    (satisfied.add if ok else satisfied.discard)(state.id)
        for node_id in self.ledger.cancels:
            if node_id in counted:
                self.completion.cancel(node_id)
        final = final_completion(links, self.completion)
        if around is not None:
            for node_id, done in around.items():
                if done != final.done.get(node_id, done):  # kept completed, cancelled now
                    raise ValueError(f"{node_id} is not as kept")
        self.completed = {n for n, done in final.done.items() if done}
        self.active = graph.with_ancestors(self.ledger.active())

    def result(self) -> PlanState:
        """The state of every node, in topological order."""
        nodes = {n: self._node(n) for n in self.context.order}
        return PlanState(nodes, dict(self.context.digests))

    # criteria

    def _criterion(self, node_id: str, criterion: Criterion) -> CriterionState:
        if self._reads is not None:  # what each node's judgement reads is observed
            self._reads.judging(node_id)
        if criterion.verifier.type == "approval":
            state, evidence, reasons = self._approval(node_id, criterion.id)
            return CriterionState(criterion.id, criterion.required, state, evidence, reasons)
        key = (node_id, criterion.id)
        found = self.ledger.evidence.get(key)
        if found is None:
            reasons = self._ignored(key, None, _NO_EVIDENCE) if self._screened else _NO_EVIDENCE
            return CriterionState(criterion.id, criterion.required, "missing", None, reasons)
        pos, payload = found
        if self._short and self.context.holds_now(key, payload):
            state, reasons = "valid", ()
        else:
            culprits = lambda: self._culprits(node_id, pos)  # noqa: E731
            state, reasons = self.context.verdict(key, payload, culprits, self._upstream)
        if state != "valid" and self._screened:
            reasons = self._ignored(key, pos, reasons)
        record_id = payload.get("id")
        evidence = record_id if isinstance(record_id, str) and record_id else None
        return CriterionState(criterion.id, criterion.required, state, evidence, reasons)

    def _approval(
        self, node_id: str, criterion_id: str
    ) -> tuple[CriterionStatus, str | None, tuple[Reason, ...]]:
        found = self.ledger.approvals.get((node_id, criterion_id))
        if found is None:
            return (
                "awaiting_approval",
                None,
                self._ignored((node_id, criterion_id), None, _NO_APPROVAL),
            )
        pos, event = found
        if event.kind == "revoke":
            revoked = Reason(
                "APPROVAL_REVOKED", f"approval revoked by {event.by}", {"by": event.by}
            )
            return "awaiting_approval", None, (revoked,)
        bound = str(event.payload.get("input_digest", ""))
        current = self.context.digests[node_id]
        if bound == current:
            return "valid", event.id, ()
        stale = Reason(
            "APPROVAL_STALE",
            f"approved by {event.by} for inputs that changed since",
            {"by": event.by, "old": bound, "new": current},
        )
        upstream = map(self._upstream, self._culprits(node_id, pos))
        return "stale", event.id, (stale, *upstream)

    def _ignored(
        self, key: tuple[str, str], pos: int | None, reasons: tuple[Reason, ...]
    ) -> tuple[Reason, ...]:
        """*reasons*, led by why a newer event of *key* was not counted, when one was not
        (its signature did not verify with the keys configured; see :mod:`..store.trust`)."""
        if not self._screened:  # no event of the log was left uncounted
            return reasons
        found = self.ledger.fold.unverified(key, pos)
        if found is None:
            return reasons
        event, code = found
        from ..plan.untrusted import describe  # only where an event did not count

        why = Reason(code, describe(code, event), {"seq": event.seq, "by": event.by})
        return (why, *reasons)

    def _upstream(self, prerequisite: str) -> Reason:
        """``UPSTREAM_CHANGED`` naming *prerequisite* (one object for every criterion whose
        record it changed under: reasons are never changed). Not kept as an attribute: a
        bound method of the derivation held by it would keep it alive until a collection."""
        made = self._changed_upstream
        if made is None:  # the general way: one each time
            return upstream_reason(prerequisite)
        found = made.get(prerequisite)
        if found is None:
            found = made[prerequisite] = upstream_reason(prerequisite)
        return found

    def _culprits(self, node_id: str, pos: int) -> list[str]:
        """Strong prerequisites whose input digest changed since the record at *pos*."""
        return [p for p in self.context.links.prerequisites[node_id] if self._changed(p, pos)]

    def _changed(self, node_id: str, pos: int) -> bool:
        recorded = self.ledger.on_record().get(node_id, [])
        before = bisect_left(recorded, pos, key=lambda entry: entry[0])
        if before:
            return recorded[before - 1][1] != self.context.digests[node_id]
        return self._drift()[node_id]

    def _drift(self) -> dict[str, bool]:
        """Nodes whose digest moved off their latest record (or, never verified, upstream's)."""
        if self._drifted is None:
            drifted: dict[str, bool] = {}
            for node_id in self.context.order:
                recorded = self.ledger.on_record().get(node_id)
                drifted[node_id] = (
                    recorded[-1][1] != self.context.digests[node_id]
                    if recorded
                    else any(
                        drifted.get(p, False) for p in self.context.links.prerequisites[node_id]
                    )
                )
            self._drifted = drifted
        return self._drifted

    # nodes

    def _node(self, node_id: str) -> NodeState:
        node = self.context.graph.nodes[node_id]
        criteria = self.criteria[node_id]
        refused = self.refused.get(node_id, 0)
        reasons = tuple(self._reasons(node_id, criteria, refused))
        status = self._status(node_id, criteria, {r.code for r in reasons})
        claimed = node_id in self.ledger.claimed
        return NodeState(node_id, node.kind, status, reasons, criteria, claimed, refused)

    def _reasons(
        self, node_id: str, criteria: tuple[CriterionState, ...], refused: int
    ) -> list[Reason]:
        """Why the gate fails for *node_id* (empty when it is completed)."""
        node = self.context.graph.nodes[node_id]
        if node_id in self.completion.cancelled:
            return [self._cancelled(node_id)]
        if node_id in self.completed:
            return []
        reasons = [
            self._about(reason, c.id)
            for c in criteria
            if c.required and c.state != "valid"
            for reason in c.reasons
        ]
        reasons += self._waiting_reasons(node_id, node)
        if self.required[node_id] == [NO_ACCEPTANCE]:
            from .budgets import no_acceptance  # the budgets' reasons: only when one is spent

            reasons.append(no_acceptance(node))
        if refused > node.max_retry:
            from .budgets import retry_budget_exhausted

            reasons.append(retry_budget_exhausted(node_id, node, refused))
        held = self.ledger.held.get(node_id)
        if held is not None:  # first: until a person acts, nothing else completes the node
            limit = self.context.graph.plan.max_replan_rounds
            from .budgets import replan_budget_exhausted

            reasons.insert(0, replan_budget_exhausted(node_id, held, limit))
        return reasons

    def _waiting_reasons(self, node_id: str, node: Node) -> list[Reason]:
        """What else *node_id* waits for: strong prerequisites not completed, conflicts-edge
        partners that pass, and (objectives and milestones) children."""
        links = self.context.links
        reasons = [
            self._waiting_for(p) for p in links.prerequisites[node_id] if p not in self.completed
        ]
        if links.conflicts[node_id]:
            reasons += [
                _link(
                    "CONFLICT_COMPLETED",
                    q,
                    f"conflicts with {q}, which passes its gate but for conflicts edges",
                )
                for q in self.completion.conflict_partners(node_id)
            ]
        if node.kind in PARENT_KINDS:
            children = self.context.graph.children[node_id]
            cancels = self.ledger.cancels
            reasons += child_reasons(children, self.completed, self.completion, cancels)
        return reasons

    def _about(self, reason: Reason, criterion_id: str) -> Reason:
        """*reason* tagged with its criterion, made once for a reason shared by many nodes
        (``CRITERION_MISSING``, ``APPROVAL_MISSING``); every reason stays alive for the whole
        derivation, so its ``id`` names it."""
        key = (id(reason), criterion_id)
        found = self._tagged.get(key)
        if found is None:
            found = self._tagged[key] = reason.for_criterion(criterion_id)
        return found

    def _waiting_for(self, prerequisite: str) -> Reason:
        """``PREREQUISITE_NOT_COMPLETED`` naming *prerequisite* (one object for every node
        that waits for it: reasons are never changed)."""
        found = self._waiting.get(prerequisite)
        if found is None:
            message = f"strong prerequisite {prerequisite} is not completed"
            found = _link("PREREQUISITE_NOT_COMPLETED", prerequisite, message)
            self._waiting[prerequisite] = found
        return found

    def _cancelled(self, node_id: str) -> Reason:
        event = self.ledger.cancels.get(node_id)
        if self.context.graph.nodes[node_id].cancelled or event is None:
            return Reason("CANCELLED", "cancelled in the plan", {"by": None})
        return Reason("CANCELLED", f"cancelled by {event.by}", {"by": event.by})

    def _status(
        self, node_id: str, criteria: tuple[CriterionState, ...], codes: set[str]
    ) -> NodeStatus:
        """The first status that matches, in the precedence of DESIGN §5."""
        if node_id in self.completion.cancelled:
            return "cancelled"
        held = self.completion.held
        if node_id in self.completion.exhausted or node_id in held:  # before completed
            return "blocked"
        if node_id in self.completed:
            return "completed"
        open_states = {c.state for c in criteria if c.required and c.state != "valid"}
        if "stale" in open_states:
            return "stale"
        if "failed" in open_states:
            return "failed"
        claimed = node_id in self.ledger.claimed
        engaged = claimed or node_id in self.active
        waiting = "PREREQUISITE_NOT_COMPLETED" in codes
        if "CONFLICT_COMPLETED" in codes or (engaged and waiting):
            return "blocked"
        if open_states == {"awaiting_approval"} and not codes & _OTHER_THAN_APPROVAL:
            return "awaiting_approval"
        if claimed:
            return "awaiting_verification"
        if node_id in self.active:
            return "in_progress"
        return "pending" if waiting else "ready"


_OTHER_THAN_APPROVAL = frozenset({"PREREQUISITE_NOT_COMPLETED", *CHILD_CODES})
"""Codes of what an approval alone would not settle: with one, a node is not waiting for its
approval only."""

_NO_EVIDENCE = (Reason("CRITERION_MISSING", "no evidence recorded"),)
_NO_APPROVAL = (Reason("APPROVAL_MISSING", "no approval recorded"),)


def _link(code: str, node_id: str, message: str) -> Reason:
    return Reason(code, message, {"node": node_id})
