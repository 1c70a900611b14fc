"""A checkpoint of what the store's log says, so status reads only the events recorded since.

It sits above the judge and the store, which it joins: the fold is the judge's, the events, chain
and keys the store's; it runs no SQL itself.

Status derivation needs the store's whole history only through a
:class:`~pytest_plangraph.judge.logfold.LogFold`, whose compacted size follows the plan. The fold of
the log up to event *N* is kept beside the store (``log-<store file name>.json`` in the plan
cache's folder) with the chain hash of event *N* and the latest recording time it covers. Later
reads check that hash in the store, read only the events after *N* and fold them in:

* the store at that path is another one, or lost events (the hash differs or is gone);
* an event after *N* was recorded with an earlier time than the checkpoint's (a merge of
  another store's older events, which sort before newer ones);
* a folded claim carries no verdict (only a replay of the whole log can judge it);
* the file is damaged, or was written by other code (it is kept under the fingerprint of the
  package's code, :mod:`..codehash`);
* the checkpoint was made under other trust settings (keys, trusted keys and their roles): its
  fold counted other events (:meth:`~pytest_plangraph.store.trust.Policy.fingerprint`)

— in each case the whole log is read and folded instead, as without a checkpoint. Every read
goes through :func:`~.trust.screen`, which keeps events that do not count out of
the fold. With keys configured, a checkpoint is used only when it is signed in a way this
process trusts (HMAC with ``PLANGRAPH_SIGNING_KEY``, or Ed25519 by a trusted key with role
``ci``), so the signatures of the events it covers are not checked again; where no such
signature can be made (only public keys at hand), no checkpoint is written.

What a checkpoint protects against. It is signed (over the seq and chain hash it covers, its time,
the sha256 of its body and the trust settings) as above when keys are configured, else
(HMAC-SHA256) with this user's key (:mod:`.localkey`), and its body's ``last_seq``
must be the seq it covers. A checkpoint edited by hand — its body (say a failed verdict made a
pass), or its head moved to a later event so that the events in between are skipped — or one
written by another user or copied from another machine does not match its signature and is not
used. It is no protection against a process of this user that reads the key (or the signing key):
``plangraph audit`` derives from every event and compares (:func:`audit`). The events after the
checkpoint (all of them, without one) are checked before they are used (:func:`check_events`): each
one's content id recomputed, and its chain link followed back to the hash the checkpoint holds,
which is the stored hash of its last event; an event edited by hand there stops status and claim
with ``STORE_TAMPERED``. An event edited by hand below the checkpoint is not read again by status —
the checkpoint keeps what it said when it was checked — and is found by audit."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .canonical import json_loads
from .codehash import code_fingerprint
from .errors import StoreTamperedError
from .judge.derive import derive
from .judge.inputs import Snapshot
from .judge.logfold import LogFold
from .judge.states import PlanState
from .plan.cache import cache_dir_of, make_cache_dir, write_partial
from .plan.model import LoggedEvent
from .regularfile import read_regular
from .store.chain import ChainProblem, sign
from .store.localkey import local_key
from .store.rows import VERDICT_FIELDS, LogEvent, LogRead
from .store.trust import Policy, policy_from_env, screen

if TYPE_CHECKING:
    from .plan.graph import Graph
    from .store.sqlite import Store

FIRST_AT = 1_000
"""Events a log holds before its first checkpoint is written (a smaller log is read whole)."""

EVERY = 1_000
"""Events read after a checkpoint before a newer one is written."""

_KEPT_FIELDS = (*VERDICT_FIELDS, "id")


def checkpoint_path(store_path: Path) -> Path:
    """Where the checkpoint of the store at *store_path* is kept."""
    return cache_dir_of(store_path) / f"log-{store_path.name}.json"


def read_fold(store: Store, path: Path | None, nodes: Collection[str] | None = None) -> LogFold:
    """What the store's log says: from the checkpoint at *path* and the events after it when
    the checkpoint still holds, else from every event; then a newer checkpoint is written
    when enough events were read since the last (never with *path* None). The events read are
    checked first (:func:`check_events`): a store edited by hand raises
    :class:`~pytest_plangraph.errors.StoreTamperedError` instead of giving a status.

    With *nodes*, a fold read from the checkpoint holds what the checkpoint says of those
    nodes alone (the events after it are folded whole), for a judgement of those nodes only,
    and no checkpoint is written from it."""
    policy = policy_from_env()
    if path is None:
        return whole_fold(store, policy)
    kept = _from_checkpoint(store, path, policy, nodes)
    if kept is not None:
        fold, read, at, _ = kept
        if nodes is None and len(read.events) >= EVERY:
            _save(path, store, fold, read.last_seq, read.last_at or at, policy)
        return fold
    read = store.log_since(0)
    check_events(store, read)
    fold = LogFold()
    fold.extend(read.events, screen(store, read.events, policy))
    if not fold.unjudged and fold.count >= FIRST_AT and read.last_at:
        _save(path, store, fold, read.last_seq, read.last_at, policy)
    return fold


def fold_with(store: Store, fold: LogFold, stored: Sequence[LoggedEvent]) -> LogFold:
    """*fold* with the events this process just *stored* added to it; when it cannot judge
    them (another writer's claim without a verdict, stored just now, needs the whole log
    replayed), the fold of every event (:func:`read_fold` without a checkpoint) instead."""
    fold.add_stored(stored)
    if fold.unjudged and fold.events is None:
        return read_fold(store, None)
    return fold


def whole_fold(store: Store, policy: Policy | None = None) -> LogFold:
    """The fold of every event of the store, each checked against its content id and the
    chain (:func:`check_events`) and its signature under *policy* (the environment's by
    default); no checkpoint is read or written."""
    policy = policy_from_env() if policy is None else policy
    read = store.log_since(0)
    check_events(store, read)
    fold = LogFold()
    fold.extend(read.events, screen(store, read.events, policy))
    return fold


def check_events(store: Store, read: LogRead, after_seq: int = 0, prev: str = "") -> None:
    """Raise :class:`~pytest_plangraph.errors.StoreTamperedError` naming the first event after
    *after_seq* (whose trusted chain hash is *prev*) that does not match its content id or the
    chain, or — when *read* came from the ``log`` table — its ``log`` row. Called after the
    events were read, so that it covers every event read (and any appended meanwhile)."""
    problem = store.check_tail(after_seq, prev, log=read.from_log)
    if problem is not None:
        raise StoreTamperedError(problem.message, problem.seq, problem.event_id)


def ahead(store: Store, store_path: Path) -> ChainProblem | None:
    """A checkpoint of this user's that covers an event the store does not hold, or holds with
    another hash: the store lost events from its end, an older copy of it was restored, or it
    was replaced (``CHECKPOINT_AHEAD``); None otherwise."""
    path = checkpoint_path(store_path)
    kept = _load(path, policy_from_env())
    if kept is None:
        return None
    _, seq, chain, _ = kept
    gap = store.missing(seq, chain)
    if gap is None:
        return None
    what = (
        f"the store holds {gap.held} event(s): events were removed from its end, or an older "
        "copy of it was restored"
        if gap.found is None
        else f"event {seq} of the store is another one: the store was replaced or rewritten"
    )
    message = (
        f"the log's checkpoint {path} covers events up to {seq}, but {what}. If the store "
        "was replaced on purpose, delete the checkpoint file"
    )
    return ChainProblem(seq, "", CHECKPOINT_AHEAD, message)


CHECKPOINT_AHEAD = "CHECKPOINT_AHEAD"
"""Audit code: the checkpoint knows events that the store no longer holds as it knew them."""


def audit(
    graph: Graph,
    store: Store,
    store_path: Path,
    whole: PlanState,
    snapshot: Snapshot,
    folded: LogFold,
) -> ChainProblem | None:
    """Check the checkpoint against *whole*, the state derived from every event (with
    *snapshot*), and *folded*, the fold of every event: a checkpoint that derives another state,
    or says other criteria passed once (what ``status --check`` compares with), was edited or
    written wrongly. It is then removed, so that the next read folds every event, and the
    problem is returned."""
    path = checkpoint_path(store_path)
    kept = _from_checkpoint(store, path, policy_from_env())
    if kept is None:
        return None
    fold, _, _, seq = kept
    mine = derive(graph, fold, snapshot)
    if mine == whole and fold.passed == folded.passed:
        return None
    with contextlib.suppress(OSError):
        path.unlink()
    differ = [n for n, state in whole.nodes.items() if mine.nodes.get(n) != state]
    named = ", ".join(differ[:3]) + (" …" if len(differ) > 3 else "")
    message = (
        f"the log's checkpoint {path.name} (events up to {seq}) gives another status than the "
        f"events themselves{f' for {named}' if named else ''}; it was removed, and status now "
        f"reads every event until a new one is written"
    )
    return ChainProblem(seq, "", CHECKPOINT_MISMATCH, message)


CHECKPOINT_MISMATCH = "CHECKPOINT_MISMATCH"
"""Audit code: the checkpoint says something else than the events it summarizes."""


def _from_checkpoint(
    store: Store, path: Path, policy: Policy, nodes: Collection[str] | None = None
) -> tuple[LogFold, LogRead, str, int] | None:
    """The fold kept at *path* (of *nodes* alone, when given) with the events recorded after
    it folded in, the read of those events, and the time and seq the checkpoint covers; None
    when the checkpoint does not hold."""
    kept = _load(path, policy, nodes)
    if kept is None:
        return None
    fold, seq, chain, at = kept
    if store.hash_at(seq) != chain:
        return None
    read = store.log_since(seq)
    if read.first_at is not None and read.first_at < at:
        return None
    check_events(store, read, seq, chain)
    fold.extend(read.events, screen(store, read.events, policy, seq))
    return None if fold.unjudged else (fold, read, at, seq)


def _save(path: Path, store: Store, fold: LogFold, seq: int, at: str, policy: Policy) -> None:
    """Keep *fold* (of the log up to event *seq*, recorded up to *at*) at *path*; a write that
    fails leaves no file behind and the next read folds more events."""
    chain = store.hash_at(seq)
    if chain is None:
        return
    compact = fold.compacted()
    body = json.dumps(
        {
            "count": compact.count,
            "last_seq": compact.last_seq,
            "evidence": _entries(compact.evidence),
            "approvals": _entries(compact.approvals),
            "cancels": [[node, *_event(e)] for node, e in compact.cancels.items()],
            "claimed": sorted(compact.claimed),
            "refused": compact.refused,
            "on_record": compact.on_record,
            "passed": sorted(compact.passed),
            "ignored": [
                [*k, pos, code, *_event(e)] for k, (pos, e, code) in compact.ignored.items()
            ],
            "held": [[node, *_event(e)] for node, e in compact.held.items()],
        },
        ensure_ascii=False,
    )
    digest = hashlib.sha256(body.encode("utf-8")).hexdigest()
    trust = policy.fingerprint()
    signed = _signed(seq, chain, at, digest, trust)
    if policy.configured:
        signature = policy.sign_checkpoint(signed)
        if signature is None:
            return  # a checkpoint nobody here can sign would be trusted by nobody
    else:
        signature = sign(local_key(), signed)
    head = {
        "version": code_fingerprint(),
        "seq": seq,
        "hash": chain,
        "at": at,
        "sha256": digest,
        "trust": trust,
        "signature": signature,
    }
    partial = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    try:
        make_cache_dir(path.parent)
        write_partial(partial, (json.dumps(head) + "\n" + body).encode("utf-8"))
        os.replace(partial, path)
    except OSError:
        with contextlib.suppress(OSError):
            partial.unlink(missing_ok=True)


def _load(
    path: Path, policy: Policy, nodes: Collection[str] | None = None
) -> tuple[LogFold, int, str, str] | None:
    """The fold kept at *path* (what it says of *nodes* alone, when given: the other nodes'
    entries are not built) with the seq, chain hash and time it was kept at, or None when
    there is none this code can trust."""
    try:  # only a regular file: a FIFO put there would make every status wait for a writer
        head_text, body = read_regular(path).decode("utf-8").split("\n", 1)
        head = json_loads(head_text)
        if head["version"] != code_fingerprint():
            return None
        digest = hashlib.sha256(body.encode("utf-8")).hexdigest()
        if digest != head["sha256"]:
            return None
        trust = policy.fingerprint()  # made under other trust settings, it counted other events
        if head.get("trust") != trust:
            return None
        signed = _signed(int(head["seq"]), str(head["hash"]), str(head["at"]), digest, trust)
        if not _holds(policy, signed, head.get("signature")):
            return None
        data = json_loads(body)
        if int(data["last_seq"]) != int(head["seq"]):
            return None
        if nodes is not None:
            data = _of_nodes(data, nodes)
        fold = LogFold(
            count=int(data["count"]),
            last_seq=int(data["last_seq"]),
            evidence=_read_entries(data["evidence"]),
            approvals=_read_entries(data["approvals"]),
            cancels={str(row[0]): _read_event(row[1:]) for row in data["cancels"]},
            claimed={str(node) for node in data["claimed"]},
            refused={str(node): int(n) for node, n in data["refused"].items()},
            on_record={
                str(node): [(int(pos), str(digest)) for pos, digest in entries]
                for node, entries in data["on_record"].items()
            },
            passed={(str(node), str(criterion)) for node, criterion in data["passed"]},
            events=None,
            ignored={
                (str(row[0]), str(row[1])): (int(row[2]), _read_event(row[4:]), str(row[3]))
                for row in data["ignored"]
            },
            origin=digest,
            held={str(row[0]): _read_event(row[1:]) for row in data["held"]},
        )
        return fold, int(head["seq"]), str(head["hash"]), str(head["at"])
    except (OSError, ValueError, KeyError, TypeError, IndexError, AttributeError, RecursionError):
        return None


def _of_nodes(data: dict[str, Any], nodes: Collection[str]) -> dict[str, Any]:
    """The checkpoint's body *data* with the entries of *nodes* alone."""
    kept = dict(data)
    for name in ("evidence", "approvals", "cancels", "ignored", "held"):
        kept[name] = [row for row in data[name] if row[0] in nodes]
    kept["passed"] = [pair for pair in data["passed"] if pair[0] in nodes]
    kept["on_record"] = {n: e for n, e in data["on_record"].items() if n in nodes}
    return kept


