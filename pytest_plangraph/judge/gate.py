"""Evidence validity and the completion gate (DESIGN §4, §5), pure.

* :func:`validity` — whether one evidence record still holds, with the reason codes of §4
  (:mod:`pytest_plangraph.judge.validity`, with :func:`holds`, :func:`judge` and
  :func:`upstream_reason`; re-exported here).
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

Snapshots, input digests and the plan's links live in :mod:`pytest_plangraph.judge.inputs`.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from typing import TYPE_CHECKING, Any, Literal

from ..errors import StoreTamperedError, UsageError, quoted
from ..plan.graph import Graph
from ..plan.model import LoggedEvent
from ..values import dataclass
from .inputs import Links
from .states import NodeState, PlanState, Reason
from .validity import holds, judge, upstream_reason, validity

if TYPE_CHECKING:
    from .ticks import Tick

__all__ = [
    "CHILD_CODES",
    "Completion",
    "GateDecision",
    "child_reasons",
    "final_completion",
    "gate",
    "holds",
    "judge",
    "replay_claims",
    "upstream_reason",
    "validity",
]


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
