"""Deriving again only what changed (judge/rederive.py): on generated plans and random
sequences of changes — files edited, deleted and created, an output expanding to another file,
new evidence, approvals, claims, cancels and retry grants — the state reused from the kept one
equals a full derivation for every node, and so do the reads kept for the next change."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from state_helpers import APPROVAL, World, crit, edge, make_graph, node

from pytest_plangraph.judge.derive import derive, derive_nodes
from pytest_plangraph.judge.inputs import Snapshot
from pytest_plangraph.judge.ledger import Context
from pytest_plangraph.judge.logfold import LogFold
from pytest_plangraph.judge.rederive import Observed, derive_observed, rederive
from pytest_plangraph.judge.states import PlanState
from pytest_plangraph.plan.graph import Graph, reach

SHARED = "shared/spec.txt"
"""A file several nodes' artifact criteria check."""


def _criteria(draw: st.DrawFn) -> list[dict[str, Any]]:
    """A node's criteria: a test criterion, and maybe an approval and an artifact one."""
    criteria = [crit("ac")]
    if draw(st.booleans()):
        criteria.append(crit("review", APPROVAL))
    if draw(st.booleans()):
        criteria.append(crit("art", {"type": "artifact", "path": SHARED}))
    return criteria


@st.composite
def plans(draw: st.DrawFn) -> World:
    """A plan of 2–7 nodes: steps, objectives and milestones with parents, test, artifact and
    approval criteria, and requires, consumes and conflicts edges between them."""
    count = draw(st.integers(2, 7))
    nodes = []
    for i in range(count):
        criteria = _criteria(draw)
        extra: dict[str, Any] = {"kind": draw(st.sampled_from(["step", "objective", "milestone"]))}
        if i and draw(st.booleans()):
            extra["parent"] = f"n{draw(st.integers(0, i - 1))}"
        nodes.append(node(f"n{i}", *criteria, **extra))
    edges = []
    for j in range(1, count):
        for i in range(j):
            kind = draw(st.sampled_from([None, None, "requires", "consumes", "conflicts"]))
            if kind is not None:
                edges.append(edge(f"n{i}", f"n{j}", kind))
    world = World(make_graph(nodes, edges), {SHARED: "h-spec"})
    world.outputs = {n: (f"out/{n}.txt",) for n in world.graph.nodes}  # type: ignore[attr-defined]
    return world


def _snapshot(world: World) -> Snapshot:
    return Snapshot(dict(world.files), dict(world.outputs))  # type: ignore[attr-defined]


ACTIONS = st.tuples(
    st.sampled_from(
        [
            "verify",
            "fail",
            "approve",
            "claim",
            "cancel",
            "retry",
            "edit",
            "delete",
            "create",
            "grow",
            "shared",
        ]
    ),
    st.integers(0, 6),
)


def _apply(world: World, action: str, index: int) -> set[str]:
    """Do *action* to node n*index* (mod the plan's size); the nodes its events name."""
    ids = list(world.graph.nodes)
    node_id = ids[index % len(ids)]
    criteria = [c.id for c in world.graph.nodes[node_id].acceptance]
    path = f"out/{node_id}.txt"
    outputs: dict[str, tuple[str, ...]] = world.outputs  # type: ignore[attr-defined]
    if action in ("verify", "fail"):
        for criterion in criteria:
            if criterion == "review":
                continue
            subjects = {p: world.files.get(p) or "gone" for p in outputs[node_id]}
            record = world.evidence(node_id, criterion, subjects=subjects)
            payload = record.to_json()
            if action == "fail":
                payload["outcome"] = "failed"
            world.add("evidence", node_id, criterion, payload)
        return {node_id}
    if action == "approve":
        if "review" in criteria:
            world.approve(node_id)
            return {node_id}
        return set()
    if action == "claim":
        world.add("claim", node_id, None, {"verdict": "PASSED" if index % 2 else "FAILED"})
        return {node_id}
    if action in ("cancel", "retry"):
        world.add(action, node_id)
        return {node_id}
    if action == "edit":
        world.files[path] = f"{world.files.get(path)}+"
    elif action == "delete":
        world.files[path] = None
    elif action == "create":
        world.files[path] = f"new-{path}"
    elif action == "grow":  # the node's output directory holds one file more, or one less
        extra = f"out/{node_id}-more.txt"
        if extra in outputs[node_id]:
            outputs[node_id] = (path,)
        else:
            outputs[node_id] = (path, extra)
            world.files[extra] = f"h-{extra}"
    else:
        world.files[SHARED] = f"{world.files[SHARED]}+"
    return set()


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    plans(),
    st.lists(ACTIONS, max_size=8),
    st.lists(st.lists(ACTIONS, min_size=1, max_size=4), min_size=1, max_size=4),
)
def test_a_state_derived_again_in_part_equals_a_full_derivation(
    world: World, before: list[tuple[str, int]], rounds: list[list[tuple[str, int]]]
) -> None:
    for action, index in before:
        _apply(world, action, index)
    was = _snapshot(world)
    kept = derive_observed(world.graph, LogFold.of(world.events), was)
    assert kept.state == derive(world.graph, world.events, was)
    for changes in rounds:
        touched: set[str] = set()
        for action, index in changes:
            touched |= _apply(world, action, index)
        now = _snapshot(world)
        fold = LogFold.of(world.events)
        again = rederive(world.graph, fold, now, kept, was, touched)
        assert again is not None
        full = derive_observed(world.graph, fold, now)
        assert again.state == full.state
        assert list(again.state.nodes) == list(full.state.nodes)  # the table's order too
        assert again.reads == full.reads  # what the next change is compared with
        kept, was = again, now


