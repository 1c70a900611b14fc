"""``PlanGraph.next()`` and ``plangraph next``: the nodes ready to work on, in topological order,
each with what to run — a pure table over derived states, then real ``pytest --plangraph`` runs
and the real ``plangraph`` command."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from cli_helpers import plangraph
from plugin_helpers import make_project

from pytest_plangraph.api import PlanGraph
from pytest_plangraph.errors import UsageError
from pytest_plangraph.judge.agenda import ready_nodes
from pytest_plangraph.judge.states import NodeState, PlanState
from pytest_plangraph.plan.graph import Graph
from pytest_plangraph.plan.model import runtime_plan

pytest_plugins = ["pytester"]


def _state(graph: Graph, statuses: dict[str, str]) -> PlanState:
    nodes = {
        n: NodeState(n, "step", statuses[n], (), ())  # type: ignore[arg-type]
        for n in graph.topological_order()
    }
    return PlanState(nodes, {})


def _graph(ids: list[str], edges: list[dict[str, Any]]) -> Graph:
    nodes = [{"id": n} for n in ids]
    return Graph.of(runtime_plan({"plangraph": 1, "plan": "p", "nodes": nodes, "edges": edges}))


REQ = {"from": "a", "to": "b", "type": "requires"}


@pytest.mark.parametrize(
    ("edges", "statuses", "expected"),
    [
        # a prerequisite not completed keeps its dependent out, whatever the dependent's status
        ([REQ], {"a": "ready", "b": "pending"}, ["a"]),
        ([REQ], {"a": "failed", "b": "blocked"}, ["a"]),
        ([REQ], {"a": "completed", "b": "ready"}, ["b"]),
        # failed and stale nodes are work to do again; completed, cancelled, blocked are not
        ([REQ], {"a": "completed", "b": "failed"}, ["b"]),
        ([REQ], {"a": "completed", "b": "stale"}, ["b"]),
        ([REQ], {"a": "completed", "b": "completed"}, []),
        ([REQ], {"a": "cancelled", "b": "pending"}, []),
        ([REQ], {"a": "blocked", "b": "pending"}, []),
        ([REQ], {"a": "completed", "b": "awaiting_approval"}, ["b"]),
        # a weak, an inactive, a related or a conflicts edge is no prerequisite
        ([{**REQ, "strength": "weak"}], {"a": "ready", "b": "ready"}, ["a", "b"]),
        ([{**REQ, "status": "inactive"}], {"a": "ready", "b": "ready"}, ["a", "b"]),
        ([{**REQ, "type": "related"}], {"a": "ready", "b": "ready"}, ["a", "b"]),
        ([{**REQ, "type": "consumes"}], {"a": "in_progress", "b": "pending"}, ["a"]),
        ([{**REQ, "type": "validates"}], {"a": "completed", "b": "ready"}, ["b"]),
    ],
)
def test_ready_nodes(
    edges: list[dict[str, Any]], statuses: dict[str, str], expected: list[str]
) -> None:
    graph = _graph(["a", "b"], edges)
    assert ready_nodes(graph, _state(graph, statuses)) == expected


def test_ready_nodes_come_in_topological_order_not_plan_order() -> None:
    # "z" is first in the file but needs "y": it comes after "x", which needs nothing
    edges = [{"from": "y", "to": "z", "type": "requires"}]
    graph = _graph(["z", "y", "x"], edges)
    state = _state(graph, {"z": "ready", "y": "completed", "x": "ready"})
    assert ready_nodes(graph, state) == ["x", "z"]


PLAN = """
plangraph: 1
plan: next-demo
nodes:
  - id: late
    acceptance:
      - id: ac-late
        verifier: {type: artifact, path: out/late.txt}
  - id: base
    acceptance:
      - id: ac-base
        verifier: {type: test, tests: ["tests/test_a.py::test_base"]}
  - id: broken
    acceptance:
      - id: ac-broken
        verifier: {type: test, tests: ["tests/test_a.py::test_broken"]}
  - id: dropped
    cancelled: true
    acceptance:
      - id: ac-dropped
        verifier: {type: approval}
  - id: review
    acceptance:
      - id: ac-review
        verifier: {type: approval}
edges:
  - {from: base, to: late, type: requires}
  - {from: broken, to: review, type: requires}
"""

TESTS = """
def test_base():
    assert True

def test_broken():
    assert 1 == 2, "one is not two"
