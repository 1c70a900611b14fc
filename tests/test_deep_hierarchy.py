"""A parent chain thousands of nodes deep: lint and status look each node up a bounded number
of times (counted, not timed), and ``plangraph status`` answers for a 5,000-deep chain."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_helpers import plangraph_main
from conftest import git
from state_helpers import World

from pytest_plangraph.judge.inputs import input_digests
from pytest_plangraph.lint.runner import lint_plan
from pytest_plangraph.plan.file import load_plan
from pytest_plangraph.plan.graph import Graph
from pytest_plangraph.plan.model import Node

DEPTH = 5000
LOOKUPS_PER_NODE = 40
"""A generous linear bound on the node lookups of lint or of a derivation, per node; one walk
up the chain per node (the quadratic way) would make 12.5 million lookups at this depth."""


class _CountingNodes(dict[str, Node]):
    """The graph's node index, counting lookups and stopping a walk that goes quadratic."""

    def __init__(self, nodes: dict[str, Node], limit: int) -> None:
        super().__init__(nodes)
        self.lookups = 0
        self.limit = limit

    def _count(self) -> None:
        self.lookups += 1
        if self.lookups > self.limit:
            raise AssertionError(f"more than {self.limit} node lookups: not linear")

    def __getitem__(self, key: str) -> Node:
        self._count()
        return super().__getitem__(key)

    def __contains__(self, key: object) -> bool:
        self._count()
        return super().__contains__(key)


def _chain(depth: int, *, loop: bool = False, everywhere: bool = False) -> str:
    """An objective, milestones each under the one before, and a step at the bottom with an
    approval criterion ``ac`` (with *everywhere*, every node has one); with *loop*, the
    objective's parent is the step (a hierarchy cycle)."""
    approval = ", acceptance: [{id: ac, verifier: {type: approval}}]"
    extra = approval if everywhere else ""
    top = f"  - {{id: n0, kind: objective{f', parent: n{depth - 1}' if loop else ''}{extra}}}"
    lines = ["plangraph: 1", "plan: chain", "nodes:", top]
    lines += [
        f"  - {{id: n{i}, kind: milestone, parent: n{i - 1}{extra}}}" for i in range(1, depth - 1)
    ]
    lines.append(f"  - {{id: n{depth - 1}, parent: n{depth - 2}{approval}}}")
    return "\n".join(lines) + "\n"


def _counting(path: Path) -> tuple[Graph, _CountingNodes]:
    plan = load_plan(path).plan
    graph = Graph.of(plan)
    nodes = _CountingNodes(graph.nodes, LOOKUPS_PER_NODE * DEPTH)
    counted = Graph(plan, nodes, graph.index, graph.children, graph.incoming, graph.outgoing)
    return counted, nodes


@pytest.mark.parametrize("loop", [False, True], ids=["chain", "loop"])
def test_lint_looks_each_node_of_a_deep_parent_chain_up_a_bounded_number_of_times(
    tmp_path: Path, loop: bool
) -> None:
    path = tmp_path / "plangraph.yaml"
    path.write_text(_chain(DEPTH, loop=loop))
    graph, nodes = _counting(path)
    codes = [f.code for f in lint_plan(load_plan(path), graph=graph)]
    assert codes.count("HIERARCHY_CYCLE") == loop
    assert nodes.lookups <= LOOKUPS_PER_NODE * DEPTH
    if loop:
        [cycle] = [f for f in lint_plan(load_plan(path)) if f.code == "HIERARCHY_CYCLE"]
        assert cycle.node == "n0"
        assert cycle.hint.startswith(f"parent chain loops: n0 -> n{DEPTH - 1} -> n{DEPTH - 2}")


def test_a_derivation_looks_each_node_of_a_deep_parent_chain_up_a_bounded_number_of_times(
    tmp_path: Path,
) -> None:
    """Every node approved, so every node is active and shows its ancestors active too."""
    path = tmp_path / "plangraph.yaml"
    path.write_text(_chain(DEPTH, everywhere=True))
    graph, nodes = _counting(path)
    world = World(graph)
    digests = input_digests(graph, world.snapshot())
    for node_id in graph.nodes:
        world.add("approval", node_id, "ac", {"input_digest": digests[node_id], "role": None})
    world.add("revoke", f"n{DEPTH - 1}", "ac")
    nodes.lookups = 0
    state = world.state()
    assert nodes.lookups <= LOOKUPS_PER_NODE * DEPTH
    leaf = state.nodes.pop(f"n{DEPTH - 1}")
    assert (leaf.status, [r.code for r in leaf.reasons]) == (
        "awaiting_approval",
        ["APPROVAL_REVOKED"],
    )
    assert {s.status for s in state.nodes.values()} == {"in_progress"}  # active: evidence
    assert [r.code for r in state.nodes["n0"].reasons] == ["CHILD_NOT_COMPLETED"]


def test_status_answers_for_a_5000_deep_parent_chain(tmp_path: Path) -> None:
    (tmp_path / "plangraph.yaml").write_text(_chain(DEPTH))
    git(tmp_path, "init", "-q", "-b", "main")
    git(tmp_path, "add", "-A")
    git(tmp_path, "commit", "-q", "-m", "a deep chain")
    assert plangraph_main(tmp_path, "approve", f"n{DEPTH - 1}/ac", "--by", "lead").code == 0
    result = plangraph_main(tmp_path, "status", "--format", "json")
    assert result.code == 0, result.err
    nodes = result.json()["nodes"]
    assert len(nodes) == DEPTH
    assert {n["status"] for n in nodes} == {"completed"}
    claim = plangraph_main(tmp_path, "claim", "n0", "--by", "agent", "--format", "json")
    assert (claim.code, claim.json()["verdict"], claim.json()["reasons"]) == (0, "PASSED", [])
