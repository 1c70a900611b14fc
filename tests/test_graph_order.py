"""The plan's topological order: graphlib's rounds with plan-order ties, on random graphs."""

from __future__ import annotations

import graphlib
import random

import pytest

from pytest_plangraph.plan.graph import Graph
from pytest_plangraph.plan.model import Plan, runtime_plan

TYPES = ("requires", "consumes", "validates", "related", "conflicts", "relates_to")


def _random_plan(rng: random.Random, *, cyclic: bool) -> Plan:
    size = rng.randint(1, 40)
    ids = [f"n{i}" for i in range(size)]
    rng.shuffle(ids)  # plan order is not id order
    edges = []
    for _ in range(rng.randint(0, size * 3)):
        a, b = rng.sample(range(size), 2) if size > 1 else (0, 0)
        if not cyclic and a > b:
            a, b = b, a
        edge = {"from": ids[a], "to": ids[b], "type": rng.choice(TYPES[:4])}
        if rng.random() < 0.1:
            edge["status"] = "inactive"
        edges.append(edge)
    nodes = [{"id": node_id} for node_id in ids]
    return runtime_plan({"plangraph": 1, "plan": "p", "nodes": nodes, "edges": edges})


def _graphlib_order(graph: Graph) -> list[str]:
    """The order as graphlib's TopologicalSorter gives it, ties broken by plan position."""
    sorter: graphlib.TopologicalSorter[str] = graphlib.TopologicalSorter()
    for node_id in graph.nodes:
        sources = [
            e.from_
            for e in graph.incoming[node_id]
            if e.type in ("requires", "consumes", "validates")
            and e.status == "active"
            and e.from_ != node_id
        ]
        sorter.add(node_id, *sources)
    try:
        sorter.prepare()
    except graphlib.CycleError:
        return list(graph.nodes)
    order: list[str] = []
    while sorter.is_active():
        ready = sorted(sorter.get_ready(), key=graph.index.__getitem__)
        order.extend(ready)
        sorter.done(*ready)
    return order


@pytest.mark.parametrize("seed", range(40))
def test_order_is_graphlibs_with_plan_order_ties(seed: int) -> None:
    rng = random.Random(seed)
    graph = Graph.of(_random_plan(rng, cyclic=seed % 4 == 0))
    expected = _graphlib_order(graph)
    assert graph.topological_order() == expected
    assert sorted(expected) == sorted(graph.nodes)


def test_order_is_computed_once_and_callers_cannot_change_it() -> None:
    plan = runtime_plan(
        {
            "plangraph": 1,
            "plan": "p",
            "nodes": [{"id": "b"}, {"id": "a"}, {"id": "c"}],
            "edges": [{"from": "a", "to": "b", "type": "requires"}],
        }
    )
    graph = Graph.of(plan)
    first = graph.topological_order()
    assert first == ["a", "c", "b"]
    first.clear()
    assert graph.topological_order() == ["a", "c", "b"]


def test_a_cycle_falls_back_to_plan_order() -> None:
    plan = runtime_plan(
        {
            "plangraph": 1,
            "plan": "p",
            "nodes": [{"id": "x"}, {"id": "b"}, {"id": "a"}],
            "edges": [
                {"from": "a", "to": "b", "type": "requires"},
                {"from": "b", "to": "a", "type": "consumes"},
            ],
        }
    )
    assert Graph.of(plan).topological_order() == ["x", "b", "a"]
