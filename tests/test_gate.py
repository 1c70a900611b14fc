"""judge/gate.py: input digests and paths, evidence validity, the gate's decision, conflicts, the
retry budget, and claims judged by replay (checked against a fresh derivation per claim)."""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Any

import pytest
from test_state import APPROVAL, World, crit, edge, make_graph, node

from pytest_plangraph.errors import UsageError
from pytest_plangraph.judge.derive import derive, derive_node
from pytest_plangraph.judge.gate import Completion, decide, final_completion, gate, validity
from pytest_plangraph.judge.inputs import (
    Links,
    Snapshot,
    consumed_files,
    input_digests,
    needed_paths,
)
from pytest_plangraph.plan.evidence import Evidence
from pytest_plangraph.plan.model import criterion_digest


def _ab(**b_extra: Any) -> World:
    return World(make_graph([node("A"), node("B", **b_extra)], [edge("A", "B")]))


def test_a_passing_gate_names_the_evidence_it_used() -> None:
    world = World(make_graph([node("A", crit("ac"), crit("review", APPROVAL))]))
    record = world.verify("A")
    approval = world.approve("A", "review")
    decision = gate(world.graph, world.state(), "A")
    assert decision.to_json() == {
        "node": "A",
        "verdict": "PASSED",
        "status": "completed",
        "reasons": [],
        "evidence": [record.id, approval.id],
    }


def test_a_refused_gate_says_why() -> None:
    world = _ab()
    record = world.verify("B")
    decision = gate(world.graph, world.state(), "B").to_json()
    assert (decision["verdict"], decision["status"], decision["evidence"]) == (
        "FAILED",
        "blocked",
        [record.id],
    )
    assert decision["reasons"] == [
        {
            "code": "PREREQUISITE_NOT_COMPLETED",
            "message": "strong prerequisite A is not completed",
            "node": "A",
        }
    ]


def test_the_gate_refuses_an_unknown_node() -> None:
    world = _ab()
    with pytest.raises(UsageError, match="unknown node 'Z'"):
        gate(world.graph, world.state(), "Z")


# --- input digests and paths -----------------------------------------------------------------

CHAIN = make_graph([node("A"), node("B"), node("C")], [edge("A", "B"), edge("B", "C")])


@pytest.mark.parametrize(
    ("edge_extra", "propagates"),
    [
        ({}, True),
        ({"type": "consumes"}, True),
        ({"type": "validates"}, True),
        ({"strength": "weak"}, False),
        ({"type": "related"}, False),
        ({"type": "conflicts"}, False),
        ({"status": "proposed"}, False),
        ({"status": "inactive"}, False),
    ],
)
def test_a_changed_output_moves_the_digests_downstream_only_over_strong_edges(
    edge_extra: dict[str, Any], propagates: bool
) -> None:
    graph = make_graph([node("A"), node("B"), node("Z")], [{**edge("A", "B"), **edge_extra}])
    world = World(graph)
    before = input_digests(graph, world.snapshot())
    world.files["out/A.txt"] = "changed"
    after = input_digests(graph, world.snapshot())
    assert before["A"] != after["A"]
    assert (before["B"] != after["B"]) is propagates
    assert before["Z"] == after["Z"]


def test_digests_are_deterministic_and_transitive() -> None:
    world = World(CHAIN)
    first = input_digests(CHAIN, world.snapshot())
    assert first == input_digests(CHAIN, world.snapshot())
    assert len(set(first.values())) == 3
    world.files["out/A.txt"] = "changed"
    assert all(input_digests(CHAIN, world.snapshot())[n] != first[n] for n in "ABC")


def test_a_criterion_edit_changes_the_digest_and_criterion_order_does_not() -> None:
    one, two = crit("one"), crit("two")
    digest = input_digests(make_graph([node("A", one, two)]), Snapshot({}))["A"]
    assert input_digests(make_graph([node("A", two, one)]), Snapshot({}))["A"] == digest
    edited = crit("two", assertion="something else")
    assert input_digests(make_graph([node("A", one, edited)]), Snapshot({}))["A"] != digest


