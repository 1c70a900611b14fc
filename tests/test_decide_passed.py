"""The verdicts of a run decided with the common case said at once (every test of a criterion
passed in a whole run) and the subjects of the criteria whose tests share their modules made
once: the same verdicts, details and subjects as deciding each criterion by the rule."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_plangraph.plan.policy import TestPolicy
from pytest_plangraph.plugin.evidence import RunResults, _Decider, decide
from pytest_plangraph.plugin.mapping import CriterionTests, Mapping
from pytest_plangraph.plugin.verdicts import Unverified, criterion_verdict
from pytest_plangraph.vcs.quotes import quoted_subjects, quotes_key
from pytest_plangraph.vcs.testglob import collect_key

WALK = collect_key("tests", {"python_files": ["test_*.py"]})
FILES = ["tests/test_a.py", "tests/test_b.py", "tests/test_c.py"]
TESTS = [f"{file}::test_{n}" for file in FILES for n in range(2)]
SET_UP, TORN_DOWN = ("setup", "passed", False), ("teardown", "passed", False)
PHASES = {
    "passed": [SET_UP, ("call", "passed", False), TORN_DOWN],
    "failed": [SET_UP, ("call", "failed", False), TORN_DOWN],
    "skipped": [("setup", "skipped", False), TORN_DOWN],
    "xfailed": [SET_UP, ("call", "skipped", True), TORN_DOWN],
    "unfinished": [SET_UP],
}


def _rarely(strategy: st.SearchStrategy[list[str]]) -> st.SearchStrategy[list[str]]:
    """*strategy* a quarter of the time, else an empty list (most criteria pass)."""
    return st.sampled_from([(), (), ()]).map(list) | strategy


_CRITERION = st.fixed_dictionaries(
    {
        "tests": st.lists(st.sampled_from(TESTS), unique=True, max_size=3),
        "unmatched": _rarely(st.lists(st.sampled_from(["tests/test_x.py::*"]), max_size=1)),
        "deselected": _rarely(st.lists(st.sampled_from(TESTS), max_size=1)),
        "excluded": st.lists(st.sampled_from(TESTS), max_size=1),
        "outside": st.lists(st.sampled_from(TESTS), max_size=1),
        "policy": st.builds(
            TestPolicy,
            skips=st.sampled_from(["fail", "allow"]),
            xfail=st.sampled_from(["fail", "allow"]),
            min_passed=st.integers(0, 3),
        ),
    }
)


def _by_the_rule(
    mapping: Mapping,
    results: RunResults,
    policies: dict[str, TestPolicy],
    uncollected: dict[str, list[str]],
    no_pass: str | None,
) -> tuple[dict[str, tuple[Any, ...]], dict[str, Unverified]]:
    """Each criterion decided by :func:`criterion_verdict` and the details the decider
    writes, its subjects made for it alone: what :func:`decide` gave before."""
    decider = _Decider(mapping, results, uncollected, {}, no_pass, policies)
    decided: dict[str, tuple[Any, ...]] = {}
    skipped: dict[str, Unverified] = {}
    for ref, tests in mapping.criteria.items():
        policy = policies.get(ref) or TestPolicy()
        failed = uncollected.get(ref, [])
        outcomes = {t: results.outcome(t) for t in tests.tests}
        verdict = criterion_verdict(
            outcomes,
            unmatched=tests.unmatched,
            deselected=tests.deselected,
            partial=mapping.partial,
            uncollected=failed,
            no_pass=no_pass,
            policy=policy,
        )
        if isinstance(verdict, Unverified):
            held = [t for t, o in outcomes.items() if o is None]
            skipped[ref] = Unverified(verdict.reason, (*tests.deselected, *held))
            continue
        details = decider._details(tests, outcomes, verdict, policy, failed, [])
        produced = sorted({a for t in tests.tests for a in results.artifacts.get(t, ())})
        subjects = {p: mapping.hashes.get(p) for p in mapping.subjects_of(tests.tests)}
        subjects.update(quoted_subjects(ref, subjects, mapping.hashes))
        subjects.update(dict.fromkeys(produced))
        decided[ref] = (verdict, details, subjects, tuple(produced))
    return decided, skipped


@settings(max_examples=300, deadline=None)
@given(
    st.dictionaries(st.sampled_from(["n1/a", "n1/b", "n2/a", "n2/b"]), _CRITERION, min_size=1),
    st.dictionaries(
        st.sampled_from(TESTS), st.sampled_from(["passed"] * 6 + sorted(PHASES)), min_size=4
    ),
    st.sampled_from([False, False, False, True]),
    st.sampled_from([None, None, None, "ASSERTS_STRIPPED"]),
    _rarely(st.lists(st.sampled_from(["n1/a", "n2/b"]), max_size=1)),
    st.dictionaries(st.sampled_from(TESTS), st.just(["out/made.txt"]), max_size=1),
)
def test_the_passed_criteria_said_at_once_are_those_the_rule_decides(
    criteria: dict[str, dict[str, Any]],
    ran: dict[str, str],
    partial: bool,
    no_pass: str | None,
    failing_collectors: list[str],
    artifacts: dict[str, list[str]],
) -> None:
    file_subjects = {file: sorted([file, "tests/conftest.py", WALK]) for file in FILES}
    hashes: dict[str, str | None] = {file: f"sha-{file}" for file in FILES}
    hashes["tests/conftest.py"] = None
    hashes[WALK] = "walk"
    for ref in criteria:
        hashes[quotes_key(WALK, ref)] = f"quotes-{ref}"
    mapping = Mapping(
        criteria={
            ref: CriterionTests(
                tests=list(c["tests"]),
                deselected=list(c["deselected"]),
                unmatched=list(c["unmatched"]),
                excluded=list(c["excluded"]),
                outside=list(c["outside"]),
            )
            for ref, c in criteria.items()
        },
        test_files={test: test.partition("::")[0] for test in TESTS},
        file_subjects=file_subjects,
        hashes=hashes,
        partial=partial,
    )
    results = RunResults(artifacts=artifacts)
    for test, how in ran.items():
        results.phases[test] = list(PHASES[how])
    policies = {ref: c["policy"] for ref, c in criteria.items()}
    uncollected = {ref: ["tests/test_broken.py"] for ref in failing_collectors}

    decided, skipped = decide(mapping, results, (), uncollected, {}, no_pass, policies)
    expected, expected_skipped = _by_the_rule(mapping, results, policies, uncollected, no_pass)

    assert skipped == expected_skipped
    assert {f"{d.node}/{d.criterion}" for d in decided} == set(expected)
    for item in decided:
        verdict, details, subjects, produced = expected[f"{item.node}/{item.criterion}"]
        assert item.verdict == verdict
        assert item.details == details and list(item.details) == list(details)
        assert item.subjects == subjects
        assert item.produced == produced
