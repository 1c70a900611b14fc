"""In-memory plans, evidence and event logs for the status derivation tests.

``World`` holds a plan, the current file hashes and the event log; judge/derive.py is pure, so
nothing here touches a file, a store or git.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pytest_plangraph.judge.derive import derive
from pytest_plangraph.judge.inputs import Snapshot, input_digests
from pytest_plangraph.judge.states import PlanState
from pytest_plangraph.plan.evidence import Evidence, PlanRef, RunInfo
from pytest_plangraph.plan.graph import Graph
from pytest_plangraph.plan.model import Event, criterion_digest, runtime_plan

RUN = RunInfo(id="run-1", started="t0", finished="t1", python="3.11", plugin="0.1")

TEST = {"type": "test"}

APPROVAL = {"type": "approval", "role": "security"}


def crit(
    criterion_id: str = "ac", verifier: dict[str, Any] | None = None, **extra: Any
) -> dict[str, Any]:
    """A criterion definition (a test verifier unless told)."""
    return {"id": criterion_id, "assertion": criterion_id, "verifier": verifier or TEST, **extra}


def node(node_id: str, *criteria: dict[str, Any], **extra: Any) -> dict[str, Any]:
    """A step producing ``out/<id>.txt`` with *criteria* (one test criterion ``ac`` if none)."""
    body: dict[str, Any] = {"id": node_id, "outputs": [f"out/{node_id}.txt"]}
    return {**body, "acceptance": list(criteria) or [crit()], **extra}


def edge(source: str, target: str, kind: str = "requires", **extra: Any) -> dict[str, Any]:
    """``target`` depends on ``source``."""
    return {"from": source, "to": target, "type": kind, **extra}


def make_graph(nodes: list[dict[str, Any]], edges: Sequence[dict[str, Any]] = ()) -> Graph:
    """Index a plan made of *nodes* and *edges*."""
    plan = {"plangraph": 1, "plan": "p", "nodes": nodes, "edges": list(edges)}
    return Graph.of(runtime_plan(plan))


class World:
    """A plan, the current hash of every file, and the event log."""

    def __init__(self, graph: Graph, files: dict[str, str | None] | None = None) -> None:
        self.graph = graph
        self.files: dict[str, str | None] = {}
        for item in graph.nodes.values():
            self.files.update({path: f"h-{path}" for path in item.outputs})
        self.files.update(files or {})
        self.events: list[Event] = []

    def snapshot(self) -> Snapshot:
        return Snapshot(dict(self.files), {})

    def state(self) -> PlanState:
        return derive(self.graph, self.events, self.snapshot())

    def statuses(self) -> dict[str, str]:
        return {n: s.status for n, s in self.state().nodes.items()}

    def codes(self, node_id: str) -> list[str]:
        return [r.code for r in self.state().nodes[node_id].reasons]

    def add(
        self,
        kind: str,
        node_id: str,
        criterion: str | None = None,
        payload: dict[str, Any] | None = None,
    ) -> Event:
        seq = len(self.events) + 1
        event = Event(
            id=f"ev{seq}",
            seq=seq,
            kind=kind,  # type: ignore[arg-type]
            node=node_id,
            criterion=criterion,
            at=f"2024-01-01T00:00:{seq:02d}Z",
            by="alice",
            plan_digest=self.graph.plan.digest,
            payload=payload or {},
        )
        self.events.append(event)
        return event

    def evidence(self, node_id: str, criterion: str = "ac", **override: Any) -> Evidence:
        """A record bound to the current plan and files (subjects: the node's outputs)."""
        definition = self.graph.nodes[node_id].criterion(criterion)
        assert definition is not None
        fields: dict[str, Any] = {
            "plan": PlanRef(id="p", version=1, digest=self.graph.plan.digest),
            "node": node_id,
            "criterion": criterion,
            "criterion_digest": criterion_digest(node_id, definition),
            "input_digest": input_digests(self.graph, self.snapshot())[node_id],
            "verifier": definition.verifier.type,
            "outcome": "passed",
            "subjects": {p: self.files[p] for p in self.graph.nodes[node_id].outputs},
            "run": RUN,
            "recorded_by": "pytest",
        }
        return Evidence.create(**{**fields, **override})

    def verify(self, node_id: str, criterion: str = "ac", **override: Any) -> Evidence:
        record = self.evidence(node_id, criterion, **override)
        self.add("evidence", node_id, criterion, record.to_json())
        return record

    def approve(self, node_id: str, criterion: str = "review") -> Event:
        digest = input_digests(self.graph, self.snapshot())[node_id]
        definition = self.graph.nodes[node_id].criterion(criterion)
        role = getattr(definition.verifier, "role", None) if definition else None
        payload = {"input_digest": digest, "note": "", "role": role}  # as approve() records
        return self.add("approval", node_id, criterion, payload)

    def verify_all(self) -> None:
        for node_id in self.graph.topological_order():
            for definition in self.graph.nodes[node_id].acceptance:
                if definition.verifier.type == "approval":
                    self.approve(node_id, definition.id)
                else:
                    self.verify(node_id, definition.id)


# --- every status and reason code ------------------------------------------------------------


def _ab(*b_criteria: dict[str, Any], **b_extra: Any) -> World:
    """A → B (B requires A)."""
    return World(make_graph([node("A"), node("B", *b_criteria, **b_extra)], [edge("A", "B")]))


def _two() -> World:
    return _ab(crit("one"), crit("two"))


def _reviewed() -> World:
    return _ab(crit("ac"), crit("review", APPROVAL))
