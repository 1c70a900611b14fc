"""Status derivation: every status and reason code, and the seed-000 plan (parents, replay and
JSON are in test_state_parents.py).

Plans, evidence records and events are built directly in memory: judge/derive.py is pure, so nothing
here touches a file, a store or git. ``World`` (tests/state_helpers.py) holds a plan, the current
file hashes and the event log.
"""

from __future__ import annotations

from typing import Any

import pytest
from state_helpers import APPROVAL, World, _ab, _reviewed, _two, crit, edge, make_graph, node

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
