"""The pure parts of the pytest plugin: verdict tables, pattern matching, marker checks,
argument splitting and the summary's wording."""

from __future__ import annotations

import pytest

from pytest_plangraph.judge.gate import GateDecision
from pytest_plangraph.judge.states import Reason
from pytest_plangraph.plan.model import runtime_plan
from pytest_plangraph.plan.patterns import PatternIndex
from pytest_plangraph.plugin import split_plan_argument
from pytest_plangraph.plugin.mapping import Mapping, ref_problems
from pytest_plangraph.plugin.summary import Outcome, RunReport, render
from pytest_plangraph.plugin.verdicts import Unverified, Verdict, criterion_verdict, fold_phases

P, F, S = "passed", "failed", "skipped"


@pytest.mark.parametrize(
    ("phases", "expected"),
    [
        ([("setup", P, False), ("call", P, False), ("teardown", P, False)], "passed"),
        ((("setup", P, False), ("call", P, False), ("teardown", P, False)), "passed"),
        ([("setup", P, False), ("teardown", P, False), ("call", P, False)], "passed"),
        ([("setup", P, False), ("call", P, False)], None),
        ([("setup", P, False)], None),
        ([], None),
        ([("setup", F, False), ("teardown", P, False)], "error"),
        ([("setup", P, False), ("call", P, False), ("teardown", F, False)], "error"),
        ([("setup", P, False), ("call", F, False), ("teardown", F, False)], "failed"),
        ([("setup", S, False), ("teardown", P, False)], "skipped"),
        ([("setup", S, True), ("teardown", P, False)], "xfailed"),
        ([("setup", P, False), ("call", S, False), ("teardown", P, False)], "skipped"),
        ([("setup", P, False), ("call", S, True), ("teardown", P, False)], "xfailed"),
        ([("setup", P, False), ("call", P, True), ("teardown", P, False)], "xpassed"),
        ([("???", F, False)], "error"),
        # a failed subtest reported before its test's passing call report
        ([("setup", P, False), ("call", F, False), ("call", P, False), ("teardown", P, False)], F),
        # a skipped or xfailed subtest before its test's passing call report: part unchecked
        ([("setup", P, False), ("call", S, False), ("call", P, False), ("teardown", P, False)], S),
        (
            [("setup", P, False), ("call", S, True), ("call", P, False), ("teardown", P, False)],
            "xfailed",
        ),
        ([("setup", P, False), ("call", S, False), ("call", F, False), ("teardown", P, False)], F),
        # passing subtests, then the test's own xpass (a later report of equal weight stands)
        (
            [("setup", P, False), ("call", P, False), ("call", P, True), ("teardown", P, False)],
            "xpassed",
        ),
        # --dist each: one worker's failure, another's pass reported after it
        (
            [("setup", P, False), ("call", F, False), ("teardown", P, False)] * 1
            + [("setup", P, False), ("call", P, False), ("teardown", P, False)],
            F,
        ),
    ],
)
def test_phases_fold_into_one_test_outcome(
    phases: list[tuple[str, str, bool]], expected: str | None
) -> None:
    assert fold_phases(phases) == expected


