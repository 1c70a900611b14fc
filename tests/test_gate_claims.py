"""judge/gate.py and the claim replay: the retry budget, claims judged by replay (checked against a
fresh derivation per claim) and cancel events.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Any

import pytest
from gate_helpers import _ab, _random_world, random_log
from state_helpers import World, crit, edge, make_graph, node

from pytest_plangraph.errors import UsageError
from pytest_plangraph.judge.derive import derive, derive_node
from pytest_plangraph.judge.gate import decide, gate

# --- the retry budget ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("max_retry", "claims", "refused", "status"),
    [
        (2, 2, 2, "awaiting_verification"),
        (2, 3, 3, "blocked"),
        (1, 2, 2, "blocked"),
        (0, 1, 1, "blocked"),
        (0, 0, 0, "ready"),
    ],
)
def test_refused_claims_spend_the_retry_budget(
    max_retry: int, claims: int, refused: int, status: str
) -> None:
    world = _ab(max_retry=max_retry)
    world.verify("A")
    for _ in range(claims):
        world.add("claim", "B")
    state = world.state().nodes["B"]
    assert (state.failed_claims, state.status, state.claimed) == (refused, status, claims > 0)
    exhausted = [r.data for r in state.reasons if r.code == "RETRY_BUDGET_EXHAUSTED"]
    assert exhausted == (
        [{"refused": refused, "max_retry": max_retry}] if status == "blocked" else []
    )


def test_a_retry_grant_restores_the_budget() -> None:
    world = _ab(max_retry=0)
    world.verify("A")
    world.add("claim", "B")
    assert world.statuses()["B"] == "blocked"
    world.add("retry", "B")
    state = world.state().nodes["B"]
    assert (state.status, state.failed_claims) == ("awaiting_verification", 0)


def test_a_claim_is_judged_at_the_moment_it_was_made() -> None:
    world = _ab(max_retry=0)
    world.add("claim", "B")  # refused: nothing verified yet
    world.add("retry", "B")
    world.verify_all()
    world.add("claim", "B")  # accepted
    world.add("claim", "A")  # accepted
    state = world.state()
    assert [(s.status, s.failed_claims) for s in state.nodes.values()] == [
        ("completed", 0),
        ("completed", 0),
    ]


def test_a_claim_before_the_prerequisite_passed_is_refused() -> None:
    world = _ab(max_retry=0)
    world.verify("B")
    world.add("claim", "B")
    world.verify("A")
    state = world.state().nodes["B"]
    # the budget decides before the evidence does: blocked until a person grants a retry
    assert (state.status, state.failed_claims) == ("blocked", 1)
    assert [r.code for r in state.reasons] == ["RETRY_BUDGET_EXHAUSTED"]
    world.add("retry", "B")
    assert world.statuses()["B"] == "completed"


def test_a_spent_budget_keeps_dependents_and_parents_from_completing() -> None:
    parent = node("O", kind="objective", outputs=[], acceptance=[])
    world = World(
        make_graph(
            [parent, node("A", parent="O", max_retry=0), node("B", parent="O")], [edge("A", "B")]
        )
    )
    world.add("claim", "A")  # refused: nothing verified yet, and the budget of 0 is spent
    world.verify_all()
    assert world.statuses() == {"O": "in_progress", "A": "blocked", "B": "blocked"}
    assert world.codes("B") == ["PREREQUISITE_NOT_COMPLETED"]
    world.add("claim", "B")  # refused: its prerequisite is blocked
    assert world.state().nodes["B"].failed_claims == 1
    world.add("retry", "A")
    assert world.statuses() == {"O": "completed", "A": "completed", "B": "completed"}


def test_a_claim_on_a_spent_budget_is_refused_whatever_the_evidence() -> None:
    world = _ab(max_retry=0)
    world.add("claim", "B", payload={"verdict": "FAILED"})
    world.verify_all()
    world.add("claim", "B")  # judged by replay: the budget was spent, so refused
    state = world.state().nodes["B"]
    assert (state.status, state.failed_claims) == ("blocked", 2)


def test_an_exhausted_budget_blocks_even_with_partial_evidence() -> None:
    world = World(make_graph([node("B", crit("one"), crit("two"), max_retry=1)]))
    world.add("claim", "B")
    world.add("claim", "B")
    world.verify("B", "one")
    assert (world.statuses()["B"], world.codes("B")) == (
        "blocked",
        ["CRITERION_MISSING", "RETRY_BUDGET_EXHAUSTED"],
    )


def test_a_verdict_recorded_with_the_claim_is_trusted() -> None:
    world = _ab(max_retry=0)
    world.verify_all()
    world.add("claim", "B", payload={"verdict": "FAILED"})
    world.add("claim", "A", payload={"verdict": "PASSED"})
    assert [s.failed_claims for s in world.state().nodes.values()] == [0, 1]


def test_a_claim_on_a_cancelled_node_is_refused() -> None:
    world = _ab(max_retry=0)
    world.verify_all()
    world.add("cancel", "B")
    world.add("claim", "B")
    state = world.state().nodes["B"]
    assert (state.status, state.failed_claims) == ("cancelled", 1)


# --- the incremental replay agrees with deriving the log afresh at every claim ----------------


def _logged_world(seed: int) -> tuple[World, random.Random]:
    """A random world with a random log, and the generator (at the state it reached)."""
    rng = random.Random(seed)
    world = _random_world(rng)
    random_log(world, rng)
    return world, rng


def _refusals(events: Sequence[Any], refused: Callable[[int, Any], bool]) -> dict[str, int]:
    """Refused claims per node since its last retry grant, each claim judged by *refused*."""
    expected: dict[str, int] = {}
    for i, event in enumerate(events):
        if event.kind == "retry":
            expected[event.node or ""] = 0
        elif event.kind == "claim":
            expected[event.node or ""] = expected.get(event.node or "", 0) + refused(i, event)
    return expected


@pytest.mark.parametrize("seed", range(30))
def test_claims_replayed_incrementally_match_a_fresh_derivation_per_claim(seed: int) -> None:
    world, _ = _logged_world(seed)
    snapshot = world.snapshot()

    def refused(i: int, event: Any) -> bool:
        before = derive(world.graph, world.events[:i], snapshot).nodes[event.node or ""]
        return before.status != "completed"

    expected = _refusals(world.events, refused)
    state = world.state()
    assert {n: s.failed_claims for n, s in state.nodes.items() if n in expected} == expected


@pytest.mark.parametrize("seed", range(20))
def test_claims_with_recorded_verdicts_count_without_a_replay(seed: int) -> None:
    world, rng = _logged_world(seed)
    plain = world.state()
    # the same log with every claim carrying a verdict, against the first log's outcome
    verdicts = [rng.choice(["PASSED", "FAILED"]) for _ in world.events]
    events = []
    for event, verdict in zip(world.events, verdicts, strict=True):
        if event.kind == "claim":
            event = event.replace(**{"payload": {"verdict": verdict}})
        events.append(event)
    expected = _refusals(events, lambda _, event: event.payload["verdict"] == "FAILED")
    state = derive(world.graph, events, world.snapshot())
    assert {n: s.failed_claims for n, s in state.nodes.items() if n in expected} == expected
    cancelled = {n for n, s in plain.nodes.items() if s.status == "cancelled"}
    assert {n for n, s in state.nodes.items() if s.status == "cancelled"} == cancelled


@pytest.mark.parametrize("seed", range(60))
def test_one_node_derived_alone_is_the_same_as_in_the_whole_state(seed: int) -> None:
    world, _ = _logged_world(seed)
    state = world.state()
    for node_id in world.graph.nodes:
        alone = derive_node(world.graph, world.events, world.snapshot(), node_id)
        assert alone == state.nodes[node_id], node_id
        assert decide(alone) == gate(world.graph, state, node_id)
    with pytest.raises(UsageError, match="unknown node 'ghost'"):
        derive_node(world.graph, world.events, world.snapshot(), "ghost")


# --- cancels: only the plan file settles a parent ---------------------------------------------


def test_a_cancel_event_on_a_completed_child_reopens_its_parent_and_refuses_its_claim() -> None:
    parent = node("O", kind="objective", outputs=[], acceptance=[])
    world = World(make_graph([parent, node("S", parent="O")]))
    world.verify("S")
    assert world.statuses()["O"] == "completed"
    world.add("cancel", "S")
    world.add("claim", "O")  # no verdict recorded with it: the gate is replayed
    state = world.state().nodes["O"]
    assert (state.status, state.failed_claims) == ("awaiting_verification", 1)
    assert [(r.code, r.data) for r in state.reasons] == [
        ("CHILD_CANCELLED_BY_EVENT", {"node": "S", "by": "alice"})
    ]


def test_a_cancel_event_on_a_prerequisite_never_satisfies_its_dependent() -> None:
    world = World(make_graph([node("A"), node("B")], [edge("A", "B")]))
    world.verify_all()
    world.add("cancel", "A")
    assert world.statuses() == {"A": "cancelled", "B": "blocked"}
    assert world.codes("B") == ["PREREQUISITE_NOT_COMPLETED"]
