"""The skip and xfail policy as pure functions: verdicts, digests, the project's selection."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pytest_plangraph.canonical import digest
from pytest_plangraph.plan.model import Plan, criterion_digest, runtime_plan
from pytest_plangraph.plan.policy import TestPolicy
from pytest_plangraph.plugin.outcomes import listing, outcome_details
from pytest_plangraph.plugin.suite import ProjectSelection, ini_selection
from pytest_plangraph.plugin.verdicts import Unverified, Verdict, criterion_verdict

ALLOW = TestPolicy(skips="allow", xfail="allow")


@pytest.mark.parametrize(
    ("outcomes", "policy", "options", "expected"),
    [
        ({"t1": "passed", "t2": "skipped"}, ALLOW, {}, Verdict("passed")),
        ({"t1": "passed", "t2": "xfailed"}, ALLOW, {}, Verdict("passed")),
        ({"t1": "passed", "t2": "xpassed"}, ALLOW, {}, Verdict("passed")),
        (
            {"t1": "passed", "t2": "skipped"},
            TestPolicy(xfail="allow"),
            {},
            Verdict("error", "TEST_SKIPPED"),
        ),
        (
            {"t1": "passed", "t2": "xfailed"},
            TestPolicy(skips="allow"),
            {},
            Verdict("failed", "TEST_XFAILED"),
        ),
        ({"t1": "skipped"}, ALLOW, {}, Verdict("error", "TOO_FEW_PASSED")),
        ({"t1": "xfailed", "t2": "skipped"}, ALLOW, {}, Verdict("error", "TOO_FEW_PASSED")),
        # a strict XPASS folds to "failed": no policy allows it
        ({"t1": "passed", "t2": "failed"}, ALLOW, {}, Verdict("failed", "TEST_FAILED")),
        (
            {"t1": "passed", "t2": "passed"},
            TestPolicy(min_passed=3),
            {},
            Verdict("error", "TOO_FEW_PASSED"),
        ),
        ({"t1": "passed", "t2": "passed"}, TestPolicy(min_passed=2), {}, Verdict("passed")),
        # min_passed under 1 (refused by lint) still needs one pass
        (
            {"t1": "skipped"},
            TestPolicy(skips="allow", min_passed=0),
            {},
            Verdict("error", "TOO_FEW_PASSED"),
        ),
        # a collector skipped whole is a skip too
        ({"t1": "passed"}, ALLOW, {"skipped_whole": ["tests/t.py"]}, Verdict("passed")),
        ({}, ALLOW, {"skipped_whole": ["tests/t.py"]}, Verdict("error", "TOO_FEW_PASSED")),
        (
            {"t1": "passed"},
            TestPolicy(),
            {"skipped_whole": ["tests/t.py"]},
            Verdict("error", "TEST_SKIPPED"),
        ),
        # a partial run, or one whose tests could not fail, still records no pass
        ({"t1": "passed", "t2": "skipped"}, ALLOW, {"partial": True}, Unverified("NOT_COLLECTED")),
        (
            {"t1": "passed", "t2": "skipped"},
            ALLOW,
            {"no_pass": "ASSERTS_DISABLED"},
            Unverified("ASSERTS_DISABLED"),
        ),
        ({"t1": "passed"}, ALLOW, {"deselected": ["t2"]}, Unverified("DESELECTED")),
    ],
)
def test_policy_verdicts(
    outcomes: dict[str, str], policy: TestPolicy, options: dict[str, Any], expected: object
) -> None:
    assert criterion_verdict(outcomes, policy=policy, **options) == expected


def _plan(verifier: dict[str, Any], defaults: dict[str, Any] | None = None) -> Plan:
    body: dict[str, Any] = {
        "plangraph": 1,
        "plan": "p",
        "nodes": [{"id": "a", "acceptance": [{"id": "c", "verifier": verifier}]}],
    }
    if defaults is not None:
        body["defaults"] = defaults
    return runtime_plan(body)


BASE = {"type": "test", "tests": ["tests/t.py"]}
OLD_DIGEST = digest({"node": "a", "criterion": {"id": "c", "verifier": BASE}})
"""A test criterion's digest as it was computed before the policy fields existed."""


@pytest.mark.parametrize(
    ("verifier", "defaults"),
    [
        (BASE, None),
        ({**BASE, "skips": "fail", "xfail": "fail", "min_passed": 1, "exclude": []}, None),
        (BASE, {"test": {"skips": "fail", "min_passed": 1}}),
        ({**BASE, "skips": "fail"}, {"test": {"skips": "allow"}}),
    ],
)
def test_a_criterion_that_uses_no_policy_keeps_its_digest(
    verifier: dict[str, Any], defaults: dict[str, Any] | None
) -> None:
    plan = _plan(verifier, defaults)
    assert plan.criterion_digests[("a", "c")] == OLD_DIGEST
    criterion = plan.nodes[0].acceptance[0]
    assert criterion_digest("a", criterion, plan.defaults) == OLD_DIGEST


