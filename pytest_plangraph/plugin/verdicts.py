"""From pytest report phases to test outcomes, and from test outcomes to a criterion's verdict.

Pure functions over plain values, so the rules read as a table and are tested as one. A test's
outcome folds its setup, call and teardown reports; a criterion's verdict folds its tests'
outcomes. ``None`` means "not decided in this run" (interrupted, deselected, not collected): no
evidence is recorded for it, and the summary says why.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from ..plan.patterns import may_hold
from ..plan.policy import TestPolicy
from ..values import dataclass, field

Phase = tuple[str, str, bool]
"""``(when, outcome, wasxfail)`` of one report: ``("call", "skipped", True)`` is an xfail."""

TEST_OUTCOMES = ("passed", "failed", "error", "skipped", "xfailed", "xpassed")
_PASSED = [("setup", "passed", False), ("call", "passed", False), ("teardown", "passed", False)]
"""The phases of almost every test of a green suite, answered without folding."""
_WEIGHT = {"failed": 2, "skipped": 1}
"""How much a phase's outcome weighs when the phase is reported more than once."""


def fold_phases(phases: Iterable[Phase]) -> str | None:
    """The outcome of one test from its reports, or None when it did not finish.

    A failure in setup or teardown is ``error``; in the call (including a strict xpass) it is
    ``failed``. A passing call counts only once its teardown passed too. A phase reported more
    than once (each subtest's report before its test's own call report, the same test on
    several xdist workers with ``--dist each``) failed when any of its reports failed, else
    was skipped (or xfailed) when any of them was: a subtest skipped or xfailed inside a test
    whose own call passed leaves part of the test unchecked, as a skipped test does.
    """
    if phases == _PASSED:
        return "passed"
    seen: dict[str, tuple[str, bool]] = {}
    for when, outcome, xfail in phases:
        # a later report stands unless an earlier one weighs more: failed, then skipped
        if _WEIGHT.get(outcome, 0) >= _WEIGHT.get(seen.get(when, ("", False))[0], 0):
            seen[when] = (outcome, xfail)
    failed = [when for when, (outcome, _) in seen.items() if outcome == "failed"]
    if failed:
        return "failed" if "call" in failed else "error"
    for when in ("setup", "call"):
        outcome, xfail = seen.get(when, ("", False))
        if outcome == "skipped":
            return "xfailed" if xfail else "skipped"
    if "call" not in seen or "teardown" not in seen:
        return None
    return "xpassed" if seen["call"][1] else "passed"


@dataclass(frozen=True)
class Verdict:
    """A criterion's verdict in this run: an evidence outcome and its reason code."""

    outcome: str
    reason: str | None = None


@dataclass(frozen=True)
class Unverified:
    """Why a criterion gets no evidence from this run (shown in the summary), and the tests
    that kept it from being decided (deselected, or not finished)."""

    reason: str
    tests: tuple[str, ...] = field(default=(), compare=False)


NOT_RUN = "NOT_RUN"
"""Some of its tests were selected but did not finish (``-x``, interruption, collection error)."""
DESELECTED = "DESELECTED"
"""Some of its tests or its verifier item were deselected (``-k``, ``-m``, ``--deselect`` …)."""
NOT_COLLECTED = "NOT_COLLECTED"
"""Unverified: the run collected only part of the suite (explicit paths, ``--lf``) and none of
its tests. Evidence ``error``: a collector that may hold some of its tests failed."""

TEST_SKIPPED = "TEST_SKIPPED"
"""A required test was skipped, or a collector that may hold some was skipped whole."""
TOO_FEW_PASSED = "TOO_FEW_PASSED"
"""Fewer tests ran and passed than the criterion's ``min_passed`` (the rest were allowed skips
or xfails, or there were not that many)."""

# First match wins: a failure is a fact even in a partial run; a pass needs the whole set.
_NEGATIVE = (
    ("failed", Verdict("failed", "TEST_FAILED")),
    ("error", Verdict("error", "TEST_ERROR")),
)
_NOT_PASSING = (
    ("xfailed", "xfail", Verdict("failed", "TEST_XFAILED")),
    ("xpassed", "xfail", Verdict("error", "TEST_XPASSED")),
    ("skipped", "skips", Verdict("error", TEST_SKIPPED)),
)
"""Outcomes that are no pass, the policy field that may allow them, and the verdict when it
does not. A strict XPASS is no ``xpassed``: pytest reports it as a failure."""