def _holds(policy: Policy, signed: str, signature: object) -> bool:
    """Whether a checkpoint's *signature* vouches for *signed*: under keys configured, as the
    trust policy says; else with this user's key (:mod:`pytest_plangraph.store.localkey`), which
    neither the store nor the cache folder holds."""
    if policy.configured:
        return policy.checkpoint_holds(signed, signature)
    import hmac  # a log with no checkpoint yet asks none

    return hmac.compare_digest(str(signature), sign(local_key(), signed))


def _signed(seq: int, chain: str, at: str, digest: str, trust: str) -> str:
    """What a checkpoint's signature vouches for: the body (its sha256), the place in the
    log it covers, so that a head moved to a later event is not taken as signed, and the trust
    settings its fold was filtered with."""
    return f"{seq}\0{chain}\0{at}\0{digest}\0{trust}"


def _entries(index: Mapping[tuple[str, str], tuple[int, LoggedEvent]]) -> list[list[Any]]:
    # the key names the node and criterion even where the event has them in its payload only
    return [[*key, pos, *_event(e, key)] for key, (pos, e) in index.items()]


def _read_entries(rows: Sequence[Sequence[Any]]) -> dict[tuple[str, str], tuple[int, LoggedEvent]]:
    return {(str(row[0]), str(row[1])): (int(row[2]), _read_event(row[3:])) for row in rows}


def _event(event: LoggedEvent, key: tuple[str, str] | None = None) -> list[Any]:
    payload = event.payload
    if event.kind == "evidence":  # what derivation reads of a record, as the log holds it
        payload = {name: payload.get(name) for name in _KEPT_FIELDS}
    elif event.kind == "patch":  # a held node's refusal: its code, not the whole patch
        payload = {"outcome": payload.get("outcome"), "code": payload.get("code")}
    node, criterion = (event.node, event.criterion) if key is None else key
    return [event.seq, event.id, event.kind, node or None, criterion or None, event.by, payload]


def _read_event(row: Sequence[Any]) -> LogEvent:
    seq, id_, kind, node, criterion, by, payload = row
    if not isinstance(payload, dict):
        raise ValueError("damaged checkpoint payload")
    if kind == "evidence" and not isinstance(payload.get("subjects"), dict | None):
        raise ValueError("damaged checkpoint subjects")  # as the log's reader refuses them
    return LogEvent(int(seq), str(id_), str(kind), node, criterion, str(by), payload)
