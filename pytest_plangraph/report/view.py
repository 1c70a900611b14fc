"""What a report shows, as plain values: nodes with their criteria and evidence, edges, the
stale chains back to the change that made them stale, what to run for each node that is not
completed, and the audit. Built by :func:`build` from the API's values; every renderer reads
only this."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..judge.states import CriterionState, NodeState, PlanState
from ..plan.graph import Graph
from ..plan.model import Criterion, Event

STATUSES: tuple[str, ...] = (
    "completed",
    "in_progress",
    "ready",
    "pending",
    "awaiting_verification",
    "awaiting_approval",
    "stale",
    "failed",
    "blocked",
    "cancelled",
)
"""Every node status, in the order a legend lists them."""


@dataclass(frozen=True)
class EvidenceView:
    """The record that decides a criterion: an evidence record or an approval event."""

    id: str
    kind: str
    outcome: str
    at: str
    by: str
    commit: str | None = None
    verifier: str = ""
    subjects: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class CriterionView:
    """One criterion: its state, what it asserts, its evidence and the reasons it is not valid."""

    id: str
    required: bool
    state: str
    assertion: str
    verifier: str
    reasons: tuple[str, ...]
    evidence: EvidenceView | None


@dataclass(frozen=True)
class NodeView:
    """One node: its status, why, its criteria, and the commands that would move it on."""

    id: str
    kind: str
    title: str
    parent: str | None
    status: str
    reasons: tuple[str, ...]
    criteria: tuple[CriterionView, ...]
    fixes: tuple[str, ...]
    stale_chains: tuple[str, ...] = ()
    waits_on: tuple[str, ...] = ()
    """Prerequisites and children to complete first."""

    @property
    def counts(self) -> str:
        """``satisfied/required`` criteria, ``-`` without criteria."""
        required = [c for c in self.criteria if c.required]
        if not self.criteria:
            return "-"
        return f"{sum(c.state == 'valid' for c in required)}/{len(required)}"


@dataclass(frozen=True)
class EdgeView:
    """One edge: ``target`` depends on ``source`` by *type*."""

    source: str
    target: str
    type: str
    strength: str
    status: str


@dataclass(frozen=True)
class ReportView:
    """Everything a report shows, in the plan's topological order."""

    plan: str
    version: int
    title: str
    nodes: tuple[NodeView, ...]
    edges: tuple[EdgeView, ...]
    audit: Mapping[str, Any] | None = None
    audit_notes: tuple[str, ...] = ()

    @property
    def tally(self) -> dict[str, int]:
        """How many nodes have each status, only the statuses present, in legend order."""
        found = {s: sum(n.status == s for n in self.nodes) for s in STATUSES}
        return {s: count for s, count in found.items() if count}

    @property
    def completed(self) -> int:
        """Nodes completed."""
        return sum(n.status == "completed" for n in self.nodes)

    @property
    def audit_clean(self) -> bool | None:
        """True when the audit found nothing, None without an audit."""
        return None if self.audit is None else not any(self.audit.values())


def build(
    graph: Graph,
    state: PlanState,
    version: int,
    records: Mapping[str, Event],
    *,
    stale_chains: Mapping[str, Sequence[str]] | None = None,
    audit: Mapping[str, Any] | None = None,
    audit_notes: Sequence[str] = (),
) -> ReportView:
    """The view of *state* (derived from *graph*) at plan *version*. *records* are the events
    behind the criteria, by evidence or event id (:meth:`PlanGraph.decided_by`); *stale_chains*
    the impact report's reason chains per invalidated node; *audit* the audit's findings."""
    chains = stale_chains or {}
    nodes = tuple(
        _node(graph, node, records, tuple(chains.get(node.id, ()))) for node in state.nodes.values()
    )
    edges = tuple(
        EdgeView(e.from_, e.to, e.type, e.strength, e.status)
        for e in graph.plan.edges
        if e.from_ in graph.nodes and e.to in graph.nodes
    )
    return ReportView(
        plan=graph.plan.plan,
        version=version,
        title=graph.plan.title,
        nodes=nodes,
        edges=edges,
        audit=audit,
        audit_notes=tuple(audit_notes),
    )


def _node(
    graph: Graph, state: NodeState, records: Mapping[str, Event], chains: tuple[str, ...]
) -> NodeView:
    plan_node = graph.nodes[state.id]
    declared = {c.id: c for c in plan_node.acceptance}
    criteria = tuple(_criterion(c, declared.get(c.id), records) for c in state.criteria)
    return NodeView(
        id=state.id,
        kind=state.kind,
        title=plan_node.title,
        parent=plan_node.parent if plan_node.parent in graph.nodes else None,
        status=state.status,
        reasons=tuple(r.message or r.code for r in state.reasons),
        criteria=criteria,
        fixes=fixes(state, declared),
        stale_chains=(chains or _stale_reasons(criteria)) if state.status == "stale" else (),
        waits_on=_waits_on(state),
    )


