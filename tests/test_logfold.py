"""judge/logfold.py: a log folded, compacted at any point and folded on, derives exactly what the
whole log derives (random plans and logs), and its compacted size follows the plan."""

from __future__ import annotations

import random

import pytest
from gate_helpers import (
    Step,
    _random_world,
    change_step,
    event_step,
    hold_step,
    random_log,
    verify_step,
)
from state_helpers import World, crit, edge, make_graph, node

from pytest_plangraph.judge.derive import derive
from pytest_plangraph.judge.history import history
from pytest_plangraph.judge.logfold import LogFold

JUDGED_LOG: list[tuple[float, Step]] = [
    (0.45, verify_step(0.15)),
    (0.55, lambda world, node_id, rng: world.approve(node_id, "r")),
    (0.58, event_step("revoke", "r")),
    (0.8, lambda world, node_id, rng: world.add(  # claims carry the gate's verdict
        "claim", node_id, payload={"verdict": rng.choice(["PASSED", "FAILED"])}
    )),
    (0.82, hold_step),
    (0.85, event_step("retry")),
    (0.87, event_step("cancel")),
    (1.0, change_step),
]  # fmt: skip
"""Verdicts, approvals and revokes, claims that carry the gate's verdict, nodes held for a
person, retry grants, cancels, and files changing on the way (so input digests on record differ)."""


def _world(seed: int) -> tuple[World, random.Random]:
    rng = random.Random(seed)
    plain = _random_world(rng)
    nodes = []
    for item in plain.graph.plan.nodes:  # each node also gets an approval criterion "r"
        data = item.to_json(by_alias=True, exclude_unset=True)
        data["acceptance"].append(crit("r", {"type": "approval", "role": "lead"}))
        nodes.append(data)
    edges = [e.to_json(by_alias=True) for e in plain.graph.plan.edges]
    world = World(make_graph(nodes, edges))
    random_log(world, rng, JUDGED_LOG, length=80)
    return world, rng


@pytest.mark.parametrize("seed", range(40))
def test_a_compacted_fold_folded_on_derives_what_the_whole_log_does(seed: int) -> None:
    world, rng = _world(seed)
    expected = world.state()
    for split in sorted(rng.sample(range(len(world.events) + 1), 4)):
        fold = LogFold.of(world.events[:split]).compacted()
        assert fold.events is None
        fold.extend(world.events[split:])
        assert derive(world.graph, fold, world.snapshot()) == expected, split


@pytest.mark.parametrize("seed", range(10))
def test_a_fold_compacted_twice_on_the_way_still_agrees(seed: int) -> None:
    world, rng = _world(seed)
    first, second = sorted(rng.sample(range(len(world.events) + 1), 2))
    fold = LogFold.of(world.events[:first]).compacted()
    fold.extend(world.events[first:second])
    fold = fold.compacted()
    fold.extend(world.events[second:])
    assert derive(world.graph, fold, world.snapshot()) == world.state()


def test_compaction_drops_the_history_no_record_can_ask_about() -> None:
    world = World(make_graph([node("A"), node("B")], [edge("A", "B")]))
    for round_ in range(50):  # A's output changes every round, and both are verified again
        world.files["out/A.txt"] = f"v{round_}"
        world.verify("A")
        world.verify("B")
    whole = LogFold.of(world.events)
    compact = whole.compacted()
    assert len(whole.on_record["A"]) == 50
    # the latest records (A's at 98, B's at 99) ask for the last digest before them: A's
    # entries at 96 and 98 are all that is kept of 50
    assert compact.on_record["A"] == whole.on_record["A"][-2:]
    assert len(compact.evidence) == 2 and compact.count == whole.count == 100
    assert derive(world.graph, compact, world.snapshot()) == world.state()


def test_refused_claims_fold_into_a_count_per_node() -> None:
    world = World(make_graph([node("A", max_retry=1)]))
    for verdict in ("FAILED", "FAILED", "PASSED", "FAILED"):
        world.add("claim", "A", payload={"verdict": verdict})
    fold = LogFold.of(world.events)
    assert fold.refused == {"A": 3} and fold.claimed == {"A"}
    world.add("retry", "A")
    fold.add(world.events[-1])
    assert fold.refused == {"A": 0}
    assert derive(world.graph, fold, world.snapshot()).nodes["A"].failed_claims == 0


def test_a_claim_without_a_verdict_keeps_every_event_for_a_replay() -> None:
    world = World(make_graph([node("A")]))
    world.verify("A")
    world.add("claim", "A")  # no verdict: judged by replaying the log
    fold = LogFold.of(world.events)
    assert fold.unjudged and fold.events == world.events
    with pytest.raises(ValueError, match="replay"):
        fold.compacted()
    assert derive(world.graph, fold, world.snapshot()) == world.state()


def test_a_copy_folds_on_without_changing_the_original() -> None:
    world = World(make_graph([node("A")]))
    world.verify("A")
    fold = LogFold.of(world.events)
    copy = fold.copy()
    world.add("claim", "A", payload={"verdict": "FAILED"})
    copy.add(world.events[-1])
    assert (fold.count, fold.claimed, fold.refused) == (1, set(), {})
    assert (copy.count, copy.claimed, copy.refused) == (2, {"A"}, {"A": 1})
    assert copy.last_seq == 2 and fold.last_seq == 1


@pytest.mark.parametrize("seed", range(10))
def test_history_folds_each_event_once_and_agrees_with_each_prefix(seed: int) -> None:
    world, _ = _world(seed)
    snapshot = world.snapshot()
    target = world.events[-1].node or ""
    steps = history(world.graph, world.events, snapshot, target)
    mine = [i for i, e in enumerate(world.events) if e.node == target]
    expected = [derive(world.graph, world.events[: i + 1], snapshot) for i in mine]
    assert [s for _, s in steps] == [state.nodes[target].status for state in expected]