def test_a_leaf_file_changed_judges_only_its_node() -> None:
    """The mechanism at work: a file read by one node alone, with nothing depending on that
    node, judges that node again and reuses every other state."""
    world = World(make_graph([node("A"), node("B"), node("C")], [edge("A", "B"), edge("B", "C")]))
    world.outputs = {n: (f"out/{n}.txt",) for n in "ABC"}  # type: ignore[attr-defined]
    world.verify_all()
    was = _snapshot(world)
    kept = derive_observed(world.graph, LogFold.of(world.events), was)
    assert kept.judged == 3
    assert kept.reads["C"] == ["out/C.txt"]
    world.files["out/C.txt"] = "changed"
    leaf = rederive(world.graph, LogFold.of(world.events), _snapshot(world), kept, was, set())
    assert isinstance(leaf, Observed)
    assert leaf.judged == 1
    assert leaf.state.nodes["C"].status == "stale"
    assert leaf.state.nodes["A"] is kept.state.nodes["A"]  # reused, not derived again
    # the root's file: every node below it has another input digest, and is judged again
    world.files["out/A.txt"] = "changed"
    root = rederive(
        world.graph, LogFold.of(world.events), _snapshot(world), leaf, _snapshot(world), set()
    )
    assert root is not None and root.judged == 0  # the snapshot it was kept with: nothing
    kept_now = rederive(world.graph, LogFold.of(world.events), _snapshot(world), kept, was, set())
    assert kept_now is not None and kept_now.judged == 3


def test_a_claim_without_a_verdict_is_derived_in_full() -> None:
    world = World(make_graph([node("A")]))
    world.outputs = {"A": ("out/A.txt",)}  # type: ignore[attr-defined]
    world.verify("A")
    was = _snapshot(world)
    kept = derive_observed(world.graph, LogFold.of(world.events), was)
    world.add("claim", "A")  # no verdict recorded: only a replay of the log judges it
    assert rederive(world.graph, LogFold.of(world.events), was, kept, was, {"A"}) is None


def test_a_partner_opposed_through_a_node_around_is_derived_as_in_full() -> None:
    """A node around the judged ones that passes but for its own conflicts edge (P, opposed
    by Q) is not completed, yet what requires it passes but for that (X), and so opposes
    its own conflicts partner (Y): judging Y again against the kept completion of P alone
    would complete Y. The judged nodes' conflicts edges make the kept completion not enough,
    and the answer is the full derivation's."""
    nodes = [node(n) for n in ("P", "Q", "X", "Y")]
    edges = [edge("P", "Q", "conflicts"), edge("P", "X"), edge("X", "Y", "conflicts")]
    world = World(make_graph(nodes, edges))
    world.outputs = {n: (f"out/{n}.txt",) for n in "PQXY"}  # type: ignore[attr-defined]
    world.verify_all()
    was = _snapshot(world)
    kept = derive_observed(world.graph, LogFold.of(world.events), was)
    assert kept.state.nodes["Y"].status != "completed"
    world.add("claim", "Y", None, {"verdict": "FAILED"})
    fold = LogFold.of(world.events)
    again = rederive(world.graph, fold, was, kept, was, {"Y"})
    assert again is not None and again.again == {"X", "Y"}
    assert again.state == derive(world.graph, world.events, was)
    assert again.state.nodes["Y"].status != "completed"
    assert [r.code for r in again.state.nodes["Y"].reasons] == ["CONFLICT_COMPLETED"]


def test_a_node_judged_again_takes_the_completion_around_it_as_kept() -> None:
    """A node judged again is judged against the kept completion of the nodes around it,
    not their cones: of a chain of 30, judging the last takes whether its prerequisite is
    completed from what it is told (a kept state), and equals the full derivation when told
    what that derivation found."""
    ids = [f"c{i}" for i in range(30)]
    chain = [edge(a, b) for a, b in itertools.pairwise(ids)]
    world = World(make_graph([node(n) for n in ids], chain))
    world.verify_all()
    fold, snapshot = LogFold.of(world.events), world.snapshot()
    full = derive(world.graph, fold, snapshot)
    assert full.nodes["c28"].status == full.nodes["c29"].status == "completed"
    context = Context.of(world.graph, snapshot)
    kept = derive_nodes(context, fold, {"c29"}, done={"c28": True})
    assert kept == {"c29": full.nodes["c29"]}
    told = derive_nodes(context, fold, {"c29"}, done={"c28": False})["c29"]
    assert told.status == "blocked"  # verified, but waiting for c28
    assert [(r.code, r.data) for r in told.reasons] == [
        ("PREREQUISITE_NOT_COMPLETED", {"node": "c28"})
    ]
    with pytest.raises(ValueError):  # c28 is around c29 and its completion is not told
        derive_nodes(context, fold, {"c29"}, done={})
    with pytest.raises(ValueError):  # c29 depends on c28: it must be judged too
        derive_nodes(context, fold, {"c28"}, done={"c27": True})


