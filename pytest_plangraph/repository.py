"""Opening a repository for the Python API: its plan (read again when the file changes, and
checked by lint), its evidence store (opened on first use, never made by a read) and its files.

:class:`Repository` is the base of :class:`~pytest_plangraph.api.PlanGraph`, which adds what
judges, claims and records.
"""

from __future__ import annotations

import os
import stat
import time
from collections.abc import Collection, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from .errors import StoreError, UsageError
from .judge.inputs import UNREADABLE, Snapshot, needed_paths
from .judge.logfold import LogFold
from .judge.sections import has_pytest_section, section_file
from .memory import collector_paused
from .places import cache_dir_for, check_store_path, identity, stat_or_none
from .plan.evidence import PlanRef
from .plan.file import LoadedPlan, load_plan
from .plan.graph import Graph
from .plan.model import Event, LoggedEvent, Plan
from .plan.paths import UTF8_HINT, not_utf8
from .store.trust import local_caches_count
from .vcs.environment import ignore_store_dir, resolve_paths, store_files
from .vcs.quotes import collected_now
from .vcs.testglob import globs_files
from .vcs.workspace import Workspace

if TYPE_CHECKING:
    from .judge.states import PlanState
    from .lint.check import LintSubject
    from .lint.findings import Finding, Severity
    from .store.sqlite import Store
    from .verifiers import Registry


_R = TypeVar("_R", bound="Repository")


