"""Rows of the ``events`` and ``plans`` tables to and from model values."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Mapping, Sequence
from itertools import pairwise
from typing import Any, NamedTuple, get_args

from ..canonical import canonical_json, json_loads
from ..errors import UsageError
from ..plan.model import Event, EventKind
from .chain import LOG_MISMATCH, ChainProblem, Link
from .exchange import PlanVersion
from .schema import LOG_SOURCE

COLUMNS = (
    "seq, id, kind, node, criterion, at, by_, plan_digest, payload, idempotency_key, "
    "prev, hash, signature"
)
INSERT_EVENT = f"INSERT INTO events ({COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"


def event_row(event: Event, payload: str | None = None) -> tuple[Any, ...]:
    """The values of :data:`INSERT_EVENT` for a sealed event (payload as canonical JSON:
    *payload* when the caller has encoded it already)."""
    return (
        event.seq,
        event.id,
        event.kind,
        event.node,
        event.criterion,
        event.at,
        event.by,
        event.plan_digest,
        canonical_json(event.payload) if payload is None else payload,
        event.idempotency_key,
        event.prev,
        event.hash,
        event.signature,
    )


def row_event(row: Sequence[Any]) -> Event:
    """The event of a row selected with :data:`COLUMNS` (raises ValueError on a damaged row: a
    value of the wrong type, an unknown kind or a payload that is not a JSON object)."""
    if type(row[0]) is not int:
        raise ValueError(f"damaged event row {row[0]!r}: its seq is not a whole number")
    for name, value in zip(_NAMES, row, strict=True):
        if name == "seq" or type(value) is str or (value is None and name in _OPTIONAL):
            continue
        held = "bytes" if isinstance(value, bytes) else type(value).__name__
        raise ValueError(f"damaged event row {row[0]}: its {name} holds {held}, not text")
    return row_event_fast(row)


_NAMES = tuple(name.strip().rstrip("_") for name in COLUMNS.split(","))  # by_: by
_OPTIONAL = frozenset(("node", "criterion", "idempotency_key", "signature"))


_KINDS = frozenset(get_args(EventKind))


def row_event_fast(row: Sequence[Any]) -> Event:
    """Like :func:`row_event` for reading a whole log: builds the event without checking the
    type of every column (the row was checked when it was appended; tampering is ``verify``'s
    job), but still refuses a row whose kind or payload cannot be read."""
    seq, id_, kind, node, criterion, at, by, plan_digest, payload, key, prev, link, signature = row
    data = json_loads(payload)
    if kind not in _KINDS or not isinstance(data, dict) or not isinstance(at, str):
        raise ValueError(f"unknown event kind {kind!r} or damaged payload")
    return Event(
        seq=seq,
        id=id_,
        kind=kind,
        node=node,
        criterion=criterion,
        at=at,
        by=by,
        plan_digest=plan_digest,
        payload=data,
        idempotency_key=key,
        prev=prev,
        hash=link,
        signature=signature,
        fields_set=_ALL_SET,
    )


_ALL_SET = frozenset(("id", "seq", "kind", "node", "criterion", "at", "by", "plan_digest"))
_ALL_SET |= frozenset(("payload", "idempotency_key", "prev", "hash", "signature"))


class LogEvent(NamedTuple):
    """An event as status derivation reads it (see :data:`LOG_QUERY`): the fields of
    :class:`~pytest_plangraph.plan.model.Event` that derivation uses, with an evidence payload cut
    down to :data:`VERDICT_FIELDS` and ``id``."""

    seq: int
    id: str
    kind: str
    node: str | None
    criterion: str | None
    by: str
    payload: Mapping[str, Any]


class LogRead(NamedTuple):
    """What :meth:`Store.log_since <pytest_plangraph.store.Store.log_since>` read: the events in
    recording order, the last ``seq`` among them (the one asked after when there are none), and
    the earliest and latest ``at`` among them (None when there are none), and whether they were
    read from the ``log`` table (else from the events themselves: a log row could not be
    read)."""

    events: Sequence[Event | LogEvent]
    last_seq: int
    first_at: str | None
    last_at: str | None
    from_log: bool = True


VERDICT_FIELDS = ("outcome", "reason", "criterion_digest", "input_digest", "subjects")
"""The fields of an evidence record that decide its verdict (besides its ``id``)."""

LOG_DIFFERENCES = f"""
SELECT s.seq, s.id, 0 FROM ({LOG_SOURCE}) s LEFT JOIN log l ON l.seq = s.seq
WHERE l.seq IS NULL OR l.id IS NOT s.id OR l.kind IS NOT s.kind OR l.node IS NOT s.node
   OR l.criterion IS NOT s.criterion OR l.at IS NOT s.at OR l.by_ IS NOT s.by_
   OR l.record IS NOT s.record OR l.body IS NOT s.body
UNION ALL
SELECT seq, id, 1 FROM log WHERE seq NOT IN (SELECT seq FROM events)
"""
"""Rows of the ``log`` table that differ from what the events make of them, or are missing, and
rows left behind by an event that is gone: seq, event id, gone. What the events make of them is
:data:`~.schema.LOG_SOURCE` itself, never the view ``log_source`` of the store file: the file is
what is being checked, and a view replaced by hand would compare the log with itself."""


def log_differences(con: sqlite3.Connection, schema: int) -> dict[int, tuple[str, bool]]:
    """Events whose ``log`` row differs from what the events say, by seq: (event id, whether
    the event is gone). Empty for an older store opened read-only (no log)."""
    if schema < 2:
        return {}
    try:
        differ = con.execute(LOG_DIFFERENCES).fetchall()
    except sqlite3.OperationalError:  # the log table dropped by hand
        differ = con.execute("SELECT seq, id, 0 FROM events").fetchall()
    return {int(seq): (str(id_), bool(gone)) for seq, id_, gone in differ}


LOG_QUERY = """
SELECT seq, id, kind, node, criterion, by_, record, body, at
FROM log WHERE seq > ?
"""
"""Every event for derivation, from the ``log`` table, so the bulk of the evidence records is
never read; in chain order, which :func:`log_events` turns into recording order."""

LEGACY_LOG_QUERY = f"""
SELECT seq, id, kind, node, criterion, by_, record, body, at
FROM ({LOG_SOURCE}) WHERE seq > ?
"""
""":data:`LOG_QUERY` for a store of schema 1 opened read-only (it cannot be migrated): the
same rows, made from the events as the ``log`` table's rows are."""


