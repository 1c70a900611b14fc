"""Turning one pytest run's outcomes into evidence records (DESIGN §4).

:class:`RunResults` holds what the controller heard (the mapping, each test's report phases,
each verifier item's verdict, the artifacts tests declared); :func:`decide` folds it into one
verdict per criterion, or the reason it was not verified; :class:`EvidenceBuilder` binds each
verdict to subjects and their sha256 through :class:`~pytest_plangraph.judge.records.RecordMaker`
(the batch form of :meth:`PlanGraph.make_evidence`), voiding a record whose subjects changed
while the session ran (``ARTIFACT_CHANGED_DURING_RUN``).
"""

from __future__ import annotations

from collections.abc import Iterable
from collections.abc import Mapping as MappingABC
from typing import TYPE_CHECKING, Any

from ..errors import PlangraphError
from ..judge.inputs import criterion_digests, input_digests
from ..judge.records import RecordMaker, changed_during_run, voided
from ..plan.evidence import ABSENT
from ..plan.model import TestVerifier
from ..plan.paths import UTF8_HINT, not_utf8
from ..plan.patterns import glob_files_of
from ..plan.policy import TestPolicy
from ..values import dataclass, field
from ..vcs.quotes import quoted_subjects
from ..vcs.testglob import is_collect_key
from ..verifiers import ARTIFACT_MISSING
from .ended import EndValues
from .mapping import CriterionTests, Mapping
from .origin import ORIGIN_ATTRIBUTE
from .outcomes import outcome_details, phase_outcome, report_reason
from .properties import ARTIFACT_PROPERTY
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

if TYPE_CHECKING:
    from ..api import PlanGraph
    from ..judge.inputs import Snapshot
    from ..plan.evidence import Evidence, GitInfo, PlanRef, RunInfo
    from .shadows import ShadowPaths


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

    def test_criterion(self, ref: str, tests: CriterionTests) -> None:
        """Decide one test criterion from the outcomes of its tests."""
        failed = self.uncollected.get(ref, [])
        passed_over = self.skipped_whole.get(ref, [])
        policy = self.policies.get(ref)
        if policy is None:  # made only when the criterion has none (a default is not free)
            policy = TestPolicy()
        outcomes = {t: self.results.outcome(t) for t in tests.tests}
        verdict = criterion_verdict(
            outcomes,
            unmatched=tests.unmatched,
            deselected=tests.deselected,
            partial=self.mapping.partial,
            uncollected=failed,
            skipped_whole=passed_over,
            no_pass=self.no_pass,
            policy=policy,
        )
        if isinstance(verdict, Unverified):
            held = [t for t, o in outcomes.items() if o is None]
            self.skipped[ref] = Unverified(verdict.reason, (*tests.deselected, *held))
            return
        details = self._details(tests, outcomes, verdict, policy, failed, passed_over)
        produced = sorted({a for t in tests.tests for a in self.results.artifacts.get(t, ())})
        subjects = {p: self.mapping.hashes.get(p) for p in self.mapping.subjects_of(tests.tests)}
        subjects.update(quoted_subjects(ref, subjects, self.mapping.hashes))
        subjects.update(dict.fromkeys(produced))
        if self.results.coverage is not None:
            details.update(_coverage_details(self.results.coverage, outcomes))
        node, _, criterion = ref.partition("/")
        executed = tuple(details.get("coverage", ()))
        self.decided.append(
            Decided(node, criterion, verdict, details, subjects, tuple(produced), executed)
        )

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
                details["message"] = f"no collected test matches {', '.join(tests.unmatched)}"
        if failed:
            details.update(_uncollected_details(failed))
        elif passed_over and verdict.reason == TEST_SKIPPED:
            names = ", ".join(passed_over)
            details["skipped_whole"] = passed_over
            details["message"] = f"{names} was skipped whole and may hold tests of this criterion"
        left_out = {"excluded": tests.excluded, "outside_suite": tests.outside}
        found = outcome_details(outcomes, self.results.reasons, policy, verdict, left_out)
        for key, value in found.items():
            details.setdefault(key, value)
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


