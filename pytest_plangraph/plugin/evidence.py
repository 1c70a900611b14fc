"""Turning one pytest run's outcomes into verdicts (DESIGN §4).

:class:`RunResults` holds what the controller heard (the mapping, each test's report phases,
each verifier item's verdict, the artifacts tests declared); :func:`decide` folds it into one
verdict per criterion (:class:`Decided`), or the reason it was not verified;
:class:`~.building.EvidenceBuilder` binds each verdict to its subjects as an evidence record.
"""

from __future__ import annotations

from collections.abc import Iterable
from collections.abc import Mapping as MappingABC
from typing import Any

from ..plan.paths import COLLECT
from ..plan.patterns import unmatched_text
from ..plan.policy import TestPolicy
from ..values import dataclass, field
from ..vcs.quotes import quoted_subjects
from .mapping import CriterionTests, Mapping
from .origin import ORIGIN_ATTRIBUTE
from .verdicts import (
    DESELECTED,
    NOT_COLLECTED,
    NOT_RUN,
    TEST_SKIPPED,
    Phase,
    Unverified,
    Verdict,
    criterion_verdict,
    fold_phases,
)

# The names of the user properties the plugin puts on test reports: a criterion's verdict, the
# run it belongs to, and an artifact a test declared it produced (through the fixture).
ARTIFACT_PROPERTY = "plangraph_artifact"
CRITERION_PROPERTY = "plangraph_criterion"
RUN_PROPERTY = "plangraph_run"


@dataclass
class RunResults:
    """What the controller collected during the run, keyed by repository-relative test id."""

    phases: dict[str, list[Phase]] = field(default_factory=dict)
    verdicts: dict[str, dict[str, Any]] = field(default_factory=dict)
    artifacts: dict[str, list[str]] = field(default_factory=dict)
    coverage: dict[str, list[str]] | None = None
    """Test id → files it executed, under ``--plangraph-coverage`` (else None)."""
    reasons: dict[str, str] = field(default_factory=dict)
    """Test id → why it did not pass (:func:`~.outcomes.report_reason` of its first report
    that is no pass)."""

    def hear(self, test_id: str, report: Any) -> None:
        """Take one phase's report (a pytest report, or one an xdist worker sent): its
        outcome (:func:`~.outcomes.phase_outcome`), why it is no pass, a verifier item's
        verdict and the artifacts the test declared."""
        phases = self.phases.get(test_id)
        if phases is None:
            phases = self.phases[test_id] = []
        if (
            report.outcome == "passed"
            and not hasattr(report, "wasxfail")
            and not getattr(report, ORIGIN_ATTRIBUTE, None)
        ):  # a plain pass (most reports): pytest's outcome, no reason to keep
            phases.append((report.when, "passed", False))
        else:
            from .outcomes import phase_outcome, report_reason  # a report that is no plain pass

            phases.append((report.when, phase_outcome(report), hasattr(report, "wasxfail")))
            self.note(test_id, report_reason(report))
        verdict = getattr(report, "plangraph_verdict", None)
        if verdict is not None:
            self.verdicts[test_id] = verdict
        for name, value in report.user_properties:
            if name == ARTIFACT_PROPERTY:
                self.artifacts.setdefault(test_id, []).append(str(value))

    def note(self, test_id: str, reason: str | None) -> None:
        """Keep the first *reason* a report gave for why the test did not pass."""
        if reason and test_id not in self.reasons:
            self.reasons[test_id] = reason

    def outcome(self, test_id: str) -> str | None:
        """The test's outcome, None when it has not finished (or never ran)."""
        return fold_phases(self.phases.get(test_id, ()))


@dataclass(frozen=True)
class Decided:
    """A criterion's verdict in this run with its details and the paths it depends on."""

    node: str
    criterion: str
    verdict: Verdict
    details: dict[str, Any]
    subjects: dict[str, str | None]
    """path → sha256 before the run (None: unknown, or missing then; ``ABSENT``: bound
    absent, see :data:`~pytest_plangraph.plan.evidence.ABSENT`)."""
    produced: tuple[str, ...] = ()
    """Artifacts the tests declared: made by the run, so never 'changed during' it."""
    executed: tuple[str, ...] = ()
    """Source files the tests executed (coverage): hashed at the end of the run."""
    shared: dict[str, str | None] | None = field(default=None, compare=False, repr=False)
    """The part of :attr:`subjects` its test files bind (the same object for every criterion
    whose tests share their modules, never changed): what the record builder binds once per
    set of modules. None: not known (a verifier item's)."""
    own: dict[str, str | None] | None = field(default=None, compare=False, repr=False)
    """The part of :attr:`subjects` the criterion binds alone (its quotes subjects), merged
    over :attr:`shared`: what the record builder binds with each record, given as made
    rather than taken out of :attr:`subjects` again. None: not known."""

    def __init__(  # its own (one a criterion of the run): the fields stored as the shared one would
        self,
        node: str,
        criterion: str,
        verdict: Verdict,
        details: dict[str, Any],
        subjects: dict[str, str | None],
        produced: tuple[str, ...] = (),
        executed: tuple[str, ...] = (),
        shared: dict[str, str | None] | None = None,
        own: dict[str, str | None] | None = None,
    ) -> None:
        fields = self.__dict__
        fields["node"] = node
        fields["criterion"] = criterion
        fields["verdict"] = verdict
        fields["details"] = details
        fields["subjects"] = subjects
        fields["produced"] = produced
        fields["executed"] = executed
        fields["shared"] = shared
        fields["own"] = own


