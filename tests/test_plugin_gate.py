"""``--plangraph-gate``, ``--plangraph-require`` and bad input to ``pytest --plangraph``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from plugin_helpers import PLAN, evidence, make_project, section

from pytest_plangraph.api import PlanGraph
from pytest_plangraph.hooks.manager import get_plugin_manager
from pytest_plangraph.hooks.specs import hookimpl

APPROVAL_PLAN = PLAN.replace(
    "        verifier: {type: artifact, path: out/b.txt}",
    "        verifier: {type: artifact, path: out/b.txt}\n"
    "      - id: ac-review\n"
    "        verifier: {type: approval, role: security}",
)


def claim(root: Path, node: str) -> None:
    with PlanGraph.open(root) as graph:
        graph.claim(node, by="agent-7")


def test_the_gate_fails_a_green_session_when_a_claimed_node_is_not_done(
    pytester: pytest.Pytester,
) -> None:
    root = make_project(pytester, plan=APPROVAL_PLAN)
    claim(root, "step-b")
    result = pytester.runpytest("--plangraph", "--plangraph-gate")
    result.assert_outcomes(passed=4)
    assert result.ret == 1
    lines = section(result.stdout.str())
    refusal = next(line for line in lines if line.startswith("gate refused step-b"))
    assert "(awaiting_approval)" in refusal
    assert "ac-review" in refusal
    assert lines[-1] == (
        "plangraph gate: 1 claimed or required node(s) not completed; the session fails"
    )


def test_without_the_gate_flag_the_exit_code_is_pytests_own(pytester: pytest.Pytester) -> None:
    root = make_project(pytester, plan=APPROVAL_PLAN)
    claim(root, "step-b")
    result = pytester.runpytest("--plangraph")
    assert result.ret == 0
    assert any(line.startswith("gate refused step-b") for line in section(result.stdout.str()))


def test_required_nodes_pass_the_gate_when_completed(pytester: pytest.Pytester) -> None:
    make_project(pytester, plan=APPROVAL_PLAN)
    passing = pytester.runpytest("--plangraph", "--plangraph-gate", "--plangraph-require=step-a")
    assert passing.ret == 0
    assert section(passing.stdout.str())[-1] == (
        "plangraph gate: every claimed or required node is completed"
    )
    failing = pytester.runpytest("--plangraph", "--plangraph-gate", "--plangraph-require=step-b")
    assert failing.ret == 1


def test_bad_gate_options_are_usage_errors(pytester: pytest.Pytester) -> None:
    root = make_project(pytester)
    unknown = pytester.runpytest("--plangraph", "--plangraph-require=step-z")
    assert unknown.ret == pytest.ExitCode.USAGE_ERROR
    unknown.stderr.fnmatch_lines(["ERROR: --plangraph: unknown node 'step-z'*step-a, step-b*"])
    alone = pytester.runpytest("--plangraph-gate")
    assert alone.ret == pytest.ExitCode.USAGE_ERROR
    alone.stderr.fnmatch_lines(["ERROR: --plangraph-gate and --plangraph-require need --plangraph"])
    assert evidence(root) == []


def test_a_missing_plan_is_a_usage_error(pytester: pytest.Pytester) -> None:
    make_project(pytester)
    result = pytester.runpytest("--plangraph=nowhere.yaml")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["ERROR: --plangraph: nowhere.yaml: plan file not found*"])
    assert "Traceback" not in result.stderr.str() + result.stdout.str()


def test_lint_errors_are_a_usage_error_and_keep_the_store(pytester: pytest.Pytester) -> None:
    root = make_project(pytester)
    assert pytester.runpytest("--plangraph").ret == 0
    assert len(evidence(root)) == 3
    broken = PLAN.replace("{from: step-a, to: step-b", "{from: step-x, to: step-b")
    (root / "plangraph.yaml").write_text(broken, encoding="utf-8")
    result = pytester.runpytest("--plangraph")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["ERROR: --plangraph: the plan has errors*", "*MISSING_DEP*"])
    assert len(evidence(root)) == 3


def test_lint_errors_in_a_fresh_project_make_no_store(pytester: pytest.Pytester) -> None:
    broken = PLAN.replace("{from: step-a, to: step-b", "{from: step-x, to: step-b")
    root = make_project(pytester, plan=broken)
    result = pytester.runpytest("--plangraph")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert not (root / ".plangraph" / "store.db").exists()


def test_a_corrupt_store_is_a_usage_error_and_left_alone(pytester: pytest.Pytester) -> None:
    root = make_project(pytester)
    store = root / ".plangraph" / "store.db"
    store.parent.mkdir()
    store.write_bytes(b"this is not a database" * 100)
    result = pytester.runpytest("--plangraph")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert result.stderr.str().startswith("ERROR: --plangraph:")
    # its advice names pytest's option for the store, not the command line's
    assert "pass --plangraph-store to use another file" in result.stderr.str()
    assert " --store" not in result.stderr.str()
    assert store.read_bytes() == b"this is not a database" * 100


def test_an_unwritable_store_is_a_usage_error(pytester: pytest.Pytester) -> None:
    make_project(pytester, files={"blocker": "a file, not a directory\n"})
    result = pytester.runpytest("--plangraph", "--plangraph-store=blocker/store.db")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert result.stderr.str().startswith("ERROR: --plangraph:")
    assert "Traceback" not in result.stderr.str()


class _DecisionRecorder:
    def __init__(self) -> None:
        self.decisions: list[tuple[str, str]] = []

    @hookimpl
    def plangraph_gate_decision(self, decision: Any) -> None:
        self.decisions.append((decision.node, decision.verdict))


def test_gate_decisions_reach_plugins(pytester: pytest.Pytester) -> None:
    make_project(pytester, plan=APPROVAL_PLAN)
    recorder = _DecisionRecorder()
    manager = get_plugin_manager()
    manager.register(recorder, name="decision-recorder")
    try:
        pytester.runpytest(
            "--plangraph",
            "--plangraph-gate",
            "--plangraph-require=step-a",
            "--plangraph-require=step-b",
        )
    finally:
        manager.unregister(name="decision-recorder")
    assert recorder.decisions == [("step-a", "PASSED"), ("step-b", "FAILED")]
