""":meth:`RunResults.hear` takes a plain pass without asking why it is no pass; what it keeps
for every kind of report of a real session (passes, failures, errors in setup and teardown,
skips, xfails, strict and non-strict xpasses, skips raised by the code under test, declared
artifacts) is what the outcome and reason of each report say."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_plangraph.plugin.evidence import ARTIFACT_PROPERTY, RunResults
from pytest_plangraph.plugin.outcomes import phase_outcome, report_reason

TESTS = """
import pytest
import helper

@pytest.fixture
def broken_setup():
    raise RuntimeError("setup broke")

@pytest.fixture
def broken_teardown():
    yield
    raise RuntimeError("teardown broke")

def test_pass(record_property):
    record_property("plangraph_artifact", "out/a.txt")

def test_fail():
    assert 1 == 2, "one is not two"

def test_setup_error(broken_setup):
    pass

def test_teardown_error(broken_teardown):
    pass

def test_skip():
    pytest.skip("not here")

@pytest.mark.skip(reason="marked")
def test_marked_skip():
    pass

@pytest.mark.xfail(reason="known")
def test_xfail():
    assert False

@pytest.mark.xfail(reason="fixed now")
def test_xpass():
    pass

@pytest.mark.xfail(reason="strict", strict=True)
def test_strict_xpass():
    pass

def test_skip_from_code():
    helper.give_up()
"""


def _reference(results: RunResults, test_id: str, report: Any) -> None:
    """What the hook kept before the plain pass had a path of its own."""
    xfail, outcome = hasattr(report, "wasxfail"), phase_outcome(report)
    results.phases.setdefault(test_id, []).append((report.when, outcome, xfail))
    results.note(test_id, report_reason(report))
    verdict = getattr(report, "plangraph_verdict", None)
    if verdict is not None:
        results.verdicts[test_id] = verdict
    for name, value in report.user_properties:
        if name == ARTIFACT_PROPERTY:
            results.artifacts.setdefault(test_id, []).append(str(value))


def test_what_is_kept_is_what_each_report_says(pytester: pytest.Pytester) -> None:
    assert ARTIFACT_PROPERTY == "plangraph_artifact"
    pytester.makepyfile(
        helper="import pytest\n\ndef give_up():\n    pytest.skip('the code gave up')\n"
    )
    pytester.mkdir("tests")
    pytester.path.joinpath("tests", "test_kinds.py").write_text(TESTS)
    pytester.syspathinsert()
    pytester.makefile(".yaml", plangraph="plangraph: 1\nplan: p\nnodes:\n  - id: a\n")
    pytester.run("git", "init", "-q")
    run = pytester.inline_run("--plangraph", "-p", "no:cacheprovider")
    reports = run.getreports("pytest_runtest_logreport")
    assert len(reports) >= 25
    heard, expected = RunResults(), RunResults()
    for report in reports:
        heard.hear("x/" + report.nodeid, report)
        _reference(expected, "x/" + report.nodeid, report)
    assert heard == expected
    kinds = {outcome for phases in heard.phases.values() for _, outcome, _ in phases}
    assert kinds == {"passed", "failed", "skipped"}
    assert any(xfail for phases in heard.phases.values() for *_, xfail in phases)
    assert list(heard.artifacts) == ["x/tests/test_kinds.py::test_pass"]
    assert set(heard.artifacts["x/tests/test_kinds.py::test_pass"]) == {"out/a.txt"}
    assert "one is not two" in heard.reasons["x/tests/test_kinds.py::test_fail"]
    assert "the code under test" in heard.reasons["x/tests/test_kinds.py::test_skip_from_code"]
    assert heard.outcome("x/tests/test_kinds.py::test_skip_from_code") == "failed"
    assert "x/tests/test_kinds.py::test_pass" not in heard.reasons
