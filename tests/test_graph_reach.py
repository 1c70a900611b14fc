"""The one graph traversal (:func:`reach`) and the closures built on it, against a fixed-point
reference on random plans, and on a chain deep enough to break a recursive walk."""

from __future__ import annotations

import itertools
import random
import time

import pytest

from pytest_plangraph.plan.graph import Graph, reach
from pytest_plangraph.plan.model import PROPAGATING_EDGES, Plan, runtime_plan

TYPES = ("requires", "consumes", "validates", "related", "conflicts")


def _random_plan(rng: random.Random) -> Plan:
    size = rng.randint(1, 30)
    ids = [f"n{i}" for i in range(size)]
    edges = []
    for _ in range(rng.randint(0, size * 3)):
        edge = {"from": rng.choice(ids), "to": rng.choice(ids), "type": rng.choice(TYPES)}
        if rng.random() < 0.15:
            edge["status"] = "inactive"
        if rng.random() < 0.15:
            edge["strength"] = "weak"
        edges.append(edge)
    nodes = []
    for node_id in ids:
        node: dict[str, str] = {"id": node_id}
        if rng.random() < 0.6:
            node["parent"] = rng.choice(ids)  # loops included: a walk must still end
        nodes.append(node)
    return runtime_plan({"plangraph": 1, "plan": "p", "nodes": nodes, "edges": edges})


def _fixed_point(pairs: set[tuple[str, str]], start: set[str]) -> set[str]:
    """Nodes reached from *start* in one or more steps over *pairs*, by repeating until
    nothing new is found (slow, obviously right)."""
    found = {b for a, b in pairs if a in start}
    while True:
        more = found | {b for a, b in pairs if a in found}
        if more == found:
            return found
        found = more


def _pairs(graph: Graph, types: frozenset[str]) -> set[tuple[str, str]]:
    return {
        (e.from_, e.to)
        for e in graph.plan.edges
        if e.type in types
        and e.status == "active"
        and e.strength == "strong"
        and e.from_ in graph.nodes
        and e.to in graph.nodes
    }


@pytest.mark.parametrize("seed", range(60))
def test_closures_match_a_fixed_point(seed: int) -> None:
    rng = random.Random(seed)
    graph = Graph.of(_random_plan(rng))
    start = rng.choice(list(graph.nodes))
    down = _pairs(graph, PROPAGATING_EDGES)
    up = {(b, a) for a, b in down}
    assert set(graph.upstream([start])) == _fixed_point(up, {start})
    assert set(graph.downstream([start])) == _fixed_point(down, {start})
    related = _pairs(graph, frozenset({"related"}))
    assert set(graph.downstream([start], {"related"})) == _fixed_point(related, {start})
    parent_of = {(n.parent, n.id) for n in graph.nodes.values() if n.parent in graph.nodes}
    assert set(graph.descendants(start)) == _fixed_point(parent_of, {start}) - {start}
    above = {(b, a) for a, b in parent_of}
    assert graph.with_ancestors([start]) == _fixed_point(above, {start}) | {start}
    # nearest first, each node once
    assert len(graph.upstream([start])) == len(set(graph.upstream([start])))


def test_reach_is_breadth_first_in_step_order() -> None:
    links = {"a": ["c", "b"], "b": ["d"], "c": ["d", "e"], "d": ["a"], "e": []}
    assert reach(["a"], links.__getitem__) == ["a", "c", "b", "d", "e"]
    assert reach(["e", "b"], links.__getitem__) == ["e", "b", "d", "a", "c"]
    assert reach([], links.__getitem__) == []


def test_a_deep_chain_is_walked_in_linear_time() -> None:
    size = 60_000
    ids = [f"n{i}" for i in range(size)]
    nodes = [{"id": ids[0]}, *({"id": ids[i], "parent": ids[i - 1]} for i in range(1, size))]
    edges = [{"from": ids[i], "to": ids[i + 1], "type": "requires"} for i in range(size - 1)]
    plan = runtime_plan({"plangraph": 1, "plan": "p", "nodes": nodes, "edges": edges})
    graph = Graph.of(plan)
    began = time.perf_counter()
    assert graph.downstream([ids[0]]) == ids[1:]
    assert graph.upstream([ids[-1]]) == ids[-2::-1]
    assert graph.descendants(ids[0]) == ids[1:]
    assert len(graph.with_ancestors([ids[-1]])) == size
    # a quadratic walk (a list's pop(0), membership in a list) takes minutes here
    assert time.perf_counter() - began < 20


def _chain_plan(ids: list[str], extra: list[dict[str, str]]) -> Plan:
    edges = [{"from": a, "to": b, "type": "requires"} for a, b in itertools.pairwise(ids)]
    nodes = [{"id": node_id} for node_id in ids]
    data = {"plangraph": 1, "plan": "p", "nodes": nodes, "edges": [*edges, *extra]}
    return runtime_plan(data)


def test_the_conflict_route_is_a_shortest_dependency_path() -> None:
    from pytest_plangraph.lint.effects import _route

    ids = ["a", "b", "c", "d", "e"]
    shortcut = {"from": "b", "to": "d", "type": "consumes"}
    graph = Graph.of(_chain_plan(ids, [shortcut]))
    assert _route(graph, "a", "e") == ["a", "b", "d", "e"]
    assert _route(graph, "c", "e") == ["c", "d", "e"]
    assert _route(graph, "e", "a") is None
    assert _route(graph, "c", "c") == ["c"]


def test_the_conflict_route_of_a_deep_chain_costs_its_length() -> None:
    from pytest_plangraph.lint.effects import _route

    ids = [f"n{i}" for i in range(60_000)]
    graph = Graph.of(_chain_plan(ids, []))
    began = time.perf_counter()
    # one list per node reached, each a copy of the path to it, would cost the square of it
    assert _route(graph, ids[0], ids[-1]) == ids
    assert _route(graph, ids[-1], ids[0]) is None
    assert time.perf_counter() - began < 20


def test_one_edge_type_given_as_a_string_is_that_type() -> None:
    nodes = [{"id": "a"}, {"id": "b"}, {"id": "c"}]
    edges = [
        {"from": "a", "to": "b", "type": "consumes"},
        {"from": "b", "to": "c", "type": "requires"},
    ]
    plan = runtime_plan({"plangraph": 1, "plan": "p", "nodes": nodes, "edges": edges})
    graph = Graph.of(plan)
    assert graph.downstream(["a"], "consumes") == graph.downstream(["a"], {"consumes"}) == ["b"]
    assert graph.upstream(["c"], "requires") == ["b"]
    assert graph.upstream(["c"], "require") == []  # no substring of a type matches
