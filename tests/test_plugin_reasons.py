"""The reason a criterion's evidence gives for a test that did not pass, for the failures a
real suite has: a failed doctest names its line, its example and what it printed or raised
(boltons' suite runs its modules' doctests with ``--doctest-modules``; pytest's report of one
starts with a line of the docstring, which said nothing). Serial and ``-n 2`` runs record
the same reason."""

from __future__ import annotations

import pytest
from cli_helpers import plangraph
from plugin_helpers import evidence, latest, make_project, section

from pytest_plangraph.plugin.outcomes import doctest_reason

PLAN = """
plangraph: 1
plan: doctests
nodes:
  - id: step-text
    acceptance:
      - id: ac-doctests
        verifier: {type: test, tests: ["src/text.py"]}
"""

TEXT = '''
def shout(word):
    """Make a word loud.

    Loud words end in an exclamation mark:

    >>> shout("hi")
    'HI!'
    """
    return word.upper()


def ratio(a, b):
    """The ratio of two numbers.

    >>> ratio(1, 0)
    0
    """
    return a / b
'''

INI = "[pytest]\ntestpaths = src\naddopts = --doctest-modules\n"


def _project(pytester: pytest.Pytester) -> None:
    make_project(
        pytester,
        plan=PLAN,
        tests="",
        files={"src/text.py": TEXT, "src/__init__.py": "", "pytest.ini": INI},
    )


def test_a_failed_doctest_names_its_example_and_what_it_printed(
    pytester: pytest.Pytester,
) -> None:
    _project(pytester)
    result = pytester.runpytest("--plangraph")
    record = latest(pytester.path)["step-text/ac-doctests"]
    assert (record.outcome, record.reason) == ("failed", "TEST_FAILED")
    reasons = {e["test"]: e["reason"] for e in record.details["not_passed"]}
    assert reasons == {
        "src/text.py::src.text.ratio": (
            "doctest line 15: >>> ratio(1, 0) "
            "UNEXPECTED EXCEPTION: ZeroDivisionError('division by zero')"
        ),
        "src/text.py::src.text.shout": (
            "doctest line 6: >>> shout(\"hi\") Expected: 'HI!' Got: 'HI'"
        ),
    }
    text = "\n".join(section(result.stdout.str()))
    assert "(failed: doctest line 6: >>> shout(\"hi\") Expected: 'HI!' Got: 'HI')" in text


def test_two_workers_give_a_doctest_the_reason_a_serial_run_gives(
    pytester: pytest.Pytester,
) -> None:
    pytest.importorskip("xdist")
    _project(pytester)
    pytester.runpytest("--plangraph", "--plangraph-store=.plangraph/serial.db")
    pytester.runpytest_subprocess(
        "--plangraph", "--plangraph-store=.plangraph/parallel.db", "-n", "2"
    )
    serial, parallel = (
        [r.details["not_passed"] for r in evidence(pytester.path, f".plangraph/{name}.db")]
        for name in ("serial", "parallel")
    )
    assert serial == parallel
    assert serial[0][0]["reason"].startswith("doctest line 15: >>> ratio(1, 0) UNEXPECTED")


@pytest.mark.parametrize(
    "text",
    [
        "AssertionError: assert 1 == 2",
        "contains 1 failed subtest",
        "342 a line of a docstring\n\nno location line after it",
    ],
)
def test_any_other_failure_text_is_no_doctest(text: str) -> None:
    assert doctest_reason(text) is None


def test_a_doctest_of_unknown_location_shows_its_example() -> None:
    text = (
        "EXAMPLE LOCATION UNKNOWN, not showing all tests of that example\n"
        "??? >>> 1 + 1\nExpected:\n    3\nGot:\n    2\n\n/x/y.txt:None: DocTestFailure"
    )
    assert doctest_reason(text) == "doctest line None: >>> 1 + 1 Expected: 3 Got: 2"


GLOB_PLAN = """
plangraph: 1
plan: globs
nodes:
  - id: step-a
    acceptance:
      - id: ac-files
        verifier: {type: test, tests: ["tests/test_a*.py"]}
      - id: ac-tests
        verifier: {type: test, tests: ["tests/test_a*.py::*"]}
"""


def test_a_glob_of_files_that_matches_no_test_says_what_to_write(
    pytester: pytest.Pytester,
) -> None:
    """boltons' plan named ``tests/test_funcutils*.py``: a glob matches whole test ids, so it
    matched no test, and the message gave no clue why."""
    make_project(pytester, plan=GLOB_PLAN, tests="def test_one():\n    pass\n")
    result = pytester.runpytest("--plangraph")
    records = latest(pytester.path)
    files = records["step-a/ac-files"]
    assert (files.outcome, files.reason) == ("error", "TEST_NOT_FOUND")
    hint = "tests/test_a*.py (a glob matches whole test ids: tests/test_a*.py::* matches the tests"
    assert files.details["message"] == f"no collected test matches {hint} in its files)"
    assert records["step-a/ac-tests"].outcome == "passed"
    assert hint in "\n".join(section(result.stdout.str()))
    text = plangraph(pytester.path, "explain", "step-a").out
    assert text.count("no collected test matches") == 1, text
    assert f"{hint} in its files): fix the tests: pattern" in text


def test_a_criterion_nothing_maps_says_what_would_map_a_test(pytester: pytest.Pytester) -> None:
    """boltons' plan held a criterion for tests to be marked (``verifier: {type: test}``);
    before any test carried the marker, its ``TEST_NOT_FOUND`` said nothing more."""
    plan = GLOB_PLAN.replace('{type: test, tests: ["tests/test_a*.py"]}', "{type: test}")
    make_project(pytester, plan=plan, tests="def test_one():\n    pass\n")
    result = pytester.runpytest("--plangraph")
    record = latest(pytester.path)["step-a/ac-files"]
    assert (record.outcome, record.reason) == ("error", "TEST_NOT_FOUND")
    said = (
        "no collected test carries its @pytest.mark.criterion marker, and it names no tests: "
        "pattern"
    )
    assert record.details["message"] == said
    assert f"  step-a/ac-files: error TEST_NOT_FOUND: {said}" in section(result.stdout.str())
