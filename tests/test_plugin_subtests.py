"""Subtests (pytest's ``subtests`` fixture, ``unittest``'s ``subTest``) under the test policy.

A subtest's report comes before its test's own call report, and pytest passes the test when
its own call passes and no subtest failed. A subtest that was skipped or xfailed left part of
the test unchecked: the test counts as skipped or xfailed, and the criterion's ``skips`` and
``xfail`` settings decide, as for any test (more-itertools' suite, run under the gate, holds
hundreds of ``subTest`` loops). Serial and ``-n 2`` runs record the same evidence.
"""

from __future__ import annotations

import pytest
from plugin_helpers import evidence, latest, make_project, section

PLAN = """
plangraph: 1
plan: subtests
nodes:
  - id: step-s
    acceptance:
      - id: ac-unit-skip
        verifier: {type: test, tests: ["tests/test_a.py::T::test_unit_skip"]}
      - id: ac-xfail
        verifier: {type: test, tests: ["tests/test_a.py::test_xfail"]}
      - id: ac-fails
        verifier: {type: test, tests: ["tests/test_a.py::test_fails"]}
      - id: ac-green
        verifier: {type: test, tests: ["tests/test_a.py::test_green"]}
"""

TESTS = """
import unittest

import pytest


class T(unittest.TestCase):
    def test_unit_skip(self):
        for i in range(3):
            with self.subTest(i=i):
                if i == 1:
                    self.skipTest("no case one here")
                self.assertLess(i, 5)


def test_xfail(subtests):
    for i in range(3):
        with subtests.test(msg="case", i=i):
            if i == 2:
                pytest.xfail("known bug at two")


def test_fails(subtests):
    for i in range(3):
        with subtests.test(i=i):
            assert i < 2, "two is too big"


def test_green(subtests):
    for i in range(3):
        with subtests.test(i=i):
            assert i < 5
"""

SHOWN = {
    "ac-unit-skip": ("error", "TEST_SKIPPED", "subtest (i=1): no case one here"),
    "ac-xfail": ("failed", "TEST_XFAILED", "subtest [case] (i=2): known bug at two"),
    "ac-fails": ("failed", "TEST_FAILED", "subtest (i=2): AssertionError: two is too big"),
}


def test_a_skipped_or_xfailed_subtest_is_no_pass_of_its_test(pytester: pytest.Pytester) -> None:
    make_project(pytester, plan=PLAN, tests=TESTS)
    result = pytester.runpytest("--plangraph")
    assert result.ret == 1
    records = latest(pytester.path)
    for criterion, (outcome, reason, why) in SHOWN.items():
        record = records[f"step-s/{criterion}"]
        assert (record.outcome, record.reason) == (outcome, reason), criterion
        [entry] = record.details["not_passed"]
        assert entry["reason"].startswith(why), entry
    green = records["step-s/ac-green"]
    assert (green.outcome, green.details["tests"]) == (
        "passed",
        {"tests/test_a.py::test_green": "passed"},
    )
    text = "\n".join(section(result.stdout.str()))
    assert "tests/test_a.py::test_xfail (xfailed: subtest [case] (i=2): known bug at two)" in text


def test_allowed_subtest_skips_and_xfails_are_listed_never_a_pass(
    pytester: pytest.Pytester,
) -> None:
    allow = "defaults:\n  test: {skips: allow, xfail: allow}\n"
    plan = PLAN.replace("plan: subtests\n", "plan: subtests\n" + allow)
    make_project(pytester, plan=plan, tests=TESTS)
    pytester.runpytest("--plangraph")
    records = latest(pytester.path)
    for criterion in ("ac-unit-skip", "ac-xfail"):
        record = records[f"step-s/{criterion}"]
        assert (record.outcome, record.reason) == ("error", "TOO_FEW_PASSED"), criterion
        [entry] = record.details["allowed"]
        assert entry["reason"].startswith(SHOWN[criterion][2])
    assert records["step-s/ac-fails"].outcome == "failed"


def test_two_workers_record_the_subtests_as_a_serial_run_does(pytester: pytest.Pytester) -> None:
    pytest.importorskip("xdist")
    make_project(pytester, plan=PLAN, tests=TESTS)
    pytester.runpytest("--plangraph", "--plangraph-store=.plangraph/serial.db")
    parallel = pytester.runpytest_subprocess(
        "--plangraph", "--plangraph-store=.plangraph/parallel.db", "-n", "2"
    )
    assert parallel.ret == 1

    def comparable(store: str) -> dict[str, object]:
        return {r.ref: (r.outcome, r.reason, r.details) for r in evidence(pytester.path, store)}

    serial = comparable(".plangraph/serial.db")
    assert serial == comparable(".plangraph/parallel.db")
    [entry] = serial["step-s/ac-xfail"][2]["not_passed"]  # type: ignore[index]
    assert entry["reason"] == "subtest [case] (i=2): known bug at two"
