"""A real suite's shape: platform skips, known xfails, a strict XPASS, ``exclude:`` patterns, and
the project's own ``addopts = -m "not stress"`` — through real ``pytest --plangraph`` runs."""

from __future__ import annotations

import pytest
from plugin_helpers import latest, make_project, section

pytest_plugins = ["pytester"]

PLAN = """
plangraph: 1
plan: suite
defaults:
  test: {skips: allow}
nodes:
  - id: step-core
    acceptance:
      - id: ac-core
        verifier: {type: test, tests: ["tests/test_core.py"], xfail: allow}
      - id: ac-io
        verifier:
          type: test
          tests: ["tests/test_io.py"]
          exclude: ["tests/test_io.py::test_flaky"]
      - id: ac-strict
        verifier: {type: test, tests: ["tests/test_strict.py"], xfail: allow}
      - id: ac-only-skips
        verifier: {type: test, tests: ["tests/test_io.py::test_posix_only"]}
      - id: ac-two
        verifier: {type: test, tests: ["tests/test_io.py"], min_passed: 3}
"""

CORE = """
import sys

import pytest


def test_add():
    assert 1 + 1 == 2


@pytest.mark.skipif(sys.platform != "plan9", reason="runs on plan9 only")
def test_plan9_paths():
    assert False


@pytest.mark.xfail(reason="known bug 12")
def test_known_bug():
    assert False


@pytest.mark.stress
def test_many_users():
    assert False, "the stress test would fail if it ran"
"""

IO = """
import pytest


def test_read():
    pass


def test_write():
    pass


def test_flaky():
    assert False, "flaky on CI"


@pytest.mark.skipif(True, reason="needs a POSIX tty")
def test_posix_only():
    pass
"""

STRICT = """
import pytest


@pytest.mark.xfail(strict=True, reason="fixed upstream?")
def test_now_passes():
    pass
"""

INI = """
[pytest]
testpaths = tests
addopts = -m "not stress"
markers =
    stress: long-running load tests
"""

CORE_ID = "tests/test_core.py::test_"
IO_ID = "tests/test_io.py::test_"


def _project(pytester: pytest.Pytester, plan: str = PLAN) -> None:
    files = {"tests/test_core.py": CORE, "tests/test_io.py": IO, "tests/test_strict.py": STRICT}
    make_project(pytester, plan=plan, tests="", files={**files, "pytest.ini": INI})


def test_allowed_skips_and_xfails_leave_the_criterion_to_the_tests_that_ran(
    pytester: pytest.Pytester,
) -> None:
    _project(pytester)
    result = pytester.runpytest("--plangraph")
    records = latest(pytester.path)
    core = records["step-core/ac-core"]
    assert (core.outcome, core.reason) == ("passed", None)
    assert core.details["tests"] == {
        f"{CORE_ID}add": "passed",
        f"{CORE_ID}plan9_paths": "skipped",
        f"{CORE_ID}known_bug": "xfailed",
    }
    assert core.details["allowed"] == [
        {"test": f"{CORE_ID}plan9_paths", "outcome": "skipped", "reason": "runs on plan9 only"},
        {"test": f"{CORE_ID}known_bug", "outcome": "xfailed", "reason": "known bug 12"},
    ]
    # the project's addopts left the stress test out of the suite: not DESELECTED
    assert core.details["outside_suite"] == [f"{CORE_ID}many_users"]
    assert "not verified" not in "\n".join(section(result.stdout.str()))
    io = records["step-core/ac-io"]
    assert (io.outcome, io.details["excluded"]) == ("passed", [f"{IO_ID}flaky"])
    assert f"{IO_ID}flaky" not in io.details["tests"]


def test_a_strict_xpass_fails_even_where_xfails_are_allowed(pytester: pytest.Pytester) -> None:
    _project(pytester)
    result = pytester.runpytest("--plangraph")
    strict = latest(pytester.path)["step-core/ac-strict"]
    assert (strict.outcome, strict.reason) == ("failed", "TEST_FAILED")
    [entry] = strict.details["not_passed"]
    assert entry["test"] == "tests/test_strict.py::test_now_passes"
    assert "XPASS(strict)" in entry["reason"]
    lines = section(result.stdout.str())
    assert any(
        "step-core/ac-strict: failed TEST_FAILED: tests/test_strict.py::test_now_passes" in line
        for line in lines
    ), lines


def test_allowed_skips_are_never_a_pass(pytester: pytest.Pytester) -> None:
    _project(pytester)
    pytester.runpytest("--plangraph")
    records = latest(pytester.path)
    only = records["step-core/ac-only-skips"]
    assert (only.outcome, only.reason) == ("error", "TOO_FEW_PASSED")
    assert only.details["message"].startswith("0 test(s) ran and passed; min_passed is 1")
    two = records["step-core/ac-two"]  # test_read and test_write pass, test_flaky fails
    assert (two.outcome, two.reason) == ("failed", "TEST_FAILED")