"""


@pytest.fixture
def repo(pytester: pytest.Pytester) -> Path:
    return make_project(pytester, plan=PLAN, tests=TESTS)


def _listed(root: Path) -> list[tuple[str, str]]:
    data = plangraph(root, "next", "--format", "json").json()
    return [(entry["node"], entry["status"]) for entry in data["next"]]


def test_next_follows_the_evidence(repo: Path, pytester: pytest.Pytester) -> None:
    # nothing recorded: the nodes without prerequisites, cancelled ones left out
    assert _listed(repo) == [("base", "ready"), ("broken", "ready")]
    assert not (repo / ".plangraph" / "store.db").exists()  # reading makes no store

    pytester.runpytest("--plangraph")
    # base passed: "late", first in the file, is next now, after base's round (the run
    # checked its artifact, which is missing); broken failed and stays on the list, naming
    # its test; review still waits for it
    assert _listed(repo) == [("broken", "failed"), ("late", "failed")]
    data = plangraph(repo, "next", "--format", "json").json()
    broken, late = data["next"]
    assert broken["steps"][0]["tests"] == ["tests/test_a.py::test_broken"]
    assert "one is not two" in broken["steps"][0]["why"]
    assert [(s["run"], s["tests"]) for s in late["steps"]] == [("plangraph verify late", [])]
    assert "ARTIFACT_MISSING" in late["steps"][0]["why"]
    assert data["plan"]["id"] == "next-demo" and data["plan"]["version"] == 1
    (repo / "out").mkdir(exist_ok=True)
    (repo / "out" / "late.txt").write_text("done\n")
    assert plangraph(repo, "verify", "late").code == 0
    assert _listed(repo) == [("broken", "failed")]


def test_next_json_is_explain_for_each_ready_node(repo: Path, pytester: pytest.Pytester) -> None:
    pytester.runpytest("--plangraph")
    data = plangraph(repo, "next", "--format", "json").json()
    assert data["format"] == 1
    for entry in data["next"]:
        explained = plangraph(repo, "explain", entry["node"], "--format", "json").json()
        assert entry == {k: v for k, v in explained.items() if k != "format"}
    with PlanGraph.open(repo) as graph:
        assert {"format": 1, **graph.next().to_json()} == data


def test_next_text(repo: Path, pytester: pytest.Pytester) -> None:
    pytester.runpytest("--plangraph")
    result = plangraph(repo, "next")
    assert result.code == 0, result.err
    lines = result.out.splitlines()
    assert lines[0] == "ready to work on in next-demo v1:"
    assert lines[1] == "broken (step) is failed: 1 thing(s) stand between it and completion"
    assert "    run: pytest --plangraph" in lines
    assert "late (step) is failed: 1 thing(s) stand between it and completion" in lines
    assert "    run: plangraph verify late" in lines


def test_next_with_nothing_ready(pytester: pytest.Pytester) -> None:
    plan = """
    plangraph: 1
    plan: all-done
    nodes:
      - id: only
        cancelled: true
        acceptance:
          - id: ac
            verifier: {type: approval}
    """
    root = make_project(pytester, plan=plan)
    result = plangraph(root, "next")
    assert (result.code, result.out.strip()) == (0, "nothing is ready to work on in all-done v0")
    assert plangraph(root, "next", "--format", "json").json()["next"] == []


def test_a_blocked_node_is_not_next(repo: Path) -> None:
    # two refused claims spend the default retry budget: the node is blocked until a retry
    for _ in range(3):
        assert plangraph(repo, "claim", "base", "--by", "agent").code == 1
    assert ("base", "blocked") not in _listed(repo)
    assert [n for n, _ in _listed(repo)] == ["broken"]
    assert plangraph(repo, "retry", "base", "--by", "lead").code == 0
    assert [n for n, _ in _listed(repo)] == ["base", "broken"]


def test_next_refuses_bad_input(repo: Path) -> None:
    missing = plangraph(repo, "next", "--store", "nowhere.db")
    assert missing.code == 2
    assert "there is no store at" in missing.err and "Traceback" not in missing.err
    (repo / "plangraph.yaml").write_text("plangraph: 1\nplan: x\nnodes: [{id: a}, {id: a}]\n")
    broken = plangraph(repo, "next")
    assert broken.code == 2 and "Traceback" not in broken.err


def test_status_json_is_what_the_command_prints(repo: Path, pytester: pytest.Pytester) -> None:
    pytester.runpytest("--plangraph")
    printed = plangraph(repo, "status", "--format", "json").json()
    with PlanGraph.open(repo) as graph:
        fold = graph.fold()
        assert {"format": 1, **graph.status_json(fold, graph.status(fold))} == printed
        with pytest.raises(UsageError, match=r"status_json\(\) takes the fold"):
            graph.status_json([], graph.status(fold))  # type: ignore[arg-type]
    [broken] = [n for n in printed["nodes"] if n["id"] == "broken"]
    assert broken["criteria"][0]["reasons"][0]["tests"][0]["test"] == (
        "tests/test_a.py::test_broken"
    )
