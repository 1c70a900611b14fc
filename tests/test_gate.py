"""judge/gate.py: input digests and paths, evidence validity, the gate's decision, conflicts and
what flows downstream (the retry budget and claims judged by replay are in test_gate_claims.py)."""

from __future__ import annotations

from typing import Any

import pytest
from gate_helpers import _ab
from state_helpers import APPROVAL, World, crit, edge, make_graph, node

from pytest_plangraph.errors import UsageError
from pytest_plangraph.judge.gate import Completion, final_completion, gate, validity
from pytest_plangraph.judge.inputs import (
    Links,
    Snapshot,
    consumed_files,
    input_digests,
    needed_paths,
)
from pytest_plangraph.plan.evidence import Evidence
from pytest_plangraph.plan.model import criterion_digest


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
