"""Gathering what an impact report needs (DESIGN §6): the changed paths and the commits behind
them from git, the store's evidence, the files now, and the plan as it was at a revision. The
report itself is built by :mod:`pytest_plangraph.impact.report` and
:mod:`pytest_plangraph.impact.walk`, which are pure: this module, just under the API, hands them
values (it is the one part of impact that runs git and reads the store).

Two questions, two functions:

* :func:`impact_since` — what would the diff from a revision to the working tree invalidate?
  No store is needed, and without one no file is hashed and no status is derived: the patterns
  of the plan as written match the diff's paths. The plan at the revision, when the diff
  changes the plan file, gives the plan edits (``CRITERION_CHANGED``, ``NODE_CHANGED``).
* :func:`impact_now` — which evidence is stale now, and why?
* :func:`rerun_selection` — which tests and verifier items re-verify what is not valid?
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from .errors import GitError, PlanError
from .impact.report import (
    ImpactReport,
    diff_impact,
    evidence_impact,
    latest_evidence,
    observed_changes,
)
from .judge.derive import derive
from .judge.logfold import LogFold
from .judge.rerun import Selection, evidence_tests, latest_seqs, rerun_criteria, select
from .memory import collector_paused
from .plan.cache import cache_dir_of
from .plan.edits import PlanEdit, plan_edits
from .plan.file import parse_plan
from .plan.graph import Graph
from .progress import Progress
from .store.localkey import local_key
from .store.trust import local_caches_count
from .vcs.changes import Change
from .vcs.commitcache import CommitCache
from .vcs.history import SinceDiff, changes_since, commits_since, file_at
from .vcs.spawn import GitTimeoutError

if TYPE_CHECKING:
    from collections.abc import Sequence

    from .judge.inputs import Snapshot
    from .judge.states import PlanState
    from .plan.model import Event, LoggedEvent
    from .repository import Repository


Judged = Callable[["Repository", LogFold, "Snapshot"], "PlanState"]
"""What gives the state of a fold and a snapshot: :func:`derive` (by default), or the derived
state kept for the same inputs (:func:`pytest_plangraph.derived.derived_state`, handed in from
above)."""


def _derived(repo: Repository, fold: LogFold, snapshot: Snapshot) -> PlanState:
    return derive(repo.graph, fold, snapshot)


def impact_since(
    repo: Repository,
    since: str,
    *,
    commits: bool = True,
    judged: Judged = _derived,
    diff: SinceDiff | None = None,
) -> ImpactReport:
    """What the diff from *since* to the working tree would invalidate. With *commits*, each
    change names the newest commit in ``since..HEAD`` that made it (one ``git log`` over the
    range: the slowest part on a long range, so the paths of each commit are kept in the cache
    folder and a later call reads only the commits it has not seen). *diff* is that diff read
    already (:func:`~.vcs.history.diff_since`)."""
    with Progress("impact") as progress:
        progress.stage(f"reading the diff from {since}")
        fold = repo.fold() if repo.store_path.exists() else None
        cache = _commit_cache(repo) if commits else None
        changes, named = changes_since(repo.root, since, commits=commits, cache=cache, diff=diff)
        plan_file = _relative(repo.root, repo.plan_path) if repo.plan_path else None
        progress.stage("comparing the plan")
        edits, notes = _plan_edits(repo, since, changes, plan_file)
        state = outputs = None
        mapped: dict[str, set[str]] = {}
        if fold is not None and fold.count:  # evidence ids and claims come from the state
            progress.stage(f"deriving the state from {fold.count} event(s)")
            with collector_paused():
                snapshot = repo.snapshot(fold)
                state, outputs = judged(repo, fold, snapshot), snapshot.outputs
            mapped = mapped_test_files(repo.graph, _latest_records(repo, fold.latest()))
        progress.stage("walking the graph")
        return diff_impact(
            repo.graph,
            changes,
            outputs=outputs,
            events=fold.latest() if fold is not None else (),
            state=state,
            commits=named,
            notes=notes,
            ignore=_own_files(repo),
            edits=edits,
            plan_file=plan_file,
            mapped=mapped,
        )


def impact_now(
    repo: Repository, *, commits: bool = True, judged: Judged = _derived
) -> ImpactReport:
    """Every evidence subject against the files now (working tree included)."""
    with Progress("impact") as progress:
        progress.stage("reading the store and hashing the files")
        fold = repo.fold()
        snapshot = repo.snapshot(fold)
    events = fold.latest()  # the latest evidence of each criterion: all that impact reads
    state = judged(repo, fold, snapshot)  # the state status keeps, when it stands
    # the commit behind each subject is in the whole record: read the latest ones whole
    records = _latest_records(repo, events)
    observed = observed_changes(
        repo.graph, records, snapshot.files, snapshot.outputs, _glob_files(repo, snapshot)
    )
    named: dict[str, str] = {}
    notes: list[str] = []
    if commits:
        pairs = [(o.change.path, o.since) for o in observed]
        named, notes = commits_since(repo.root, pairs, cache=_commit_cache(repo))
    return evidence_impact(
        repo.graph,
        observed,
        state,
        outputs=snapshot.outputs,
        events=events,
        commits=named,
        notes=notes,
        mapped=mapped_test_files(repo.graph, records),
    )


def _latest_records(repo: Repository, events: Sequence[LoggedEvent]) -> list[Event]:
    """The latest evidence of each criterion, read whole (with its commit and details)."""
    latest = [e.seq for e in latest_evidence(repo.graph, events).values()]
    return repo.store.events(seqs=latest) if latest else []  # no store: none made


def mapped_test_files(graph: Graph, records: Sequence[Event]) -> dict[str, set[str]]:
    """The files of the tests each node's evidence names (``details.tests``; whole records
    only, the light rows of the log carry no details): tests a ``criterion`` marker maps
    are found here, not in the plan."""
    found: dict[str, set[str]] = {}
    for (node_id, _), event in latest_evidence(graph, records).items():
        tests = (event.payload.get("details") or {}).get("tests")
        if isinstance(tests, dict):
            files = {t.split("::", 1)[0] for t in tests if isinstance(t, str)}
            found.setdefault(node_id, set()).update(files)
    return found


def _plan_edits(
    repo: Repository, since: str, changes: list[Change], plan_file: str | None
) -> tuple[dict[str, tuple[PlanEdit, ...]], list[str]]:
    """The plan edits since *since* (none when the diff does not touch the plan file), and a
    note when the plan at *since* cannot be compared."""
    change = next((c for c in changes if c.path == plan_file), None)
    if plan_file is None or change is None:
        return {}, []
    if change.change in ("added", "untracked"):  # new here, or moved too far for git to pair
        old = _moved_plan(repo, since, changes)
        return ({}, []) if old is None else (plan_edits(old, repo.graph), [])
    before = change.old_path or plan_file
    try:
        old = _plan_at(repo, since, before)
    except GitTimeoutError:  # git did not answer: the command stops, as on any other call
        raise
    except (PlanError, GitError) as exc:
        reason = _first_line(exc)
        return {}, [f"the plan at {since} could not be read ({reason}); plan edits not compared"]
    if old is None:
        return {}, []
    return plan_edits(old, repo.graph), []


_PLAN_SUFFIXES = (".yaml", ".yml", ".json")


def _moved_plan(repo: Repository, since: str, changes: list[Change]) -> Graph | None:
    """The plan as it was at *since* in a file deleted since, when that file held a plan of the
    same id: the plan file moved, rewritten too much (say, from YAML to JSON) for git to see a
    rename."""
    for change in changes:
        if change.change != "deleted" or not change.path.lower().endswith(_PLAN_SUFFIXES):
            continue
        try:
            old = _plan_at(repo, since, change.path)
        except GitTimeoutError:
            raise
        except (PlanError, GitError):
            continue
        if old is not None and old.plan.plan == repo.plan.plan:
            return old
    return None


def _plan_at(repo: Repository, rev: str, path: str) -> Graph | None:
    """The plan file *path* as it was at *rev*, read as the current one is (YAML or JSON)."""
    content = file_at(repo.root, rev, path)
    if content is None:
        return None
    cache = cache_dir_of(repo.store_path)
    with collector_paused():
        loaded = parse_plan(content, f"{rev}:{path}", suffix=Path(path).suffix, cache_dir=cache)
    return Graph.of(loaded.plan)


def _commit_cache(repo: Repository) -> CommitCache | None:
    """The cache of each commit's changed paths (in the plan cache folder), or None when there
    is neither a store nor a cache folder (a preview without a store writes nothing) or keys
    are configured and this user's caches do not count
    (:func:`~.store.trust.local_caches_count`)."""
    folder = cache_dir_of(repo.store_path)
    if not (repo.store_path.exists() or folder.is_dir()) or not local_caches_count():
        return None
    return CommitCache(folder / "commits.json", local_key())


def _own_files(repo: Repository) -> tuple[str, ...]:
    """What plangraph itself writes in the repository: the store and its journal files, and
    the cache folder (ending in ``/``)."""
    cache = _relative(repo.root, cache_dir_of(repo.store_path))
    return (*sorted(repo.workspace.ignored), *(() if cache is None else (f"{cache}/",)))


def _relative(root: Path, path: Path) -> str | None:
    """*path* relative to *root* as POSIX, or None when it is outside."""
    try:
        return path.resolve().relative_to(root).as_posix()
    except ValueError:
        return None


def _first_line(exc: Exception) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__


def rerun_selection(repo: Repository) -> Selection:
    """The tests and verifier items to run so that every criterion whose evidence is missing,
    stale or failed is verified again (``impact --select``): the tests its latest evidence
    names (those whose file is gone left out) and its literal ``tests:`` ids."""
    fold = repo.fold()
    with collector_paused():
        state = derive(repo.graph, fold, repo.snapshot(fold))
    rerun = rerun_criteria(repo.graph, state)
    known = {
        ref: [t for t in tests if (repo.root / t.split("::", 1)[0]).exists()]
        for ref, tests in known_tests(repo, fold).items()
        if ref in rerun
    }
    plan_file = _relative(repo.root, repo.plan_path) if repo.plan_path else None
    return select(repo.graph, rerun, known, plan_file or "plangraph.yaml")


def known_tests(repo: Repository, fold: LogFold) -> dict[str, list[str]]:
    """``node/criterion`` → the test ids its latest evidence in *fold* names (none without a
    store): the whole events are read, by ``seq``, for their details."""
    if not repo.has_store() or not fold.evidence:
        return {}
    return evidence_tests(repo.store.events(kinds=["evidence"], seqs=latest_seqs(fold)))


def _glob_files(repo: Repository, snapshot: Snapshot) -> Callable[[str, str], list[str]]:
    """Node and criterion → the files its ``tests:`` globs find now (see
    :meth:`~pytest_plangraph.judge.inputs.Snapshot.glob_files`)."""

    def files(node_id: str, criterion_id: str) -> list[str]:
        node = repo.graph.nodes.get(node_id)
        criterion = node.criterion(criterion_id) if node is not None else None
        return [] if criterion is None else snapshot.glob_files(criterion.verifier)

    return files
