"""Status from the store's light log (``Store.log``) equals status from full events, the
batched hash-cache read, and a damaged row still named by the error."""

from __future__ import annotations

import gc
import random
import sqlite3
import weakref
from pathlib import Path

import pytest
from gate_helpers import _random_world

from pytest_plangraph.api import PlanGraph
from pytest_plangraph.errors import StoreError
from pytest_plangraph.judge.derive import derive
from pytest_plangraph.judge.history import history
from pytest_plangraph.judge.inputs import Links, criterion_digests
from pytest_plangraph.judge.states import PlanState
from pytest_plangraph.plan.model import criterion_digest, runtime_plan
from pytest_plangraph.store.filecache import CacheEntry
from pytest_plangraph.store.sqlite import Store

TOKEN = "step-token-endpoint"
SCHEMA = "step-user-schema"


def _table(state: PlanState) -> list[tuple[object, ...]]:
    return [(n.to_json(), n.claimed, n.failed_claims) for n in state.nodes.values()]


@pytest.fixture
def jwt(project) -> Path:
    root = project("jwt-login")
    with PlanGraph.open(root) as graph:
        graph.verify(by="tester")
        graph.append("claim", SCHEMA, by="agent")  # an older claim: no verdict recorded
        graph.claim(TOKEN, by="agent")
        graph.approve(TOKEN, "ac-security-review", by="sec")
    return root


def test_status_from_the_log_equals_status_from_events(jwt):
    schema = jwt / "src/auth/user_schema.json"
    for step in ("as verified", "after an edit"):
        with PlanGraph.open(jwt) as plangraph:
            events, log = plangraph.events(), plangraph.store.log()
            assert [e.seq for e in log] == [e.seq for e in events], step
            snapshot = plangraph.snapshot(events)
            assert plangraph.snapshot(log) == snapshot
            full = derive(plangraph.graph, events, snapshot)
            light = derive(plangraph.graph, log, snapshot)
            assert _table(light) == _table(full), step
            assert _table(plangraph.status()) == _table(full), step
            assert _table(plangraph.status(events)) == _table(full), step
            assert plangraph.snapshot() == snapshot, step  # reads the light log itself
            replayed = [status for _, status in history(plangraph.graph, log, snapshot, SCHEMA)]
            assert replayed == [s for _, s in history(plangraph.graph, events, snapshot, SCHEMA)]
        schema.write_text(schema.read_text().replace('"minLength": 3', '"minLength": 2'))
    assert full.nodes[SCHEMA].status == "stale"
    codes = {r.code for c in full.nodes[TOKEN].criteria for r in c.reasons}
    assert "APPROVAL_STALE" in codes and "UPSTREAM_CHANGED" in codes


def test_the_log_keeps_only_the_verdict_fields_of_evidence(jwt):
    with Store.open(jwt / ".plangraph/store.db") as store:
        evidence = [e for e in store.log() if e.kind == "evidence"]
        full = [e for e in store.events() if e.kind == "evidence"]
    assert evidence and len(evidence) == len(full)
    for light, event in zip(evidence, full, strict=True):
        assert set(light.payload) == {
            "id",
            "outcome",
            "reason",
            "criterion_digest",
            "input_digest",
            "subjects",
        }
        assert {k: event.payload[k] for k in light.payload} == dict(light.payload)
        assert (light.node, light.criterion, light.by) == (event.node, event.criterion, event.by)


def test_a_damaged_log_row_falls_back_to_the_events_and_audit_names_it(jwt):
    with PlanGraph.open(jwt) as graph:
        before = _table(graph.status())
    with sqlite3.connect(jwt / ".plangraph/store.db") as con:
        con.execute("DROP TRIGGER log_no_update")
        con.execute("UPDATE log SET body = '{\"broken' WHERE seq = 1")
    con.close()
    with PlanGraph.open(jwt) as graph:
        assert _table(graph.status()) == before
        problems = graph.store.verify()
    assert [(p.seq, p.code) for p in problems] == [(1, "LOG_MISMATCH"), (0, "APPEND_ONLY_DISABLED")]
    assert "log table" in problems[0].message


def test_a_log_row_edited_to_pass_is_named_by_audit(jwt):
    with sqlite3.connect(jwt / ".plangraph/store.db") as con:
        con.execute("DROP TRIGGER log_no_update")
        seq = con.execute("SELECT seq FROM log WHERE kind = 'evidence' LIMIT 1").fetchone()[0]
        con.execute("UPDATE log SET body = replace(body, 'passed', 'failed') WHERE seq = ?", (seq,))
    con.close()
    with Store.open(jwt / ".plangraph/store.db") as store:
        assert [(p.seq, p.code) for p in store.verify() if p.seq] == [(seq, "LOG_MISMATCH")]


