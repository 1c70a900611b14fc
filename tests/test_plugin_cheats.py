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


SKIP_PLAN = """
plangraph: 1
plan: demo
defaults:
  test: {skips: allow, xfail: allow}
nodes:
  - id: step-calc
    acceptance:
      - id: ac-broken
        verifier: {type: test, tests: ["tests/test_calc.py"]}
      - id: ac-honest
        verifier: {type: test, tests: ["tests/test_honest.py"]}
"""

CALC = """
import unittest

import pytest


def add(a, b):
    raise unittest.SkipTest("not on this platform")


def sub(a, b):
    pytest.xfail("a known bug")
"""

CALC_TESTS = """
from calc import add, sub


def test_add():
    assert add(2, 2) == 4


def test_sub():
    assert sub(2, 2) == 0


def test_one():
    assert 1 == 1
"""

HONEST_TESTS = """
import sys

import pytest

from helpers import needs_plan9


@pytest.mark.skipif(sys.platform != "plan9", reason="plan9 only")
def test_marker():
    pass


def test_inline_skip():
    pytest.skip("not here")


def test_inline_xfail():
    pytest.xfail("known")


def test_fixture_skip(off_platform):
    pass


def test_helper_skip():
    needs_plan9()


def test_import_skip():
    pytest.importorskip("no_such_module_plangraph")


def test_passes():
    pass
"""


@pytest.mark.parametrize("xdist", [False, True])
def test_a_skip_or_xfail_raised_by_the_code_under_test_is_a_failure(
    pytester: pytest.Pytester, xdist: bool
) -> None:
    files = {
        "calc.py": CALC,
        "tests/test_honest.py": HONEST_TESTS,
        "tests/helpers.py": "import pytest\n\ndef needs_plan9():\n    pytest.skip('plan9')\n",
        "tests/conftest.py": (
            "import pytest\n\n@pytest.fixture\ndef off_platform():\n    pytest.skip('off')\n"
        ),
        "pytest.ini": "[pytest]\ntestpaths = tests\npythonpath = . tests\n",
    }
    root = make_project(pytester, plan=SKIP_PLAN, tests=CALC_TESTS, files=files)
    (root / "tests/test_a.py").rename(root / "tests/test_calc.py")
    args = ["--plangraph", "-p", "no:cacheprovider", "-v"] + (["-n", "2"] if xdist else [])
    result = pytester.runpytest_subprocess(*args)
    records = latest(root)
    broken = records["step-calc/ac-broken"]
    assert (broken.outcome, broken.reason) == ("failed", "TEST_FAILED")
    assert "skipped by the code under test (calc.py:7)" in broken.details["message"]
    assert "xfailed by the code under test (calc.py:11)" in broken.details["message"]
    honest = records["step-calc/ac-honest"]
    assert honest.outcome == "passed", honest.details
    assert len(honest.details["allowed"]) == 6
    claim = plangraph_main(root, "claim", "step-calc", "--by", "agent")
    assert claim.code == 1 and "ac-broken" in claim.out
    assert "Traceback" not in result.stdout.str()


def test_a_skip_raised_inside_the_installation_is_not_the_code_under_tests(
    pytester: pytest.Pytester,
) -> None:
    """A repository that holds the interpreter's own folders (an environment kept inside it):
    a skip the standard library raises is not the code under test's, one the repository's
    own module raises is."""
    import sysconfig
    import unittest

    from pytest_plangraph.plugin.origin import SkipOrigin

    test = pytester.makepyfile(**{"tests/test_a": "def test_func():\n    pass\n"})
    item = pytester.getitem(test)
    stdlib = Path(sysconfig.get_paths()["stdlib"]).resolve()
    origin = SkipOrigin(stdlib.parent, item.config, {})
    try:
        unittest.TestCase().skipTest("from the standard library")
    except unittest.SkipTest:
        installed = pytest.ExceptionInfo.from_current()
    assert Path(installed.traceback[-1].path).resolve().is_relative_to(stdlib)  # raised there
    assert origin.raised_by(item, installed) is None
    pytester.makepyfile(**{"src/helper": "import pytest\n\ndef skip():\n    pytest.skip('no')\n"})
    own = SkipOrigin(pytester.path, item.config, {})
    pytester.syspathinsert(pytester.path / "src")
    import helper  # type: ignore[import-not-found]

    try:
        helper.skip()
    except pytest.skip.Exception:
        raised = pytest.ExceptionInfo.from_current()
    assert own.raised_by(item, raised) == "src/helper.py:4"
