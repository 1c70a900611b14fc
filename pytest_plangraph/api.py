"""The Python API: one object over a repository's plan, store and files.

Agent runtimes, the CLI and the pytest plugin all go through :class:`PlanGraph`::

    graph = PlanGraph.open(Path("."))
    decision = graph.claim("step-token-endpoint", by="agent-42")
    if decision.verdict == "FAILED":
        print(decision.reasons)

Status is never stored: every call derives it from the plan, the store's events and the current
hashes of the files involved. A plan file edited while the object is open is read again by the
next call that judges, claims or records anything, and nothing is judged, claimed or recorded
against a plan that lint rejects. Wrong values (a blank ``by``, a number where a node id belongs)
raise :class:`~pytest_plangraph.errors.UsageError`. One object serves one thread.
"""

from __future__ import annotations

import os
from collections.abc import Collection, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import apicheck
from .environment import (
    actor,
    git_info,
    ignore_store_dir,
    now,
    resolve_paths,
    store_files,
)
from .errors import ConflictError, StoreError, UsageError
from .gate import LoggedEvent, decide
from .graph import Graph
from .ledger import Context
from .logfold import LogFold
from .model import EVENT_KINDS, Event, Evidence, GitInfo, Plan, PlanRef, RunInfo
from .plancache import cache_dir_of
from .planfile import LoadedPlan, load_plan
from .state import (
    GateDecision,
    PlanState,
    Snapshot,
    collector_paused,
    derive,
    derive_node,
    gate,
    input_digests,
    needed_paths,
)
from .vcs import Workspace

if TYPE_CHECKING:
    from .impact import ImpactReport
    from .lint import Finding, Severity
    from .store import Store
    from .verifiers import Registry


