"""The JSON answer of ``plangraph status --format json``, which the HTTP API's
``GET /plans/{id}/status`` gives too: every node's state, a failed criterion's reasons naming the
tests that did not pass, and the skips or xfails a criterion's evidence allowed."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..api import PlanGraph
    from ..judge.logfold import LogFold
    from ..judge.states import NodeState, PlanState
    from ..plan.evidence import PlanRef


def status_json(
    plangraph: PlanGraph, fold: LogFold, state: PlanState, plan: PlanRef
) -> dict[str, Any]:
    """The status answer (without the ``format`` key) of *state*, derived from *fold*."""
    notes = _test_notes(plangraph, fold, state)
    return {
        "plan": plan.model_dump(),
        "nodes": [_node_json(n, notes) for n in state.nodes.values()],
    }


def _test_notes(
    plangraph: PlanGraph, fold: LogFold, state: PlanState
) -> dict[tuple[str, str], dict[str, Any]]:
    """The details of the latest evidence that failed, and of any that lists allowed skips
    or xfails: what names the tests in ``status --format json``."""
    failed = [(n.id, c.id) for n in state.nodes.values() for c in n.criteria if c.state == "failed"]
    judged = [(n.id, c.id) for n in state.nodes.values() for c in n.criteria if c.evidence]
    notes = plangraph.evidence_details(fold, judged, mentioning='"allowed"')
    notes.update(plangraph.evidence_details(fold, failed))
    return notes


def _node_json(node: NodeState, notes: Mapping[tuple[str, str], Mapping[str, Any]]) -> Any:
    """A node's JSON entry; a failed criterion's ``EVIDENCE_FAILED`` reasons name the tests
    that did not pass (``tests``, and the evidence's message), and a criterion whose
    evidence allowed skips or xfails lists them (``allowed``)."""
    data = node.to_json()
    for entry in data["criteria"]:
        details = notes.get((node.id, entry["id"]))
        if not details:
            continue
        if details.get("allowed"):
            entry["allowed"] = details["allowed"]
        tagged = [r for r in data["reasons"] if r.get("criterion") == entry["id"]]
        for reason in [*entry["reasons"], *tagged]:
            if reason["code"] == "EVIDENCE_FAILED":
                reason["tests"] = details.get("not_passed", [])
                if isinstance(message := details.get("message"), str):
                    reason["message"] += f": {message}"
    return data