def test_a_missing_output_differs_from_a_present_one() -> None:
    graph = make_graph([node("A")])
    present = input_digests(graph, Snapshot({"out/A.txt": "h"}))["A"]
    assert input_digests(graph, Snapshot({"out/A.txt": None}))["A"] != present


def test_status_and_events_never_enter_the_digest() -> None:
    world = World(CHAIN)
    before = world.state().input_digests
    world.verify_all()
    world.add("claim", "C")
    assert world.state().input_digests == before == input_digests(CHAIN, world.snapshot())


UPSTREAM_FILES = ("out/a.json", "out/b.json", "out/sub/c.txt")


@pytest.mark.parametrize(
    ("edge_extra", "expected"),
    [
        ({}, list(UPSTREAM_FILES)),
        ({"artifacts": ["out/a.json"]}, ["out/a.json"]),
        ({"artifacts": ["out/*.json"]}, ["out/a.json", "out/b.json"]),
        ({"artifacts": ["out/sub"]}, ["out/sub/c.txt"]),
        ({"artifacts": ["out/not-made.txt"]}, ["out/not-made.txt"]),
        ({"artifacts": ["out/*.csv"]}, []),
        ({"strength": "weak"}, []),
        ({"type": "requires"}, []),
    ],
)
def test_consumed_files(edge_extra: dict[str, Any], expected: list[str]) -> None:
    consumes = {**edge("up", "down", "consumes"), **edge_extra}
    graph = make_graph([node("up", outputs=list(UPSTREAM_FILES)), node("down")], [consumes])
    snapshot = Snapshot({}, {"up": UPSTREAM_FILES})
    assert consumed_files(graph, "down", snapshot) == expected


def test_needed_paths_lists_every_file_a_snapshot_must_hash() -> None:
    schema = {"type": "schema", "schema": "schemas/user.json", "artifact": "fixtures/user.json"}
    artifact = {"type": "artifact", "path": "dist/app.whl"}
    graph = make_graph(
        [
            node("up", outputs=["build/"]),
            node("down", crit("s", schema), crit("a", artifact), outputs=["out/down.txt"]),
        ],
        [edge("up", "down", "consumes", artifacts=["build/lib.so"])],
    )
    world = World(graph)
    world.add("evidence", "down", "s", {"subjects": {"tests/test_x.py": "h", "conftest.py": "h"}})
    outputs = {"up": ("build/lib.so", "build/main.o")}
    assert needed_paths(graph, world.events, outputs) == {
        "build/lib.so",
        "build/main.o",
        "out/down.txt",
        "schemas/user.json",
        "fixtures/user.json",
        "dist/app.whl",
        "tests/test_x.py",
        "conftest.py",
    }


# --- validity of one record ------------------------------------------------------------------


def _judge(world: World, record: Evidence, **kwargs: Any) -> tuple[str, list[dict[str, Any]]]:
    definition = world.graph.nodes[record.node].criterion(record.criterion)
    assert definition is not None
    state, reasons = validity(
        record,
        current_criterion_digest=criterion_digest(record.node, definition),
        snapshot=world.snapshot(),
        current_input_digest=input_digests(world.graph, world.snapshot())[record.node],
        graph=world.graph,
        **kwargs,
    )
    return state, [r.to_json() for r in reasons]


def test_validity_of_a_fresh_passed_record() -> None:
    world = World(CHAIN)
    assert _judge(world, world.evidence("B")) == ("valid", [])


@pytest.mark.parametrize(("outcome", "reason"), [("failed", None), ("error", "TEST_NOT_FOUND")])
def test_validity_of_a_failed_record(outcome: str, reason: str | None) -> None:
    world = World(CHAIN)
    record = world.evidence("B", outcome=outcome, reason=reason)
    world.files["out/B.txt"] = "changed"  # still failed: the verdict has to be rerun anyway
    state, reasons = _judge(world, record)
    assert state == "failed"
    assert reasons == [
        {
            "code": "EVIDENCE_FAILED",
            "message": reasons[0]["message"],
            "outcome": outcome,
            "reason": reason,
            "evidence": record.id,
        }
    ]
    assert (reason or outcome) in reasons[0]["message"]