@st.composite
def dags(draw: st.DrawFn) -> World:
    """A plan of 2–9 steps without parents or conflicts edges (what a status judges without
    opening the plan): test, artifact and approval criteria, requires and consumes edges."""
    count = draw(st.integers(2, 9))
    nodes = []
    for i in range(count):
        criteria = _criteria(draw)
        nodes.append(node(f"n{i}", *criteria))
    edges = []
    for j in range(1, count):
        for i in range(j):
            kind = draw(st.sampled_from([None, None, "requires", "consumes"]))
            if kind is not None:
                edges.append(edge(f"n{i}", f"n{j}", kind))
    world = World(make_graph(nodes, edges), {SHARED: "h-spec"})
    world.outputs = {n: (f"out/{n}.txt",) for n in world.graph.nodes}  # type: ignore[attr-defined]
    return world


def _part(graph: Graph, kept: Observed, was: Snapshot, now: Snapshot) -> Graph:
    """The part of *graph* a status judges without the plan (:mod:`..derived.planfree`):
    the nodes that read a changed file and their dependents, and their prerequisites."""
    changed = {
        p for p in was.files.keys() | now.files.keys() if was.files.get(p) != now.files.get(p)
    }
    seed = {n for n, paths in kept.reads.items() if not changed.isdisjoint(paths)}
    judged = set(reach(seed, graph.dependents))
    part = judged | {p for n in judged for p in graph.prerequisites(n)}
    plan = graph.plan
    nodes = [n for n in plan.nodes if n.id in part]
    edges = [e for e in plan.edges if e.from_ in part and e.to in part]
    return Graph.of(plan.replace(nodes=nodes, edges=edges))


BOUNDED_CASES: list[bool] = []


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    dags(),
    st.lists(ACTIONS, max_size=10),
    st.lists(
        st.lists(
            st.tuples(st.sampled_from(["edit", "delete", "create", "shared"]), st.integers(0, 8)),
            min_size=1,
            max_size=3,
        ),
        min_size=1,
        max_size=4,
    ),
)
def test_a_part_of_the_plan_judged_against_its_kept_neighbours_equals_a_full_derivation(
    world: World, before: list[tuple[str, int]], rounds: list[list[tuple[str, int]]]
) -> None:
    """The plan-free miss's judgement: files changed with no event since, the nodes that
    read them and their dependents judged over a graph of those nodes and their
    prerequisites alone (``rederive(..., bounded=True)``), every other state kept: equal
    to a full derivation for every node, or None (then the status derives in full)."""
    for action, index in before:
        _apply(world, action, index)
    was = _snapshot(world)
    fold = LogFold.of(world.events)
    kept = derive_observed(world.graph, fold, was)
    for changes in rounds:
        for action, index in changes:
            _apply(world, action, index)
        now = _snapshot(world)
        full = derive_observed(world.graph, fold, now)
        part = _part(world.graph, kept, was, now)
        ids = part.nodes.keys()
        sub = Observed(
            PlanState(kept.state.nodes, {n: kept.state.input_digests[n] for n in ids}),
            {n: kept.reads[n] for n in ids},
            0,
        )
        again = rederive(part, fold, now, sub, was, (), bounded=True)
        BOUNDED_CASES.append(again is not None)
        if again is None:
            kept, was = full, now
            continue
        assert again.again is not None
        for node_id in again.again:
            assert again.state.nodes[node_id] == full.state.nodes[node_id]
            assert again.reads[node_id] == full.reads[node_id]
        for node_id in world.graph.nodes:
            if node_id not in again.again:
                assert kept.state.nodes[node_id] == full.state.nodes[node_id]
            assert (
                again.state.input_digests.get(node_id, kept.state.input_digests[node_id])
                == full.state.input_digests[node_id]
            )
        kept, was = full, now


def test_the_bounded_judgement_was_taken() -> None:
    """The comparison above judged parts without the whole plan (not only fell back): in
    a good share of its cases (about half of the generated changes reach too far or fall on
    a node without a record, so the share is not fixed: a quarter leaves room for the
    examples hypothesis draws)."""
    if not BOUNDED_CASES:  # run alone: run the comparison first
        test_a_part_of_the_plan_judged_against_its_kept_neighbours_equals_a_full_derivation()
    assert sum(BOUNDED_CASES) >= max(1, len(BOUNDED_CASES) // 4)