def _stale_reasons(criteria: tuple[CriterionView, ...]) -> tuple[str, ...]:
    """Why the stale criteria are stale, when no impact report gave the chains."""
    return tuple(f"{c.id}: {r}" for c in criteria if c.state == "stale" for r in c.reasons)


def _waits_on(state: NodeState) -> tuple[str, ...]:
    if state.status in ("completed", "cancelled"):
        return ()
    found = (r.data.get("node") for r in state.reasons if r.code in _WAITS_ON)
    return tuple(dict.fromkeys(n for n in found if isinstance(n, str)))


def _criterion(
    state: CriterionState, declared: Criterion | None, records: Mapping[str, Event]
) -> CriterionView:
    event = records.get(state.evidence) if state.evidence else None
    return CriterionView(
        id=state.id,
        required=state.required,
        state=state.state,
        assertion=declared.assertion if declared else "",
        verifier=declared.verifier.type if declared else "",
        reasons=tuple(r.message or r.code for r in state.reasons),
        evidence=None if event is None else evidence_view(event),
    )


def evidence_view(event: Event) -> EvidenceView:
    """The part of an evidence or approval event a report shows."""
    record = event.evidence
    if record is None:  # an approval: the person and the role are the evidence
        role = event.payload.get("role")
        return EvidenceView(
            id=event.id,
            kind=event.kind,
            outcome=f"approved{f' as {role}' if role else ''}",
            at=event.at,
            by=event.by,
            verifier="approval",
        )
    return EvidenceView(
        id=record.id,
        kind="evidence",
        outcome=record.outcome,
        at=record.run.finished,
        by=record.recorded_by,
        commit=record.git.commit,
        verifier=record.verifier,
        subjects=dict(record.subjects),
    )


def fixes(state: NodeState, declared: Mapping[str, Criterion]) -> tuple[str, ...]:
    """What to run so that *state*'s node can be completed: ``plangraph retry`` first when the
    node is held for a person, then one command per criterion that is not valid (pytest for
    tests, ``plangraph verify`` for the file verifiers, ``plangraph approve`` for approvals)."""
    if state.status in ("completed", "cancelled"):
        return ()
    found = [  # a person's decision comes first: until it, nothing else completes the node
        f"plangraph retry {state.id} --by NAME  # needs a person ({r.code})"
        for r in state.reasons
        if r.code in _HELD
    ]
    for criterion in state.criteria:
        if criterion.state == "valid" or criterion.id not in declared:
            continue
        found.append(_fix(state.id, declared[criterion.id]))
    return tuple(dict.fromkeys(found))


_WAITS_ON = frozenset({"PREREQUISITE_NOT_COMPLETED", "CHILD_NOT_COMPLETED"})
_HELD = frozenset({"REPLAN_BUDGET_EXHAUSTED", "RETRY_BUDGET_EXHAUSTED"})


def _fix(node: str, criterion: Criterion) -> str:
    verifier = criterion.verifier
    ref = f"{node}/{criterion.id}"
    if verifier.type == "test":
        tests = list(getattr(verifier, "tests", []) or [])
        if tests:
            return "pytest --plangraph " + " ".join(_quoted(t) for t in tests)
        return f"pytest --plangraph  # the tests marked @pytest.mark.criterion({ref!r})"
    if verifier.type == "approval":
        role = getattr(verifier, "role", None)
        as_role = f" --role {role}" if role else ""
        return f"plangraph approve {ref} --by NAME{as_role}"
    return f"plangraph verify {node}"


def _quoted(text: str) -> str:
    """A pytest node id as a shell word: quoted when it holds a glob or space."""
    return f"'{text}'" if any(ch in text for ch in " *?[]'\"$") else text


COLOURS: dict[str, tuple[str, str]] = {
    "completed": ("#2da44e", "#ffffff"),
    "in_progress": ("#54aeff", "#0b1f33"),
    "ready": ("#ddf4ff", "#0b1f33"),
    "pending": ("#eaeef2", "#24292f"),
    "awaiting_verification": ("#fff8c5", "#3b2300"),
    "awaiting_approval": ("#d4a72c", "#1f1300"),
    "stale": ("#fb8f44", "#1f0e00"),
    "failed": ("#cf222e", "#ffffff"),
    "blocked": ("#8250df", "#ffffff"),
    "cancelled": ("#afb8c1", "#24292f"),
}
"""Each status's fill and text colour, shared by the Mermaid, DOT and HTML graphs."""