def test_validity_names_a_changed_and_a_deleted_subject() -> None:
    world = World(CHAIN, {"src/b.py": "h-b"})
    record = world.evidence("B", subjects={"out/B.txt": "h-out/B.txt", "src/b.py": "h-b"})
    world.files.update({"out/B.txt": "new", "src/b.py": None})
    state, reasons = _judge(world, record)
    assert state == "stale"
    assert [(r["code"], r["path"], r["old"], r.get("new")) for r in reasons] == [
        ("ARTIFACT_CHANGED", "out/B.txt", "h-out/B.txt", "new"),
        ("ARTIFACT_DELETED", "src/b.py", "h-b", None),
    ]


def test_validity_sees_a_criterion_change() -> None:
    world = World(CHAIN)
    record = world.evidence("B", criterion_digest="0" * 64)
    state, reasons = _judge(world, record)
    assert (state, [r["code"] for r in reasons]) == ("stale", ["CRITERION_CHANGED"])
    assert reasons[0]["old"] == "0" * 64


def test_validity_names_the_changed_upstream_node_when_told_which() -> None:
    world = World(CHAIN)
    record = world.evidence("B")
    world.files["out/A.txt"] = "changed"
    told = _judge(world, record, changed_upstream=lambda n: n == "A")
    assert told[0] == "stale"
    assert [(r["code"], r["node"]) for r in told[1]] == [("UPSTREAM_CHANGED", "A")]
    untold = _judge(world, record)
    assert [r["code"] for r in untold[1]] == ["INPUT_CHANGED"]


# --- conflicts -------------------------------------------------------------------------------


def _rivals(**extra: Any) -> World:
    return World(make_graph([node("A"), node("B")], [edge("A", "B", "conflicts", **extra)]))


def test_two_conflicting_nodes_that_both_pass_block_each_other() -> None:
    world = _rivals()
    world.verify_all()
    assert world.statuses() == {"A": "blocked", "B": "blocked"}
    assert [r.data for r in world.state().nodes["A"].reasons] == [{"node": "B"}]
    world.add("cancel", "B")
    assert world.statuses() == {"A": "completed", "B": "cancelled"}


def test_a_weak_or_inactive_conflicts_edge() -> None:
    weak = _rivals(strength="weak")
    weak.verify_all()
    assert weak.statuses() == {"A": "blocked", "B": "blocked"}  # conflicts ignore strength
    inactive = _rivals(status="inactive")
    inactive.verify_all()
    assert inactive.statuses() == {"A": "completed", "B": "completed"}


def test_a_conflict_blocks_what_depends_on_the_blocked_node() -> None:
    graph = make_graph(
        [node("A"), node("B"), node("C")],
        [edge("A", "B", "conflicts"), edge("B", "C")],
    )
    world = World(graph)
    world.verify_all()
    assert world.statuses() == {"A": "blocked", "B": "blocked", "C": "blocked"}
    assert world.codes("C") == ["PREREQUISITE_NOT_COMPLETED"]


def test_completion_counts_follow_changing_verdicts() -> None:
    graph = make_graph([node("A"), node("B"), node("C")], [edge("A", "B"), edge("B", "C")])
    required = {n: ["ac"] for n in "ABC"}
    raw = Completion(Links.of(graph), required, [])
    for node_id in "CBA":
        raw.set_ok(node_id, "ac", True)
    assert raw.done == {"A": True, "B": True, "C": True}
    raw.set_ok("A", "ac", False)
    assert raw.done == {"A": False, "B": False, "C": False}
    raw.set_ok("A", "ac", True)
    raw.set_ok("B", "not-a-criterion", False)  # ignored: only required criteria count
    assert all(final_completion(Links.of(graph), raw).done.values())
    raw.cancel("B")
    assert final_completion(Links.of(graph), raw).done == {"A": True, "B": False, "C": False}


def test_completion_runs_down_a_long_chain_without_recursion() -> None:
    ids = [f"N{i}" for i in range(3000)]
    graph = make_graph(
        [node(n) for n in ids], [edge(ids[i - 1], ids[i]) for i in range(1, len(ids))]
    )
    raw = Completion(Links.of(graph), {n: ["ac"] for n in ids}, [])
    for node_id in reversed(ids):
        raw.set_ok(node_id, "ac", True)
    assert all(raw.done.values())
    raw.set_ok("N0", "ac", False)
    assert not any(raw.done.values())


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


