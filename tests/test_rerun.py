"""Which criteria run again and which node ids that means (``judge/rerun.py``, pure)."""

from __future__ import annotations

from state_helpers import APPROVAL, crit, edge, make_graph, node

from pytest_plangraph.judge.derive import derive
from pytest_plangraph.judge.inputs import Snapshot
from pytest_plangraph.judge.logfold import LogFold
from pytest_plangraph.judge.rerun import rerun_criteria, select
from pytest_plangraph.plan.graph import Graph

ARTIFACT = {"type": "artifact", "path": "out/b.txt"}


def graph() -> Graph:
    """Three nodes: a glob criterion; literal ids, an artifact and an approval; a cancelled one."""
    return make_graph(
        [
            node("a", crit("ac-glob", {"type": "test", "tests": ["tests/test_a*.py::*"]})),
            node(
                "b",
                crit("ac-ids", {"type": "test", "tests": ["tests/test_b.py::test_x"]}),
                crit("ac-file", ARTIFACT),
                crit("ac-review", APPROVAL),
            ),
            node("c", crit("ac-marked", {"type": "test"}), cancelled=True),
        ],
        [edge("a", "b")],
    )


def test_without_evidence_every_runnable_criterion_of_a_live_node_runs_again() -> None:
    built = graph()
    state = derive(built, LogFold(), Snapshot({}, {}))
    rerun = rerun_criteria(built, state)
    # the approval waits for a person; the cancelled node is left out
    assert rerun == {"a/ac-glob": "missing", "b/ac-ids": "missing", "b/ac-file": "missing"}


def test_select_names_known_tests_literal_ids_and_verifier_items() -> None:
    built = graph()
    rerun = {"a/ac-glob": "stale", "b/ac-ids": "missing", "b/ac-file": "failed"}
    chosen = select(built, rerun, {"b/ac-ids": ["tests/test_b.py::test_y"]}, "plan.yaml")
    assert chosen.tests == ["tests/test_b.py::test_x", "tests/test_b.py::test_y"]
    assert chosen.verifiers == ["plan.yaml::b/ac-file"]
    assert chosen.node_ids == [*chosen.tests, *chosen.verifiers]
    assert list(chosen.unresolved) == ["a/ac-glob"]  # a glob and no evidence naming its tests
    known = select(built, rerun, {"a/ac-glob": ["tests/test_a1.py::t"]}, "plan.yaml")
    assert "a/ac-glob" not in known.unresolved
    assert "tests/test_a1.py::t" in known.tests
    assert known.to_json()["select"] == known.node_ids