class RunRecordMaker(RecordMaker):
    """The :class:`RecordMaker` of one run that keeps each record it made with its JSON
    payload, so that storing them (:meth:`PlanGraph.record_run`) takes the payloads as made
    instead of dumping, validating and hashing the records again."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.made: dict[int, tuple[Any, ...]] = {}
        """``id(record)`` → the record, its payload and (made from plain values) the payload's
        canonical JSON text, joined from the members the id was computed from."""
        """``id(record)`` → the record and its payload, for every record made."""

    def make(
        self,
        node: str,
        criterion: str,
        *,
        outcome: str,
        reason: str | None,
        details: MappingABC[str, Any],
        subjects: MappingABC[str, str | None],
    ) -> Evidence:
        """:meth:`RecordMaker.make`, the record and its payload kept in :attr:`made`."""
        record = super().make(
            node, criterion, outcome=outcome, reason=reason, details=details, subjects=subjects
        )
        if id(record) not in self.made:  # checked by the record model: dumped
            self.made[id(record)] = (record, record.to_json())
        return record

    def made_plain(self, record: Evidence, payload: dict[str, Any], text: str) -> None:
        """Keep the payload of a record made from plain values, not dumped, and its
        canonical JSON text, joined from the members already encoded."""
        self.made[id(record)] = (record, payload, text)


@dataclass
class EvidenceBuilder:
    """Builds the records of one run against one end-of-run snapshot."""

    plangraph: PlanGraph
    snapshot: Snapshot
    before: dict[str, str | None]
    """sha256 of the plan's files when the session started."""
    run: RunInfo
    plan: PlanRef
    git: GitInfo
    recorded_by: str
    globs: MappingABC[str, tuple[str, ...]] = field(default_factory=dict)
    """The files each ``tests:`` glob could find tests in when the session started."""
    shadows: ShadowPaths | None = None
    """The paths where a new file would shadow a module the run imported (bound absent)."""
    _hashes: dict[str, str | None] = field(default_factory=dict)
    _shadowed: dict[tuple[str, ...], tuple[dict[str, str], dict[str, str]]] = field(
        default_factory=dict
    )

    def __post_init__(self) -> None:
        criteria = criterion_digests(self.plangraph.graph)
        self.ends = EndValues(self.plangraph.root, self._hash)
        self.maker = RunRecordMaker(
            self.plangraph,
            self.snapshot,
            plan=self.plan,
            git=self.git,
            run=self.run,
            recorded_by=self.recorded_by,
            digests=input_digests(self.plangraph.graph, self.snapshot, criteria=criteria),
            criteria=criteria,
        )

    def build(self, item: Decided) -> Evidence:
        """The record for *item*; voided when a subject changed during the run."""
        # executed files are learned only now: compared with the start only when the plan or
        # the latest evidence of some criterion already named them (their "before" is known)
        globbed = [p for p in self._glob_files(item) if p not in item.subjects]
        bound = [*item.subjects, *globbed]
        paths = [*bound, *(p for p in item.executed if p not in item.subjects and p not in globbed)]
        _require_utf8(item, paths)
        subjects = {path: self._hash(path) for path in paths}
        for path, sha in item.subjects.items():
            if subjects[path] is None and (sha == ABSENT or is_collect_key(path)):
                subjects[path] = sha  # bound absent and still no file; what a folder holds
        shadowing = self._shadowing(paths, subjects)
        missing = [path for path in item.produced if subjects.get(path) is None]
        if missing and item.verdict.outcome == "passed":  # declared, never made: no pass
            details = {
                **item.details,
                "missing_artifacts": missing,
                "message": f"declared with plangraph.artifact() but not there at the end of the "
                f"run: {', '.join(missing)}",
            }
            return self._make(item, Verdict("failed", ARTIFACT_MISSING), details, subjects)
        evidence = self._make(item, item.verdict, item.details, subjects)
        started = {**self.before, **item.subjects, **shadowing}
        # what each subject is at the end, a file deleted during the run (None) included:
        # the record leaves missing files out of its subjects; a folder's collectable files
        # and a pytest section are found again (their paths name no file to hash)
        ended = {**self.maker.own_files(item.node), **subjects, **self.ends.of(item.subjects)}
        moved = changed_during_run(started, ended, produced=item.produced)
        if not moved:
            return evidence
        outcome, reason, details = voided(item.details, moved)
        return self._make(item, Verdict(outcome, reason), details, subjects)

    def _make(
        self,
        item: Decided,
        verdict: Verdict,
        details: dict[str, Any],
        subjects: dict[str, str | None],
    ) -> Evidence:
        return self.maker.make(
            item.node,
            item.criterion,
            outcome=verdict.outcome,
            reason=verdict.reason,
            details=details,
            subjects=subjects,
        )

    def _glob_files(self, item: Decided) -> list[str]:
        """The files the ``tests:`` globs of *item*'s criterion could find tests in when the
        session started: bound whether or not the run collected tests from them, so that the
        gate can tell a test file added since (:attr:`Snapshot.globs`)."""
        if not self.globs:
            return []
        node = self.plangraph.graph.nodes.get(item.node)
        criterion = node.criterion(item.criterion) if node is not None else None
        if criterion is None or not isinstance(criterion.verifier, TestVerifier):
            return []
        verifier = criterion.verifier
        return glob_files_of(verifier.tests, verifier.exclude, self.globs)

    def _shadowing(self, paths: Iterable[str], subjects: dict[str, str | None]) -> dict[str, str]:
        """Bind into *subjects* the paths where a new file would shadow a module of *paths*
        (:class:`~.shadows.ShadowPaths`): absent where nothing is, by sha256 where a file is;
        return those bound absent. Found once per set of modules: criteria whose tests share
        their files share it."""
        if self.shadows is None:
            return {}
        loaded = tuple(
            p for p in paths if p.endswith(".py") and subjects.get(p) not in (None, ABSENT)
        )
        found = self._shadowed.get(loaded)
        if found is None:
            bound: dict[str, str] = {}
            for path in self.shadows(loaded):
                if not self.shadows.there(path):
                    bound[path] = ABSENT
                elif (sha := self._hash(path)) is not None:
                    bound[path] = sha
            absent = {p: sha for p, sha in bound.items() if sha == ABSENT}
            found = self._shadowed[loaded] = (bound, absent)
        bound, absent = found
        if subjects.keys().isdisjoint(bound):  # as nearly always: no path bound already
            subjects.update(bound)
            return absent
        for path, sha in bound.items():
            subjects.setdefault(path, sha)
        return {p: sha for p, sha in absent.items() if subjects[p] == ABSENT}

    def _hash(self, path: str) -> str | None:
        if path not in self._hashes:
            self._hashes[path] = self.plangraph.workspace.hash_file(path)
        return self._hashes[path]


def _require_utf8(item: Decided, paths: Iterable[str]) -> None:
    """Refuse to record a verdict that binds a file whose name is not UTF-8 (a test module
    ``test_\\xff.py``): records keep paths as UTF-8 text, so none can bind it, and a record
    that left it out would pass over what the run executed."""
    for path in paths:
        shown = not_utf8(path)
        if shown is not None:
            raise PlangraphError(
                f"{item.node}/{item.criterion} binds a file whose name is not UTF-8: "
                f"{shown!r}; {UTF8_HINT}"
            )
