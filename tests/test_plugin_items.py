"""Non-test verifiers of the plan run as pytest items of their own."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Iterator
from typing import Any

import pytest
from plugin_helpers import PLAN, evidence, latest, make_project

from pytest_plangraph.hooks.manager import get_plugin_manager
from pytest_plangraph.hooks.specs import hookimpl
from pytest_plangraph.verifiers import VerifierResult


def test_verifier_items_show_in_collect_only_and_record_nothing(
    pytester: pytest.Pytester,
) -> None:
    root = make_project(pytester)
    result = pytester.runpytest("--plangraph", "--collect-only", "-q")
    result.stdout.fnmatch_lines(
        ["tests/test_a.py::test_marked", "plangraph.yaml::step-b/ac-exists"]
    )
    assert evidence(root) == []


def test_k_selects_verifier_items_by_node_and_criterion(pytester: pytest.Pytester) -> None:
    root = make_project(pytester)
    result = pytester.runpytest("--plangraph", "-k", "ac-exists", "-v")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["plangraph.yaml::step-b/ac-exists PASSED*"])
    assert sorted(latest(root)) == ["step-b/ac-exists"]


def test_the_plan_file_as_a_path_collects_only_its_verifiers(pytester: pytest.Pytester) -> None:
    root = make_project(pytester)
    result = pytester.runpytest("--plangraph=", "plangraph.yaml")
    result.assert_outcomes(passed=1)
    assert sorted(latest(root)) == ["step-b/ac-exists"]


def test_a_failing_verifier_fails_its_item_with_the_reason(pytester: pytest.Pytester) -> None:
    root = make_project(pytester)
    (root / "out" / "b.txt").unlink()
    result = pytester.runpytest("--plangraph")
    result.assert_outcomes(passed=3, failed=1)
    result.stdout.fnmatch_lines(
        ["*step-b/ac-exists (artifact) failed: ARTIFACT_MISSING*", "FAILED plangraph.yaml::*"]
    )
    record = latest(root)["step-b/ac-exists"]
    assert (record.outcome, record.reason) == ("failed", "ARTIFACT_MISSING")


def test_junit_xml_carries_the_criterion_and_the_run(pytester: pytest.Pytester) -> None:
    root = make_project(pytester)
    pytester.runpytest("--plangraph", "--junitxml=report.xml")
    cases = ET.parse(root / "report.xml").getroot().iter("testcase")
    props = {
        (case.get("classname"), case.get("name")): [
            (p.get("name"), p.get("value")) for p in case.iter("property")
        ]
        for case in cases
    }
    records = latest(root)
    run_id = records["step-b/ac-exists"].run.id
    assert props[("plangraph.yaml", "step-b/ac-exists")] == [
        ("plangraph_criterion", "step-b/ac-exists"),
        ("plangraph_run", run_id),
        ("plangraph_evidence", records["step-b/ac-exists"].id),
    ]
    assert props[("tests.test_a", "test_marked")] == [
        ("plangraph_criterion", "step-a/ac-marked"),
        ("plangraph_run", run_id),
        ("plangraph_evidence", records["step-a/ac-marked"].id),
    ]
    assert props[("tests.test_a", "test_unmapped")] == []


class _Crashing:
    name = "crashing"
    runs_in_pytest = True

    def config_problems(self, settings: Any, workspace: Any) -> list[str]:
        return []

    def run(self, node: Any, criterion: Any, workspace: Any) -> VerifierResult:
        raise RuntimeError("boom in a plug-in")


class _CrashingPlugin:
    @hookimpl
    def plangraph_verifier_types(self) -> list[Any]:
        return [_Crashing()]


@pytest.fixture
def crashing_verifier() -> Iterator[None]:
    manager = get_plugin_manager()
    manager.register(_CrashingPlugin(), name="crashing-test-plugin")
    yield
    manager.unregister(name="crashing-test-plugin")


@pytest.mark.usefixtures("crashing_verifier")
def test_a_crashing_plugin_verifier_is_that_criterions_error(pytester: pytest.Pytester) -> None:
    plan = PLAN.replace("{type: artifact, path: out/b.txt}", "{type: crashing}")
    root = make_project(pytester, plan=plan)
    result = pytester.runpytest("--plangraph")
    result.assert_outcomes(passed=3, failed=1)
    result.stdout.fnmatch_lines(["*verifier 'crashing' crashed: RuntimeError: boom in a plug-in*"])
    record = latest(root)["step-b/ac-exists"]
    assert (record.outcome, record.reason) == ("error", "VERIFIER_CRASHED")
    assert "boom in a plug-in" in record.details["message"]
    assert latest(root)["step-a/ac-marked"].outcome == "passed"