def decide(
    mapping: Mapping,
    results: RunResults,
    runnable: Iterable[str] = (),
    uncollected: MappingABC[str, list[str]] | None = None,
    skipped_whole: MappingABC[str, list[str]] | None = None,
    no_pass: str | None = None,
    policies: MappingABC[str, TestPolicy] | None = None,
) -> tuple[list[Decided], dict[str, Unverified]]:
    """One :class:`Decided` per verified criterion, and why each other one was not verified.

    *runnable* are the refs of criteria a verifier item could check: those the run did not
    collect are reported ``NOT_COLLECTED``. *uncollected* maps a test criterion to the failed
    collectors that may hold its tests (see :func:`~.mapping.collection_suspects`),
    *skipped_whole* to the collectors skipped whole that may hold them. *no_pass* is the
    reason code of a run whose tests could not fail: its passes, of tests and of verifier
    items alike, are left unverified with that reason; its failures are recorded.
    *policies* are the test criteria's skip and xfail policies (default: both fail).
    """
    decider = _Decider(
        mapping, results, uncollected or {}, skipped_whole or {}, no_pass, policies or {}
    )
    for ref, tests in mapping.criteria.items():
        decider.test_criterion(ref, tests)
    decider.verifier_criteria(runnable)
    return decider.decided, decider.skipped


NOTHING_MAPPED = (
    "no collected test carries its @pytest.mark.criterion marker, and it names no tests: pattern"
)
"""The message of a ``TEST_NOT_FOUND`` that no pattern and no marker explain."""


