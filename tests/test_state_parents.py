"""Status derivation of parents (objectives and milestones over their children), replay up to an
event, and the JSON shape of a state.

Pure, like test_state.py: plans, evidence and events are built in memory with ``World``.
"""

from __future__ import annotations

from typing import Any

import pytest
from state_helpers import APPROVAL, World, _ab, _reviewed, _two, crit, edge, make_graph, node

from pytest_plangraph.judge.derive import derive
from pytest_plangraph.judge.history import history

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
