"""Attacks on the gate (round eighteen), by an agent that wants ``pytest --plangraph`` or
``plangraph status`` to answer a node completed while a test of its criterion fails.

* ``pytest --plangraph`` now takes the repository root's ``plangraph.yaml`` when the rootdir
  has none. A run started in a folder of a repository with no pytest configuration file
  (``cd pkg && pytest --plangraph``) takes that folder for its rootdir, found the root's plan
  and collected that folder's tests alone: a criterion whose other marked test, outside the
  folder, fails was recorded passed and its node completed (``--plangraph=../plangraph.yaml``
  did the same before), and so did ``--rootdir=.`` there under the root's ``pytest.ini``,
  and a run in a folder whose ``pyproject.toml`` holds a package's build settings but no
  pytest table (pytest reads it, finding no other file, and takes its folder for rootdir).
  Such a run now records no pass.
* Code under test that raises ``unittest.SkipTest`` in a ``unittest.TestCase`` test (in a
  ``subTest`` block or not), or ``pytest.skip()`` there, made the test an allowed skip under
  ``skips: allow``: unittest catches the skip and gives pytest its reason alone, so the frames
  of the raise were not looked at, and the criterion passed on its other tests. They are now,
  serially and under xdist.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_helpers import plangraph
from plugin_helpers import latest
from repo_helpers import commit_files

MARKED_PLAN = """
plangraph: 1
plan: whole
nodes:
  - id: step-a
    acceptance:
      - id: ac-a
        verifier: {type: test}
"""


def _repository(root: Path, files: dict[str, str]) -> None:
    commit_files(root, files)


MARKED = {
    ".gitignore": ".plangraph/\n__pycache__/\n",
    "plangraph.yaml": MARKED_PLAN,
    "pkg/tests/test_a.py": """
        import pytest

        @pytest.mark.criterion("step-a/ac-a")
        def test_a():
            pass
        """,
    "tests/test_b.py": """
        import pytest

        @pytest.mark.criterion("step-a/ac-a")
        def test_b():
            assert False, "broken"
        """,
}


PACKAGE = '[project]\nname = "pkg"\nversion = "1"\n'
"""A package's build settings with no pytest table: pytest reads it, finding no other."""


@pytest.mark.parametrize(
    ("extra", "options"),
    [
        ({}, ["--plangraph"]),
        ({}, ["--plangraph=../plangraph.yaml"]),
        ({"pytest.ini": "[pytest]\n"}, ["--plangraph", "--rootdir=."]),
        ({"pkg/pyproject.toml": PACKAGE}, ["--plangraph"]),
    ],
)
def test_a_run_in_a_folder_with_no_configuration_records_no_pass_for_the_plan_above(
    pytester: pytest.Pytester,
    monkeypatch: pytest.MonkeyPatch,
    extra: dict[str, str],
    options: list[str],
) -> None:
    _repository(pytester.path, {**MARKED, **extra})
    monkeypatch.chdir(pytester.path)
    result = pytester.runpytest("--plangraph")
    assert latest(pytester.path)["step-a/ac-a"].outcome == "failed", result.stdout.str()
    monkeypatch.chdir(pytester.path / "pkg")
    result = pytester.runpytest(*options)
    out = result.stdout.str()
    assert latest(pytester.path)["step-a/ac-a"].outcome == "failed", out
    assert "a folder below the plan file's, with no configuration file" in out
    assert "step-a  step  completed" not in plangraph(pytester.path, "status").out


@pytest.mark.parametrize(
    "config",
    [
        ("pkg/pytest.ini", "[pytest]\ntestpaths = tests\n"),
        ("pkg/pyproject.toml", PACKAGE + '[tool.pytest.ini_options]\ntestpaths = ["tests"]\n'),
    ],
)
def test_a_package_with_its_own_pytest_settings_still_records_its_passes(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, config: tuple[str, str]
) -> None:
    files = {name: text for name, text in MARKED.items() if name != "tests/test_b.py"}
    _repository(pytester.path, {**files, config[0]: config[1]})
    monkeypatch.chdir(pytester.path / "pkg")
    result = pytester.runpytest("--plangraph")
    assert latest(pytester.path)["step-a/ac-a"].outcome == "passed", result.stdout.str()


SKIP_PLAN = """
plangraph: 1
plan: skips
nodes:
  - id: step-a
    acceptance:
      - id: {name}
        verifier: {{type: test, tests: ["tests/test_calc.py::test_ok", "{test}"], skips: allow}}
"""

CALC = {
    ".gitignore": ".plangraph/\n__pycache__/\n",
    "pytest.ini": "[pytest]\npythonpath = .\n",
    "calc.py": """
        import unittest

        import pytest


        def sub(a, b):
            if a == 2:
                raise unittest.SkipTest("not today")
            return a - b


        def add(a, b):
            if a == 2:
                pytest.skip("not today")
            return a + b
        """,
    "tests/test_calc.py": """
        import unittest

        import calc


        def test_ok():
            assert calc.sub(1, 1) == 0


        class Broken(unittest.TestCase):
            def test_own(self):
                self.assertEqual(calc.sub(2, 1), 999)

            def test_sub(self):
                for a in (1, 2):
                    with self.subTest(a=a):
                        self.assertEqual(calc.sub(a, 1), 0 if a == 1 else 999)

            def test_pytest_skip(self):
                self.assertEqual(calc.add(2, 1), 999)

            def test_pytest_skip_in_sub(self):
                with self.subTest(a=2):
                    self.assertEqual(calc.add(2, 1), 999)


        class Own(unittest.TestCase):
            def test_skips_itself(self):
                with self.subTest(a=2):
                    self.skipTest("off this platform")
                self.skipTest("off this platform")
        """,
}


@pytest.mark.parametrize("xdist", [[], ["-n", "2"]])
@pytest.mark.parametrize(
    "name", ["test_own", "test_sub", "test_pytest_skip", "test_pytest_skip_in_sub"]
)
def test_a_unittest_skip_raised_by_the_code_under_test_is_no_allowed_skip(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, name: str, xdist: list[str]
) -> None:
    test = f"tests/test_calc.py::Broken::{name}"
    _repository(pytester.path, {**CALC, "plangraph.yaml": SKIP_PLAN.format(name="ac", test=test)})
    monkeypatch.chdir(pytester.path)
    result = pytester.runpytest("--plangraph", *xdist)
    record = latest(pytester.path)["step-a/ac"]
    assert record.outcome == "failed", result.stdout.str()
    (entry,) = record.details["not_passed"]
    assert entry["test"] == test
    assert "skipped by the code under test (calc.py:" in entry["reason"]
    assert "step-a  step  completed" not in plangraph(pytester.path, "status").out


def test_a_unittest_test_that_skips_itself_is_still_an_allowed_skip(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    test = "tests/test_calc.py::Own::test_skips_itself"
    _repository(pytester.path, {**CALC, "plangraph.yaml": SKIP_PLAN.format(name="ac", test=test)})
    monkeypatch.chdir(pytester.path)
    result = pytester.runpytest("--plangraph")
    record = latest(pytester.path)["step-a/ac"]
    assert record.outcome == "passed", result.stdout.str()
    assert [e["test"] for e in record.details["allowed"]] == [test]
