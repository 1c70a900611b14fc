"""Status derivation: every status and reason code, the seed-000 plan, parents, replay.

Plans, evidence records and events are built directly in memory: judge/derive.py is pure, so nothing
here touches a file, a store or git. ``World`` (imported by test_gate.py too) holds a plan, the
current file hashes and the event log.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from pytest_plangraph.judge.derive import derive, history
from pytest_plangraph.judge.inputs import Snapshot, input_digests
from pytest_plangraph.judge.states import PlanState
from pytest_plangraph.plan.evidence import Evidence, PlanRef, RunInfo
from pytest_plangraph.plan.graph import Graph
from pytest_plangraph.plan.model import Event, Plan, criterion_digest

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
    return Graph.of(Plan.model_validate(plan))


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
        self.add("evidence", node_id, criterion, record.model_dump(mode="json"))
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


# --- the seed-000 plan: closure invalidation -------------------------------------------------

T_EDGES = [
    ("T1", "T2"), ("T1", "T3"), ("T2", "T4"), ("T3", "T5"), ("T4", "T5"), ("T5", "T6"),
    ("T5", "T7"), ("T6", "T8"), ("T6", "T9"), ("T7", "T9"), ("T8", "T10"), ("T9", "T11"),
    ("T10", "T12"), ("T11", "T12"),
]  # fmt: skip
T_NODES = [f"T{i}" for i in range(1, 13)]
DOWNSTREAM_OF_T5 = {"T6": ["T5"], "T7": ["T5"], "T8": ["T6"], "T9": ["T6", "T7"],
                    "T10": ["T8"], "T11": ["T9"], "T12": ["T10", "T11"]}  # fmt: skip


@pytest.fixture
def seed_000() -> World:
    world = World(make_graph([node(n) for n in T_NODES], [edge(a, b) for a, b in T_EDGES]))
    world.verify_all()
    return world


def test_seed_000_all_completed_with_valid_evidence(seed_000: World) -> None:
    state = seed_000.state()
    assert {n: s.status for n, s in state.nodes.items()} == dict.fromkeys(T_NODES, "completed")
    assert all(s.reasons == () for s in state.nodes.values())
    assert list(state.nodes) == T_NODES  # topological order (here also plan order)


def test_seed_000_a_changed_t5_makes_exactly_t5_to_t12_stale(seed_000: World) -> None:
    seed_000.files["out/T5.txt"] = "edited"
    state = seed_000.state()
    assert {n: s.status for n, s in state.nodes.items()} == {
        **dict.fromkeys(T_NODES[:4], "completed"),
        **dict.fromkeys(T_NODES[4:], "stale"),
    }
    t5 = state.nodes["T5"].criteria[0]
    assert [(r.code, r.data["path"], r.data["new"]) for r in t5.reasons] == [
        ("ARTIFACT_CHANGED", "out/T5.txt", "edited")
    ]
    for node_id, upstream in DOWNSTREAM_OF_T5.items():
        (criterion,) = state.nodes[node_id].criteria
        assert [(r.code, r.data["node"]) for r in criterion.reasons] == [
            ("UPSTREAM_CHANGED", u) for u in upstream
        ], node_id
        assert [(r.code, r.data["node"]) for r in state.nodes[node_id].reasons] == [
            *(("UPSTREAM_CHANGED", u) for u in upstream),
            *(("PREREQUISITE_NOT_COMPLETED", u) for u in upstream),
        ], node_id


def test_seed_000_reverifying_t5_does_not_freshen_its_dependents(seed_000: World) -> None:
    seed_000.files["out/T5.txt"] = "edited"
    seed_000.verify("T5")
    statuses = seed_000.statuses()
    assert [n for n, s in statuses.items() if s == "stale"] == T_NODES[5:]
    assert seed_000.state().nodes["T6"].reasons[0].data["node"] == "T5"


def test_seed_000_the_closure_can_be_reverified_in_any_order(seed_000: World) -> None:
    seed_000.files["out/T5.txt"] = "edited"
    for node_id in reversed(T_NODES[4:]):
        seed_000.verify(node_id)
    assert set(seed_000.statuses().values()) == {"completed"}


# --- every status and reason code ------------------------------------------------------------


def _ab(*b_criteria: dict[str, Any], **b_extra: Any) -> World:
    """A → B (B requires A)."""
    return World(make_graph([node("A"), node("B", *b_criteria, **b_extra)], [edge("A", "B")]))


def _two() -> World:
    return _ab(crit("one"), crit("two"))


def _reviewed() -> World:
    return _ab(crit("ac"), crit("review", APPROVAL))


def _approval_only() -> World:
    return _ab(crit("review", APPROVAL))


def _rivals() -> World:
    plan = [node("A"), node("B", crit("one"), crit("two"))]
    return World(make_graph(plan, [edge("A", "B", "conflicts")]))


def play(world: World, script: str) -> None:
    """Run ``verb NODE[/CRITERION]`` steps separated by ``;``: verify, fail, error (a test
    ref that matched nothing), unbound (evidence without subjects), claim, approve, revoke,
    cancel, all (verify everything), edit / delete PATH, reword (edit B's criterion)."""
    for step in filter(None, (part.strip() for part in script.split(";"))):
        verb, _, target = step.partition(" ")
        node_id, _, criterion = target.partition("/")
        if verb in ("verify", "fail", "error", "unbound"):
            outcome = {"fail": "failed", "error": "error"}.get(verb, "passed")
            extra: dict[str, Any] = {"subjects": {}} if verb == "unbound" else {}
            reason = "TEST_NOT_FOUND" if verb == "error" else None
            world.verify(node_id, criterion or "ac", outcome=outcome, reason=reason, **extra)
        elif verb == "approve":
            world.approve(node_id, criterion)
        elif verb in ("claim", "revoke", "cancel"):
            world.add(verb, node_id, criterion or None)
        elif verb == "all":
            world.verify_all()
        elif verb in ("edit", "delete"):
            world.files[target] = "edited" if verb == "edit" else None
        else:
            assert verb == "reword", verb
            reworded = node("B", crit("ac", assertion="a stricter assertion"))
            world.graph = make_graph([node("A"), reworded], [edge("A", "B")])


MISSING, WAITING = "CRITERION_MISSING", "PREREQUISITE_NOT_COMPLETED"
SCENARIOS = [
    # id, plan, script, status of B, reason codes of B
    ("pending", _ab, "", "pending", [MISSING, WAITING]),
    ("ready", _ab, "verify A", "ready", [MISSING]),
    ("in-progress", _two, "verify A; verify B/one", "in_progress", [MISSING]),
    ("awaiting-verification", _ab, "verify A; claim B", "awaiting_verification", [MISSING]),
    ("awaiting-approval", _reviewed, "verify A; verify B", "awaiting_approval",
     ["APPROVAL_MISSING"]),
    ("approval-revoked", _reviewed, "all; revoke B/review", "awaiting_approval",
     ["APPROVAL_REVOKED"]),
    ("approval-after-prerequisite", _approval_only, "", "pending", ["APPROVAL_MISSING", WAITING]),
    ("blocked-with-evidence", _two, "verify B/one", "blocked", [MISSING, WAITING]),
    ("blocked-with-a-claim", _ab, "claim B", "blocked", [MISSING, WAITING]),
    ("blocked-by-conflict", _rivals, "verify A; verify B/one", "blocked",
     [MISSING, "CONFLICT_COMPLETED"]),
    ("blocked-retry-budget", lambda: _ab(max_retry=1), "verify A; claim B; claim B", "blocked",
     [MISSING, "RETRY_BUDGET_EXHAUSTED"]),
    ("failed", _ab, "verify A; error B", "failed", ["EVIDENCE_FAILED"]),
    ("failed-beats-blocked", _ab, "fail B", "failed", ["EVIDENCE_FAILED", WAITING]),
    ("stale-artifact-changed", _ab, "all; edit out/B.txt", "stale", ["ARTIFACT_CHANGED"]),
    ("stale-artifact-deleted", _ab, "all; delete out/B.txt", "stale", ["ARTIFACT_DELETED"]),
    ("stale-upstream", _ab, "all; edit out/A.txt", "stale", ["UPSTREAM_CHANGED", WAITING]),
    ("stale-input", _ab, "verify A; unbound B; edit out/B.txt", "stale", ["INPUT_CHANGED"]),
    ("stale-criterion", _ab, "all; reword", "stale", ["CRITERION_CHANGED"]),
    ("stale-beats-failed", _two, "verify A; verify B/one; fail B/two; edit out/B.txt", "stale",
     ["ARTIFACT_CHANGED", "EVIDENCE_FAILED"]),
    ("stale-approval", _approval_only, "all; edit out/B.txt", "stale", ["APPROVAL_STALE"]),
    ("stale-approval-upstream", _approval_only, "all; edit out/A.txt", "stale",
     ["APPROVAL_STALE", "UPSTREAM_CHANGED", WAITING]),
    ("completed", _ab, "all", "completed", []),
    ("cancelled", _ab, "all; cancel B", "cancelled", ["CANCELLED"]),
]  # fmt: skip


@pytest.mark.parametrize(
    ("make", "script", "status", "codes"),
    [pytest.param(*row[1:], id=row[0]) for row in SCENARIOS],
)
def test_status_and_reasons(make: Any, script: str, status: str, codes: list[str]) -> None:
    world = make()
    play(world, script)
    assert (world.statuses()["B"], world.codes("B")) == (status, codes)


def test_the_table_covers_every_status_and_reason_code() -> None:
    assert {row[3] for row in SCENARIOS} == {
        "cancelled", "completed", "stale", "failed", "blocked", "awaiting_approval",
        "awaiting_verification", "in_progress", "ready", "pending",
    }  # fmt: skip
    parents = {"CHILD_NOT_COMPLETED", "CHILD_CANCELLED_BY_EVENT"}  # tested with parents below
    assert {code for row in SCENARIOS for code in row[4]} | parents == {
        "CRITERION_CHANGED", "ARTIFACT_CHANGED", "ARTIFACT_DELETED", "UPSTREAM_CHANGED",
        "INPUT_CHANGED", "EVIDENCE_FAILED", "CRITERION_MISSING", "PREREQUISITE_NOT_COMPLETED",
        "CONFLICT_COMPLETED", "CHILD_NOT_COMPLETED", "CHILD_CANCELLED_BY_EVENT",
        "APPROVAL_MISSING", "APPROVAL_REVOKED",
        "APPROVAL_STALE", "RETRY_BUDGET_EXHAUSTED", "CANCELLED",
    }  # fmt: skip


def test_cancelled_in_the_plan_wins_over_everything() -> None:
    world = _ab(cancelled=True)
    world.verify_all()
    state = world.state().nodes["B"]
    assert (state.status, [r.to_json() for r in state.reasons]) == (
        "cancelled",
        [{"code": "CANCELLED", "message": "cancelled in the plan", "by": None}],
    )


def test_a_cancelled_prerequisite_keeps_its_dependents_waiting() -> None:
    world = _ab()
    world.verify_all()
    world.add("cancel", "A")
    assert world.statuses() == {"A": "cancelled", "B": "blocked"}
    assert world.state().nodes["A"].reasons[0].data == {"by": "alice"}


def test_approval_is_valid_for_the_input_digest_it_was_given_for() -> None:
    world = _approval_only()
    world.verify("A")
    approval = world.approve("B")
    criterion = world.state().nodes["B"].criteria[0]
    assert (criterion.state, criterion.evidence) == ("valid", approval.id)
    world.files["out/B.txt"] = "x"
    stale = world.state().nodes["B"].criteria[0]
    assert (stale.state, stale.evidence) == ("stale", approval.id)
    assert stale.reasons[0].data["by"] == "alice"
    world.approve("B")
    assert world.statuses()["B"] == "completed"


def test_evidence_for_an_unknown_criterion_or_node_is_ignored() -> None:
    world = _ab()
    world.verify_all()
    world.add("evidence", "B", "gone", {"outcome": "failed"})
    world.add("evidence", "nobody", "ac", {"outcome": "failed"})
    world.add("approval", "B", "ac", {"input_digest": "x"})  # not an approval criterion
    assert world.statuses() == {"A": "completed", "B": "completed"}


def test_the_latest_evidence_counts() -> None:
    world = _ab()
    world.verify("A")
    world.verify("B", outcome="failed")
    world.verify("B")
    assert world.statuses()["B"] == "completed"
    world.verify("B", outcome="failed")
    assert world.statuses()["B"] == "failed"


def test_optional_criteria_do_not_hold_the_gate() -> None:
    world = _ab(crit("ac"), crit("extra", required=False))
    world.verify("A")
    world.verify("B")
    world.verify("B", "extra", outcome="failed")
    state = world.state().nodes["B"]
    assert state.status == "completed"
    assert [c.state for c in state.criteria] == ["valid", "failed"]
    assert (state.satisfied, state.required_count) == (1, 1)


# --- parents ---------------------------------------------------------------------------------


def _family(kind: str = "objective", *parent_criteria: dict[str, Any]) -> World:
    parent = node("O", *parent_criteria, kind=kind, outputs=[])
    if not parent_criteria:
        parent["acceptance"] = []
    children = [node("S1", parent="O"), node("S2", parent="O")]
    return World(make_graph([parent, *children]))


@pytest.mark.parametrize("kind", ["objective", "milestone"])
def test_a_parent_completes_only_when_every_child_not_cancelled_in_the_plan_does(
    kind: str,
) -> None:
    world = _family(kind)
    assert (world.statuses()["O"], world.codes("O")) == (
        "ready",
        ["CHILD_NOT_COMPLETED", "CHILD_NOT_COMPLETED"],
    )
    world.verify("S1")
    assert (world.statuses()["O"], world.codes("O")) == ("in_progress", ["CHILD_NOT_COMPLETED"])
    assert world.state().nodes["O"].reasons[0].data == {"node": "S2"}
    world.add("cancel", "S2")  # anyone's word: the parent goes on waiting
    assert world.statuses() == {"O": "in_progress", "S1": "completed", "S2": "cancelled"}
    [reason] = world.state().nodes["O"].reasons
    assert (reason.code, reason.data) == ("CHILD_CANCELLED_BY_EVENT", {"node": "S2", "by": "alice"})
    parent = node("O", kind=kind, outputs=[], acceptance=[])
    reviewed = make_graph([parent, node("S1", parent="O"), node("S2", parent="O", cancelled=True)])
    settled = World(reviewed)
    settled.verify("S1")
    assert settled.statuses() == {"O": "completed", "S1": "completed", "S2": "cancelled"}


def test_a_parent_awaits_its_approval_only_once_its_children_are_completed() -> None:
    """``awaiting_approval`` means an approval is all that is missing (DESIGN §5): not while
    a child, which an approval does not settle, is still open."""
    world = _family("milestone", crit("signoff", APPROVAL))
    assert (world.statuses()["O"], world.codes("O")) == (
        "ready",
        ["APPROVAL_MISSING", "CHILD_NOT_COMPLETED", "CHILD_NOT_COMPLETED"],
    )
    world.verify("S1")
    world.verify("S2")
    assert (world.statuses()["O"], world.codes("O")) == ("awaiting_approval", ["APPROVAL_MISSING"])
    world.approve("O", "signoff")
    assert world.statuses()["O"] == "completed"


@pytest.mark.parametrize("kind", ["objective", "milestone"])
def test_a_parent_that_gathers_nothing_is_never_completed(kind: str) -> None:
    """No criteria, no children, no strong prerequisites: nothing stands behind it, so it is
    never completed, as a step without criteria (a claim alone never does it)."""
    world = World(make_graph([node("O", kind=kind, outputs=[], acceptance=[]), node("S")]))
    world.add("claim", "O")
    state = world.state().nodes["O"]
    assert (state.status, [r.code for r in state.reasons]) == (
        "awaiting_verification",
        ["NO_ACCEPTANCE"],
    )
    assert "without children, strong prerequisites or required acceptance" in (
        state.reasons[0].message
    )
    gathering = make_graph(
        [node("O", kind=kind, outputs=[], acceptance=[]), node("S")], [edge("S", "O")]
    )
    world = World(gathering)
    world.verify("S")
    assert world.statuses()["O"] == "completed"  # through its prerequisite's evidence


def test_a_partner_held_back_only_by_another_conflict_still_blocks() -> None:
    """p and q conflict; y requires p; x conflicts with y. Which of p and q completes is for a
    person to settle (cancel one); until then y may still complete, so x is not completed
    either: conflicts are judged on the gate without conflicts edges."""
    plan = [node("p"), node("q"), node("y"), node("x")]
    edges = [edge("p", "q", "conflicts"), edge("p", "y"), edge("y", "x", "conflicts")]
    world = World(make_graph(plan, edges))
    world.verify_all()
    assert world.statuses() == {"p": "blocked", "q": "blocked", "y": "blocked", "x": "blocked"}
    [reason] = [r for r in world.state().nodes["x"].reasons if r.code == "CONFLICT_COMPLETED"]
    assert reason.data == {"node": "y"} and "but for conflicts edges" in reason.message
    world.add("cancel", "q")  # settled: p completes; now y and x plainly block each other
    settled = {"p": "completed", "q": "cancelled", "y": "blocked", "x": "blocked"}
    assert world.statuses() == settled
    world.add("cancel", "y")
    assert world.statuses()["x"] == "completed"


def test_a_step_does_not_wait_for_its_children() -> None:
    world = _family("step", crit("ac"))
    world.verify("O")
    assert world.statuses() == {"O": "completed", "S1": "ready", "S2": "ready"}


def test_completion_never_cascades_down() -> None:
    world = _family("objective", crit("review", APPROVAL))
    world.approve("O", "review")
    world.verify("S1")
    assert world.statuses() == {"O": "in_progress", "S1": "completed", "S2": "ready"}
    world.verify("S2")
    assert world.statuses() == dict.fromkeys(["O", "S1", "S2"], "completed")


def test_a_stale_child_reopens_its_parents() -> None:
    graph = make_graph(
        [
            node("O", kind="objective", outputs=[], acceptance=[]),
            node("M", kind="milestone", parent="O", outputs=[], acceptance=[]),
            node("S", parent="M"),
        ]
    )
    world = World(graph)
    world.verify("S")
    assert set(world.statuses().values()) == {"completed"}
    world.files["out/S.txt"] = "x"
    assert world.statuses() == {"O": "in_progress", "M": "in_progress", "S": "stale"}


# --- replay, JSON ----------------------------------------------------------------------------


def test_until_seq_replays_the_log_up_to_an_event() -> None:
    world = _ab()
    world.verify("A")
    failed = world.add("claim", "B")
    world.verify("B")
    earlier = derive(world.graph, world.events, world.snapshot(), until_seq=failed.seq)
    assert earlier.nodes["B"].status == "awaiting_verification"
    assert world.statuses()["B"] == "completed"


def test_history_gives_the_status_after_each_event_of_the_node() -> None:
    world = _two()
    world.add("claim", "B")
    world.verify("A")
    world.verify("B", "one")
    world.verify("B", "two")
    replay = history(world.graph, world.events, world.snapshot(), "B")
    assert [(e.kind, status) for e, status in replay] == [
        ("claim", "blocked"),
        ("evidence", "awaiting_verification"),
        ("evidence", "completed"),
    ]


def test_a_context_made_once_serves_derivations_of_the_same_files() -> None:
    from pytest_plangraph.judge.ledger import Context

    world = _two()
    world.verify("A")
    world.verify("B", "one")
    snapshot = world.snapshot()
    context = Context.of(world.graph, snapshot)
    shared = derive(world.graph, world.events, snapshot, context=context)
    assert shared == derive(world.graph, world.events, snapshot)
    # the context carries the files: one made for other files judges by those
    world.files["out/A.txt"] = "changed"
    assert derive(world.graph, world.events, world.snapshot()).nodes["A"].status == "stale"
    again = derive(world.graph, world.events, world.snapshot(), context=context)
    assert again.nodes["A"].status == shared.nodes["A"].status == "completed"


def test_to_json_shapes() -> None:
    world = _reviewed()
    world.verify("A")
    record = world.verify("B")
    assert world.state().nodes["B"].to_json() == {
        "id": "B",
        "kind": "step",
        "status": "awaiting_approval",
        "reasons": [
            {
                "code": "APPROVAL_MISSING",
                "message": "review: no approval recorded",
                "criterion": "review",
            }
        ],
        "criteria": [
            {"id": "ac", "required": True, "state": "valid", "evidence": record.id, "reasons": []},
            {
                "id": "review",
                "required": True,
                "state": "awaiting_approval",
                "evidence": None,
                "reasons": [{"code": "APPROVAL_MISSING", "message": "no approval recorded"}],
            },
        ],
        "satisfied": 1,
        "required_count": 2,
    }
