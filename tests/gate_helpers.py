"""Random plans and random event logs for the property tests of the judge (test_gate_claims.py,
test_logfold.py, test_status_log.py).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from state_helpers import World, crit, edge, make_graph, node


def _ab(**b_extra: Any) -> World:
    return World(make_graph([node("A"), node("B", **b_extra)], [edge("A", "B")]))


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


def hold_step(world: World, node_id: str, rng: random.Random) -> None:
    """A patch refused for the node's spent replan rounds: it is held for a person."""
    world.add("patch", node_id, payload={"outcome": "refused", "code": "REPLAN_BUDGET_EXHAUSTED"})


PLAIN_LOG: list[tuple[float, Step]] = [
    (0.6, verify_step(0.1)),
    (0.88, event_step("claim")),  # no verdict: judged by replay
    (0.91, hold_step),
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
