"""plan/edits.py and the walk's topology, pure: what a plan edit invalidates, in which order."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_plangraph.impact.report import diff_impact
from pytest_plangraph.impact.walk import Topology
from pytest_plangraph.plan.edits import PlanEdit, plan_edits
from pytest_plangraph.plan.graph import Graph
from pytest_plangraph.plan.model import runtime_plan
from pytest_plangraph.vcs.changes import Change


def _node(node_id: str, **extra: Any) -> dict[str, Any]:
    criterion = {"id": "ac", "verifier": {"type": "artifact", "path": f"out/{node_id}.txt"}}
    return {"id": node_id, "outputs": [f"out/{node_id}.txt"], "acceptance": [criterion], **extra}


def _graph(nodes: list[dict[str, Any]], edges: list[dict[str, Any]] | None = None) -> Graph:
    return Graph.of(
        runtime_plan({"plangraph": 1, "plan": "p", "nodes": nodes, "edges": edges or []})
    )


BASE = [_node("a"), _node("b"), _node("c")]
CHAIN = [{"from": "a", "to": "b", "type": "requires"}, {"from": "b", "to": "c", "type": "consumes"}]


def _reasons(edits: dict[str, tuple[PlanEdit, ...]]) -> dict[str, list[str]]:
    return {node: [edit.describe() for edit in found] for node, found in edits.items()}


@pytest.mark.parametrize(
    ("nodes", "edges", "expected"),
    [
        ([_node("a", title="renamed"), _node("b"), _node("c")], CHAIN, {}),
        (
            [
                {**_node("a"), "acceptance": [{"id": "ac", "verifier": {"type": "test"}}]},
                _node("b"),
                _node("c"),
            ],
            CHAIN,
            {"a": ["CRITERION_CHANGED a/ac"]},
        ),
        (
            [
                {
                    **_node("b"),
                    "acceptance": [
                        *_node("b")["acceptance"],
                        {"id": "ac2", "verifier": {"type": "test"}},
                    ],
                },
                _node("a"),
                _node("c"),
            ],
            CHAIN,
            {"b": ["CRITERION_CHANGED b/ac2 (added)"]},
        ),
        (
            [{**_node("c"), "acceptance": []}, _node("a"), _node("b")],
            CHAIN,
            {"c": ["CRITERION_CHANGED c/ac (removed)"]},
        ),
        (
            [{**_node("a"), "outputs": ["out/other.txt"]}, _node("b"), _node("c")],
            CHAIN,
            {"a": ["NODE_CHANGED a (outputs)"]},
        ),
        (BASE, CHAIN[1:], {"b": ["NODE_CHANGED b (prerequisites)"]}),
        (
            BASE,
            [CHAIN[0], {**CHAIN[1], "artifacts": ["out/b.txt"]}],
            {"c": ["NODE_CHANGED c (consumed artifacts)"]},
        ),
        ([*BASE, _node("d")], [*CHAIN, {"from": "c", "to": "d", "type": "requires"}], {}),
    ],
    ids=[
        "title",
        "criterion",
        "added",
        "removed",
        "outputs",
        "edge",
        "artifacts",
        "new-node",
    ],
)
def test_only_what_evidence_is_bound_to_counts_as_an_edit(
    nodes: list[dict[str, Any]], edges: list[dict[str, Any]], expected: dict[str, list[str]]
) -> None:
    assert _reasons(plan_edits(_graph(BASE, CHAIN), _graph(nodes, edges))) == expected


def test_an_edited_criterion_invalidates_its_node_and_everything_downstream() -> None:
    old = _graph(BASE, CHAIN)
    edited = {**_node("b"), "acceptance": [{"id": "ac", "verifier": {"type": "test"}}]}
    new = _graph([_node("a"), edited, _node("c")], CHAIN)
    report = diff_impact(
        new,
        [Change("plan.yaml", "modified")],
        commits={"plan.yaml": "abc1234def"},
        edits=plan_edits(old, new),
        plan_file="plan.yaml",
    )
    assert [c.to_json() for c in report.changed] == [
        {"path": "plan.yaml", "change": "modified", "nodes": ["b"]}
    ]
    assert [(i.node, i.reasons) for i in report.invalidated] == [
        ("b", ("CRITERION_CHANGED b/ac (plan.yaml, commit abc1234)",)),
        ("c", ("UPSTREAM_CHANGED via b ← CRITERION_CHANGED b/ac (plan.yaml, commit abc1234)",)),
    ]
    assert report.invalidated[1].paths == ("plan.yaml",)


SELF_LOOP = {"from": "f", "to": "f", "type": "requires"}


@pytest.mark.parametrize(
    "edges",
    [
        CHAIN,
        [
            {"from": "c", "to": "a", "type": "requires"},
            {"from": "b", "to": "a", "type": "requires"},
        ],
        [{"from": "c", "to": "a", "type": "requires", "strength": "weak"}, *CHAIN[:1]],
        [
            {"from": "c", "to": "b", "type": "related"},
            {"from": "a", "to": "b", "type": "conflicts"},
        ],
        [*CHAIN, {"from": "c", "to": "a", "type": "requires"}],  # a cycle: plan order
        [{**CHAIN[0], "status": "proposed"}, {"from": "b", "to": "a", "type": "validates"}],
    ],
)
def test_the_walk_takes_the_graphs_prerequisites_and_dependents(
    edges: list[dict[str, Any]],
) -> None:
    graph = _graph([*BASE, _node("d"), _node("e"), _node("f")], [*edges, SELF_LOOP])
    topology = Topology.of(graph)
    assert topology.prerequisites == {
        n: tuple(p for p in graph.prerequisites(n) if p != n) for n in "abcdef"
    }
    assert "f" not in topology.dependents.get("f", [])  # a self-loop is not a step of the walk
    assert {n: set(topology.dependents.get(n, [])) for n in "abcdef"} == {
        n: {d for d in graph.dependents(n) if d != n} for n in "abcdef"
    }


def test_listing_outputs_or_consumed_artifacts_in_another_order_is_no_edit() -> None:
    """The input digest binds the files, not the order they are written in."""

    def plan(outputs: list[str], artifacts: list[str] | None) -> Graph:
        nodes = [{**_node("a"), "outputs": outputs}, _node("b")]
        edge = {"from": "a", "to": "b", "type": "consumes", "artifacts": artifacts}
        return _graph(nodes, [edge])

    before = plan(["out/a.txt", "out/a2.txt"], ["out/a.txt", "out/a2.txt"])
    reordered = plan(["out/a2.txt", "out/a.txt"], ["out/a2.txt", "out/a.txt"])
    assert plan_edits(before, reordered) == {}
    every_output = plan(["out/a.txt", "out/a2.txt"], None)  # all of a's outputs: another list
    assert _reasons(plan_edits(before, every_output)) == {
        "b": ["NODE_CHANGED b (consumed artifacts)"]
    }


def test_a_renamed_prerequisite_is_told_as_one_not_as_other_artifacts() -> None:
    """b consumes from a; a is renamed a2: b's prerequisites changed, and what it takes from
    its upstream did not (the same node under a new id)."""
    renamed = _graph(
        [{**_node("a2"), "outputs": ["out/a.txt"]}, _node("b"), _node("c")],
        [{"from": "a2", "to": "b", "type": "consumes"}, CHAIN[1]],
    )
    before = _graph(BASE, [{"from": "a", "to": "b", "type": "consumes"}, CHAIN[1]])
    assert _reasons(plan_edits(before, renamed))["b"] == ["NODE_CHANGED b (prerequisites)"]
    # the same upstream, another selection: the consumed artifacts changed
    narrowed = _graph(
        BASE, [{"from": "a", "to": "b", "type": "consumes", "artifacts": ["out/a.txt"]}, CHAIN[1]]
    )
    assert _reasons(plan_edits(before, narrowed)) == {"b": ["NODE_CHANGED b (consumed artifacts)"]}
