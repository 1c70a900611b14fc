"""``plangraph history`` with claims recorded without the gate's verdict: linear in the events
(it used to replay the log from its start at every step), and still what a replay of each
prefix of the log says."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from cli_helpers import plangraph_main
from gate_helpers import PLAIN_LOG, _random_world, random_log

from pytest_plangraph.api import PlanGraph
from pytest_plangraph.judge import ledger
from pytest_plangraph.judge.derive import derive
from pytest_plangraph.judge.history import history
from pytest_plangraph.plan.model import Event
from pytest_plangraph.vcs.environment import now

SCHEMA = "step-user-schema"


@pytest.mark.parametrize("seed", range(12))
def test_history_with_bare_claims_agrees_with_a_replay_of_each_prefix(seed: int) -> None:
    rng = random.Random(seed)
    world = _random_world(rng)
    random_log(world, rng, PLAIN_LOG, length=70)  # claims without a verdict, retries, cancels
    snapshot = world.snapshot()
    for target in world.graph.nodes:
        steps = history(world.graph, world.events, snapshot, target)
        mine = [i for i, e in enumerate(world.events) if e.node == target]
        expected = [derive(world.graph, world.events[: i + 1], snapshot) for i in mine]
        assert [s for _, s in steps] == [state.nodes[target].status for state in expected]


def _bare_claims(root: Path, count: int) -> None:
    """*count* claims of SCHEMA appended as bare events (no verdict), as an old client or a
    merged shard leaves them."""
    with PlanGraph.open(root) as graph:
        digest = graph.plan_ref().digest
        at = now()
        graph.store.append_many(
            [
                Event(kind="claim", node=SCHEMA, at=at, by=f"agent-{i}", plan_digest=digest)
                for i in range(count)
            ]
        )


def _walked(root: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[int, list[str]]:
    """How many events ``plangraph history`` replayed from the log's start (summed over every
    replay it made), and the statuses it printed."""
    walked = [0]
    original = ledger._replay_ticks

    def counting(context: ledger.Context, events: list[Event]) -> list[ledger.Tick]:
        walked[0] += len(events)
        return original(context, events)

    with monkeypatch.context() as patched:
        patched.setattr(ledger, "_replay_ticks", counting)
        result = plangraph_main(root, "history", SCHEMA, "--format", "json")
    assert result.code == 0, result.err
    return walked[0], [e["status_after"] for e in result.json()["events"]]


def test_history_of_thousands_of_bare_claims_is_linear(
    project, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = project("jwt-login")
    assert plangraph_main(root, "verify", SCHEMA).code == 0
    sizes = (1000, 2000)
    work = []
    for size in sizes:
        _bare_claims(root, size - (sum(sizes[:1]) if work else 0))
        walked, statuses = _walked(root, monkeypatch)
        assert len(statuses) == size + 1  # the evidence and each claim
        work.append(walked)
        # the last row is what status says now, which replays the whole log once
        now_status = plangraph_main(root, "status", "--format", "json").json()
        node = next(n for n in now_status["nodes"] if n["id"] == SCHEMA)
        assert statuses[-1] == node["status"]
    # quadratic was about size²/2 events replayed (two million at 2,000 claims)
    assert work[1] <= 2 * sizes[1]
    assert work[1] <= 2 * work[0] + sizes[1]


def test_history_shows_a_stored_name_with_control_characters_escaped(project) -> None:
    """A name stored before bidirectional controls were refused (or merged from such a store)
    is shown by its escapes: it can neither reorder the row nor pass for another name."""
    root = project("jwt-login")
    names = ["sec\u202eytiruces", "a\nb", "\u2066admin\u2069"]
    with PlanGraph.open(root) as graph:
        digest = graph.plan_ref().digest
        at = now()
        graph.store.append_many(
            [Event(kind="claim", node=SCHEMA, at=at, by=n, plan_digest=digest) for n in names]
        )
    shown = plangraph_main(root, "history", SCHEMA)
    assert shown.code == 0, shown.err
    assert "sec\\u202eytiruces" in shown.out and "a\\nb" in shown.out
    assert "\\u2066admin\\u2069" in shown.out
    assert all(line.isprintable() for line in shown.out.splitlines())
    as_json = plangraph_main(root, "history", SCHEMA, "--format", "json").json()
    assert [e["by"] for e in as_json["events"]] == names  # the data itself, as stored