def test_a_damaged_payload_is_named_when_events_are_read(jwt):
    with sqlite3.connect(jwt / ".plangraph/store.db") as con:
        con.execute("DROP TRIGGER events_no_update")
        con.execute("UPDATE events SET payload = '{\"broken' WHERE seq = 1")
    con.close()
    with Store.open(jwt / ".plangraph/store.db") as store, pytest.raises(StoreError) as caught:
        store.events()
    assert "event 1" in str(caught.value) and "plangraph audit" in str(caught.value)


def test_cache_many_reads_the_records_that_exist(tmp_path):
    with Store.open(tmp_path / "store.db") as store:
        store.cache_put(
            CacheEntry("a.txt", 1, 2, 3, 4, "a" * 64, 5),
            CacheEntry("b c.txt", 6, 7, 8, 9, "b" * 64, 10),
        )
        found = store.cache_many(["a.txt", "b c.txt", "missing.txt"])
        assert found == {
            "a.txt": CacheEntry("a.txt", 1, 2, 3, 4, "a" * 64, 5),
            "b c.txt": CacheEntry("b c.txt", 6, 7, 8, 9, "b" * 64, 10),
        }
        assert store.cache_many([]) == {}
        # a table much larger than what is asked for is searched, not read whole
        store.cache_put(*(CacheEntry(f"f{i}", i, i, i, i, "c" * 64, i) for i in range(10)))
        assert store.cache_many({"f3", "a.txt", "gone"}) == {
            "f3": CacheEntry("f3", 3, 3, 3, 3, "c" * 64, 3),
            "a.txt": CacheEntry("a.txt", 1, 2, 3, 4, "a" * 64, 5),
        }


@pytest.mark.parametrize("seed", range(10))
def test_links_and_criterion_digests_agree_with_the_graph_and_the_model(seed: int) -> None:
    world = _random_world(random.Random(seed))
    graph = world.graph
    links = Links.of(graph)
    assert Links.of(graph) is links  # asked again for the same graph: kept
    for node_id, node in graph.nodes.items():
        assert links.prerequisites[node_id] == graph.prerequisites(node_id)
        assert links.dependents[node_id] == graph.dependents(node_id)
        assert links.conflicts[node_id] == graph.conflicts(node_id)
        for criterion in node.acceptance:
            expected = criterion_digest(node_id, criterion)
            assert criterion_digests(graph)[(node_id, criterion.id)] == expected
    consumes = {n: [e.from_ for e in edges] for n, edges in links.consumes.items()}
    assert consumes == {
        n: [e.from_ for e in graph.incoming[n] if e.type == "consumes" and e.propagates]
        for n in graph.nodes
        if any(e.type == "consumes" and e.propagates for e in graph.incoming[n])
    }


def test_the_links_kept_for_a_graph_do_not_keep_it_alive() -> None:
    world = _random_world(random.Random(1))
    graph = world.graph
    Links.of(graph)
    alive = weakref.ref(graph)
    del world, graph
    gc.collect()
    assert alive() is None


def test_criterion_digests_keep_the_first_of_repeated_ids() -> None:
    from pytest_plangraph.plan.graph import Graph

    artifact = {"type": "artifact", "path": "out/a.txt", "min_bytes": 0}
    plan = runtime_plan(
        {
            "plangraph": 1,
            "plan": "p",
            "nodes": [
                {"id": "a", "acceptance": [{"id": "c", "verifier": artifact}]},
                {"id": "empty"},
                {
                    "id": "b",
                    "acceptance": [
                        {"id": "c", "assertion": "first", "verifier": {"type": "approval"}},
                        {"id": "c", "assertion": "second", "verifier": {"type": "approval"}},
                        {"id": "d", "required": False, "verifier": {"type": "linecount", "n": 3}},
                    ],
                },
                {"id": "a", "acceptance": [{"id": "c", "verifier": {"type": "approval"}}]},
            ],
        }
    )
    graph = Graph.of(plan)
    first_b = plan.nodes[2]
    assert criterion_digests(graph) == {
        ("a", "c"): criterion_digest("a", plan.nodes[0].acceptance[0]),
        ("b", "c"): criterion_digest("b", first_b.acceptance[0]),
        ("b", "d"): criterion_digest("b", first_b.acceptance[2]),
    }