def test_min_passed_counts_the_tests_that_ran_and_passed(pytester: pytest.Pytester) -> None:
    plan = PLAN.replace(
        'tests: ["tests/test_io.py"], min_passed: 3',
        'tests: ["tests/test_io.py"], exclude: ["tests/test_io.py::test_flaky"], min_passed: 3',
    )
    _project(pytester, plan)
    pytester.runpytest("--plangraph")
    two = latest(pytester.path)["step-core/ac-two"]
    assert (two.outcome, two.reason) == ("error", "TOO_FEW_PASSED")
    assert "2 test(s) ran and passed; min_passed is 3" in two.details["message"]


def test_skips_still_fail_by_default(pytester: pytest.Pytester) -> None:
    _project(pytester, PLAN.replace("defaults:\n  test: {skips: allow}\n", ""))
    result = pytester.runpytest("--plangraph")
    core = latest(pytester.path)["step-core/ac-core"]
    assert (core.outcome, core.reason) == ("error", "TEST_SKIPPED")
    assert core.details["not_passed"] == [
        {"test": f"{CORE_ID}plan9_paths", "outcome": "skipped", "reason": "runs on plan9 only"}
    ]
    assert [e["test"] for e in core.details["allowed"]] == [f"{CORE_ID}known_bug"]  # xfail: allow
    text = "\n".join(section(result.stdout.str()))
    assert f"step-core/ac-core: error TEST_SKIPPED: {CORE_ID}plan9_paths (skipped" in text


@pytest.mark.parametrize(
    ("args", "env", "left_out"),
    [
        (["-k", "not known_bug"], "", "known_bug"),  # narrowing on the command line
        (["--deselect", f"{CORE_ID}add"], "", "add"),
        (["-m", "not stress and not xfail"], "", "known_bug"),
        ([], "-k 'not known_bug'", "known_bug"),  # narrowing from the environment
    ],
)
def test_narrowing_outside_the_project_configuration_records_no_pass(
    pytester: pytest.Pytester,
    monkeypatch: pytest.MonkeyPatch,
    args: list[str],
    env: str,
    left_out: str,
) -> None:
    _project(pytester)
    monkeypatch.setenv("PYTEST_ADDOPTS", env)
    result = pytester.runpytest("--plangraph", "-v", *args)
    records = latest(pytester.path)
    assert "step-core/ac-core" not in records
    # -v names the tests the narrowing left out (not the one the project leaves out)
    assert f"  step-core/ac-core: DESELECTED ({CORE_ID}{left_out})" in section(result.stdout.str())
    assert records["step-core/ac-io"].outcome == "passed"  # untouched by the narrowing


def test_a_command_line_mark_expression_replaces_the_project_one(
    pytester: pytest.Pytester,
) -> None:
    _project(pytester)
    pytester.runpytest("--plangraph", "-m", "not xfail_never_used")
    core = latest(pytester.path)["step-core/ac-core"]
    # the project's `-m "not stress"` no longer applies: the stress test ran, and failed
    assert (core.outcome, core.reason) == ("failed", "TEST_FAILED")
    assert core.details["not_passed"][0]["test"] == f"{CORE_ID}many_users"
    assert "would fail if it ran" in core.details["not_passed"][0]["reason"]


def test_verbose_summary_lists_every_test_that_did_not_pass(pytester: pytest.Pytester) -> None:
    _project(pytester, PLAN.replace("defaults:\n  test: {skips: allow}\n", ""))
    quiet = "\n".join(section(pytester.runpytest("--plangraph").stdout.str()))
    verbose = "\n".join(section(pytester.runpytest("--plangraph", "-v").stdout.str()))
    assert "allowed skips and xfails (never a pass): 1 (-v lists them)" in quiet
    assert f"    {IO_ID}posix_only (skipped: needs a POSIX tty)" in verbose
    assert f"  step-core/ac-core: {CORE_ID}known_bug (xfailed: known bug 12)" in verbose


def test_under_xdist_the_suite_and_the_reasons_are_those_of_a_serial_run(
    pytester: pytest.Pytester,
) -> None:
    _project(pytester)
    result = pytester.runpytest_subprocess("--plangraph", "-n", "2", "-p", "no:randomly")
    assert "not verified" not in "\n".join(section(result.stdout.str()))
    records = latest(pytester.path)
    core = records["step-core/ac-core"]
    assert core.outcome == "passed"
    assert core.details["outside_suite"] == [f"{CORE_ID}many_users"]
    assert {e["reason"] for e in core.details["allowed"]} == {"runs on plan9 only", "known bug 12"}
    [entry] = records["step-core/ac-strict"].details["not_passed"]
    assert "XPASS(strict)" in entry["reason"]
