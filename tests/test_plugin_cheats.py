"""An agent that wants the gate to say PASSED while tests fail, with only the powers it has: it
edits the working tree (not the plan by hand), runs commands and sets its environment. Each test
is one way in that was closed, through real ``pytest --plangraph`` runs and the real command."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_helpers import plangraph_main
from plugin_helpers import latest, make_project

pytest_plugins = ["pytester"]

NAMED_PLAN = """
plangraph: 1
plan: demo
nodes:
  - id: step-login
    acceptance:
      - id: ac-login
        verifier:
          type: test
          tests: ["tests/test_a.py::test_login", "tests/test_a.py::test_ok"]
      - id: ac-file
        verifier: {type: test, tests: ["tests/test_a.py"], exclude: ["*::test_login"]}
"""

NAMED_TESTS = """
def test_login():
    assert False, "the login is broken"

def test_ok():
    assert True
"""


def _gate(root: Path) -> str:
    status = plangraph_main(root, "status", "--format", "json")
    assert status.code in (0, 1), status.err
    (node,) = [n for n in status.json()["nodes"] if n["id"] == "step-login"]
    return str(node["status"])


@pytest.mark.parametrize(
    "addopts",
    [
        "--deselect tests/test_a.py::test_login",
        "--deselect=tests/test_a.py::test_login",
        '-k "not test_login"',
    ],
)
def test_the_ini_addopts_cannot_take_a_test_the_plan_names_out_of_its_criterion(
    pytester: pytest.Pytester, addopts: str
) -> None:
    root = make_project(pytester, plan=NAMED_PLAN, tests=NAMED_TESTS)
    # the agent's edit of the project's configuration, left in the working tree
    (root / "pytest.ini").write_text(f"[pytest]\ntestpaths = tests\naddopts = {addopts}\n")
    result = pytester.runpytest("--plangraph", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, deselected=1)
    result.stdout.fnmatch_lines(["*not verified in this run: 1 (1 DESELECTED)*"])
    records = latest(root)
    assert "step-login/ac-login" not in records  # no pass without the test the plan names
    assert records["step-login/ac-file"].outcome == "passed"  # a file pattern: the suite's
    assert _gate(root) != "completed"
    claim = plangraph_main(root, "claim", "step-login", "--by", "agent")
    assert claim.code == 1, claim.out
