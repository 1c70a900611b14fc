"""``plangraph audit`` as data (DESIGN §9): everything the store's log says that a reader should
know, derived from every event rather than from the log's checkpoint — the chain and signatures,
a head that was published but is gone, a checkpoint that disagrees with the events, events the
gate does not count, claims whose node is not completed now, stale evidence and, with a maximum
age, evidence older than that. :meth:`PlanGraph.audit <pytest_plangraph.api.PlanGraph.audit>`
returns it; the command line only renders it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import TYPE_CHECKING, Any

from .errors import StoreError

if TYPE_CHECKING:
    from .repository import Repository

__all__ = ["AuditReport", "audit"]


@dataclass(frozen=True)
class AuditReport:
    """The audit's findings by kind (``chain``, ``ignored_events``, ``phantom_completions``,
    ``stale``, ``too_old``, ``needs_person``) and its notes."""

    findings: dict[str, list[dict[str, Any]]]
    notes: list[str]

    @property
    def clean(self) -> bool:
        """True when there is no finding of any kind."""
        return not any(self.findings.values())

    def to_json(self) -> dict[str, Any]:
        """The JSON of ``plangraph audit --format json``."""
        return {**self.findings, "notes": self.notes}


def audit(
    repo: Repository,
    *,
    expected_head: tuple[int, str] | None = None,
    max_age: timedelta | None = None,
) -> AuditReport:
    """Audit the store of *repo*. *expected_head* is a ``(seq, chain hash)`` that the store
    must still hold; *max_age* reports the evidence behind valid criteria recorded longer ago.
    Without a store nothing is recorded and nothing is audited (no store is made)."""
    if not repo.has_store():
        note = f"no store at {repo.store_path} yet: nothing recorded, nothing to audit"
        missing = _expected_head(None, expected_head)
        data = {**NO_FINDINGS, "chain": [] if missing is None else [vars(missing)]}
        return AuditReport(data, [note])
    problems = _store_problems(repo, expected_head)
    chain = [vars(p) for p in problems]
    try:
        data, notes = _findings(repo, chain, max_age)
    except StoreError as exc:
        if not problems:
            raise
        # an event edited so that it cannot be read, or a damaged file: the chain or the
        # integrity check says which; the rest of the audit needs every event
        notes = [f"status could not be derived, so nothing else was checked: {exc}"]
        data = {**NO_FINDINGS, "chain": chain}
    return AuditReport(data, notes)


NO_FINDINGS: dict[str, list[Any]] = {
    "chain": [],
    "ignored_events": [],
    "phantom_completions": [],
    "stale": [],
    "too_old": [],
    "needs_person": [],
}

HELD_FOR_A_PERSON = ("REPLAN_BUDGET_EXHAUSTED", "RETRY_BUDGET_EXHAUSTED")
"""Reason codes of a node the gate refuses until a person runs ``plangraph retry``."""


def _store_problems(repo: Repository, expected: tuple[int, str] | None) -> list[Any]:
    """The store's own findings: a damaged file (SQLite's quick check), the chain and
    signatures, the expected head, and a checkpoint that knows events the store has lost."""
    from .checkpoint import ahead

    store = repo.store
    problems: list[Any] = store.integrity()
    try:
        problems += store.verify()
    except StoreError:
        if not problems:
            raise
        return problems  # the events cannot be read: the damage is the finding
    for found in (_expected_head(store, expected), ahead(store, repo.store_path)):
        if found is not None:
            problems.append(found)
    return problems


def _expected_head(store: Any, expected: tuple[int, str] | None) -> Any:
    """A ``HEAD_MISSING`` problem when *store* (None: there is none) does not hold the
    *expected* head at its sequence number; else None."""
    from .store.chain import ChainProblem
    from .store.tail import HEAD_MISSING, Missing

    if expected is None or expected[0] == 0:
        return None
    seq, want = expected
    gap = Missing(None, 0) if store is None else store.missing(seq, want)
    if gap is None:
        return None
    what = (
        f"it holds {gap.held} event(s)"
        if gap.found is None
        else f"its event {seq} is another one (hash {gap.found[:12]}…)"
    )
    message = (
        f"the store does not hold the expected head {seq}:{want[:12]}…: {what}. It was "
        "rolled back to an older copy, cut short or replaced after that head was published"
    )
    return ChainProblem(seq, "", HEAD_MISSING, message)


def _findings(
    repo: Repository, chain: list[dict[str, Any]], max_age: timedelta | None
) -> tuple[dict[str, list[Any]], list[str]]:
    """Audit's findings past the chain's *chain* problems, and its notes."""
    from .checkpoint import audit
    from .judge.derive import derive
    from .judge.logfold import LogFold
    from .store.trust import policy_from_env, screen

    # every event, not the log's checkpoint: audit is what checks the checkpoint
    policy = policy_from_env()
    log = repo.store.log()
    untrusted = screen(repo.store, log, policy)
    whole = LogFold()
    whole.extend(log, untrusted)
    snapshot = repo.snapshot(whole, cached=False)  # every file read: the cache is the store's
    state = derive(repo.graph, whole, snapshot)
    if (
        mismatch := audit(repo.graph, repo.store, repo.store_path, state, snapshot, whole)
    ) is not None:
        chain = [*chain, vars(mismatch)]
    claims = repo.store.events(kinds=["claim"])
    # the records' run times matter only to --max-age
    evidence = repo.store.events(kinds=["evidence"]) if max_age is not None else []
    signed = 0 if repo.store.signing or policy.configured else repo.store.signed_count()
    stale = [  # a cancelled node's evidence stands behind no completion
        {"node": n.id, "criterion": c.id, "evidence": c.evidence, "reasons": _codes(c.reasons)}
        for n in state.nodes.values()
        if n.status != "cancelled"
        for c in n.criteria
        if c.state == "stale"
    ]
    data = {
        "chain": chain,
        "ignored_events": _ignored(log, untrusted),
        "phantom_completions": _phantoms(claims, state, repo.graph.nodes),
        "stale": stale,
        "too_old": _too_old(evidence, state, max_age) if max_age is not None else [],
        "needs_person": _needs_person(state),
    }
    notes = (
        [
            f"{signed} event(s) are signed, and their signatures were not checked: neither "
            "PLANGRAPH_SIGNING_KEY nor PLANGRAPH_TRUSTED_KEYS is set"
        ]
        if signed
        else []
    )
    return data, notes


def _ignored(log: Any, untrusted: dict[int, str]) -> list[dict[str, Any]]:
    """One entry per event the gate does not count for its signature (keys configured)."""
    from .plan.untrusted import describe

    return [
        {
            "seq": e.seq,
            "event": e.id,
            "kind": e.kind,
            "node": e.node,
            "criterion": e.criterion,
            "by": e.by,
            "code": untrusted[e.seq],
            "message": describe(untrusted[e.seq], e),
        }
        for e in log
        if e.seq in untrusted
    ]


def _phantoms(claims: list[Any], state: Any, plan: Mapping[str, Any]) -> list[dict[str, Any]]:
    """One entry per claimed node that is not completed now, with its latest claim; only a
    cancel in the *plan* excuses one (a cancel event is anyone's word)."""
    latest: dict[str, tuple[Any, int]] = {}
    for event in claims:
        latest[event.node] = (event, latest.get(event.node, (None, 0))[1] + 1)
    found = []
    for node_id, (event, count) in latest.items():
        node = state.nodes.get(node_id)
        if node is not None and node.status != "completed" and not plan[node_id].cancelled:
            found.append(
                {
                    "node": node_id,
                    "claim": event.id,
                    "by": event.by,
                    "at": event.at,
                    "claims": count,
                    "status": node.status,
                }
            )
    return found


def _needs_person(state: Any) -> list[dict[str, Any]]:
    """One entry per node held for a person: its replan rounds or its retry budget are spent,
    and the gate refuses it until a person runs ``plangraph retry NODE``."""
    return [
        {
            "node": n.id,
            "status": n.status,
            "code": r.code,
            "message": r.message,
            "run": f"plangraph retry {n.id} --by WHO",
        }
        for n in state.nodes.values()
        if n.status != "cancelled"
        for r in n.reasons
        if r.code in HELD_FOR_A_PERSON
    ]


def _codes(reasons: Any) -> list[str]:
    return [r.code for r in reasons]


def _too_old(events: list[Any], state: Any, max_age: timedelta) -> list[dict[str, Any]]:
    try:
        limit = datetime.now(timezone.utc) - max_age
    except OverflowError:  # an age reaching before the year 1: no record is older
        return []
    used = {c.evidence for n in state.nodes.values() for c in n.criteria if c.state == "valid"}
    found = []
    for event in events:
        if event.kind != "evidence" or event.payload.get("id") not in used:
            continue
        finished = datetime.fromisoformat(event.payload["run"]["finished"])
        if finished < limit:
            found.append(
                {
                    "node": event.node,
                    "criterion": event.criterion,
                    "evidence": event.payload["id"],
                    "recorded": event.payload["run"]["finished"],
                }
            )
    return found