def log_events(rows: Iterable[Sequence[Any]]) -> list[LogEvent]:
    """The :class:`LogEvent` of each row of :data:`LOG_QUERY`, in the order the events were
    recorded: time, then chain position (after a merge, a shard's older verdict never overrides
    a newer one). ValueError on a damaged row.

    Equal texts are decoded once and share one object (payloads are read, never changed): a
    criterion verified again with nothing changed repeats the same verdict fields.
    """
    rows = list(rows)
    if any(b[8] < a[8] for a, b in pairwise(rows)):  # stores were merged
        rows.sort(key=lambda row: (row[8], row[0]))
    verdicts: dict[str, Any] = {}
    others: dict[str, Any] = {}
    events: list[LogEvent] = []
    append, make = events.append, tuple.__new__  # tens of thousands of rows: kept flat
    for seq, id_, kind, node, criterion, by, record_id, text, _ in rows:
        if kind == "evidence":
            data = verdicts.get(text)
            if data is None:
                data = verdicts[text] = _decode(kind, text)
            data = {**data, "id": record_id}
        else:
            data = others.get(text)
            if data is None:
                data = others[text] = _decode(kind, text)
        append(make(LogEvent, (seq, id_, kind, node, criterion, by, data)))
    return events


def _decode(kind: str, text: Any) -> Mapping[str, Any]:
    if kind not in _KINDS or not isinstance(text, str):
        raise ValueError(f"unknown event kind {kind!r} or damaged payload")
    data = json_loads(text)
    if kind == "evidence":
        if not isinstance(data, list) or len(data) != len(VERDICT_FIELDS):
            raise ValueError("damaged evidence payload")
        data = dict(zip(VERDICT_FIELDS, data, strict=True))
        if not isinstance(data["subjects"], (dict, type(None))):
            raise ValueError("damaged evidence subjects")
    elif not isinstance(data, dict):
        raise ValueError("damaged payload")
    return data


def row_link(row: Sequence[Any]) -> Link:
    """Just the chain fields of a row, as they are, even from a damaged row."""
    signature = None if row[12] is None else str(row[12])
    return Link(int(row[0]), str(row[1] or ""), str(row[10] or ""), str(row[11] or ""), signature)


def written_as_stored(event: Event, row: Sequence[Any]) -> bool:
    """True when the payload text of *row* (selected with :data:`COLUMNS`) is the canonical
    JSON plangraph writes for *event*, read from it. Any other text was edited by hand, and may
    read differently elsewhere: with a key written twice, Python keeps the last value while
    SQLite's JSON functions (and the ``log`` table status reads) keep the first."""
    return bool(row[8] == canonical_json(event.payload))


def readable_event(row: Sequence[Any]) -> Event | None:
    """The event of a row selected with :data:`COLUMNS`, or None when it cannot be read."""
    try:
        return row_event(row)
    except (ValueError, TypeError):
        return None


def add_plan(con: sqlite3.Connection, plan: PlanVersion) -> int:
    """The version of *plan*'s digest, giving it the next number when it is new."""
    row = con.execute("SELECT version FROM plans WHERE digest = ?", (plan.digest,)).fetchone()
    if row is not None:
        return int(row[0])
    version = int(con.execute("SELECT coalesce(max(version), 0) + 1 FROM plans").fetchone()[0])
    con.execute(
        "INSERT INTO plans (digest, plan_id, version, first_seen) VALUES (?, ?, ?, ?)",
        (plan.digest, plan.plan_id, version, plan.first_seen),
    )
    return version


def log_problem(seq: int, event_id: str, gone: bool) -> ChainProblem:
    """The ``LOG_MISMATCH`` problem of event *seq*, whose log row differs or outlived it."""
    where = f"event {seq} ({event_id[:12] or 'no id'})"
    what = (
        "the log table, which status reads, has a row for it, but the event is gone"
        if gone
        else "its row in the log table, which status reads, does not match the event"
    )
    return ChainProblem(
        seq, event_id, LOG_MISMATCH, f"{where}: {what}; the store was edited outside plangraph"
    )


def refuse_non_finite(events: Sequence[Event], texts: Sequence[str]) -> None:
    """:class:`UsageError` when an event's payload holds NaN or an infinity (*texts*: the
    payloads' canonical JSON). JSON has no such value: stored, it would read back as another
    text, and the event's content would no longer match its id (``CONTENT_TAMPERED``)."""
    for event, text in zip(events, texts, strict=True):
        # the usual case, no encoding again: neither letter that begins NaN or (-)Infinity (a
        # one-letter search is a memchr, a few times cheaper than searching the two words)
        if "N" not in text and "I" not in text:
            continue
        if "NaN" not in text and "Infinity" not in text:
            continue
        try:
            json.dumps(event.payload, allow_nan=False)
        except ValueError:
            raise UsageError(
                f"the payload of the {event.kind} event about {event.node} holds NaN or an "
                "infinity, which JSON has no value for; give a number, a text or null there "
                "(nothing was stored)"
            ) from None