class Repository:
    """A repository's plan, evidence store and files: what :class:`~pytest_plangraph.api.PlanGraph`
    judges, claims and records with (opening, following the plan file, checking it, reading
    the log and hashing the files)."""

    def __init__(
        self,
        root: Path,
        loaded: LoadedPlan,
        store_path: Path,
        plan_path: Path | None = None,
        *,
        plan_stat: os.stat_result | None = None,
    ) -> None:
        self.root = root
        self.plan_path = plan_path
        """The plan file (None when the plan was not read from a file)."""
        self.workspace = Workspace.at(
            root, store_files(root, store_path), cache=cache_dir_for(store_path)
        )
        self.store_path = store_path
        self._store: Store | None = None
        self._read: tuple[LogFold, int, int] | None = None
        self.plan_read_ns = 0
        """When the plan file was last read (a write from then on is not trusted by its stat;
        0: not read from a file)."""
        self.taken: tuple[object, Snapshot, int] | None = None
        """The events of the last :meth:`snapshot`, the snapshot, and the time it began
        (what a kept status watches: :mod:`pytest_plangraph.derived.kept`)."""
        self.taken_stats: dict[str, os.stat_result] = {}
        """The stat each hash of the last :meth:`snapshot` stands on, by path, taken during
        it (the paths it hashed itself: not those of :attr:`known_files`, the quotes' walks
        or the sections, nor a symbolic link, whose stat is its target's), for a caller that
        asks when they were last changed."""
        self.known_files: Mapping[str, str | None] | None = None
        """The sha256 of files looked at a moment ago by their ``lstat`` and found as a kept
        answer's watch says (:func:`pytest_plangraph.derived.kept.known_files`): the next
        :meth:`snapshot` takes them instead of asking the hash cache, once."""
        self._use(loaded, plan_stat)

    def _use(self, loaded: LoadedPlan, plan_stat: os.stat_result | None) -> None:
        self.loaded = loaded
        self.plan: Plan = loaded.plan
        self.graph = Graph.of(loaded.plan)
        self._plan_seen = identity(plan_stat)
        self._problems: tuple[list[Finding], list[Finding]] | None = None
        self._settled: dict[str, bool] | None = None

    def use_plan(self, loaded: LoadedPlan) -> None:
        """Judge against *loaded* from now on, not the plan file as read (a patch's result
        before it replaces the file, or the plan as it was when that failed); the next
        :meth:`refresh` reads the file again."""
        self._use(loaded, None)

    @classmethod
    def open(
        cls: type[_R],
        root: Path | None = None,
        *,
        plan: Path | None = None,
        store: Path | None = None,
    ) -> _R:
        """Load the plan (``plangraph.yaml`` at the repository root unless *plan* is given)."""
        if root is not None and not Path(root).is_dir():
            what = "is not a directory" if Path(root).exists() else "does not exist"
            raise UsageError(f"the root directory {root} {what}; pass an existing one as --root")
        root, plan_path, store_path = resolve_paths(
            None if root is None else Path(root),
            None if plan is None else Path(plan),
            None if store is None else Path(store),
        )
        try:
            display = plan_path.relative_to(Path.cwd()).as_posix()
        except ValueError:
            display = str(plan_path)
        check_store_path(store_path)
        read_ns = time.time_ns()
        seen = stat_or_none(plan_path)  # before reading: an edit while it is read is seen next time
        cache = cache_dir_for(store_path)
        with collector_paused():  # validating a large plan makes no cycles worth collecting
            loaded = load_plan(plan_path, display, cache_dir=cache)
        repo = cls(root, loaded, store_path, plan_path, plan_stat=seen)
        repo.plan_read_ns = read_ns
        return repo

    def refresh(self) -> bool:
        """Read the plan file again if it changed since it was read (its size, times or inode
        differ); True when the plan itself changed. The calls that judge, claim or record call
        this first, so a long-lived object never answers for a plan edited meanwhile."""
        if self.plan_path is None:
            return False
        read_ns = time.time_ns()
        seen = stat_or_none(self.plan_path)
        if seen is not None and identity(seen) == self._plan_seen:
            return False
        self.plan_read_ns = read_ns
        with collector_paused():
            loaded = load_plan(self.plan_path, self.loaded.file, cache_dir=self.workspace.cache)
        if loaded.plan.digest == self.plan.digest:  # touched, or saved unchanged
            self._plan_seen = identity(seen)
            return False
        self._use(loaded, seen)
        return True

    def _ready(self, *, reread: bool = True) -> None:
        """The plan as the file now says (as it was read, without *reread*), checked:
        :class:`PlanError` when lint rejects it (each plan is checked once;
        :meth:`check_plan` checks again)."""
        if reread:
            self.refresh()
        if self._problems is None:
            self.plan_problems()
        assert self._problems is not None
        if self._problems[0]:
            self.check_plan()

    # --- resources ---------------------------------------------------------------------------

    @property
    def store(self) -> Store:
        """The evidence store, opened (and created) on first use."""
        if self._store is None:
            from .store.sqlite import Store

            try:
                self._store = Store.open(self.store_path)
            except StoreError as exc:
                # A store that may be read but not written (a CI artifact, a read-only mount)
                # still answers status, audit, history and export; writes then say why not.
                if not self.store_path.is_file():
                    raise
                try:
                    self._store = Store.open(self.store_path, readonly=True)
                except StoreError:
                    raise exc from None
                self._store.unwritable = True  # a write says why: it could not be opened so
                self._store.refusal = exc
            ignore_store_dir(self.store_path)
        return self._store

    def has_store(self) -> bool:
        """True when the store is open or its file exists and is not empty (an empty file holds
        no store yet): a reading command that finds no store does not create one."""
        if self._store is not None:
            return True
        try:
            info = self.store_path.stat()
        except OSError:  # not there, or not to be looked at: no store to read
            return False
        return info.st_size > 0 or not stat.S_ISREG(info.st_mode)  # a directory: told on open

    @property
    def registry(self) -> Registry:
        """The verifier types of the built-ins and every installed plugin (built when first
        asked more than whether a type the plan's kept check settled runs:
        :func:`~pytest_plangraph.hooks.manager.get_registry`)."""
        from .hooks.manager import get_registry

        return get_registry(settled=self._settled)

    def close(self) -> None:
        """Close the store if it was opened."""
        if self._store is not None:
            self._store.close()
            self._store = None

    def __enter__(self: _R) -> _R:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def check_plan(self) -> list[Finding]:
        """Raise :class:`PlanError` when lint finds errors in the plan: nothing is judged,
        claimed or recorded against a plan that lint rejects (a mistyped edge would otherwise
        silently drop a prerequisite). Return the ``VERIFIER_CONFIG`` errors that are about
        the repository or the installation, not the plan's settings (a schema file deleted or
        broken since, a type name registered by several plugins): those stop no command,
        which shows their criteria's evidence going stale or failing instead."""
        from .lint.check import check_plan

        problems = self.plan_problems()  # first: a kept answer may settle the registry
        return check_plan(self._lint_subject(), problems)

    def checked_as_kept(self) -> None:
        """Take the plan as read as checked, without linting it: for a caller that knows
        lint's answer for this plan and these files had no error and cannot have changed
        (:func:`pytest_plangraph.derived.kept.kept_lint`). A plan read again since is checked
        as any is."""
        self._problems = ([], [])

    def plan_problems(self) -> tuple[list[Finding], list[Finding]]:
        """The plan's lint errors that stop a command, and those that do not (see
        :meth:`check_plan`)."""
        from .hooks.entrypoints import plugins_key
        from .lint.kept import kept_problems

        look, found = kept_problems(self.loaded, self.workspace, plugins_key())
        if found is None:  # checked, and the answer kept for the next command
            from .lint.check import plan_problems

            found = plan_problems(self._lint_subject(), look)
        self._settled = look.settled
        self._problems = found
        return found

    # --- reading -----------------------------------------------------------------------------

    def lint(
        self,
        *,
        run_data: bool = True,
        severities: Collection[Severity] | None = None,
        known: Collection[Finding] | None = None,
    ) -> list[Finding]:
        """Lint findings of the plan, with file checks against this repository; with
        *run_data*, also ``IMPLICIT_DEPENDENCY`` from the coverage data of the latest evidence
        (read only when a store exists: lint never creates one). *severities* keeps only
        findings of those severities (``("error",)`` to check a plan); *known* are the
        plan-only findings of those severities when the caller has them."""
        from .lint.check import lint

        return lint(
            self._lint_subject(),
            run_data=self._coverage_findings if run_data else None,
            severities=severities,
            known=known,
        )

    def _lint_subject(self) -> LintSubject:
        from .lint.check import LintSubject

        return LintSubject(self.loaded, self.graph, self.registry, self.workspace)

    def _coverage_findings(self) -> list[Finding]:
        """``IMPLICIT_DEPENDENCY`` from the coverage data of the latest evidence (none without a
        store: lint never creates one)."""
        from .lint.coverage import COVERAGE_KEY, executed_by_node, implicit_dependencies

        if not self.has_store():
            return []
        # only records with coverage details matter: the store skips the others unread
        store = self.store
        executed = executed_by_node(store.events(kinds=["evidence"], mentioning=COVERAGE_KEY))
        if not executed:
            return []
        outputs = self.expanded_outputs()
        return implicit_dependencies(self.graph, executed, outputs, loaded=self.loaded)

    def events(self) -> list[Event]:
        """Every event of the store, in order (none, and no store made, without a store)."""
        return self.store.events() if self.has_store() else []

    def decided_by(self, state: PlanState) -> dict[str, Event]:
        """The evidence and approval events behind *state*'s criteria, by the id a criterion
        names (an evidence record's id, an approval event's id); none without a store."""
        wanted = {c.evidence for n in state.nodes.values() for c in n.criteria if c.evidence}
        if not wanted or not self.has_store():
            return {}
        found: dict[str, Event] = {}
        for event in self.store.events(kinds=["evidence", "approval"]):
            record = event.evidence
            key = record.id if record is not None else event.id
            if key in wanted:
                found[key] = event
        return found

    def fold(self) -> LogFold:
        """What the store's log says for derivation: from its checkpoint and the events
        recorded since (see :mod:`pytest_plangraph.checkpoint`), or from every event. With no
        store yet, nothing: reading makes no store."""
        from .checkpoint import checkpoint_path, read_fold
        from .store.trust import policy_from_env

        policy_from_env()  # a trusted-keys file that cannot be read is told with no store too
        if not self.has_store():
            return LogFold()
        with collector_paused():
            fold = read_fold(self.store, checkpoint_path(self.store_path))
        self._read = (fold, fold.count, fold.last_seq)
        return fold

    def read_just_now(self, fold: LogFold) -> bool:
        """Whether *fold* is the last one :meth:`fold` read from the store, not added to since
        (what the store's head names)."""
        read = self._read
        return read is not None and read[0] is fold and read[1:] == (fold.count, fold.last_seq)

    def evidence_details(
        self, fold: LogFold, keys: Iterable[tuple[str, str]], mentioning: str | None = None
    ) -> dict[tuple[str, str], dict[str, Any]]:
        """The ``details`` of the latest evidence in *fold* of each (node, criterion) of
        *keys* that has some (only records whose text holds *mentioning*, when given)."""
        seqs = [fold.evidence[key][1].seq for key in keys if key in fold.evidence]
        if not seqs or not self.has_store():
            return {}
        events = self.store.events(kinds=["evidence"], seqs=seqs, mentioning=mentioning)
        return {
            (e.node or "", e.criterion or ""): dict(e.payload.get("details") or {}) for e in events
        }

    def snapshot(
        self, events: Sequence[LoggedEvent] | LogFold | None = None, *, cached: bool = True
    ) -> Snapshot:
        """Current hashes of every file the plan and the evidence depend on; without *cached*,
        every file is read, none taken from the store's hash cache (as ``audit`` does)."""
        events = self.fold() if events is None else events
        started = time.time_ns()  # a file written from now on is not trusted by its stat
        judged = events.judged() if isinstance(events, LogFold) else events
        stats: dict[str, os.stat_result] = {}  # taken once, for expanding and for hashing
        # no cycles are made here; with a large log in memory, each collection walks it all
        with collector_paused():
            outputs = _named_in_utf8(self.workspace.expand_each(self._outputs(), stats))
            absent: set[str] = set()
            patterns: dict[str, None] = {}  # the tests: patterns, found in the same pass
            paths = needed_paths(self.graph, judged, outputs, absent, patterns)
            found = globs_files(os.fspath(self.root), patterns)
            globs = {glob: each.files for glob, each in found.items()}
            folders = {d for each in found.values() for d in each.listed}
            quoting: dict[str, str | None] = {}  # the files read for the references they quote
            collected = collected_now(os.fspath(self.root), paths, folders, quoting)
            listed = tuple(sorted(folders))
            paths.update(f for each in found.values() for f in (*each.files, *each.named))
            sections = {p: f for p in absent if (f := section_file(p)) is not None}
            paths.update(sections.values())  # hashed and watched: a kept status sees them change
            # the hash cache lives in the store; a command that needs no store does not make one
            cached = cached and local_caches_count()  # with keys, no cache stands for a file
            cache = self.store if cached and self.has_store() else None
            cache = None if cache is not None and cache.readonly else cache
            known, self.known_files = self.known_files, None
            seen: dict[str, os.stat_result] = {}
            if known is not None and cached:  # the rest is hashed as without them
                files = self.workspace.hashes(
                    [p for p in paths if p not in known], cache=cache, stats=stats, seen=seen
                )
                files = {p: known[p] if p in known else files[p] for p in sorted(paths)}
            else:
                files = self.workspace.hashes(paths, cache=cache, stats=stats, seen=seen)
        files.update(collected)
        for path, sha in quoting.items():  # the bytes the quotes were found in: watched
            files.setdefault(path, sha)
        for path in absent:  # a file where one was bound absent counts, hashed or not
            if files.get(path) is None and self.workspace.occupied(path):
                files[path] = UNREADABLE
        for path, section in sections.items():  # a pytest section bound absent
            files[path] = self._pytest_section(section, files.get(section))
        snapshot = Snapshot(files=files, outputs=outputs, globs=globs, listed=listed)
        for path in self.workspace.linked.intersection(seen):  # the target's stat alone
            del seen[path]
        self.taken, self.taken_stats = (events, snapshot, started), seen
        return snapshot

    def _pytest_section(self, path: str, found: str | None) -> str | None:
        """*found*, the sha256 of the configuration file at *path*, when it holds a pytest
        section (:func:`~.judge.sections.has_pytest_section`), else None: no file, or no
        section in it."""
        if found is None:
            return None
        try:
            text = (self.root / path).read_text(encoding="utf-8", errors="replace")
        except OSError:
            return found
        return found if has_pytest_section(path, text) else None

    def expanded_outputs(self) -> dict[str, tuple[str, ...]]:
        """Each node's outputs as files (directories and globs expanded), nothing hashed."""
        return _named_in_utf8(self.workspace.expand_each(self._outputs()))

    def _outputs(self) -> dict[str, list[str]]:
        return {node.id: node.outputs for node in self.graph.nodes.values()}

    def plan_ref(self, *, create: bool = True) -> PlanRef:
        """Plan id, store-numbered version and digest (registers a digest seen the first time).
        Without *create*, a repository with no store yet gets version 0 and no store."""
        digest = self.plan.digest
        if not create and not self.has_store():
            return PlanRef(id=self.plan.plan, version=0, digest=digest)
        if self.store.readonly:  # 0: a plan this read-only store has never seen
            version = self.store.plan_version(digest) or 0
        else:
            version = self.store.register_plan(digest, self.plan.plan)
        return PlanRef(id=self.plan.plan, version=version, digest=digest)

    # --- checks of names ---------------------------------------------------------------------

    def require_node(self, node: str) -> None:
        """Raise :class:`UsageError` unless *node* is in the plan."""
        from .judge import lookup  # a check of a name a caller gave: not a run's

        lookup.require_node(self.graph, node)

    def require_criterion(self, node: str, criterion: str) -> None:
        """Raise :class:`UsageError` unless *node/criterion* is in the plan."""
        from .judge import lookup

        lookup.require_criterion(self.graph, node, criterion)


def _named_in_utf8(outputs: dict[str, tuple[str, ...]]) -> dict[str, tuple[str, ...]]:
    """*outputs* (each node's outputs expanded to files); UsageError naming the first file
    whose name is not UTF-8 (paths are kept and hashed as UTF-8 text)."""
    for node, paths in outputs.items():  # once per node of a large plan: kept flat
        if all(path.isascii() for path in paths):
            continue
        for path in paths:
            shown = not_utf8(path)
            if shown is not None:
                raise UsageError(
                    f"the outputs of node {node} expand to a file whose name is not UTF-8: "
                    f"{shown!r}; {UTF8_HINT}"
                )
    return outputs
