"""The repository ``bench/bench_status.py`` builds for the status benchmarks (and
``bench_instructions.py --only status,grow``): the plan is the YAML PyYAML writes, and the store
is a real one, written through the store's batch path, that the product reads and checks as it
reads any other; building it does the work of each record once, not once per event."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import yaml
from cli_helpers import plangraph
from conftest import ROOT

sys.path.insert(0, str(ROOT / "bench"))

import bench_status

from pytest_plangraph.api import PlanGraph
from pytest_plangraph.checkpoint import whole_fold
from pytest_plangraph.plan.evidence import Evidence


@pytest.mark.parametrize("size", [1, 2, 3, 60])
def test_the_plan_is_the_yaml_pyyaml_writes(size: int) -> None:
    nodes, edges = bench_status.plan_nodes(size)
    plan = {"plangraph": 1, "plan": f"bench-{size}", "nodes": nodes, "edges": edges}
    assert bench_status.plan_text(size) == yaml.safe_dump(plan, sort_keys=False)
    assert len(nodes) == size
    assert len(edges) == sum(min(bench_status.EDGES_PER_NODE, i) for i in range(size))


def test_the_built_store_is_a_real_one_the_product_reads(tmp_path: Path) -> None:
    size = 120  # 1,200 events: enough for the log's checkpoint
    bench_status.build(tmp_path, size)
    with PlanGraph.open(tmp_path) as graph:
        assert graph.check_plan() == []
        assert graph.store.count() == size * bench_status.EVENTS_PER_NODE
        assert graph.store.check_tail(0, "", log=True) is None  # every event chained and logged
        events = graph.store.events()
        assert {event.plan_digest for event in events} == {graph.plan.digest}
        assert len({event.id for event in events}) == len(events)
        kinds = {event.kind for event in events}
        assert kinds == {"evidence", "claim"}
        derived = graph.status()
        whole = graph.status(whole_fold(graph.store))
        assert derived.nodes == whole.nodes
    first = plangraph(tmp_path, "status")
    assert first.code in (0, 1), first.err  # the claims' nodes wait for their approval
    assert "n0" in first.out
    cache = tmp_path / ".plangraph" / "cache"
    assert list(cache.glob("log-*.json"))  # the log's checkpoint, written by the product
    for _ in range(2):  # read from the checkpoint, the answer kept; then the kept answer
        again = plangraph(tmp_path, "status")
        assert (again.code, again.out) == (first.code, first.out)
        assert (cache / "status-text.json").is_file()


def test_a_record_is_turned_into_json_once_not_once_per_event(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = []
    to_json = Evidence.to_json

    def counted(self: Evidence) -> object:
        calls.append(self)
        return to_json(self)

    monkeypatch.setattr(Evidence, "to_json", counted)
    size = 12
    bench_status.build(tmp_path, size, per_node=10)
    # verify checks each of its records once (checked_payloads); the build once more for the
    # nine events it writes from each
    assert 0 < len(calls) <= 2 * size
