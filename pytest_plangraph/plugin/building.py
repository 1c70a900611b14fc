"""Binding one run's verdicts into evidence records (DESIGN §4).

:class:`EvidenceBuilder` binds each :class:`~.evidence.Decided` verdict to its subjects and
their sha256 through :class:`RunRecordMaker` (the batch form of
:meth:`PlanGraph.make_evidence`), voiding a record whose subjects changed while the session
ran (``ARTIFACT_CHANGED_DURING_RUN``). The paths where a new file would shadow a module the run
imported (:class:`~.shadows.ShadowPaths`) are found once per run: each module's, stat-ed and
hashed once, kept as one mapping merged into every record that binds the module; the paths
bound absent are checked against the end of the run by construction (nothing was there when
they were looked up), so they are left out of each record's comparison.
"""

from __future__ import annotations

from collections.abc import Iterable
from collections.abc import Mapping as MappingABC
from typing import TYPE_CHECKING, Any

from ..errors import PlangraphError
from ..judge.inputs import criterion_digests, digests_since, input_digests
from ..judge.records import RecordMaker, SubjectsBase, changed_during_run, voided
from ..plan.evidence import ABSENT
from ..plan.model import TestVerifier
from ..plan.paths import UTF8_HINT, not_utf8
from ..plan.patterns import glob_files_of
from ..values import dataclass, field
from ..vcs.testglob import is_collect_key
from ..verifiers import ARTIFACT_MISSING
from .ended import EndHashes, EndValues
from .verdicts import Verdict

if TYPE_CHECKING:
    from ..api import PlanGraph
    from ..judge.inputs import Snapshot
    from ..plan.evidence import Evidence, GitInfo, PlanRef, RunInfo
    from .evidence import Decided
    from .shadows import ShadowPaths


