"""The SQLite evidence store: an append-only, hash-chained event log (the only SQL in the project).

Every write is one ``BEGIN IMMEDIATE`` transaction, so concurrent processes take turns (waiting up
to the busy timeout) and each reads the chain's tail inside its own transaction; a process killed
midway, a full disk or a refused write leaves exactly the events that were there before. The file
runs in WAL mode. See ``schema.py`` for the tables and ``chain.py`` for the hash formula.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Collection, Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any, TextIO

from ..canonical import canonical_json
from ..errors import ConflictError, StoreError
from ..memory import collector_paused
from ..plan.model import Event
from . import schema
from .answers import Answers
from .auditing import ChainAudit
from .chain import (
    event_ids_of,
    seal,
    seal_many,
    signing_key_from_env,
)
from .exchange import PlanVersion, same_request, write_jsonl
from .faults import UNTOUCHED, check_file, translate
from .filecache import FileCache
from .merging import Merging
from .opening import connect, enable_wal, make_parent, schema_version, upgrade
from .planrows import PlanVersions, check_plan_rows, register_in
from .rows import (
    COLUMNS,
    INSERT_EVENT,
    LEGACY_LOG_QUERY,
    LOG_QUERY,
    LogEvent,
    LogRead,
    event_row,
    log_events,
    refuse_non_finite,
    row_event,
    row_event_fast,
)
from .schemacheck import check_schema, confirm_stored
from .signatures import event_message, is_ed25519, signer_from_env
from .tail import ChainTail

_TAIL = "SELECT seq, hash FROM events ORDER BY seq DESC LIMIT 1"
"""The chain's last event: its seq and hash (no row in an empty store)."""


