"""Why a node is not completed, in plain words, and what to run to fix it (pure).

:func:`explain` reads a node's derived state (:class:`~.states.NodeState`), the plan's graph
and the details of the latest evidence of its criteria that do not hold, and answers with an
:class:`Explanation`: one sentence per problem and the command that addresses it — the pytest
node ids to run, ``plangraph verify NODE``, ``plangraph approve NODE/CRITERION``,
``plangraph retry NODE``, and the upstream nodes or children to finish first (each with its
own ``plangraph explain``). A narrowed pytest run records failures but never a pass, so the
command that records a pass is always the whole suite, ``pytest --plangraph``.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..plan.graph import Graph
from ..plan.model import TestVerifier
from ..plan.patterns import unmatched_text
from .states import CriterionState, NodeState, PlanState

SHOWN_TESTS = 10

UNSETTLED = ("failed", "stale")
"""Criterion states whose latest evidence says why: its details are worth reading."""
"""How many test ids one command names before the rest are left to ``--format json``."""


@dataclass(frozen=True)
class Step:
    """One problem in plain words and the command that addresses it ("" when none does)."""

    why: str
    run: str = ""
    tests: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        """``{"why", "run", "tests"}``."""
        return {"why": self.why, "run": self.run, "tests": list(self.tests)}


@dataclass(frozen=True)
class Explanation:
    """What :func:`explain` says about one node."""

    node: str
    kind: str
    status: str
    summary: str
    steps: tuple[Step, ...] = ()
    waiting_for: tuple[str, ...] = ()
    """Upstream nodes and children to finish first."""
    reasons: tuple[dict[str, Any], ...] = field(default=())

    def to_json(self) -> dict[str, Any]:
        """The JSON form of ``plangraph explain --format json``."""
        return {
            "node": self.node,
            "kind": self.kind,
            "status": self.status,
            "summary": self.summary,
            "waiting_for": list(self.waiting_for),
            "steps": [step.to_json() for step in self.steps],
            "reasons": list(self.reasons),
        }

    def text(self) -> str:
        """The plain-text form: the summary, then each problem with its command."""
        lines = [f"{self.node} ({self.kind}) is {self.status}: {self.summary}"]
        for number, step in enumerate(self.steps, start=1):
            lines.append(f"{number}. {step.why}")
            if step.run:
                lines.append(f"   run: {step.run}")
        return "\n".join(lines)


def explain(
    graph: Graph,
    state: PlanState,
    node_id: str,
    details: Mapping[str, Mapping[str, Any]],
) -> Explanation:
    """Why *node_id* is not completed in *state* and what fixes it; *details* are the
    ``details`` of the latest evidence of its criteria that do not hold, by criterion id."""
    node = state.nodes[node_id]
    reasons = tuple(r.to_json() for r in node.reasons)
    if node.status == "completed":
        return Explanation(node_id, node.kind, node.status, "the gate passes; nothing to do")
    if node.status == "cancelled":
        return Explanation(
            node_id, node.kind, node.status, "cancelled; nothing to do", (), (), reasons
        )
    steps: list[Step] = []
    waiting: list[str] = []
    for criterion in node.criteria:
        if criterion.required and criterion.state != "valid":
            steps.append(_criterion_step(graph, node_id, criterion, details.get(criterion.id)))
    for reason in node.reasons:
        step, other = _node_step(state, node_id, reason.code, reason.message, reason.data)
        if step is not None:
            steps.append(step)
        if other:
            waiting.append(other)
    summary = _summary(node, steps, waiting, graph)
    return Explanation(
        node_id, node.kind, node.status, summary, tuple(steps), tuple(waiting), reasons
    )


def _summary(node: NodeState, steps: list[Step], waiting: list[str], graph: Graph) -> str:
    children = [n for n in waiting if n in graph.children.get(node.id, ())]
    if node.status == "awaiting_verification" and children and len(children) == len(waiting):
        return f"claimed, and waiting for its children to complete: {', '.join(children)}"
    if not steps:
        return "nothing stands in its way that this tool can name"
    return f"{len(steps)} thing(s) stand between it and completion"


def _criterion_step(
    graph: Graph, node_id: str, criterion: CriterionState, details: Mapping[str, Any] | None
) -> Step:
    ref = f"{node_id}/{criterion.id}"
    why = "; ".join(r.message for r in criterion.reasons) or criterion.state
    verifier = _verifier(graph, node_id, criterion.id)
    if verifier is None:  # the "(no acceptance criteria)" stand-in
        return Step(f"{node_id} has no required criteria: add acceptance criteria to the plan")
    if verifier.type == "approval":
        return Step(
            f"{ref} needs an approval ({why})",
            f"plangraph approve {shlex.quote(ref)} --by WHO",
        )
    if not isinstance(verifier, TestVerifier):
        return Step(
            f"{ref} is {criterion.state}: {why}", f"plangraph verify {shlex.quote(node_id)}"
        )
    return _test_step(ref, criterion, why, verifier, details or {})


def _test_step(
    ref: str,
    criterion: CriterionState,
    why: str,
    verifier: TestVerifier,
    details: Mapping[str, Any],
) -> Step:
    # details are whatever the record holds (the API records any): read them defensively
    failing = [str(e.get("test")) for e in _list(details.get("not_passed")) if isinstance(e, dict)]
    message = details.get("message")
    if isinstance(message, str) and message:
        why = f"{why}: {message}"
    unmatched = [str(p) for p in _list(details.get("unmatched"))]
    if unmatched:  # said once: the message of a run's record says it already
        said = isinstance(message, str) and message.startswith("no collected test matches")
        missed = ", ".join(map(unmatched_text, unmatched))
        why += f"{'' if said else f'; no collected test matches {missed}'}: fix the tests: "
        why += "pattern (or the test's name)"
    if failing:
        shown = " ".join(shlex.quote(t) for t in failing[:SHOWN_TESTS])
        more = f" (and {len(failing) - SHOWN_TESTS} more)" if len(failing) > SHOWN_TESTS else ""
        return Step(
            f"{ref} is {criterion.state}: {why}. Fix these tests, check them with "
            f"`pytest --plangraph {shown}`{more}, then run the whole suite (a narrowed run "
            "records no pass)",
            "pytest --plangraph",
            tuple(failing),
        )
    tests = details.get("tests")
    known = [str(t) for t in tests] if isinstance(tests, dict) and tests else list(verifier.tests)
    where = f" (its tests: {', '.join(known[:SHOWN_TESTS])})" if known else ""
    return Step(
        f"{ref} is {criterion.state}: {why}{where}; run the whole suite to record it",
        "pytest --plangraph",
        tuple(known),
    )


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _verifier(graph: Graph, node_id: str, criterion_id: str) -> Any:
    found = graph.nodes[node_id].criterion(criterion_id)
    return found.verifier if found is not None else None


def _node_step(
    state: PlanState, node_id: str, code: str, message: str, data: Mapping[str, Any]
) -> tuple[Step | None, str]:
    """The step for one of the node's own reasons (not its criteria's), and the node it
    waits for ("" when none)."""
    other = str(data.get("node") or "")
    if code in ("PREREQUISITE_NOT_COMPLETED", "CHILD_NOT_COMPLETED"):
        status = state.nodes[other].status if other in state.nodes else "unknown"
        role = "upstream node" if code == "PREREQUISITE_NOT_COMPLETED" else "child"
        return (
            Step(
                f"finish {role} {other} first (it is {status})",
                f"plangraph explain {shlex.quote(other)}",
            ),
            other,
        )
    if code in ("RETRY_BUDGET_EXHAUSTED", "REPLAN_BUDGET_EXHAUSTED"):
        return Step(message, f"plangraph retry {shlex.quote(node_id)} --by WHO"), ""
    if code in ("CHILD_CANCELLED_BY_EVENT", "CONFLICT_COMPLETED"):
        return Step(message), other
    return None, ""