@pytest.mark.parametrize(
    ("outcomes", "extra", "expected"),
    [
        ({"t1": "passed", "t2": "passed"}, {}, Verdict("passed")),
        ({"t1": "passed", "t2": "failed"}, {}, Verdict("failed", "TEST_FAILED")),
        ({"t1": "error", "t2": "skipped"}, {}, Verdict("error", "TEST_ERROR")),
        ({"t1": "passed", "t2": "skipped"}, {}, Verdict("error", "TEST_SKIPPED")),
        ({"t1": "xfailed"}, {}, Verdict("failed", "TEST_XFAILED")),
        ({"t1": "xpassed"}, {}, Verdict("error", "TEST_XPASSED")),
        ({}, {}, Verdict("error", "TEST_NOT_FOUND")),
        ({"t1": "passed"}, {"unmatched": ["x"]}, Verdict("error", "TEST_NOT_FOUND")),
        ({}, {"partial": True}, Unverified("NOT_COLLECTED")),
        (
            {"t1": "passed"},
            {"unmatched": ["x"], "partial": True},
            Unverified("NOT_COLLECTED"),
        ),
        ({"t1": "passed"}, {"partial": True}, Unverified("NOT_COLLECTED")),
        ({"t1": "failed"}, {"partial": True}, Verdict("failed", "TEST_FAILED")),
        # collectors failed: what they may hold is known, so a typo is still a typo
        ({}, {"uncollected": ["tests/t.py"]}, Verdict("error", "NOT_COLLECTED")),
        (
            {"t1": "passed"},
            {"unmatched": ["tests/typo.py::t"], "uncollected": ["tests/b.py"]},
            Verdict("error", "TEST_NOT_FOUND"),
        ),
        (
            {"t1": "passed"},
            {"unmatched": ["tests/b.py::t"], "uncollected": ["tests/b.py"]},
            Verdict("error", "NOT_COLLECTED"),
        ),
        ({"t1": "passed"}, {"deselected": ["t2"]}, Unverified("DESELECTED")),
        ({}, {"deselected": ["t2"]}, Unverified("DESELECTED")),
        ({"t1": "failed"}, {"deselected": ["t2"]}, Verdict("failed", "TEST_FAILED")),
        ({"t1": "passed", "t2": None}, {}, Unverified("NOT_RUN")),
        ({"t1": "failed", "t2": None}, {}, Verdict("failed", "TEST_FAILED")),
        # a run whose tests could not fail: failures count, a pass is not decided
        ({"t1": "passed"}, {"no_pass": "ASSERTS_DISABLED"}, Unverified("ASSERTS_DISABLED")),
        ({"t1": "failed"}, {"no_pass": "STALE_BYTECODE"}, Verdict("failed", "TEST_FAILED")),
        ({}, {"no_pass": "STALE_BYTECODE"}, Verdict("error", "TEST_NOT_FOUND")),
        ({"t1": "skipped"}, {"no_pass": "STALE_BYTECODE"}, Verdict("error", "TEST_SKIPPED")),
    ],
)
def test_a_criterion_passes_only_when_all_its_tests_ran_and_passed(
    outcomes: dict[str, str | None], extra: dict[str, object], expected: object
) -> None:
    assert criterion_verdict(outcomes, **extra) == expected  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("pattern", "test_id", "matches"),
    [
        ("tests/t.py::test_x", "tests/t.py::test_x", True),
        ("tests/t.py::test_x", "tests/t.py::test_x[1-a]", True),
        ("tests/t.py::test_x", "tests/t.py::test_xy", False),
        ("tests/t.py::test_x[1-a]", "tests/t.py::test_x[1-a]", True),
        ("tests/t.py::test_x[1-a]", "tests/t.py::test_x[2-a]", False),
        ("tests/t.py", "tests/t.py::TestC::test_y", True),
        ("tests/t.py::TestC", "tests/t.py::TestC::test_y", True),
        ("tests/t.py::*", "tests/t.py::TestC::test_y", True),
        ("tests/*.py::test_?", "tests/t.py::test_x", True),
        ("tests/t.py::test_x*", "tests/u.py::test_x", False),
    ],
)
def test_patterns_match_ids_prefixes_and_globs(pattern: str, test_id: str, matches: bool) -> None:
    index = PatternIndex({"n/c": [pattern]})
    assert (index.match(test_id) == [("n/c", pattern)]) is matches


PLAN = runtime_plan(
    {
        "plangraph": 1,
        "plan": "p",
        "nodes": [
            {
                "id": "step-login",
                "acceptance": [
                    {"id": "ac-ok", "verifier": {"type": "test"}},
                    {"id": "ac-review", "verifier": {"type": "approval"}},
                ],
            }
        ],
    }
)


