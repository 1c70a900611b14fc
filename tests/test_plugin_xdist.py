"""``pytest --plangraph -n 2`` records the same evidence and statuses as a serial run."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from plugin_helpers import PLAN, evidence, make_project, section

from pytest_plangraph.api import PlanGraph

pytest.importorskip("xdist")

TESTS = """
import pytest

@pytest.mark.criterion("step-a/ac-marked")
@pytest.mark.parametrize("n", range(6))
def test_marked(n, plangraph):
    with open(f"out/made-{n}.txt", "w") as handle:
        handle.write(str(n))
    plangraph.artifact(f"out/made-{n}.txt")

def test_pattern_one():
    pass

def test_pattern_two():
    assert False, "this one fails"

@pytest.mark.criterion("step-c/ac-skipped")
def test_skipped():
    pytest.skip("not today")
"""

XDIST_PLAN = PLAN.replace(
    "edges:",
    "  - id: step-c\n    acceptance:\n      - {id: ac-skipped, verifier: {type: test}}\nedges:",
)


def comparable(root: Path, store: str) -> dict[str, Any]:
    """Evidence without what differs between any two runs (ids, run info, times)."""
    return {
        record.ref: (record.outcome, record.reason, record.details, record.subjects)
        for record in evidence(root, store)
    }


def statuses(root: Path, store: str) -> dict[str, str]:
    with PlanGraph.open(root, store=root / store) as graph:
        return {node_id: node.status for node_id, node in graph.status().nodes.items()}


def test_two_workers_record_what_a_serial_run_records(pytester: pytest.Pytester) -> None:
    root = make_project(pytester, plan=XDIST_PLAN, tests=TESTS)
    serial = pytester.runpytest("--plangraph", "--plangraph-store=.plangraph/serial.db")
    serial.assert_outcomes(passed=8, failed=1, skipped=1)
    parallel = pytester.runpytest_subprocess(
        "--plangraph", "--plangraph-store=.plangraph/parallel.db", "-n", "2"
    )
    parallel.assert_outcomes(passed=8, failed=1, skipped=1)
    expected = comparable(root, ".plangraph/serial.db")
    assert sorted(expected) == [
        "step-a/ac-marked",
        "step-a/ac-pattern",
        "step-b/ac-exists",
        "step-c/ac-skipped",
    ]
    assert expected["step-a/ac-marked"][3]["out/made-5.txt"]
    assert comparable(root, ".plangraph/parallel.db") == expected
    assert statuses(root, ".plangraph/parallel.db") == statuses(root, ".plangraph/serial.db")
    assert section(parallel.stdout.str()) == section(serial.stdout.str())


def test_a_test_failing_on_one_worker_of_dist_each_is_failed(pytester: pytest.Pytester) -> None:
    tests = """
import os
import pytest

@pytest.mark.criterion("step-a/ac-marked")
def test_marked():
    assert os.environ.get("PYTEST_XDIST_WORKER") != "gw1"

def test_pattern_one():
    pass
"""
    root = make_project(pytester, tests=tests)
    result = pytester.runpytest_subprocess("--plangraph", "-n", "2", "--dist", "each")
    assert result.parseoutcomes()["failed"] == 1  # on gw1 only; every test ran on both
    records = {e.ref: e for e in evidence(root)}
    marked = records["step-a/ac-marked"]
    assert (marked.outcome, marked.reason) == ("failed", "TEST_FAILED")