class Store(FileCache, PlanVersions, ChainTail, ChainAudit, Merging, Answers):
    """An open evidence store. Use :meth:`open`; close it (or use ``with``) when done."""

    def __init__(
        self, path: Path, con: sqlite3.Connection, key: bytes | None, readonly: bool
    ) -> None:
        self.path = path
        self._con: sqlite3.Connection | None = con
        self._key = key
        self.readonly = readonly
        self.unwritable = False
        """True when the store was opened read-only because this process may not write its
        file (not because the caller asked)."""
        self.refusal: StoreError | None = None
        """Why the store could not be opened for writing, when it was opened read-only after
        that failed: a write says this, not a guess."""
        self._schema = schema.SCHEMA_VERSION

    # --- opening -----------------------------------------------------------------------------

    @classmethod
    def open(
        cls,
        path: Path,
        *,
        create: bool = True,
        signing_key: bytes | None = None,
        readonly: bool = False,
    ) -> Store:
        """Open the store at *path*, creating it (and its directory) when *create* is set.

        *signing_key* defaults to ``PLANGRAPH_SIGNING_KEY``. A foreign, damaged or newer store
        raises :class:`StoreError` and is never changed; an older one is migrated in place. A
        store file this process may not write (its mode, an immutable flag, a read-only mount)
        is opened read-only: SQLite would open it so anyway, and fail at the first write.
        """
        path = Path(path)
        key = signing_key if signing_key is not None else signing_key_from_env()
        unwritable = path.exists() and not readonly and not os.access(path, os.W_OK)
        if not path.exists():
            if readonly or not create:
                raise StoreError(f"there is no store at {path}; pass --store to name another")
            make_parent(path)
        readonly = readonly or unwritable
        check_file(path)
        try:
            con = connect(path, readonly)
        except sqlite3.Error as exc:
            raise translate(exc, path, readonly=readonly) from exc
        store = cls(path, con, key, readonly)
        store.unwritable = unwritable
        try:
            store._prepare()
        except BaseException:
            store.close()
            raise
        return store

    def close(self) -> None:
        """Close the connection (idempotent)."""
        if self._con is not None:
            self._con.close()
            self._con = None

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def signing(self) -> bool:
        """True when events are signed (and signatures checked) with a key."""
        return self._key is not None

    def _prepare(self) -> None:
        # one read transaction: another process may be creating the schema at this moment, and
        # two separate reads could see the tables without the application id that comes with them
        with self._reading() as con:
            con.execute("BEGIN")
            try:
                version = schema_version(con, self.path)
                # a newer version is refused below, unchecked: its shape is none we know
                latest = schema.SCHEMA_VERSION
                known = range(latest + 1) if self.readonly else (latest,)
                if version is not None and version in known:
                    check_schema(con, self.path, version)
            finally:
                if con.in_transaction:
                    con.execute("ROLLBACK")
        if version is not None and version > schema.SCHEMA_VERSION:
            raise StoreError(
                f"the store at {self.path} was written by a newer pytest-plangraph (store schema "
                f"{version}; this version reads up to {schema.SCHEMA_VERSION}). {UNTOUCHED} "
                "Upgrade pytest-plangraph, or pass --store to use another file."
            )
        if self.readonly:
            if version is None:
                raise StoreError(
                    f"there is no store in {self.path} yet (an empty file, never written); pass "
                    "--store to name another"
                )
            self._schema = version  # an older store is read as it is: nothing may be migrated
            return
        with self._reading() as con:
            enable_wal(con)
        if version != schema.SCHEMA_VERSION:
            with self._transaction() as con:
                upgrade(con, self.path, schema_version(con, self.path), schema.MIGRATIONS)

    # --- transactions ------------------------------------------------------------------------

    def write_refusal(self) -> StoreError:
        """The error for a write to this read-only store, saying why it is read-only."""
        if self.refusal is not None:
            return StoreError(f"nothing was written: {self.refusal}")
        if self.unwritable:
            return StoreError(
                f"cannot write to the store at {self.path}: this process may not write the "
                "file (permissions, an immutable flag or a read-only mount); nothing was "
                "written — check the permissions of the file, or pass --store to use another"
            )
        return StoreError(f"the store at {self.path} was opened read-only; nothing was written")

    def _connection(self) -> sqlite3.Connection:
        if self._con is None:
            raise StoreError(f"the store at {self.path} is closed")
        return self._con

    @contextmanager
    def _reading(self) -> Iterator[sqlite3.Connection]:
        try:
            yield self._connection()
        except sqlite3.Error as exc:
            raise translate(exc, self.path, readonly=self.readonly) from exc

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        if self.readonly:
            raise self.write_refusal()
        con = self._connection()
        try:
            con.execute("BEGIN IMMEDIATE")
            yield con
            con.execute("COMMIT")
        except BaseException as exc:
            if con.in_transaction:
                # the original error says more than a failed rollback would
                with suppress(sqlite3.Error):
                    con.execute("ROLLBACK")
            if isinstance(exc, sqlite3.Error):
                raise translate(exc, self.path) from exc
            raise

    # --- events ------------------------------------------------------------------------------

    def append(self, event: Event, *, expected_plan_version: int | None = None) -> Event:
        """Append one event and return it as stored (id, seq, prev, hash, signature filled).

        An event whose idempotency key or content id is already stored is not written again:
        the stored one is returned. *expected_plan_version* must equal the latest registered
        plan version, else :class:`ConflictError` (``PLAN_VERSION_CONFLICT``).
        """
        return self.append_many([event], expected_plan_version=expected_plan_version)[0]

    def append_many(
        self,
        events: Sequence[Event],
        *,
        expected_plan_version: int | None = None,
        texts: Sequence[str] | None = None,
        registering: PlanVersion | None = None,
    ) -> list[Event]:
        """Append several events in one transaction (all or none); see :meth:`append`.

        The chain's tail and the events already stored are read once for the whole batch, and
        the new rows are inserted together. *texts*, when given, are the canonical JSON of
        each event's payload as its maker joined them (a run's records: encoded once, when
        they were made); without them each payload is encoded here. *registering*: a plan
        version registered in the same transaction (:func:`~.planrows.register_in`).
        """
        if not events:
            return []
        if texts is None or len(texts) != len(events):
            texts = [canonical_json(event.payload) for event in events]  # each encoded once
        refuse_non_finite(events, texts)
        ids = event_ids_of(events, texts)
        self._signer_checked()
        with self._transaction() as con:
            # an event already stored, or the position of a new one in `fresh`
            by_id: dict[str, Event | int]
            by_key: dict[str, Event | int]
            tail = con.execute(_TAIL).fetchone()
            if tail is None:  # nothing stored yet: no id or key to look up
                by_id, by_key = {}, {}
            else:
                by_id, by_key = self._stored(con, ids, [e.idempotency_key for e in events])
            checked = expected_plan_version is None
            fresh: list[tuple[Event, str]] = []
            payloads: list[str] = []  # the canonical JSON of each fresh event's payload
            picks: list[Event | int] = []
            for event, content_id, text in zip(events, ids, texts, strict=True):
                key = event.idempotency_key
                found = by_key.get(key) if key is not None else None
                if found is not None:
                    same_request(event, fresh[found][0] if isinstance(found, int) else found)
                found = by_id.get(content_id) if found is None else found
                if found is None:
                    if not checked:
                        self._check_plan_version(con, expected_plan_version)
                        checked = True
                    found = by_id[content_id] = len(fresh)
                    fresh.append((event, content_id))
                    payloads.append(text)
                    if key is not None:
                        by_key[key] = found
                picks.append(found)
            if registering is not None:
                register_in(con, registering, self.path)
            sealed = self._insert(con, fresh, payloads=payloads, tail=tail, tail_read=True)
        return [sealed[pick] if isinstance(pick, int) else pick for pick in picks]

    def _stored(
        self, con: sqlite3.Connection, ids: Sequence[str], keys: Sequence[str | None]
    ) -> tuple[dict[str, Event | int], dict[str, Event | int]]:
        """The stored events with one of these content *ids* or idempotency *keys*."""
        query = f"SELECT {COLUMNS} FROM events WHERE id IN (SELECT value FROM json_each(?))"
        by_id: dict[str, Event | int] = {
            row[1]: self._event(row) for row in con.execute(query, (json.dumps(list(ids)),))
        }
        wanted = [key for key in keys if key is not None]
        by_key: dict[str, Event | int] = {}
        for start in range(0, len(wanted), 500):  # bound one by one: keys are any text
            chunk = wanted[start : start + 500]
            where = f"idempotency_key IN ({', '.join('?' * len(chunk))})"
            for row in con.execute(f"SELECT {COLUMNS} FROM events WHERE {where}", chunk):
                event = self._event(row)
                by_key[str(event.idempotency_key)] = event
        return by_id, by_key

    def _check_plan_version(self, con: sqlite3.Connection, expected: int | None) -> None:
        check_plan_rows(con, self.path)
        latest = con.execute("SELECT max(version) FROM plans").fetchone()[0]
        if latest != expected:
            have = f"version {latest}" if latest is not None else "no plan version"
            raise ConflictError(
                f"PLAN_VERSION_CONFLICT: the write expected plan version {expected}, but the "
                f"store at {self.path} has {have}; reload the plan and retry"
            )

    def _signer_checked(self) -> None:
        """Read ``PLANGRAPH_SIGNING_KEY_FILE`` before a write begins: a bad key file is told
        (UsageError) and nothing is written."""
        if not self.readonly:
            signer_from_env()

    def _insert(
        self,
        con: sqlite3.Connection,
        fresh: Sequence[tuple[Event, str]],
        *,
        merged: bool = False,
        payloads: Sequence[str] | None = None,
        tail: Sequence[Any] | None = None,
        tail_read: bool = False,
    ) -> list[Event]:
        """Chain and insert new events (with their content ids) after the current tail. With
        ``PLANGRAPH_SIGNING_KEY_FILE`` set, each is signed with that Ed25519 key; a *merged*
        event keeps the Ed25519 signature it came with (it vouches for its content anywhere).
        *payloads*: the canonical JSON of each event's payload, when the caller encoded it.
        *tail_read*: the caller read the chain's last (seq, hash) in this transaction, *tail*
        (None: the store is empty); else it is read here."""
        check_schema(con, self.path, self._schema)  # what runs inside this write is ours
        if not tail_read:
            tail = con.execute(_TAIL).fetchone()
        seq, prev = (tail[0], tail[1]) if tail else (0, "")
        first = seq
        signer = signer_from_env()
        sealed: list[Event] = []
        if not merged and signer is None:  # the usual case: sealed together
            sealed = seal_many(fresh, seq, prev, self._key)
            fresh = ()
        for event, content_id in fresh:
            seq += 1
            kept = event.signature if merged and is_ed25519(event.signature) else None
            stored = seal(event, seq, prev, self._key, content_id)
            if kept is None and signer is not None:
                kept = signer.sign(event_message(content_id))
            if kept is not None:
                stored = stored.replace(signature=kept)
            sealed.append(stored)
            prev = stored.hash
        texts = payloads if payloads is not None else [None] * len(sealed)
        rows = [event_row(event, text) for event, text in zip(sealed, texts, strict=True)]
        con.executemany(INSERT_EVENT, rows)  # the log's row: a trigger
        confirm_stored(con, self.path, first, [(event.seq, event.id) for event in sealed])
        return sealed

    def events(
        self,
        *,
        node: str | None = None,
        kinds: Collection[str] | None = None,
        after_seq: int = 0,
        mentioning: str | None = None,
        seqs: Collection[int] | None = None,
        chain_order: bool = False,
        checked: bool = False,
    ) -> list[Event]:
        """Stored events in the order they were recorded (time, then chain position — the
        same as chain order except after a merge), or in *chain_order*. Each filter given
        narrows the answer: only events of *node*, of *kinds*, whose ``seq`` is one of *seqs*,
        or whose payload's stored JSON text contains *mentioning* (text as canonical JSON
        writes it, such as a quoted key ``'"coverage"'``; an empty text matches every
        event). *checked*, each column's type is checked too (bytes where text belongs is a
        :class:`StoreError` naming the event), for events shown whole."""
        where, params = ["seq > ?"], [after_seq]
        if seqs is not None:
            where.append("seq IN (SELECT value FROM json_each(?))")
            params.append(json.dumps(sorted(seqs)))  # type: ignore[arg-type]
        if mentioning is not None:
            where.append("instr(payload, ?) > 0")
            params.append(mentioning)  # type: ignore[arg-type]
        if node is not None:
            where.append("node = ?")
            params.append(node)  # type: ignore[arg-type]
        if kinds is not None:
            if not kinds:
                return []
            where.append(f"kind IN ({', '.join('?' * len(kinds))})")
            params.extend(kinds)  # type: ignore[arg-type]
        order = "seq" if chain_order else "at, seq"
        query = f"SELECT {COLUMNS} FROM events WHERE {' AND '.join(where)} ORDER BY {order}"
        with self._reading() as con:
            rows = con.execute(query, params).fetchall()
        with collector_paused():
            return [self._event(row, checked=checked) for row in rows]

    def log(self, *, after_seq: int = 0) -> Sequence[Event | LogEvent]:
        """Every event in chain order, as much as status derivation reads of it: evidence
        payloads carry only their id and verdict fields (:class:`~.rows.LogEvent`).

        A row that cannot be read this way is read again by :meth:`events`, whose error names
        the event.
        """
        return self.log_since(after_seq).events

    def log_since(self, after_seq: int = 0) -> LogRead:
        """:meth:`log` after *after_seq*, with the last ``seq`` read and the earliest and
        latest recording times among the events (a checkpoint of what the log says holds
        only while nothing is recorded with an earlier time than its own events)."""
        from_log = True
        try:
            with self._reading() as con, collector_paused():
                query = LOG_QUERY if self._schema >= 2 else LEGACY_LOG_QUERY
                rows = con.execute(query, (after_seq,)).fetchall()
                events: Sequence[Event | LogEvent] = log_events(rows)
                times = [str(row[8]) for row in rows]
                seqs = [int(row[0]) for row in rows]
        except (ValueError, TypeError, StoreError):
            events, from_log = self.events(after_seq=after_seq), False
            times = [event.at for event in events]
            seqs = [event.seq for event in events]
        first, last = min(times, default=None), max(times, default=None)
        return LogRead(events, max(seqs, default=after_seq), first, last, from_log)

    def hash_at(self, seq: int) -> str | None:
        """The chain hash of event *seq*, or None when the store has no such event."""
        with self._reading() as con:
            row = con.execute("SELECT hash FROM events WHERE seq = ?", (seq,)).fetchone()
        return None if row is None else str(row[0])

    def signatures(self, after_seq: int, kinds: Collection[str]) -> dict[int, tuple[str, ...]]:
        """The chain fields of the events of *kinds* after *after_seq*, by seq: (kind, prev,
        hash, signature or ""), for checking signatures without reading the records. Read by
        ``seq`` range with no index: an index's entries can be forged while its SQL is intact."""
        query = (
            "SELECT seq, kind, prev, hash, coalesce(signature, '') FROM events NOT INDEXED "
            f"WHERE seq > ? AND kind IN ({', '.join('?' * len(kinds))})"
        )
        with self._reading() as con:
            rows = con.execute(query, (after_seq, *kinds)).fetchall()
        return {int(row[0]): tuple(str(value) for value in row[1:]) for row in rows}

    def count(self) -> int:
        """How many events the store holds."""
        with self._reading() as con:
            return int(con.execute("SELECT count(*) FROM events").fetchone()[0])

    def _event(self, row: Sequence[Any], *, checked: bool = False) -> Event:
        """The event of *row*; *checked*, each column's type is checked too (see
        :func:`~.rows.row_event`), as for an export others will read."""
        try:
            return row_event(row) if checked else row_event_fast(row)
        except ValueError as exc:
            raise StoreError(
                f"event {row[0]} of the store at {self.path} cannot be read ({exc}); it was "
                "edited outside plangraph — run plangraph audit"
            ) from exc

    # --- export (verify is ChainAudit's, merge Merging's) -------------------------------------

    def export_jsonl(self, out: TextIO) -> int:
        """Write every event as JSON Lines (format in ``exchange.py``), in chain order, so that
        the export's chain verifies as the store's does; return the count."""
        with self._reading() as con:
            rows = con.execute(f"SELECT {COLUMNS} FROM events ORDER BY seq").fetchall()
        return write_jsonl((self._event(row, checked=True) for row in rows), out)