def allowed_outcomes(policy: TestPolicy) -> frozenset[str]:
    """The test outcomes *policy* allows: never evidence of a pass, but no failure either."""
    return frozenset(
        outcome for outcome, field, _ in _NOT_PASSING if getattr(policy, field) == "allow"
    )


def criterion_verdict(
    outcomes: Mapping[str, str | None],
    *,
    unmatched: Iterable[str] = (),
    deselected: Iterable[str] = (),
    uncollected: Iterable[str] = (),
    skipped_whole: Iterable[str] = (),
    partial: bool = False,
    no_pass: str | None = None,
    policy: TestPolicy | None = None,
) -> Verdict | Unverified:
    """The verdict over a criterion's selected tests (*outcomes*: test id → outcome or None).

    *unmatched* are plan patterns that matched no collected test; *deselected* are matched tests
    left out of this run; *partial* says the command line narrowed the collection (paths,
    test ids, ``--lf``); *uncollected* are the failed collectors that may hold some of its
    tests (their tests never ran);
    *skipped_whole* the collectors skipped whole (``pytest.importorskip``) that may hold some:
    like a skipped test, not passing evidence. A pattern that none of those could hold is
    still ``TEST_NOT_FOUND`` unless the run is partial: it matches nothing anywhere. A partial
    run records failures but never a pass: a test it left out could fail. *no_pass* is the
    reason code of a run whose tests could not fail (stripped asserts, stale bytecode): like a
    partial run it records failures, and a criterion that would pass is left unverified.
    *policy* (default: skips and xfails fail, one pass needed) says which skips and xfails
    are allowed; an allowed one is never a pass, so the tests that ran must still give
    ``min_passed`` passes (never fewer than one).
    """
    policy = policy or TestPolicy()
    unmatched, deselected, uncollected = list(unmatched), list(deselected), list(uncollected)
    passed_over = list(skipped_whole)
    values = set(outcomes.values())
    skipped = bool(passed_over) and not values & {"failed", "error"}
    # a pattern that no collector that never gave its tests could hold (failed or skipped
    # whole; `.` is the whole suite) matched nothing anywhere: a typo
    held = [*passed_over, *uncollected]
    lost = [p for p in unmatched if not any(c == "." or may_hold(p, c) for c in held)]
    # after collection errors too: what the failed collectors may hold is known
    if not partial and (lost or not (outcomes or deselected or skipped or uncollected)):
        return Verdict("error", "TEST_NOT_FOUND")
    for outcome, verdict in _NEGATIVE:
        if outcome in values:
            return verdict
    if deselected:  # a partial run decides nothing, whatever else it could not collect
        return Unverified(DESELECTED)
    if uncollected:
        return Verdict("error", NOT_COLLECTED)
    if skipped and policy.skips != "allow":
        return Verdict("error", TEST_SKIPPED)
    return _ran(outcomes, values, lost, skipped, partial, no_pass, policy)


def _ran(
    outcomes: Mapping[str, str | None],
    values: set[str | None],
    lost: list[str],
    skipped: bool,
    partial: bool,
    no_pass: str | None,
    policy: TestPolicy,
) -> Verdict | Unverified:
    """The rest of :func:`criterion_verdict`, once no test failed and the whole selection is
    known: what ran decides (*skipped*: a collector skipped whole, which the policy allows)."""
    if lost or not (outcomes or skipped):
        return Unverified(NOT_COLLECTED)
    if None in values:
        return Unverified(NOT_RUN)
    allowed = allowed_outcomes(policy)
    for outcome, _, verdict in _NOT_PASSING:
        if outcome in values and outcome not in allowed:
            return verdict
    if partial:  # every test it collected passed; those it left out are unknown
        return Unverified(NOT_COLLECTED)
    passed = sum(1 for outcome in outcomes.values() if outcome == "passed")
    if passed < max(policy.min_passed, 1):  # an allowed skip or xfail is never a pass
        return Verdict("error", TOO_FEW_PASSED)
    if no_pass:  # every test passed, but in a run where they could not fail
        return Unverified(no_pass)
    return Verdict("passed")
