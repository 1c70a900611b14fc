"""The state of one ``pytest --plangraph`` run, registered as a plugin by ``pytest_configure``.

Three roles share this class. In a serial run one process does everything. Under pytest-xdist a
*worker* collects, maps tests to criteria, runs verifier items and attaches plain values to its
reports and its ``workeroutput``; the *controller* never collects, hears the reports, and is the
only process that opens the store. Roles are told apart by ``config.workerinput``.

At session start the controller lints the plan (errors are a usage error), registers the plan in
the store and derives the state before the run; at session end it builds one evidence record per
verified criterion, appends them, derives the state again and asks the gate about claimed and
required nodes.
"""

from __future__ import annotations

import os
import sys
import uuid
from collections.abc import Generator, Iterable
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from ..api import PlanGraph
from ..errors import PlangraphError
from ..judge.derive import derive
from ..memory import collector_paused
from ..vcs.environment import actor, ci_variables, git_info, now, run_info
from ..vcs.spawn import git_timeout
from ..verifiers import runnable_criteria
from .binding import FileBinder
from .building import EvidenceBuilder
from .config import (
    narrowed_by,
    partial_args,
    plan_path,
    refusal,
    store_path,
    test_id_prefix,
    unrecorded,
)
from .evidence import CRITERION_PROPERTY, RUN_PROPERTY, RunResults, decide
from .items import PlanFile, VerifierItem
from .mapping import Mapping, MappingBuilder, collection_suspects, marker_refs, ref_problems
from .mapping import policies_by_criterion as policies
from .origin import ORIGIN_ATTRIBUTE, mark
from .recorded import state_after
from .shadows import ShadowPaths
from .soundness import FACTS_ATTRIBUTE, join_facts, links_out, no_pass_reasons, run_facts
from .suite import ProjectSelection
from .summary import Outcome, RunReport, write_summary

if TYPE_CHECKING:
    from ..judge.inputs import Snapshot
    from ..plan.model import Criterion, Node
    from ..verifiers import Registry
    from .coverage import CoverageRecorder
    from .selection import StaleSelection

_IN_GITHUB = frozenset({"GITHUB_STEP_SUMMARY", "GITHUB_ACTIONS"})
"""What :func:`.github.publish` acts on: without either, it is not imported."""