@pytest.mark.parametrize(
    ("verifier", "defaults"),
    [
        ({**BASE, "skips": "allow"}, None),
        ({**BASE, "xfail": "allow"}, None),
        ({**BASE, "min_passed": 2}, None),
        ({**BASE, "exclude": ["tests/t.py::test_slow"]}, None),
        (BASE, {"test": {"skips": "allow"}}),
        (BASE, {"test": {"min_passed": 5}}),
    ],
)
def test_a_changed_effective_policy_changes_the_digest(
    verifier: dict[str, Any], defaults: dict[str, Any] | None
) -> None:
    plan = _plan(verifier, defaults)
    assert plan.criterion_digests[("a", "c")] != OLD_DIGEST
    criterion = plan.nodes[0].acceptance[0]
    assert criterion_digest("a", criterion, plan.defaults) == plan.criterion_digests[("a", "c")]


def test_a_plan_without_defaults_keeps_its_digest() -> None:
    plan = _plan(BASE)
    canonical = {
        "plangraph": 1,
        "plan": "p",
        "nodes": [{"id": "a", "acceptance": [{"id": "c", "verifier": BASE}]}],
        "edges": [],
    }
    assert plan.digest == digest(canonical)


@pytest.mark.parametrize(
    ("addopts", "expected"),
    [
        (["-m", "not stress"], ProjectSelection(markexpr="not stress")),
        (["-mnot stress", "-k", "fast"], ProjectSelection(markexpr="not stress", keyword="fast")),
        (["-m=slow"], ProjectSelection(markexpr="slow")),
        (["-vm", "net"], ProjectSelection(markexpr="net")),
        (["-m", "a", "-m", "b"], ProjectSelection(markexpr="b")),
        (
            ["--deselect", "t.py::x", "--deselect=t.py::y"],
            ProjectSelection(deselect=("t.py::x", "t.py::y")),
        ),
        (["-p", "pytester", "--strict-markers"], ProjectSelection()),
        (["--", "-m", "x"], ProjectSelection()),
    ],
)
def test_the_project_selection_is_read_from_the_ini_addopts(
    addopts: list[str], expected: ProjectSelection
) -> None:
    assert ini_selection(addopts) == expected


def test_outcome_details_name_every_test_that_did_not_pass() -> None:
    outcomes = {"a": "passed", "b": "failed", "c": "skipped", "d": None}
    reasons = {"b": "AssertionError: no", "c": "later"}
    found = outcome_details(
        outcomes,
        reasons,
        TestPolicy(skips="allow"),
        Verdict("failed", "TEST_FAILED"),
        {"excluded": ["e"], "outside_suite": []},
    )
    assert found["allowed"] == [{"test": "c", "outcome": "skipped", "reason": "later"}]
    assert found["not_passed"] == [
        {"test": "b", "outcome": "failed", "reason": "AssertionError: no"},
        {"test": "d", "outcome": "not run"},
    ]
    assert found["excluded"] == ["e"] and "outside_suite" not in found
    assert found["message"] == "2 test(s) did not pass: b (failed: AssertionError: no), d (not run)"
    many = [{"test": f"t{i}", "outcome": "failed"} for i in range(5)]
    assert listing(many, 2) == "t0 (failed), t1 (failed) and 3 more"


def test_a_broken_collector_that_a_criterion_excludes_does_not_void_it(tmp_path: Path) -> None:
    from pytest_plangraph.plugin.mapping import collection_suspects

    plan = runtime_plan(
        {
            "plangraph": 1,
            "plan": "p",
            "nodes": [
                {
                    "id": "a",
                    "acceptance": [
                        {"id": "kept", "verifier": {"type": "test", "tests": ["tests/*"]}},
                        {
                            "id": "excluded",
                            "verifier": {
                                "type": "test",
                                "tests": ["tests/*"],
                                "exclude": ["tests/test_broken.py"],
                            },
                        },
                    ],
                }
            ],
        }
    )
    found = collection_suspects(plan, ["tests/test_broken.py", "tests/test_other.py"], tmp_path)
    assert found == {
        "a/kept": ["tests/test_broken.py", "tests/test_other.py"],
        "a/excluded": ["tests/test_other.py"],
    }