def _random_world(rng: random.Random) -> World:
    ids = [f"N{i}" for i in range(7)]
    nodes = []
    for i, node_id in enumerate(ids):
        extra: dict[str, Any] = {"max_retry": rng.choice([0, 1, 2])}
        if i and rng.random() < 0.3:
            extra["parent"] = ids[rng.randrange(i)]
        kind = rng.choice(["step", "step", "objective", "milestone"])
        criteria = [crit("a"), crit("b", required=rng.random() < 0.7)]
        nodes.append(node(node_id, *criteria, kind=kind, **extra))
    edges = [
        edge(ids[i], ids[j], rng.choice(["requires", "consumes", "validates"]),
             strength=rng.choice(["strong", "strong", "weak"]))
        for j in range(len(ids)) for i in range(j) if rng.random() < 0.2
    ]  # fmt: skip
    if rng.random() < 0.5:
        edges.append(edge(*rng.sample(ids, 2), "conflicts"))
    return World(make_graph(nodes, edges))


Step = Callable[[World, str, random.Random], object]
"""One event (or file change) of a random log, about a node."""


def verify_step(failing: float) -> Step:
    """Evidence for criterion a or b, failed with probability *failing*."""

    def step(world: World, node_id: str, rng: random.Random) -> None:
        outcome = "failed" if rng.random() < failing else "passed"
        world.verify(node_id, rng.choice(["a", "b"]), outcome=outcome)

    return step


def event_step(kind: str, criterion: str | None = None) -> Step:
    """A bare event of *kind*."""
    return lambda world, node_id, rng: world.add(kind, node_id, criterion)


def change_step(world: World, node_id: str, rng: random.Random) -> None:
    """The node's output file changes."""
    world.files[f"out/{node_id}.txt"] = f"v{rng.random()}"


PLAIN_LOG: list[tuple[float, Step]] = [
    (0.6, verify_step(0.1)),
    (0.9, event_step("claim")),  # no verdict: judged by replay
    (0.95, event_step("retry")),
    (0.97, event_step("cancel")),
    (1.0, change_step),
]


def random_log(
    world: World, rng: random.Random, steps: list[tuple[float, Step]] = PLAIN_LOG, length: int = 60
) -> None:
    """*length* random steps about random nodes; each step's share of the log is the gap
    between its bound and the one before."""
    ids = list(world.graph.nodes)
    for _ in range(length):
        node_id, roll = rng.choice(ids), rng.random()
        next(step for bound, step in steps if roll < bound)(world, node_id, rng)


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
            event = event.model_copy(update={"payload": {"verdict": verdict}})
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


# --- what flows downstream --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "downstream", "codes"),
    [
        pytest.param("fixtures/a.json", "stale", ["UPSTREAM_CHANGED"], id="schema-artifact"),
        pytest.param("data/b.bin", "stale", ["UPSTREAM_CHANGED"], id="artifact-path"),
        pytest.param("schemas/a.schema.json", "completed", [], id="schema-not-an-output"),
    ],
)
def test_a_file_a_verifier_checks_flows_downstream_and_a_schema_not_an_output_does_not(
    path: str, downstream: str, codes: list[str]
) -> None:
    """DESIGN §5 "What binds": an artifact a verifier checks is a product of its node even
    when ``outputs`` does not name it; verifying the upstream again never freshens B."""
    schema = {"type": "schema", "schema": "schemas/a.schema.json", "artifact": "fixtures/a.json"}
    checked = crit("schema", schema), crit("made", {"type": "artifact", "path": "data/b.bin"})
    graph = make_graph([node("A", *checked), node("B")], [edge("A", "B")])
    world = World(graph, dict.fromkeys(["fixtures/a.json", "data/b.bin", path], "old"))
    world.verify_all()
    world.files[path] = "new"
    world.verify("A", "schema")
    world.verify("A", "made")
    assert world.statuses() == {"A": "completed", "B": downstream}
    reasons = world.state().nodes["B"].reasons
    assert [(r.code, r.data.get("node")) for r in reasons] == [(c, "A") for c in codes]