class RunRecordMaker(RecordMaker):
    """The :class:`RecordMaker` of one run that keeps each record it made with its JSON
    payload, so that storing them (:meth:`PlanGraph.record_run`) takes the payloads as made
    instead of dumping, validating and hashing the records again."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.made: dict[int, tuple[Any, ...]] = {}
        """``id(record)`` → the record, its payload and (made from plain values) the payload's
        canonical JSON text, joined from the members the id was computed from."""

    def made_checked(self, record: Evidence) -> None:
        """Keep a record the record model checked with its payload, dumped."""
        self.made[id(record)] = (record, record.to_json())

    def made_plain(self, record: Evidence, payload: dict[str, Any], text: str) -> None:
        """Keep the payload of a record made from plain values, not dumped, and its
        canonical JSON text, joined from the members already encoded."""
        self.made[id(record)] = (record, payload, text)


@dataclass(frozen=True)
class Shadowing:
    """The shadowing paths of a set of modules, bound: every path in the order
    :class:`~.shadows.ShadowPaths` names them (absent, or by sha256 where a file is), and the
    same split into those a file is at and those bound absent."""

    bound: dict[str, str]
    present: dict[str, str]
    absent: dict[str, str]


NO_SHADOWING = Shadowing({}, {}, {})
"""What a record binds when it loads no module (a verifier item's)."""


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
    prior: tuple[Snapshot, MappingABC[str, str]] | None = None
    """A snapshot of the same plan and the input digests derived for it (the state before
    the run's): the nodes whose files are the same in :attr:`snapshot` keep theirs."""
    _of_module: dict[str, Shadowing] = field(default_factory=dict)
    _shadowed: dict[tuple[str, ...], Shadowing] = field(default_factory=dict)
    _utf8: set[str] = field(default_factory=set)
    """The paths found to be UTF-8 text (:func:`_require_utf8`): each checked once per run."""
    merges: int = 0
    """How many sets of modules had their shadowing paths merged: once per distinct set."""
    _groups: dict[int, tuple[Any, ...]] = field(default_factory=dict)
    """``id`` of a :attr:`Decided.shared` mapping → what its records bind of it
    (:meth:`_group`)."""
    _own_changed: dict[tuple[str, int], list[str]] = field(default_factory=dict)
    """(node, ``id`` of a shared mapping) → the node's own files that changed during the run
    and that no subject of that mapping binds (:meth:`_own_moved`)."""
    _nodes: dict[tuple[str, int], tuple[Any, ...]] = field(default_factory=dict)
    """(node, ``id`` of a shared mapping) → what the node's records binding it share
    (:meth:`_node`)."""
    _bases: dict[tuple[str, int], SubjectsBase] = field(default_factory=dict)
    """(node, ``id`` of a shared mapping) → the subjects the node's records bind of it and
    of their modules' shadowing paths, with their text (:meth:`RecordMaker.base`)."""

    def __post_init__(self) -> None:
        graph = self.plangraph.graph
        criteria = criterion_digests(graph)
        if self.prior is None:
            digests = input_digests(graph, self.snapshot, criteria=criteria)
        else:
            was, prior = self.prior
            digests = digests_since(graph, was, self.snapshot, prior, criteria=criteria)
        # each file's sha256 at the end, hashed once per run by an object of its own: held by
        # this builder's EndValues, a method of the builder would be a reference cycle (.ended)
        self._hash = EndHashes(self.plangraph.workspace).of
        self.ends = EndValues(self.plangraph.root, self._hash)
        self.maker = RunRecordMaker(
            self.plangraph,
            self.snapshot,
            plan=self.plan,
            git=self.git,
            run=self.run,
            recorded_by=self.recorded_by,
            digests=digests,
            criteria=criteria,
        )

    def build(self, item: Decided) -> Evidence:
        """The record for *item*; voided when a subject changed during the run. The part of
        its subjects its test files bind (:attr:`Decided.shared`) is hashed, merged with the
        shadowing paths and compared before and after the run once per set of modules, its
        node's own files once per node and set; what is the criterion's own (its quotes
        subjects) with each record. A record that binds artifacts, executed files or glob
        files, or whose parts overlap, is built as :meth:`build_plain` builds it."""
        shared = item.shared
        if (
            shared is None
            or item.produced
            or item.executed
            or (self.globs and self._glob_files(item))
        ):
            return self.build_plain(item)
        extra = item.own
        if extra is None:  # its own part not given: what its subjects hold besides the shared
            try:
                extra = dict(item.subjects.items() - shared.items())
            except TypeError:  # a value that cannot be hashed
                return self.build_plain(item)
        group = self._groups.get(id(shared))
        if group is None or group[0] is not shared:
            group = self._group(item, shared)
        _, _, shadowing, ended, moved = group
        if (
            moved is None  # a shadowing path bound already: that binding stands
            or not extra.keys().isdisjoint(shared.keys())  # views: the fewer keys looked up
            or not extra.keys().isdisjoint(ended.keys())
        ):
            return self.build_plain(item)  # the plain merge decides
        for path in extra:  # a few paths: looked at in the loop, no generator made
            if path.endswith(".py"):  # a module: its shadowing paths
                return self.build_plain(item)  # the plain merge decides
        own_subjects: dict[str, str | None] = {}
        for path, sha in extra.items():  # as _hash and build_plain bind them
            if not path.isascii() and path not in self._utf8:  # ASCII is UTF-8: not looked at
                _require_utf8(item, [path])
                self._utf8.add(path)
            if is_collect_key(path):  # names no file: the run's value
                own_subjects[path] = sha
            else:
                found = self._hash(path)
                own_subjects[path] = sha if found is None and sha == ABSENT else found
        key = (item.node, id(shared))
        node = self._nodes.get(key)
        if node is None:
            node = self._node(item.node, group, key)
        own, clear, moved_own, base = node
        if not (
            clear
            and own_subjects.keys().isdisjoint(shadowing.bound.keys())
            and own.keys().isdisjoint(extra.keys())
        ):
            return self.build_plain(item)
        ends = self.ends.of(extra)
        changed = moved_own  # and the own subjects that changed (changed_during_run's rule)
        for path, sha in extra.items():
            if (ends[path] if path in ends else own_subjects[path]) != sha:
                changed = [*changed, path]
        if not changed:
            verdict = item.verdict
            return self.maker.make(
                item.node,
                item.criterion,
                outcome=verdict.outcome,
                reason=verdict.reason,
                details=item.details,
                subjects=own_subjects,
                base=base,
            )
        outcome, reason, details = voided(item.details, sorted(changed))
        return self._make(item, Verdict(outcome, reason), details, own_subjects, base)

    def _group(self, item: Decided, shared: dict[str, str | None]) -> tuple[Any, ...]:
        """What every record binding the subjects *shared* (those of one set of test files)
        binds of them, made with the first such record (*item*): the shared mapping itself
        (kept, so its id names no other), the subjects with their sha256 now, the shadowing
        paths of their modules, the value at the end of the run of each path the comparison
        reads, and the paths of them that changed during the run."""
        paths = list(shared)
        if unseen := [path for path in paths if path not in self._utf8]:
            _require_utf8(item, unseen)
            self._utf8.update(unseen)
        bound = {path: self._hash(path) for path in paths}
        for path, sha in shared.items():
            if bound[path] is None and (sha == ABSENT or is_collect_key(path)):
                bound[path] = sha
        shadowing = self._shadowing(paths, bound)
        ended = {**bound, **shadowing.present, **self.ends.of(shared)}
        if not bound.keys().isdisjoint(shadowing.bound):
            moved: list[str] | None = None  # a shadowing path bound already: built plain
        else:
            moved = changed_during_run({**self.before, **shared}, ended)
        group = self._groups[id(shared)] = (shared, bound, shadowing, ended, moved)
        return group

    def _node(
        self, node: str, group: tuple[Any, ...], key: tuple[str, int]
    ) -> tuple[dict[str, str | None], bool, list[str], SubjectsBase]:
        """What the records of *node* binding the subjects of *group* share, found with the
        first of them: the node's own files; whether none of them is a shadowing path bound
        absent (else those records are built plain); the paths of the group and of the own
        files that changed during the run; the subjects base (the node's own files, then the
        shared, the record's own, the shadows)."""
        own = self.maker.own_files(node)
        shadowing = group[2]
        clear = own.keys().isdisjoint(shadowing.absent.keys())
        moved = [*group[4], *self._own_moved(node, own, group)] if clear else []
        base = self._bases.get(key)
        if base is None:
            base = self._bases[key] = self.maker.base(node, group[1], shadowing.bound)
        found = self._nodes[key] = (own, clear, moved, base)
        return found

    def _own_moved(
        self, node: str, own: dict[str, str | None], group: tuple[Any, ...]
    ) -> list[str]:
        """The files of *node* itself (outputs, consumed files) that no subject of *group*
        binds and that changed during the run: compared once per node and group."""
        key = (node, id(group[0]))
        moved = self._own_changed.get(key)
        if moved is None:
            ended = group[3]
            rest = {path: sha for path, sha in own.items() if path not in ended}
            moved = self._own_changed[key] = changed_during_run(self.before, rest)
        return moved

    def build_plain(self, item: Decided) -> Evidence:
        """The record for *item*, every subject hashed, merged and compared with this record
        (what :meth:`build` gives, in every case)."""
        # executed files are learned only now: compared with the start only when the plan or
        # the latest evidence of some criterion already named them (their "before" is known)
        globbed = [p for p in self._glob_files(item) if p not in item.subjects]
        bound = [*item.subjects, *globbed]
        paths = [*bound, *(p for p in item.executed if p not in item.subjects and p not in globbed)]
        if unseen := [path for path in paths if path not in self._utf8]:  # once per run
            _require_utf8(item, unseen)
            self._utf8.update(unseen)
        subjects = {path: self._hash(path) for path in paths}
        for path, sha in item.subjects.items():
            if subjects[path] is None and (sha == ABSENT or is_collect_key(path)):
                subjects[path] = sha  # bound absent and still no file; what a folder holds
        shadowing = self._shadowing(paths, subjects)
        own = self.maker.own_files(item.node)
        if subjects.keys().isdisjoint(shadowing.bound) and own.keys().isdisjoint(
            shadowing.absent
        ):  # as nearly always: the paths bound absent were absent then and now, by lookup
            started = {**self.before, **item.subjects}
            ended = {**own, **subjects, **shadowing.present, **self.ends.of(item.subjects)}
            subjects.update(shadowing.bound)
        else:  # a shadowing path bound already: that binding stands
            for path, sha in shadowing.bound.items():
                subjects.setdefault(path, sha)
            absent = {p: sha for p, sha in shadowing.absent.items() if subjects[p] == ABSENT}
            started = {**self.before, **item.subjects, **absent}
            # what each subject is at the end, a file deleted during the run (None) included:
            # the record leaves missing files out of its subjects; a folder's collectable
            # files and a pytest section are found again (their paths name no file to hash)
            ended = {**own, **subjects, **self.ends.of(item.subjects)}
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
        base: SubjectsBase | None = None,
    ) -> Evidence:
        return self.maker.make(
            item.node,
            item.criterion,
            outcome=verdict.outcome,
            reason=verdict.reason,
            details=details,
            subjects=subjects,
            base=base,
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

    def _shadowing(self, paths: Iterable[str], subjects: dict[str, str | None]) -> Shadowing:
        """The paths where a new file would shadow a module of *paths*
        (:class:`~.shadows.ShadowPaths`), bound: absent where nothing is, by sha256 where a
        file is. Each module's are found once per run, and merged once per set of modules:
        criteria whose tests share their files share the mapping."""
        if self.shadows is None:
            return NO_SHADOWING
        loaded = tuple(
            p for p in paths if p.endswith(".py") and subjects.get(p) not in (None, ABSENT)
        )
        found = self._shadowed.get(loaded)
        if found is None:
            self.merges += 1
            parts = [self._of_paths(m, self.shadows.paths_of(m)) for m in loaded]
            if any(self.shadows.paths_of(m) for m in loaded):  # the start's files come first
                parts.insert(0, self._of_paths("", self.shadows.startup))
            found = NO_SHADOWING
            if parts:
                found = Shadowing({}, {}, {})
                for part in parts:
                    found.bound.update(part.bound)
                    found.present.update(part.present)
                    found.absent.update(part.absent)
            found = self._shadowed[loaded] = found
        return found

    def _of_paths(self, module: str, paths: Iterable[str]) -> Shadowing:
        """The shadowing *paths* of *module* bound, each looked up once per run (a module's
        own file is never its own shadow: :meth:`ShadowPaths.paths_of` leaves it out)."""
        found = self._of_module.get(module)
        if found is None:
            assert self.shadows is not None
            found = self._of_module[module] = Shadowing({}, {}, {})
            for path in paths:
                if not self.shadows.there(path):
                    found.bound[path] = found.absent[path] = ABSENT
                elif (sha := self._hash(path)) is not None:
                    found.bound[path] = found.present[path] = sha
        return found


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
