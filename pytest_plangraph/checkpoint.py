"""A checkpoint of what the store's log says, so status reads only the events recorded since.

Status derivation needs the store's whole history only through a
:class:`~pytest_plangraph.logfold.LogFold`, whose compacted size follows the plan. The fold of
the log up to event *N* is kept beside the store (``log-<store file name>.json`` in the plan
cache's folder) with the chain hash of event *N* and the latest recording time it covers. Later
reads check that hash in the store, read only the events after *N* and fold them in:

* the store at that path is another one, or lost events (the hash differs or is gone);
* an event after *N* was recorded with an earlier time than the checkpoint's (a merge of
  another store's older events, which sort before newer ones);
* a folded claim carries no verdict (only a replay of the whole log can judge it);
* the file is damaged, or was written by other code (it is kept under the fingerprint of the
  package's code, :mod:`.codehash`)

— in each case the whole log is read and folded instead, as without a checkpoint. With
``PLANGRAPH_SIGNING_KEY`` set, a checkpoint is signed with it (HMAC-SHA256, as events are) and
only a checkpoint signed with that key is used. ``plangraph audit`` derives from every event,
checks every event, and compares the checkpoint with them (:func:`audit`): an event edited by
hand below the checkpoint, or an edited checkpoint, is found there, not by status.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .codehash import code_fingerprint
from .inputs import LoggedEvent
from .logfold import LogFold
from .plancache import cache_dir_of, make_cache_dir
from .state import PlanState, Snapshot, derive
from .store.chain import ChainProblem, sign, signing_key_from_env
from .store.rows import VERDICT_FIELDS, LogEvent, LogRead

if TYPE_CHECKING:
    from .api import PlanGraph
    from .store import Store

FIRST_AT = 1_000
"""Events a log holds before its first checkpoint is written (a smaller log is read whole)."""

EVERY = 1_000
"""Events read after a checkpoint before a newer one is written."""

_KEPT_FIELDS = (*VERDICT_FIELDS, "id")


def checkpoint_path(store_path: Path) -> Path:
    """Where the checkpoint of the store at *store_path* is kept."""
    return cache_dir_of(store_path) / f"log-{store_path.name}.json"


def read_fold(store: Store, path: Path | None) -> LogFold:
    """What the store's log says: from the checkpoint at *path* and the events after it when
    the checkpoint still holds, else from every event; then a newer checkpoint is written
    when enough events were read since the last (never with *path* None)."""
    if path is None:
        return LogFold.of(store.log())
    kept = _from_checkpoint(store, path)
    if kept is not None:
        fold, read, at, _ = kept
        if len(read.events) >= EVERY:
            _save(path, store, fold, read.last_seq, read.last_at or at)
        return fold
    read = store.log_since(0)
    fold = LogFold.of(read.events)
    if not fold.unjudged and fold.count >= FIRST_AT and read.last_at:
        _save(path, store, fold, read.last_seq, read.last_at)
    return fold


def audit(
    graph: PlanGraph, whole: PlanState, snapshot: Snapshot, folded: LogFold
) -> ChainProblem | None:
    """Check the checkpoint against *whole*, the state derived from every event (with
    *snapshot*), and *folded*, the fold of every event: a checkpoint that derives another state,
    or says other criteria passed once (what ``status --check`` compares with), was edited or
    written wrongly. It is then removed, so that the next read folds every event, and the
    problem is returned."""
    path = checkpoint_path(graph.store_path)
    kept = _from_checkpoint(graph.store, path)
    if kept is None:
        return None
    fold, _, _, seq = kept
    mine = derive(graph.graph, fold, snapshot)
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


def _from_checkpoint(store: Store, path: Path) -> tuple[LogFold, LogRead, str, int] | None:
    """The fold kept at *path* with the events recorded after it folded in, the read of those
    events, and the time and seq the checkpoint covers; None when the checkpoint does not
    hold."""
    kept = _load(path)
    if kept is None:
        return None
    fold, seq, chain, at = kept
    if store.hash_at(seq) != chain:
        return None
    read = store.log_since(seq)
    if read.first_at is not None and read.first_at < at:
        return None
    fold.extend(read.events)
    return None if fold.unjudged else (fold, read, at, seq)


def _save(path: Path, store: Store, fold: LogFold, seq: int, at: str) -> None:
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
        },
        ensure_ascii=False,
    )
    digest = hashlib.sha256(body.encode("utf-8")).hexdigest()
    key = signing_key_from_env()
    head = {
        "version": code_fingerprint(),
        "seq": seq,
        "hash": chain,
        "at": at,
        "sha256": digest,
        "signature": None if key is None else sign(key, _signed(seq, chain, at, digest)),
    }
    partial = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    try:
        make_cache_dir(path.parent)
        partial.write_text(json.dumps(head) + "\n" + body, encoding="utf-8")
        os.replace(partial, path)
    except OSError:
        with contextlib.suppress(OSError):
            partial.unlink(missing_ok=True)


def _load(path: Path) -> tuple[LogFold, int, str, str] | None:
    """The fold kept at *path* with the seq, chain hash and time it was kept at, or None when
    there is none this code can trust."""
    try:
        head_text, body = path.read_text(encoding="utf-8").split("\n", 1)
        head = json.loads(head_text)
        if head["version"] != code_fingerprint():
            return None
        digest = hashlib.sha256(body.encode("utf-8")).hexdigest()
        if digest != head["sha256"]:
            return None
        key = signing_key_from_env()  # with a key, only a checkpoint signed with it is used
        signed = _signed(int(head["seq"]), str(head["hash"]), str(head["at"]), digest)
        if key is not None and not hmac.compare_digest(
            str(head.get("signature")), sign(key, signed)
        ):
            return None
        data = json.loads(body)
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
        )
        return fold, int(head["seq"]), str(head["hash"]), str(head["at"])
    except (OSError, ValueError, KeyError, TypeError, IndexError, AttributeError):
        return None


def _signed(seq: int, chain: str, at: str, digest: str) -> str:
    """What a checkpoint's signature vouches for: the body (its sha256) and the place in the
    log it covers, so that a head moved to a later event is not taken as signed."""
    return f"{seq}\0{chain}\0{at}\0{digest}"


def _entries(index: Mapping[tuple[str, str], tuple[int, LoggedEvent]]) -> list[list[Any]]:
    # the key names the node and criterion even where the event has them in its payload only
    return [[*key, pos, *_event(e, key)] for key, (pos, e) in index.items()]


def _read_entries(rows: Sequence[Sequence[Any]]) -> dict[tuple[str, str], tuple[int, LoggedEvent]]:
    return {(str(row[0]), str(row[1])): (int(row[2]), _read_event(row[3:])) for row in rows}


def _event(event: LoggedEvent, key: tuple[str, str] | None = None) -> list[Any]:
    payload = event.payload
    if event.kind == "evidence":  # what derivation reads of a record, as the log holds it
        payload = {name: payload.get(name) for name in _KEPT_FIELDS}
    node, criterion = (event.node, event.criterion) if key is None else key
    return [event.seq, event.id, event.kind, node or None, criterion or None, event.by, payload]


def _read_event(row: Sequence[Any]) -> LogEvent:
    seq, id_, kind, node, criterion, by, payload = row
    if not isinstance(payload, dict):
        raise ValueError("damaged checkpoint payload")
    if kind == "evidence" and not isinstance(payload.get("subjects"), dict | None):
        raise ValueError("damaged checkpoint subjects")  # as the log's reader refuses them
    return LogEvent(int(seq), str(id_), str(kind), node, criterion, str(by), payload)
