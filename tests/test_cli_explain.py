"""``plangraph explain NODE`` and the tests named by ``status --format json``, through a real
``pytest --plangraph`` run and the real ``plangraph`` command."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_helpers import plangraph
from plugin_helpers import make_project

pytest_plugins = ["pytester"]

PLAN = """
plangraph: 1
plan: explained
nodes:
  - id: obj
    kind: objective
  - id: step-a
    parent: obj
    acceptance:
      - id: ac-tests
        verifier: {type: test, tests: ["tests/test_a.py"], skips: allow}
      - id: ac-review
        verifier: {type: approval}
  - id: step-b
    parent: obj
    outputs: [out/b.txt]
    acceptance:
      - id: ac-b
        verifier: {type: test, tests: ["tests/test_b.py"]}
      - id: ac-file
        verifier: {type: artifact, path: out/b.txt}
  - id: step-c
    parent: obj
    acceptance:
      - id: ac-c
        verifier: {type: test, tests: ["tests/test_c.py"]}
edges:
  - {from: step-a, to: step-b, type: requires}
"""

TEST_A = """
import pytest


def test_one():
    assert 1 == 2, "one is not two"


@pytest.mark.skip(reason="needs the network")
def test_two():
    pass
"""


@pytest.fixture
def explained(pytester: pytest.Pytester) -> Path:
    files = {
        "tests/test_b.py": "def test_b():\n    pass\n",
        "tests/test_c.py": "def test_c():\n    pass\n",
    }
    root = make_project(pytester, plan=PLAN, tests=TEST_A, files=files)
    pytester.runpytest("--plangraph")
    assert plangraph(root, "claim", "obj", "--by", "me").code == 1
    return root


def test_explain_names_the_failing_tests_and_the_commands_to_run(explained: Path) -> None:
    text = plangraph(explained, "explain", "step-a")
    assert text.code == 0, text.err
    lines = text.out.splitlines()
    assert lines[0] == "step-a (step) is failed: 2 thing(s) stand between it and completion"
    assert "tests/test_a.py::test_one (failed: AssertionError: one is not two)" in lines[1]
    assert "pytest --plangraph tests/test_a.py::test_one" in lines[1]
    assert "   run: pytest --plangraph" in lines
    assert "   run: plangraph approve step-a/ac-review --by WHO" in lines
    data = plangraph(explained, "explain", "step-a", "--format", "json").json()
    assert data["format"] == 1 and data["status"] == "failed"
    assert data["steps"][0]["tests"] == ["tests/test_a.py::test_one"]
    assert data["reasons"][0]["code"] == "EVIDENCE_FAILED"


def test_explain_names_what_a_node_waits_for(explained: Path) -> None:
    parent = plangraph(explained, "explain", "obj", "--format", "json").json()
    assert parent["status"] == "awaiting_verification"
    assert parent["summary"] == (
        "claimed, and waiting for its children to complete: step-a, step-b"
    )
    assert parent["waiting_for"] == ["step-a", "step-b"]
    assert [s["run"] for s in parent["steps"]] == [
        "plangraph explain step-a",
        "plangraph explain step-b",
    ]
    blocked = plangraph(explained, "explain", "step-b").out
    assert "finish upstream node step-a first (it is failed)" in blocked
    done = plangraph(explained, "explain", "step-c").out
    assert done.strip() == "step-c (step) is completed: the gate passes; nothing to do"


def test_explain_tells_why_evidence_went_stale_and_how_to_verify_again(
    explained: Path,
) -> None:
    (explained / "tests" / "test_c.py").write_text("def test_c():\n    assert True\n")
    (explained / "out" / "b.txt").unlink()
    stale = plangraph(explained, "explain", "step-c")
    assert stale.out.splitlines()[0].startswith("step-c (step) is stale")
    assert "tests/test_c.py changed since the evidence was recorded" in stale.out
    assert "   run: pytest --plangraph" in stale.out.splitlines()
    missing = plangraph(explained, "explain", "step-b").out
    assert "   run: plangraph verify step-b" in missing.splitlines()


def test_explain_of_an_unknown_node_is_a_usage_error(explained: Path) -> None:
    result = plangraph(explained, "explain", "step-z")
    assert result.code == 2
    assert "unknown node 'step-z'" in result.err
    assert "Traceback" not in result.err


def test_status_json_names_the_tests_behind_a_failed_verdict(explained: Path) -> None:
    data = plangraph(explained, "status", "--format", "json").json()
    [node] = [n for n in data["nodes"] if n["id"] == "step-a"]
    [criterion] = [c for c in node["criteria"] if c["id"] == "ac-tests"]
    [reason] = criterion["reasons"]
    assert reason["code"] == "EVIDENCE_FAILED"
    assert reason["tests"] == [
        {
            "test": "tests/test_a.py::test_one",
            "outcome": "failed",
            "reason": "AssertionError: one is not two",
        }
    ]
    assert "tests/test_a.py::test_one" in reason["message"]
    assert criterion["allowed"] == [
        {"test": "tests/test_a.py::test_two", "outcome": "skipped", "reason": "needs the network"}
    ]
    tagged = [r for r in node["reasons"] if r.get("criterion") == "ac-tests"]
    assert tagged[0]["tests"] == reason["tests"]


@pytest.mark.parametrize(
    "details",
    [
        {"not_passed": 5, "tests": [{"nodeid": "x"}], "unmatched": "x", "message": 3},
        {"not_passed": [{"test": "tests/test_login.py::t", "outcome": "failed"}, 7]},
        {},
    ],
)
def test_explain_reads_any_details_an_api_record_holds(
    project: object, details: dict[str, object]
) -> None:
    from pytest_plangraph import PlanGraph
    from pytest_plangraph.vcs.environment import now, run_info

    root = project("jwt-login")  # type: ignore[operator]
    with PlanGraph.open(root) as graph:
        record = graph.make_evidence(
            "step-token-endpoint",
            "ac-http-200",
            outcome="failed",
            reason="TEST_FAILED",
            details=details,
            subjects={},
            run=run_info(now(), now(), None),
            recorded_by="agent",
        )
        graph.record([record])
        found = graph.explain("step-token-endpoint")
    [step] = [s for s in found.steps if s.why.startswith("step-token-endpoint/ac-http-200")]
    assert step.run == "pytest --plangraph"
    assert "the latest verdict is failed (TEST_FAILED)" in step.why
