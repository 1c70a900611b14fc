"""A test file skipped whole (``pytest.importorskip``, a module-level skip) gives no passing
evidence to a criterion whose tests it may hold: like a skipped test, ``TEST_SKIPPED``."""

from __future__ import annotations

import pytest
from plugin_helpers import latest, make_project

from pytest_plangraph.pytest_verdicts import TEST_SKIPPED, Verdict, criterion_verdict

PLAN = """
plangraph: 1
plan: demo
nodes:
  - id: step-a
    outputs: [src/a.py]
    acceptance:
      - id: ac-glob
        verifier: {type: test, tests: ["tests/test_*.py::*success*"]}
      - id: ac-file
        verifier: {type: test, tests: ["tests/test_zskipped.py::*"]}
      - id: ac-marked
        verifier: {type: test}
      - id: ac-elsewhere
        verifier: {type: test}
      - id: ac-login
        verifier: {type: test, tests: ["tests/test_a.py::test_login"]}
"""

TESTS = """
import pytest

def test_login_success():
    pass

def test_login():
    pass

@pytest.mark.criterion("step-a/ac-elsewhere")
def test_elsewhere():
    pass
"""

SKIPPED = """
import pytest

pytest.importorskip("a_module_nobody_installed")

@pytest.mark.criterion("step-a/ac-marked")
def test_other_success():
    pass
"""


@pytest.mark.parametrize("args", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_a_file_skipped_whole_gives_its_criteria_no_pass(
    pytester: pytest.Pytester, args: list[str]
) -> None:
    run = pytester.runpytest_subprocess if args else pytester.runpytest
    files = {"tests/test_zskipped.py": SKIPPED}
    root = make_project(pytester, plan=PLAN, tests=TESTS, files=files)
    result = run("--plangraph", *args)
    result.assert_outcomes(passed=3, skipped=1)
    records = latest(root)
    outcomes = {ref: (r.outcome, r.reason) for ref, r in records.items()}
    skipped = ("error", TEST_SKIPPED)
    assert outcomes == {
        "step-a/ac-glob": skipped,  # its pattern could match a test of the skipped file
        "step-a/ac-file": skipped,  # all its tests are there (was TEST_NOT_FOUND)
        "step-a/ac-marked": skipped,  # the skipped file's source names it
        "step-a/ac-elsewhere": ("passed", None),
        "step-a/ac-login": ("passed", None),
    }
    glob = records["step-a/ac-glob"].details
    assert glob["tests"] == {"tests/test_a.py::test_login_success": "passed"}
    assert glob["skipped_whole"] == ["tests/test_zskipped.py"]
    assert "tests/test_zskipped.py was skipped whole" in glob["message"]


def test_a_failure_outweighs_a_file_skipped_whole() -> None:
    assert criterion_verdict({"t::a": "failed"}, skipped_whole=["tests/test_z.py"]) == Verdict(
        "failed", "TEST_FAILED"
    )
    assert criterion_verdict({"t::a": "passed"}, skipped_whole=["tests/test_z.py"]) == Verdict(
        "error", TEST_SKIPPED
    )
    assert criterion_verdict({"t::a": "passed"}) == Verdict("passed")
