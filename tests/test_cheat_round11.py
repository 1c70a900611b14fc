"""Attacks on the eleventh round's changes, by an agent that wants a node completed while a
test of its criterion fails.

The skip-origin check (``plugin/origin.py``) looked at the innermost frame pytest's report
shows, and found the interpreter's folders when the first skip was raised: broken code under
test could skip its own failing test through the standard library
(``unittest.TestCase().skipTest``), through code compiled under another file's name, from a
module that sets ``__tracebackhide__``, or after pointing ``sysconfig`` at its own folder;
and a test that asks ``pytest.importorskip`` for the module under test was skipped when that
module failed to import; code under test in a module named like a test module (never
collected) was taken for the tests'. Each is run through a real ``pytest --plangraph``
process on a real git repository, and judged by the real ``plangraph claim``.

Who records and the CI variables were read again at the session's end: code under test that
set, while the tests ran, a login name, actor or CI variable the records could not carry
stopped the run from recording its failure, and the earlier pass stood."""

from __future__ import annotations

import pytest
from cli_helpers import plangraph
from plugin_helpers import latest, make_project

pytest_plugins = ["pytester"]

PLAN = """
plangraph: 1
plan: demo
defaults:
  test: {skips: allow}
nodes:
  - id: step-calc
    acceptance:
      - id: ac-add
        verifier: {type: test, tests: ["tests/test_calc.py"]}
      - id: ac-honest
        verifier: {type: test, tests: ["tests/test_honest.py"]}
"""

HONEST = """
import unittest


class TestOffPlatform(unittest.TestCase):
    def test_skipped(self):
        self.skipTest("not on this platform")

    def test_runs(self):
        self.assertEqual(1, 1)
"""
"""The tests' own skip through the standard library: allowed, as before."""

TESTS = """
from calc import add


def test_add():
    assert add(2, 2) == 4


def test_one():
    assert 1 == 1
"""

IMPORTING = """
import pytest


def test_add():
    calc = pytest.importorskip("calc")
    assert calc.add(2, 2) == 4


def test_one():
    assert 1 == 1
"""
"""Tests that skip when the module under test cannot be imported."""

SKIPPING = {
    "importorskip": "import no_such_module_plangraph\n\ndef add(a, b):\n    return 5\n",
    "stdlib": "import unittest\n\ndef add(a, b):\n    unittest.TestCase().skipTest('no')\n",
    "hidden": (
        "import unittest\n\n__tracebackhide__ = True\n\n"
        "def add(a, b):\n    raise unittest.SkipTest('no')\n"
    ),
    "named": (
        "def add(a, b):\n    exec(compile('import unittest\\nraise unittest.SkipTest(0)',"
        " '/nowhere/lib.py', 'exec'))\n"
    ),
    "sysconfig": (
        "import os, sysconfig, unittest\n\ndef add(a, b):\n"
        "    here = os.path.dirname(os.path.abspath(__file__))\n"
        "    keys = ('stdlib', 'platstdlib', 'purelib', 'platlib')\n"
        "    sysconfig.get_paths = lambda *a, **k: dict.fromkeys(keys, here)\n"
        "    raise unittest.SkipTest('no')\n"
    ),
    "testname": "from lib.test_impl import add\n",
    "nul": (
        "import unittest\n\ndef _skip():\n    raise unittest.SkipTest('no')\n\n"
        "_skip.__code__ = _skip.__code__.replace(co_filename='/no\\x00where.py')\n\n"
        "def add(a, b):\n    _skip()\n"
    ),
}
"""``calc.py`` of each attack: broken code that skips its own failing test."""

HELPERS = {
    "testname": {
        "lib/test_impl.py": "import unittest\n\ndef add(a, b):\n    raise unittest.SkipTest(0)\n",
    },
}
"""Modules some attacks add beside ``calc.py``: the code under test named like a test module,
which pytest never collected (``testpaths`` is ``tests``)."""


@pytest.mark.parametrize("how", sorted(SKIPPING))
def test_a_skip_the_code_under_test_raises_is_blamed(pytester: pytest.Pytester, how: str) -> None:
    """However the code under test skips its failing test, the test counts as failed and the
    node is not completed; the tests' own ``skipTest`` stays an allowed skip."""
    files = {
        "calc.py": SKIPPING[how],
        "tests/test_honest.py": HONEST,
        **HELPERS.get(how, {}),
        "pytest.ini": "[pytest]\ntestpaths = tests\npythonpath = .\n",
    }
    tests = IMPORTING if how == "importorskip" else TESTS
    root = make_project(pytester, plan=PLAN, tests=tests, files=files)
    (root / "tests/test_a.py").rename(root / "tests/test_calc.py")
    result = pytester.runpytest_subprocess("--plangraph", "-p", "no:cacheprovider")
    records = latest(root)
    assert "Traceback" not in result.stdout.str()
    record = records["step-calc/ac-add"]
    assert record.outcome == "failed", record.details
    assert "skipped by the code under test (" in record.details["message"]
    honest = records["step-calc/ac-honest"]
    assert honest.outcome == "passed", honest.details
    assert len(honest.details["allowed"]) == 1
    assert plangraph(root, "claim", "step-calc", "--by", "agent").code == 1


RECORDER_PLAN = """
plangraph: 1
plan: demo
nodes:
  - id: step-a
    acceptance:
      - id: ac-marked
        verifier: {type: test}
"""

RECORDER_TESTS = """
import pytest
from helper import value


@pytest.mark.criterion("step-a/ac-marked")
def test_marked():
    assert value() == 1
"""

BREAKING_HELPER = """
import os

os.environ[{variable!r}] = {value!r}


def value():
    return 2
"""
"""A broken module the tests import that also names, once imported, a recorder the records
could not carry."""


@pytest.mark.parametrize(
    ("variable", "value"),
    [("LOGNAME", "nobody\nelse"), ("PLANGRAPH_ACTOR", "nobody\nelse"), ("GITHUB_SHA", "\udcff")],
)
def test_code_under_test_cannot_stop_the_run_recording_its_failure(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, variable: str, value: str
) -> None:
    """Who records is read once, when the session starts: code under test that names another
    login name or actor while the tests run does not stop the run's failure from being
    recorded (the earlier pass would have stood, the node completed)."""
    for name in ("PLANGRAPH_ACTOR", "LOGNAME", "USER", "LNAME", "USERNAME", "GITHUB_SHA"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("LOGNAME", "ci")
    files = {
        "helper.py": "def value():\n    return 1\n",
        "pytest.ini": "[pytest]\npythonpath = .\n",
    }
    root = make_project(pytester, plan=RECORDER_PLAN, tests=RECORDER_TESTS, files=files)
    pytester.runpytest_subprocess("--plangraph", "-p", "no:cacheprovider")
    assert latest(root)["step-a/ac-marked"].outcome == "passed"
    assert plangraph(root, "status", "--check").code == 0  # completed
    (root / "helper.py").write_text(
        BREAKING_HELPER.format(variable=variable, value=value), encoding="utf-8"
    )
    result = pytester.runpytest_subprocess("--plangraph", "-p", "no:cacheprovider")
    assert "Traceback" not in result.stdout.str()
    record = latest(root)["step-a/ac-marked"]
    assert (record.outcome, record.recorded_by) == ("failed", "ci")
    assert plangraph(root, "claim", "step-a", "--by", "agent").code == 1
