"""The input digests a run's session end carries over (:func:`digests_since`: those of the
nodes whose files did not change kept, the rest and what lies downstream computed again) are
the digests computed from nothing: on generated plans (requires and consumes edges, schema and
artifact verifiers, consumed folders) and generated changes of their files between two
snapshots, and for outputs expanded otherwise."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from state_helpers import crit, edge, make_graph, node

from pytest_plangraph.judge.inputs import Snapshot, digests_since, input_digests

NODES = 6


def _plan(edges: list[tuple[int, int, str]]) -> Any:
    nodes = [
        node("n0"),
        node("n1", crit("s", {"type": "schema", "schema": "s.json", "artifact": "out/x.json"})),
        node("n2", crit("a", {"type": "artifact", "path": "out/a.bin"})),
        node("n3", outputs=["out/n3.txt", "out/dir/one.txt", "out/dir/two.txt"]),
        node("n4"),
        node("n5"),
    ]
    links = []
    for source, target, kind in edges:
        if source < target:  # upstream first: no cycle
            extra = {"artifacts": ["out/dir"]} if kind == "consumes" and source == 3 else {}
            links.append(edge(f"n{source}", f"n{target}", kind, **extra))
    return make_graph(nodes, links)


EDGES = st.lists(
    st.tuples(
        st.integers(0, NODES - 1),
        st.integers(0, NODES - 1),
        st.sampled_from(["requires", "consumes", "related"]),
    ),
    max_size=8,
)
PATHS = [
    "out/n0.txt",
    "out/n1.txt",
    "out/x.json",
    "out/n2.txt",
    "out/a.bin",
    "out/n3.txt",
    "out/dir/one.txt",
    "out/dir/two.txt",
    "out/n4.txt",
    "out/n5.txt",
    "s.json",
    "elsewhere.txt",
]
CHANGES = st.dictionaries(st.sampled_from(PATHS), st.sampled_from(["new", None]), max_size=4)


@settings(max_examples=150, deadline=None)
@given(edges=EDGES, changes=CHANGES)
def test_the_digests_carried_over_are_those_computed_again(
    edges: list[tuple[int, int, str]], changes: dict[str, str | None]
) -> None:
    graph = _plan(edges)
    was = Snapshot({path: f"h-{path}" for path in PATHS})
    now = Snapshot(
        {**was.files, **{p: None if v is None else f"{v}-{p}" for p, v in changes.items()}}
    )
    prior = input_digests(graph, was)
    carried = digests_since(graph, was, now, prior)
    assert carried == input_digests(graph, now)
    if not changes:
        assert carried == prior
    if "out/n0.txt" in changes:  # its own file changed: its digest too
        assert carried["n0"] != prior["n0"]


def test_outputs_expanded_otherwise_are_digested_again() -> None:
    graph = _plan([(3, 4, "consumes")])
    files = {path: f"h-{path}" for path in PATHS}
    was = Snapshot(files, {"n3": ("out/dir/one.txt",)})
    now = Snapshot(files, {"n3": ("out/dir/one.txt", "out/dir/two.txt")})
    prior = input_digests(graph, was)
    carried = digests_since(graph, was, now, prior)
    assert carried == input_digests(graph, now)
    assert carried["n3"] != prior["n3"] and carried["n4"] != prior["n4"]