@dataclass
class _Decider:
    """The verdicts of one run, criterion by criterion (see :func:`decide`)."""

    mapping: Mapping
    results: RunResults
    uncollected: MappingABC[str, list[str]]
    skipped_whole: MappingABC[str, list[str]]
    no_pass: str | None
    policies: MappingABC[str, TestPolicy]
    decided: list[Decided] = field(default_factory=list)
    skipped: dict[str, Unverified] = field(default_factory=dict)
    _groups: dict[frozenset[str | None], tuple[dict[str, str | None], list[str]]] = field(
        default_factory=dict
    )

    def test_criterion(self, ref: str, tests: CriterionTests) -> None:
        """Decide one test criterion from the outcomes of its tests."""
        failed = self.uncollected.get(ref, [])
        passed_over = self.skipped_whole.get(ref, [])
        policy = self.policies.get(ref)
        if policy is None:  # made only when the criterion has none (a default is not free)
            policy = TestPolicy()
        outcome = self.results.outcome
        outcomes = {t: outcome(t) for t in tests.tests}
        if (  # every test passed in a whole run: what criterion_verdict decides, said at once
            not (failed or passed_over or tests.unmatched or tests.deselected or self.no_pass)
            and not self.mapping.partial
            and set(outcomes.values()) == _PASSED_ONLY
            and len(outcomes) >= policy.min_passed
        ):
            verdict = PASSED
            details = _passed_details(tests, outcomes)
        else:
            decided = criterion_verdict(
                outcomes,
                unmatched=tests.unmatched,
                deselected=tests.deselected,
                partial=self.mapping.partial,
                uncollected=failed,
                skipped_whole=passed_over,
                no_pass=self.no_pass,
                policy=policy,
            )
            if isinstance(decided, Unverified):
                held = [t for t, o in outcomes.items() if o is None]
                self.skipped[ref] = Unverified(decided.reason, (*tests.deselected, *held))
                return
            verdict = decided
            details = self._details(tests, outcomes, verdict, policy, failed, passed_over)
        artifacts = self.results.artifacts
        produced = []
        if artifacts:
            produced = sorted({a for t in tests.tests for a in artifacts.get(t, ())})
        bound, walks = self._group(tests.tests)
        subjects = dict(bound)
        own = quoted_subjects(ref, walks, self.mapping.hashes) if walks else {}
        subjects.update(own)
        if produced:
            subjects.update(dict.fromkeys(produced))
        if self.results.coverage is not None:
            details.update(_coverage_details(self.results.coverage, outcomes))
        node, _, criterion = ref.partition("/")
        executed = tuple(details.get("coverage", ()))
        self.decided.append(
            Decided(
                node,
                criterion,
                verdict,
                details,
                subjects,
                tuple(produced),
                executed,
                bound,
                None if produced else own,
            )
        )

    def _group(self, tests: list[str]) -> tuple[dict[str, str | None], list[str]]:
        """The subjects the test files of *tests* bind (:meth:`Mapping.subjects_of`) with
        their sha256 before the run, and the walks among them (whose quotes subjects each
        criterion binds): made once per distinct set of test files, which the criteria whose
        tests share their modules share."""
        test_files = self.mapping.test_files
        files = frozenset([test_files.get(t) for t in tests])
        found = self._groups.get(files)
        if found is None:
            hashes = self.mapping.hashes
            bound = {p: hashes.get(p) for p in self.mapping.subjects_of(tests)}
            found = self._groups[files] = (bound, [p for p in bound if COLLECT in p])
        return found

    def _details(
        self,
        tests: CriterionTests,
        outcomes: dict[str, str | None],
        verdict: Verdict,
        policy: TestPolicy,
        failed: list[str],
        passed_over: list[str],
    ) -> dict[str, Any]:
        """What the record says about the tests: each outcome, the patterns that matched
        nothing, the collectors that failed or were skipped whole, and
        :func:`~.outcomes.outcome_details` (whose message gives way to those)."""
        details: dict[str, Any] = {"tests": {t: o or "not run" for t, o in outcomes.items()}}
        if tests.unmatched:
            details["unmatched"] = tests.unmatched
            if verdict.reason == "TEST_NOT_FOUND":
                missed = ", ".join(unmatched_text(p) for p in tests.unmatched)
                details["message"] = f"no collected test matches {missed}"
        if failed:
            details.update(_uncollected_details(failed))
        elif passed_over and verdict.reason == TEST_SKIPPED:
            names = ", ".join(passed_over)
            details["skipped_whole"] = passed_over
            details["message"] = f"{names} was skipped whole and may hold tests of this criterion"
        left_out = {"excluded": tests.excluded, "outside_suite": tests.outside}
        from .outcomes import outcome_details

        found = outcome_details(outcomes, self.results.reasons, policy, verdict, left_out)
        for key, value in found.items():
            details.setdefault(key, value)
        if verdict.reason == "TEST_NOT_FOUND" and "message" not in details:
            details["message"] = NOTHING_MAPPED  # no pattern, no marker: say what maps a test
        return details

    def verifier_criteria(self, runnable: Iterable[str]) -> None:
        """Decide the criteria checked by verifier items (or say why they were not)."""
        mapping = self.mapping
        for ref in runnable:
            if ref not in mapping.verifiers:
                self.skipped[ref] = Unverified(NOT_COLLECTED)
        for ref in mapping.verifiers_deselected:
            self.skipped[ref] = Unverified(DESELECTED)
        for ref, item_id in mapping.verifiers.items():
            found = self.results.verdicts.get(item_id)
            if found is None:
                self.skipped[ref] = Unverified(NOT_RUN)
            elif self.no_pass and found.get("outcome") == "passed":
                self.skipped[ref] = Unverified(self.no_pass)
            else:
                self.decided.append(_verifier_decided(ref, found))


PASSED = Verdict("passed")
"""The verdict of a criterion every test of which passed in a whole run (one value, shared)."""
_PASSED_ONLY = {"passed"}


def _passed_details(tests: CriterionTests, outcomes: dict[str, str | None]) -> dict[str, Any]:
    """The details :meth:`_Decider._details` gives a criterion every test of which passed in a
    whole run: each test's outcome, and the tests its ``exclude:`` patterns or the project's
    configuration left out."""
    details: dict[str, Any] = {"tests": dict(outcomes)}
    if tests.excluded:
        details["excluded"] = list(tests.excluded)
    if tests.outside:
        details["outside_suite"] = list(tests.outside)
    return details


def _uncollected_details(failed: list[str]) -> dict[str, Any]:
    """``not_collected``: the failed collectors; ``message``: what that means for the verdict."""
    names = ", ".join(failed)
    return {
        "not_collected": failed,
        "message": f"collection failed in {names}, which may hold tests of this criterion",
    }


def _coverage_details(
    coverage: MappingABC[str, list[str]], outcomes: MappingABC[str, str | None]
) -> dict[str, list[str]]:
    """``coverage``: the sorted files the tests executed; ``coverage_missing``: tests that ran
    but whose coverage never arrived (a worker lost before it reported)."""
    details = {"coverage": sorted({p for t in outcomes for p in coverage.get(t, ())})}
    if lost := [t for t, outcome in outcomes.items() if outcome and t not in coverage]:
        details["coverage_missing"] = lost
    return details


def _verifier_decided(ref: str, verdict: MappingABC[str, Any]) -> Decided:
    details = dict(verdict.get("details") or {})
    if verdict.get("message"):
        details.setdefault("message", verdict["message"])
    node, _, criterion = ref.partition("/")
    return Decided(
        node,
        criterion,
        Verdict(verdict["outcome"], verdict.get("reason")),
        details,
        dict(verdict.get("subjects") or {}),
    )
