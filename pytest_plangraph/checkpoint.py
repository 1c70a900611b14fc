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
* the file is damaged, or was written by other code (it is kept under a fingerprint of the
  modules that fold and read it)

— in each case the whole log is read and folded instead, as without a checkpoint. The store's
append-only chain is what makes the kept prefix trustworthy: ``plangraph audit`` checks every
event, and an event edited by hand below the checkpoint is found there, not by status.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .inputs import LoggedEvent
from .logfold import LogFold
from .plancache import cache_dir_of, code_fingerprint
from .store.rows import VERDICT_FIELDS, LogEvent

if TYPE_CHECKING:
    from .store import Store

FIRST_AT = 1_000
"""Events a log holds before its first checkpoint is written (a smaller log is read whole)."""

EVERY = 1_000
"""Events read after a checkpoint before a newer one is written."""

_MODULES = ("logfold.py", "checkpoint.py", "store/rows.py")
_KEPT_FIELDS = (*VERDICT_FIELDS, "id")


def checkpoint_path(store_path: Path) -> Path:
    """Where the checkpoint of the store at *store_path* is kept."""
    return cache_dir_of(store_path) / f"log-{store_path.name}.json"


def read_fold(store: Store, path: Path | None) -> LogFold:
    """What the store's log says: from the checkpoint at *path* and the events after it when
    the checkpoint still holds, else from every event; then a newer checkpoint is written
    when enough events were read since the last (never with *path* None)."""
    kept = _load(path) if path is not None else None
    if kept is not None:
        fold, seq, chain, at = kept
        if store.hash_at(seq) == chain:
            read = store.log_since(seq)
            if read.first_at is None or read.first_at >= at:
                fold.extend(read.events)
                if not fold.unjudged:
                    if len(read.events) >= EVERY:
                        _save(path, store, fold, read.last_seq, read.last_at or at)
                    return fold
    read = store.log_since(0)
    fold = LogFold.of(read.events)
    if path is not None and not fold.unjudged and fold.count >= FIRST_AT and read.last_at:
        _save(path, store, fold, read.last_seq, read.last_at)
    return fold


def _save(path: Path | None, store: Store, fold: LogFold, seq: int, at: str) -> None:
    """Keep *fold* (of the log up to event *seq*, recorded up to *at*) at *path*; a write that
    fails leaves no file behind and the next read folds more events."""
    chain = store.hash_at(seq)
    if path is None or chain is None:
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
    head = {
        "version": code_fingerprint(_MODULES),
        "seq": seq,
        "hash": chain,
        "at": at,
        "sha256": hashlib.sha256(body.encode("utf-8")).hexdigest(),
    }
    partial = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
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
        if head["version"] != code_fingerprint(_MODULES):
            return None
        if hashlib.sha256(body.encode("utf-8")).hexdigest() != head["sha256"]:
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
    return LogEvent(int(seq), str(id_), str(kind), node, criterion, str(by), payload)