class PlangraphSession:
    """One run's plan, mapping, results and (on the controller) store."""

    def __init__(self, config: pytest.Config, plangraph: PlanGraph) -> None:
        self.config = config
        self.plangraph = plangraph
        self.worker = hasattr(config, "workerinput")
        worker_input: dict[str, Any] = getattr(config, "workerinput", {})
        self.run_id: str = worker_input.get("plangraph_run") or uuid.uuid4().hex
        self.partial: bool = worker_input.get(
            "plangraph_partial", partial_args(config, plangraph.root)
        )
        self.prefix = test_id_prefix(plangraph.workspace, config.rootpath)
        self.plan_path = plan_path(config)
        self.mapping: Mapping | None = None
        self.results = RunResults()
        self.deselected: list[pytest.Item] = []
        self.collection_failed = False
        self.collection_errors: dict[str, None] = {}
        """Repository-relative ids of the collectors that failed (under xdist: in any worker)."""
        self.collection_skips: dict[str, None] = {}
        """Repository-relative ids of the collectors skipped whole (``pytest.importorskip``, a
        module-level ``pytest.skip``): their tests never ran."""
        self.report: RunReport | None = None
        self.item_verdicts: dict[str, dict[str, Any]] = {}
        """Verdicts of verifier items that ran, by node id, until their call report is made."""
        self._registry: Registry | None = None
        self.binder = FileBinder(config, plangraph)
        self.coverage: CoverageRecorder | None = None
        self.heard_facts: dict[str, dict[str, Any]] = {}
        """The interpreter facts on the reports of xdist workers, each different one once."""
        self.stale: StaleSelection | None = None  # --plangraph-stale
        self.globs_tried = 0  # (test, glob) pairs the mapping tried (see PatternIndex)
        self.builder: EvidenceBuilder | None = None  # the records' builder, at session end
        self.origins: dict[tuple[str, str], str] = {}
        """(node id, phase) → where the code under test raised its skip (:mod:`.origin`)."""
        self.recorded_by = ""
        """Who records (:func:`actor`), read when the session starts on the controller: code
        the tests run that names another login name or actor can neither change it nor stop
        the run's records (a name they could not carry, set after this)."""
        self.ci: dict[str, str] = {}
        """The CI variables (:func:`ci_variables`), read when :attr:`recorded_by` is."""

    @classmethod
    def start(cls, config: pytest.Config) -> PlangraphSession:
        """Load the plan; on the controller also lint it and open the store (usage errors)."""
        plan, store = plan_path(config), store_path(config)
        plangraph: PlanGraph | None = None
        from . import install_guard

        install_guard(config)  # already done unless the plugin was loaded late (a conftest)
        try:
            plangraph = PlanGraph.open(plan=plan, store=store)
            session = cls(config, plangraph)
            if config.getoption("plangraph_coverage"):
                session._start_coverage()
            if not session.worker:
                session._start_controller()
            if config.getoption("plangraph_stale"):  # its modules imported by such a run alone
                from .selection import StaleSelection

                before = None if session.worker else (session.before, session.before_fold)
                session.stale = StaleSelection.start(config, plangraph, session.prefix, before)
        except PlangraphError as exc:
            if plangraph is not None:
                plangraph.close()
            raise refusal(exc, bool(config.getoption("plangraph_gate"))) from None
        return session

    def _start_controller(self) -> None:
        # before any test: a PLANGRAPH_ACTOR or CI variable the records could not carry is
        # refused now, and what the tests set later changes neither; so is a
        # PLANGRAPH_GIT_TIMEOUT that is no time (git runs at the end, for the records)
        self.recorded_by, self.ci = actor(), ci_variables()
        git_timeout()
        errors, settings = self.plangraph.plan_problems()
        if errors:  # refused before the store is opened: a refused run makes no store
            lines = "\n".join(str(f) for f in errors)
            raise PlangraphError(f"the plan has errors (see `plangraph lint`):\n{lines}")
        if self.plangraph.store.readonly:  # found now, not after the whole run
            raise self.plangraph.store.write_refusal()
        for finding in settings:  # the files changed under the plan: shown, not a stop
            sys.stderr.write(f"plangraph: warning: {finding} (the run goes on)\n")
        for node in self.config.getoption("plangraph_require"):
            self.plangraph.require_node(node)
        # installed (and the repository's bytecode purged) before the first conftest was read,
        # unless --plangraph came from the ini file only; modules loaded from bytecode without
        # their source are looked for again now
        from . import install_guard

        guard = install_guard(self.config)
        if guard.unpurged:  # written since the run started: by a conftest, say
            raise PlangraphError(
                f"the plan file {self.plan_path} was not there when the run started, so the "
                "cached bytecode was not purged before the conftests were read: run again"
            )
        guard.check(self.config, self.binder.project_file)
        self.started = now()
        self.plan_ref = self.plangraph.plan_ref()
        # what the log says (from its checkpoint and the events since, when there is one)
        self.before_fold = self.plangraph.fold()
        snapshot = self.plangraph.snapshot(self.before_fold)
        self.before_snapshot = self.binder.note_written(snapshot, self.plangraph.taken_stats)
        self.before = derive(self.plangraph.graph, self.before_fold, self.before_snapshot)

    def _start_coverage(self) -> None:
        """Register the per-test coverage recorder (``--plangraph-coverage``)."""
        from .coverage import CoverageRecorder

        self.results.coverage = {}
        self.coverage = CoverageRecorder(self.config, self.plangraph.root, self._mapped)
        self.config.pluginmanager.register(self.coverage, "plangraph-coverage")

    def _mapped(self, nodeid: str) -> bool:
        """True when the test verifies a criterion in this run."""
        return self.mapping is not None and self.prefix + nodeid in self.mapping.test_files

    def _add_coverage(self, executed: dict[str, list[str]] | None) -> None:
        """Take a process's {node id: [paths]} into the results (as repository test ids)."""
        if executed and self.results.coverage is not None:
            for nodeid, paths in executed.items():
                self.results.coverage[self.prefix + nodeid] = list(paths)

    def close(self) -> None:
        """Close the store connection (and unregister the coverage recorder), then let go of
        everything the run held (idempotent).

        pytest keeps every plug-in it registered alive until the process ends (the history of
        ``pytest_plugin_registered`` holds each one), and its ``unraisableexception`` plug-in
        runs a full garbage collection in ``pytest_unconfigure`` and another in its cleanup,
        after this: the plan, the mapping, the results and the records this object holds
        (some 12,000 objects the collector tracks, at 500 criteria) would be walked by both.
        Dropped here, they are freed now, once, by their reference counts."""
        if "plangraph" not in vars(self):  # closed already
            return
        if self.coverage is not None:
            self.config.pluginmanager.unregister(self.coverage)
            self.coverage = None
        try:
            self.plangraph.close()
        finally:
            config = self.config
            vars(self).clear()
            self.config = config

    # --- used by the verifier items ----------------------------------------------------------

    @property
    def registry(self) -> Registry:
        """The verifier registry, built once per run."""
        if self._registry is None:
            self._registry = self.plangraph.registry
        return self._registry

    def runnable_criteria(self) -> list[tuple[Node, Criterion]]:
        """Criteria that run as verifier items, in topological order."""
        return runnable_criteria(self.plangraph.graph, self.registry, None)

    # --- collection (serial run and workers) -------------------------------------------------

    @pytest.hookimpl
    def pytest_collect_file(self, file_path: Path, parent: pytest.Collector) -> PlanFile | None:
        """Collect the plan file into verifier items when a run reaches it."""
        if file_path == self.plan_path:
            return PlanFile.from_parent(parent, path=file_path)
        return None

    @pytest.hookimpl(wrapper=True)
    def pytest_make_collect_report(
        self, collector: pytest.Collector
    ) -> Generator[None, pytest.CollectReport, pytest.CollectReport]:
        """Turn a ``criterion`` marker naming no test criterion into a collection error."""
        report = yield
        if report.passed and report.result:
            valid = self._test_refs
            problems = [
                f"{item.nodeid}: {problem}"
                for item in report.result
                if isinstance(item, pytest.Item)
                for problem in ref_problems(
                    [ref for ref in marker_refs(item) if ref not in valid], self.plangraph.plan
                )
            ]
            if problems:
                report.outcome = "failed"
                report.longrepr = "\n".join(problems)
                report.result = []
        return report

    @cached_property
    def _test_refs(self) -> frozenset[str]:
        """``node/criterion`` of every test criterion: markers naming one need no message."""
        return frozenset(
            f"{node.id}/{criterion.id}"
            for node in self.plangraph.plan.nodes
            for criterion in node.acceptance
            if criterion.verifier.type == "test"
        )

    @pytest.hookimpl
    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        """A collection error makes the collection partial (no TEST_NOT_FOUND) and is kept, by
        id, for the criteria whose tests it may hold (xdist calls this on the controller with
        each worker's failed collect reports); so is a collector the code under test skipped
        whole (:mod:`.origin`), whose tests could not pass."""
        if report.failed:
            self.collection_failed = True
            self.collection_errors[(self.prefix + report.nodeid).rstrip("/") or "."] = None
        elif getattr(report, ORIGIN_ATTRIBUTE, None):  # skipped whole by the code under test
            self.collection_errors[(self.prefix + report.nodeid).rstrip("/") or "."] = None
        elif report.skipped:
            self.collection_skips[(self.prefix + report.nodeid).rstrip("/") or "."] = None

    @pytest.hookimpl(tryfirst=True)
    def pytest_collection_modifyitems(self, session: pytest.Session, items: list[Any]) -> None:
        """Add the verifier items when the plan file was not collected as a path (before any
        ``-k``/``-m`` deselection sees the items)."""
        if self.partial or any(isinstance(item, VerifierItem) for item in items):
            return
        plan_file = PlanFile.from_parent(session, path=self.plan_path)
        items.extend(session.genitems(plan_file))

    @pytest.hookimpl
    def pytest_deselected(self, items: Iterable[pytest.Item]) -> None:
        """Remember deselected items: their criteria are not verified in this run."""
        self.deselected.extend(items)

    @pytest.hookimpl
    def pytest_collection_finish(self, session: pytest.Session) -> None:
        """Map the final selection to criteria; a worker hands it to the controller."""
        # a collection error stops a serial run before any test (unless the session is told to
        # go on): nothing was decided, as in a run narrowed by the command line
        stopped = self.collection_failed and not (
            self.worker or self.config.getoption("continue_on_collection_errors")
        )
        with collector_paused():  # many small acyclic values: collections would rescan them
            builder = MappingBuilder(
                self.plangraph.plan,
                self.prefix,
                partial=self.partial or stopped,
                selection=ProjectSelection.of(self.config),
            )
            for selected, items in ((True, session.items), (False, self.deselected)):
                for item in items:
                    self._map(builder, item, selected=selected)
            self.mapping = builder.finish()
        self.globs_tried = builder.index.tried + builder.excludes.tried
        if self.worker:
            workeroutput: dict[str, Any] = self.config.workeroutput  # type: ignore[attr-defined]
            workeroutput["plangraph"] = self.mapping.to_dict()

    def _map(self, builder: MappingBuilder, item: pytest.Item, *, selected: bool) -> None:
        test_id = builder.test_id(item.nodeid)
        if isinstance(item, VerifierItem):
            if selected:
                builder.mapping.verifiers[item.ref] = test_id
                item.user_properties.append((CRITERION_PROPERTY, item.ref))
                item.user_properties.append((RUN_PROPERTY, self.run_id))
            else:
                builder.mapping.verifiers_deselected.append(item.ref)
            return
        file = self.binder.relative(item.path)
        refs = builder.add(item, test_id, file or "", selected=selected)
        if refs and selected and file:
            self.binder.bind(builder.mapping, file, item)
            item.user_properties.extend((CRITERION_PROPERTY, ref) for ref in refs)
            item.user_properties.append((RUN_PROPERTY, self.run_id))

    # --- running -----------------------------------------------------------------------------

    @pytest.hookimpl(tryfirst=True)  # before a worker sends the report to the controller
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """Put a verifier item's verdict on its call report (plain values: xdist-safe); on the
        controller collect each phase's outcome, verifier verdicts and declared artifacts."""
        if self.origins:  # a skip the code under test raised: said on its report
            mark(self.origins, report)
        if self.item_verdicts and (ran := self.item_verdicts.pop(report.nodeid, None)):
            report.plangraph_verdict = ran  # type: ignore[attr-defined]
        if self.worker:  # every report says whether the worker's tests could fail
            setattr(report, FACTS_ATTRIBUTE, self.own_facts)
            if getattr(report, "context", None) is not None:  # a subtest's, labelled here
                from .outcomes import SUBTEST_ATTRIBUTE, subtest_label

                setattr(report, SUBTEST_ATTRIBUTE, subtest_label(report))
            return
        if facts := getattr(report, FACTS_ATTRIBUTE, None):
            self.heard_facts.setdefault(repr(facts), facts)
        self.results.hear(self.prefix + report.nodeid, report)

    @cached_property
    def own_facts(self) -> dict[str, Any]:
        """This process's interpreter facts (:func:`~.soundness.run_facts`)."""
        from . import install_guard

        stale = install_guard(self.config).check(self.config, self.binder.project_file)
        return run_facts(self.config, stale, links_out(self.config, self.plangraph.root))

    # --- xdist controller --------------------------------------------------------------------

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node: Any) -> None:
        """Tell each worker the run id and whether the run's paths are partial."""
        node.workerinput["plangraph_run"] = self.run_id
        node.workerinput["plangraph_partial"] = self.partial

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: object) -> None:
        """Take the mapping from the first worker that finished collecting."""
        data = getattr(node, "workeroutput", {}).get("plangraph")
        if data is not None and self.mapping is None:
            self.mapping = Mapping.from_dict(data)
        if self.results.coverage is not None:  # --plangraph-coverage
            from .coverage import WORKER_KEY

            self._add_coverage(getattr(node, "workeroutput", {}).get(WORKER_KEY))

    # --- session end (controller) ------------------------------------------------------------

    @pytest.hookimpl(tryfirst=True)  # before the JUnit XML report is written
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        """Record the evidence, derive the new state and apply the gate."""
        if self.worker or self.config.option.collectonly:
            return
        # stopped by a collection error before any test ran: nothing passed, nothing is decided
        stopped = exitstatus == pytest.ExitCode.INTERRUPTED and not self.results.phases
        try:
            failed, skipped = (
                ([], []) if stopped else (list(self.collection_errors), list(self.collection_skips))
            )
            with collector_paused():  # the records, their encodings, the state: no cycles
                self.report = self._finish(failed, skipped)
        except PlangraphError as exc:
            gated = bool(self.config.getoption("plangraph_gate"))
            error, session.exitstatus = unrecorded(exc, gated)
            self.report = RunReport(error=error)
            return
        passing = (pytest.ExitCode.OK, pytest.ExitCode.NO_TESTS_COLLECTED)
        if self.report.refusals and self.report.gate and session.exitstatus in passing:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def _finish(self, failed: list[str], skipped_whole: list[str]) -> RunReport:
        """Decide, record and gate; *failed* collectors and those *skipped_whole* void the
        criteria they may verify."""
        if self.coverage is not None:
            self._add_coverage(self.coverage.executed)
        runnable = [f"{n.id}/{c.id}" for n, c in self.runnable_criteria()]
        plan, root = self.plangraph.plan, self.plangraph.root
        suspects = collection_suspects(plan, failed, root)
        skipped = collection_suspects(plan, skipped_whole, root)
        facts = join_facts([self.own_facts, *self.heard_facts.values()])
        no_pass = no_pass_reasons(facts)
        mapping = self.mapping or Mapping()
        decided, unverified = decide(
            mapping,
            self.results,
            runnable,
            suspects,
            skipped,
            no_pass[0][0] if no_pass else None,
            policies(plan),
        )
        end = self.plangraph.snapshot(self.before_fold)
        builder = self.builder = self._builder(end, facts) if decided else None
        evidence = [builder.build(item) for item in decided] if builder else []
        stored = self.plangraph.record_run(evidence, made=builder.maker.made) if builder else []
        if evidence and self.config.getoption("xmlpath", None):  # a JUnit XML report is written
            from .junit import attach_evidence

            attach_evidence(self.config, mapping.tests_of(self.prefix, evidence))
        digests = builder.maker.digests if builder else None
        after = state_after(self.plangraph, self.before_fold, end, evidence, stored, digests)
        decisions = [self.plangraph.gate(node, after) for node in self._gated_nodes()]
        gated = bool(self.config.getoption("plangraph_gate"))
        if gated:
            from ..hooks.manager import notify

            notify("plangraph_gate_decision", [{"decision": d} for d in decisions])
        outcomes = [Outcome.of(e) for e in evidence]
        why, kept = {r: u.reason for r, u in unverified.items()}, set[str]()
        if self.stale is not None:  # kept: not run on purpose, their evidence being valid
            why, kept = self.stale.still_valid(why)
        return RunReport(
            before=self.before,
            after=after,
            plan=self.plan_ref,
            recorded=outcomes,
            unverified=why,
            held_up={r: list(u.tests) for r, u in unverified.items() if u.tests and r not in kept},
            decisions=decisions,
            gate=gated,
            collection_errors=list(self.collection_errors),
            skipped_whole=skipped_whole,
            no_pass=[message for _, message in no_pass],
            narrowed=narrowed_by(self.config, self.plangraph.root) if self.partial else None,
        )

    def _builder(self, end: Snapshot, facts: dict[str, Any]) -> EvidenceBuilder:
        run = run_info(
            self.started,
            now(),
            pytest.__version__,
            run_id=self.run_id,
            optimize=facts["optimize"],
            assert_mode=facts["assert_mode"],
            ci=self.ci,
        )
        return EvidenceBuilder(
            plangraph=self.plangraph,
            snapshot=end,
            before=self.binder.before(self.before_snapshot.files),
            run=run,
            plan=self.plan_ref,
            git=git_info(self.plangraph.root, self.plangraph.store_path),
            recorded_by=self.recorded_by,
            globs=self.before_snapshot.globs,
            shadows=self._shadows(),
            prior=(self.before_snapshot, self.before.input_digests),
        )

    def _shadows(self) -> ShadowPaths:
        """The paths that would shadow a module of the run (its test modules and the
        conftests it loaded are those pytest put folders on ``sys.path`` for)."""
        files = list(self.mapping.file_subjects) if self.mapping is not None else []
        files.extend(p for p in self.binder.run_files() if p.endswith("conftest.py"))
        return ShadowPaths.of(self.binder, files)

    def _gated_nodes(self) -> list[str]:
        """Claimed nodes still in the plan and required nodes, in topological order."""
        wanted = self.plangraph.claims() | set(self.config.getoption("plangraph_require"))
        return [n for n in self.plangraph.graph.topological_order() if n in wanted]

    @pytest.hookimpl
    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        """The ``plangraph`` section: state table, changes of this run, gate refusals."""
        if self.report is not None:
            write_summary(terminalreporter, self.report, self.config.get_verbosity())
            if _IN_GITHUB.intersection(os.environ):  # a GitHub Actions job
                from .github import publish

                publish(self.plangraph, self.report, terminalreporter.write_line)