@pytest.mark.parametrize(
    ("ref", "message"),
    [
        ("step-login/ac-ok", None),
        ("step-login", "criterion marker 'step-login': write 'node-id/criterion-id'"),
        (
            "step-logn/ac-ok",
            "criterion marker 'step-logn/ac-ok': unknown node 'step-logn'; "
            "did you mean 'step-login'? valid: step-login",
        ),
        (
            "step-login/ac-ko",
            "criterion marker 'step-login/ac-ko': node 'step-login' has no criterion 'ac-ko'; "
            "did you mean 'ac-ok'? valid: ac-ok, ac-review",
        ),
        (
            "step-login/ac-review",
            "criterion marker 'step-login/ac-review' is verified by 'approval', not by tests; "
            "test criteria of 'step-login': ac-ok",
        ),
    ],
)
def test_marker_references_must_name_a_test_criterion(ref: str, message: str | None) -> None:
    assert ref_problems([ref], PLAN) == ([message] if message else [])


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--plangraph", "tests/"], ["--plangraph=", "tests/"]),
        (["--plangraph", "tests/t.py::test_x"], ["--plangraph=", "tests/t.py::test_x"]),
        (["--plangraph", "plan.yaml"], ["--plangraph", "plan.yaml"]),
        (["--plangraph", "plan.JSON"], ["--plangraph", "plan.JSON"]),
        (["--plangraph", "-q"], ["--plangraph", "-q"]),
        (["--plangraph=x", "tests"], ["--plangraph=x", "tests"]),
        (["tests", "--plangraph"], ["tests", "--plangraph"]),
    ],
)
def test_a_test_path_after_plangraph_is_not_taken_as_the_plan(
    args: list[str], expected: list[str]
) -> None:
    split_plan_argument(args)
    assert args == expected


def test_a_mapping_survives_the_trip_through_plain_values() -> None:
    mapping = Mapping(test_files={"t": "tests/t.py"}, partial=True)
    mapping.file_subjects["tests/t.py"] = ["conftest.py", "tests/t.py"]
    assert Mapping.from_dict(mapping.to_dict()) == mapping
    assert mapping.subjects_of(["t", "unknown"]) == ["conftest.py", "tests/t.py"]


def test_quiet_summary_has_no_table_and_says_what_failed() -> None:
    refusal = GateDecision(
        "step-b", "FAILED", "awaiting_approval", (Reason("APPROVAL_MISSING", "no approval"),), []
    )
    report = RunReport(
        recorded=[Outcome("a/b", "passed", None), Outcome("a/c", "failed", "TEST_FAILED")],
        unverified={"a/d": "DESELECTED"},
        decisions=[refusal],
        gate=True,
    )
    text = [" ".join(segment for segment, _ in line) for line in render(report, -1)]
    assert text == [
        "plan: 0/0 nodes completed; evidence recorded: 1 failed, 1 passed",
        "not verified in this run: 1 (1 DESELECTED)",
        "not passed in this run:",
        "  a/c: failed TEST_FAILED",
        "gate refused  step-b (awaiting_approval): no approval",
        "plangraph gate: 1 claimed or required node(s) not completed; the session fails",
    ]
    assert render(RunReport(error="store is locked"), 0)[0][0][1] == {"red": True, "bold": True}
    assert render(RunReport(gate=True), -1)[-1] == [
        ("plangraph gate: no node is claimed or required", {})
    ]


def test_a_pytest_run_without_plangraph_imports_nothing_heavy(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_light="""
        import sys

        def test_light():
            heavy = {"pydantic", "yaml", "git", "jsonschema", "sqlite3", "coverage"}
            assert sorted(heavy & set(sys.modules)) == []
            assert "pytest_plangraph.plugin" in sys.modules
        """
    )
    pytester.runpytest_subprocess("-p", "no:cacheprovider").assert_outcomes(passed=1)