class PlanGraph:
    """A repository's plan, evidence store and files, with status derived on demand."""

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
            root, store_files(root, store_path), cache=cache_dir_of(store_path)
        )
        self.store_path = store_path
        self._store: Store | None = None
        self._use(loaded, plan_stat)

    def _use(self, loaded: LoadedPlan, plan_stat: os.stat_result | None) -> None:
        self.loaded = loaded
        self.plan: Plan = loaded.plan
        self.graph = Graph.of(loaded.plan)
        self._plan_seen = _identity(plan_stat)
        self._problems: tuple[list[Finding], list[Finding]] | None = None

    @classmethod
    def open(
        cls, root: Path | None = None, *, plan: Path | None = None, store: Path | None = None
    ) -> PlanGraph:
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
        seen = _stat(plan_path)  # before reading: an edit while it is read is seen next time
        cache = cache_dir_of(store_path)
        with collector_paused():  # validating a large plan makes no cycles worth collecting
            loaded = load_plan(plan_path, display, cache_dir=cache)
        return cls(root, loaded, store_path, plan_path, plan_stat=seen)

    def refresh(self) -> bool:
        """Read the plan file again if it changed since it was read (its size, times or inode
        differ); True when the plan itself changed. The calls that judge, claim or record call
        this first, so a long-lived object never answers for a plan edited meanwhile."""
        if self.plan_path is None:
            return False
        seen = _stat(self.plan_path)
        if seen is not None and _identity(seen) == self._plan_seen:
            return False
        with collector_paused():
            loaded = load_plan(self.plan_path, self.loaded.file, cache_dir=self.workspace.cache)
        if loaded.plan.digest == self.plan.digest:  # touched, or saved unchanged
            self._plan_seen = _identity(seen)
            return False
        self._use(loaded, seen)
        return True

    def _ready(self) -> None:
        """The plan as the file now says, checked: :class:`PlanError` when lint rejects it
        (each plan is checked once; :meth:`check_plan` checks again)."""
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
            from .store import Store

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
            ignore_store_dir(self.store_path)
        return self._store

    def has_store(self) -> bool:
        """True when the store is open or its file exists: a reading command that finds no
        store does not create one."""
        return self._store is not None or self.store_path.exists()

    @property
    def registry(self) -> Registry:
        """The verifier types of the built-ins and every installed plugin."""
        from .plugins import get_registry

        return get_registry()

    def close(self) -> None:
        """Close the store if it was opened."""
        if self._store is not None:
            self._store.close()
            self._store = None

    def __enter__(self) -> PlanGraph:
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
        from .plancheck import check_plan

        return check_plan(self, self.plan_problems())

    def plan_problems(self) -> tuple[list[Finding], list[Finding]]:
        """The plan's lint errors that stop a command, and those that do not (see
        :meth:`check_plan`)."""
        from .plancheck import plan_problems

        self._problems = plan_problems(self)
        return self._problems

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
        from .plancheck import lint

        return lint(self, run_data=run_data, severities=severities, known=known)

    def events(self) -> list[Event]:
        """Every event of the store, in order."""
        return self.store.events()

    def fold(self) -> LogFold:
        """What the store's log says for derivation: from its checkpoint and the events
        recorded since (see :mod:`pytest_plangraph.checkpoint`), or from every event. With no
        store yet, nothing: reading makes no store."""
        from .checkpoint import checkpoint_path, read_fold

        if not self.has_store():
            return LogFold()
        with collector_paused():
            return read_fold(self.store, checkpoint_path(self.store_path))

    def snapshot(
        self, events: Sequence[LoggedEvent] | LogFold | None = None, *, cached: bool = True
    ) -> Snapshot:
        """Current hashes of every file the plan and the evidence depend on; without *cached*,
        every file is read, none taken from the store's hash cache (as ``audit`` does)."""
        events = self.fold() if events is None else events
        judged = events.judged() if isinstance(events, LogFold) else events
        stats: dict[str, os.stat_result] = {}  # taken once, for expanding and for hashing
        # no cycles are made here; with a large log in memory, each collection walks it all
        with collector_paused():
            outputs = self.workspace.expand_each(self._outputs(), stats)
            paths = needed_paths(self.graph, judged, outputs)
            # the hash cache lives in the store; a command that needs no store does not make one
            cache = self.store if cached and self.has_store() else None
            cache = None if cache is not None and cache.readonly else cache
            files = self.workspace.hashes(paths, cache=cache, stats=stats)
        return Snapshot(files=files, outputs=outputs)

    def expanded_outputs(self) -> dict[str, tuple[str, ...]]:
        """Each node's outputs as files (directories and globs expanded), nothing hashed."""
        return self.workspace.expand_each(self._outputs())

    def _outputs(self) -> dict[str, list[str]]:
        return {node.id: node.outputs for node in self.graph.nodes.values()}

    def status(self, events: Sequence[LoggedEvent] | LogFold | None = None) -> PlanState:
        """The derived state of every node, from *events* when the caller has read the log
        already (:meth:`fold`, or :meth:`Store.log <pytest_plangraph.store.Store.log>`), else
        from the store."""
        if not (events is None or isinstance(events, LogFold) or _sequence(events)):
            raise UsageError(
                "status() takes the events read from the store (graph.fold() or "
                f"graph.store.log()), or nothing; not {type(events).__name__}"
            )
        self._ready()
        # Reading, hashing and deriving make no reference cycles; a collection triggered in
        # between would walk every event read so far, again and again.
        with collector_paused():
            events = self.fold() if events is None else events
            return derive(self.graph, events, self.snapshot(events))

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

    def claims(self) -> set[str]:
        """Nodes that have been claimed as done."""
        return {e.node for e in self.store.events(kinds=["claim"]) if e.node}

    def gate(self, node: str, state: PlanState | None = None) -> GateDecision:
        """The completion gate's decision for *node*."""
        self._ready()
        self.require_node(node)
        return gate(self.graph, state or self.status(), node)

    # --- checks of names ---------------------------------------------------------------------

    def require_node(self, node: str) -> None:
        """Raise :class:`UsageError` unless *node* is in the plan."""
        if apicheck.text(node, "a node id") not in self.graph.nodes:
            raise UsageError(f"unknown node {node!r}; {_choices(self.graph.nodes)}")

    def require_criterion(self, node: str, criterion: str) -> None:
        """Raise :class:`UsageError` unless *node/criterion* is in the plan."""
        self.require_node(node)
        if self.graph.nodes[node].criterion(apicheck.text(criterion, "a criterion id")) is None:
            ids = [c.id for c in self.graph.nodes[node].acceptance]
            raise UsageError(f"node {node!r} has no criterion {criterion!r}; {_choices(ids)}")

    # --- writing -----------------------------------------------------------------------------

    def make_evidence(
        self,
        node: str,
        criterion: str,
        *,
        outcome: str,
        reason: str | None,
        details: Mapping[str, Any],
        subjects: Mapping[str, str | None],
        run: RunInfo,
        recorded_by: str,
        snapshot: Snapshot | None = None,
        plan: PlanRef | None = None,
        git: GitInfo | None = None,
        digests: Mapping[str, str] | None = None,
    ) -> Evidence:
        """Build an evidence record bound to the plan, the criterion, the node's input digest,
        the git state and the sha256 of every subject (the node's own files are added here).

        Pass *snapshot*, *plan*, *git* and *digests* (from :func:`state.input_digests`) when
        making many records at once, so they are computed once.
        """
        from .records import RecordMaker

        self.require_criterion(node, criterion)
        snapshot = snapshot or self.snapshot()
        maker = RecordMaker(
            self,
            snapshot,
            plan=plan or self.plan_ref(),
            git=git or git_info(self.root, self.store_path),
            run=run,
            recorded_by=recorded_by,
            digests=digests or input_digests(self.graph, snapshot),
        )
        return maker.make(
            node, criterion, outcome=outcome, reason=reason, details=details, subjects=subjects
        )

    def node_files(self, node: str, snapshot: Snapshot) -> list[str]:
        """The node's outputs and the files it consumes from upstream."""
        from .state import consumed_files

        return sorted(
            {*snapshot.outputs.get(node, ()), *consumed_files(self.graph, node, snapshot)}
        )

    def record(
        self, evidence: Sequence[Evidence], *, expected_plan_version: int | None = None
    ) -> list[Event]:
        """Append evidence records to the store; plugins hear of each one. The batch is
        stored upstream first (the plan's topological order): a stale record's culprits are the
        upstream nodes whose latest record before it differs from today, so a record of the
        same run must not come before its upstream's. The events come back in *evidence*'s
        order. Each record must be one :meth:`make_evidence` made for a criterion of the plan
        (:class:`UsageError` otherwise, and nothing is stored); *expected_plan_version* as for
        :meth:`append`."""
        from .records import checked_payloads

        self._ready()
        payloads = checked_payloads(self, evidence)
        self._expect(apicheck.version(expected_plan_version, "expected_plan_version"))
        at = now()
        events = [
            Event(
                kind="evidence",
                node=payload["node"],
                criterion=payload["criterion"],
                at=at,
                by=payload["recorded_by"],
                plan_digest=payload["plan"]["digest"],
                payload=payload,
            )
            for payload in payloads
        ]
        rank = {node: i for i, node in enumerate(self.graph.topological_order())}
        order = sorted(range(len(events)), key=lambda i: rank.get(events[i].node or "", -1))
        appended = self.store.append_many([events[i] for i in order])
        stored = appended[:]
        for slot, event in zip(order, appended, strict=True):
            stored[slot] = event
        from .plugins import notify

        store = str(self.store_path)  # a plugin that raises is warned about, never our failure
        notify(
            "plangraph_evidence_recorded", [{"evidence": e, "store_path": store} for e in evidence]
        )
        return stored

    def append(
        self,
        kind: str,
        node: str,
        *,
        by: str,
        criterion: str | None = None,
        payload: Mapping[str, Any] | None = None,
        idempotency_key: str | None = None,
        expected_plan_version: int | None = None,
    ) -> Event:
        """Append one event of *kind* about *node* (evidence goes through :meth:`record`).

        *by* and *idempotency_key* follow the rules of ``--by``: not blank, no control
        characters. *expected_plan_version* is the plan version the writer decided against;
        when the plan now in the repository has another version (as this store numbers it:
        ``plan_ref().version``), the write is refused (``ConflictError``).
        """
        if kind == "evidence":
            raise UsageError(
                "evidence is recorded with record(), which checks each record; append() "
                "writes the other kinds of event"
            )
        if kind not in EVENT_KINDS:
            raise UsageError(f"unknown event kind {kind!r}; {_choices(EVENT_KINDS)}")
        if payload is not None and not isinstance(payload, Mapping):
            raise UsageError(f"payload must be a mapping, not {type(payload).__name__}")
        self._ready()
        self.require_node(node)
        if criterion is not None:
            self.require_criterion(node, criterion)
        key = idempotency_key
        event = Event(
            kind=kind,  # checked above
            node=node,
            criterion=criterion,
            at=now(),
            by=apicheck.name(by, "by"),
            plan_digest=self.plan.digest,
            payload=dict(payload or {}),
            idempotency_key=None if key is None else apicheck.name(key, "idempotency_key"),
        )
        self._expect(apicheck.version(expected_plan_version, "expected_plan_version"))
        return self.store.append(event)

    def _expect(self, expected: int | None) -> None:
        """:class:`ConflictError` unless the plan in the repository is version *expected*."""
        if expected is None:
            return
        current = self.plan_ref().version
        if expected != current:
            raise ConflictError(
                f"PLAN_VERSION_CONFLICT: the writer expected plan version {expected}, but the "
                f"plan in the repository is version {current}; reload the plan and decide again"
            )

    def claim(
        self,
        node: str,
        *,
        by: str,
        idempotency_key: str | None = None,
        expected_plan_version: int | None = None,
    ) -> GateDecision:
        """Record that *by* claims *node* is done, and answer with the gate's decision."""
        self._ready()
        self.require_node(node)
        apicheck.name(by, "by")
        if idempotency_key is not None:
            apicheck.name(idempotency_key, "idempotency_key")
        # The verdict at claim time goes into the claim itself: the retry budget counts refused
        # claims, and only now are the files as they were when the claim was made.
        # Only the claimed node's state is built: the gate decides from it alone.
        with collector_paused():
            fold = self.fold()
            snapshot = self.snapshot(fold)
            context = Context.of(self.graph, snapshot)  # shared by both derivations
            before = derive_node(self.graph, fold, snapshot, node, context=context)
        claim = self.append(
            "claim",
            node,
            by=by,
            payload={"verdict": decide(before).verdict},
            idempotency_key=idempotency_key,
            expected_plan_version=expected_plan_version,
        )
        fold.add_stored([claim])
        if fold.unjudged and fold.events is None:  # another writer's bare claim, just now
            from .checkpoint import read_fold

            fold = read_fold(self.store, None)
            snapshot = self.snapshot(fold)
            context = Context.of(self.graph, snapshot)
        with collector_paused():
            after = derive_node(self.graph, fold, snapshot, node, context=context)
        decision = decide(after)
        from .plugins import notify

        notify("plangraph_gate_decision", [{"decision": decision}])  # a raising plugin: warned
        return decision

    def approve(self, node: str, criterion: str, *, by: str, note: str = "") -> Event:
        """Record an approval of an ``approval`` criterion, bound to the node's input digest."""
        self._ready()
        definition = self._approval(node, criterion)
        apicheck.name(by, "by")
        apicheck.text(note, "note")
        digest = input_digests(self.graph, self.snapshot())[node]
        payload = {"input_digest": digest, "note": note, "role": definition}
        return self.append("approval", node, criterion=criterion, by=by, payload=payload)

    def revoke(self, node: str, criterion: str, *, by: str, note: str = "") -> Event:
        """Withdraw the approval of an ``approval`` criterion."""
        self._ready()
        self._approval(node, criterion)
        apicheck.name(by, "by")
        apicheck.text(note, "note")
        decisions = [
            e.kind
            for e in self.store.events(node=node, kinds=["approval", "revoke"])
            if e.criterion == criterion
        ]
        if not decisions or decisions[-1] != "approval":
            raise UsageError(f"{node}/{criterion} has no approval in force to revoke")
        return self.append("revoke", node, criterion=criterion, by=by, payload={"note": note})

    def allow_retry(self, node: str, *, by: str, note: str = "") -> Event:
        """Grant a node whose retry budget is spent a fresh budget (a person's decision)."""
        apicheck.text(note, "note")
        return self.append("retry", node, by=by, payload={"note": note})

    def cancel(self, node: str, *, by: str, note: str = "") -> Event:
        """Cancel a node: it no longer needs to be completed."""
        apicheck.text(note, "note")
        return self.append("cancel", node, by=by, payload={"note": note})

    def _approval(self, node: str, criterion: str) -> str | None:
        self.require_criterion(node, criterion)
        definition = self.graph.nodes[node].criterion(criterion)
        assert definition is not None
        if definition.verifier.type != "approval":
            raise UsageError(
                f"{node}/{criterion} is verified by {definition.verifier.type!r}, not by approval; "
                "only approval criteria can be approved"
            )
        role: str | None = getattr(definition.verifier, "role", None)
        return role

    def verify(self, nodes: Iterable[str] = (), *, by: str | None = None) -> list[Evidence]:
        """Run every non-pytest verifier of *nodes* (all nodes when empty) and record evidence."""
        from .verify import run_verifiers

        selected = apicheck.texts(nodes, "nodes")
        by = actor() if by is None else apicheck.name(by, "by")
        self._ready()
        for node in selected:
            self.require_node(node)
        evidence = run_verifiers(self, selected or None, by=by)
        if evidence:
            self.record(evidence)
        return evidence

    def impact(self, since: str | None = None, *, commits: bool = True) -> ImpactReport:
        """What changed and what it invalidates (DESIGN §6). With *since*: the diff from that
        revision to the working tree, plan edits included, no store needed (a store's evidence
        ids and claims are used when one exists). Without: every evidence subject against the
        files now. *commits* names the commit behind each change (a ``git log`` over the
        range, the slowest part of a preview of a long range)."""
        from .impact_run import impact_now, impact_since

        apicheck.optional_text(since, "since")
        self._ready()
        if since is not None:
            return impact_since(self, since, commits=commits)
        return impact_now(self, commits=commits)


def _choices(names: Iterable[str]) -> str:
    names = sorted(names)
    shown = ", ".join(names[:20]) + (" …" if len(names) > 20 else "")
    return f"known: {shown}" if names else "the plan has none"


def _sequence(value: object) -> bool:
    return isinstance(value, Sequence) and not isinstance(value, str | bytes)


def _stat(path: Path) -> os.stat_result | None:
    try:
        return path.stat()
    except OSError:  # gone or unreadable: reading it says what is wrong
        return None


def _identity(seen: os.stat_result | None) -> tuple[int, ...] | None:
    """What tells a plan file changed without reading it: size, inode and both times."""
    if seen is None:
        return None
    return (seen.st_size, seen.st_ino, seen.st_mtime_ns, seen.st_ctime_ns)
