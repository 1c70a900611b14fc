"""The store's SQL schema, its version and the migrations between versions.

This is the only place that says what the tables look like. Every store file carries our
``PRAGMA application_id`` (so a foreign SQLite file is recognised and refused) and, in the ``meta``
table, the schema version it was written with. An older store is migrated in place, one version at a
time, inside one transaction; a newer one is refused and left untouched.

Schema versions:

1. Event log with hash chain and signatures, plan versions, file-hash cache.
2. The ``log`` table: what status derivation reads of each event, written with the event.
3. ``file_cache.tag``: each hash-cache row is authenticated with this user's key
   (:mod:`pytest_plangraph.store.localkey`); a row without a matching tag is not used.

Besides ``schema_version`` and ``created``, ``meta`` keeps the answers of requests made with an
idempotency key, as ``answer:<key>`` rows (:mod:`pytest_plangraph.store.answers`; no schema
change: any version's ``meta`` holds them).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator

SCHEMA_VERSION = 3
"""Version of the schema written by this release (history above)."""

APPLICATION_ID = 0x504C4752
"""``PRAGMA application_id`` of a plangraph store: ASCII ``PLGR``."""

SCHEMA = """
-- Key/value facts about the store itself. schema_version is the one that matters.
CREATE TABLE meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);

-- The append-only event log. seq orders the chain; id is the sha256 of the event's content
-- (see chain.py), so the same event recorded in two stores has the same id and merging is a union.
-- prev is the hash of the event before (empty for the first), hash = sha256(prev + id), and
-- signature = HMAC-SHA256(key, hash) when PLANGRAPH_SIGNING_KEY is set.
CREATE TABLE events (
    seq             INTEGER PRIMARY KEY,
    id              TEXT NOT NULL UNIQUE,
    kind            TEXT NOT NULL,
    node            TEXT,
    criterion       TEXT,
    at              TEXT NOT NULL,
    by_             TEXT NOT NULL,
    plan_digest     TEXT NOT NULL,
    payload         TEXT NOT NULL,          -- canonical JSON
    idempotency_key TEXT UNIQUE,            -- NULL for events without one
    prev            TEXT NOT NULL,
    hash            TEXT NOT NULL,
    signature       TEXT                    -- NULL when no signing key was set
);
CREATE INDEX events_node ON events (node);
CREATE INDEX events_kind ON events (kind);

-- Nothing rewrites history. Someone with the sqlite3 shell can drop these triggers, which is why
-- the chain exists: Store.verify() (plangraph audit) finds any edited or removed event.
CREATE TRIGGER events_no_update BEFORE UPDATE ON events
BEGIN
    SELECT RAISE(ABORT, 'plangraph events are append-only: an event cannot be changed');
END;
CREATE TRIGGER events_no_delete BEFORE DELETE ON events
BEGIN
    SELECT RAISE(ABORT, 'plangraph events are append-only: an event cannot be deleted');
END;

-- Plan digests this store has seen, numbered 1, 2, 3 ... in the order they were first seen.
CREATE TABLE plans (
    digest     TEXT PRIMARY KEY,
    plan_id    TEXT NOT NULL,
    version    INTEGER NOT NULL UNIQUE,
    first_seen TEXT NOT NULL                -- ISO 8601, UTC
);

-- sha256 of files keyed by their stat, so unchanged files are not read again. recorded_ns lets
-- the hashing layer apply git's racy-clean rule (an mtime not older than the record is untrusted).
-- tag is a keyed digest of the row's other fields with a key this store file does not hold
-- (filecache.py): a row inserted by hand has none that matches, and is not used.
CREATE TABLE file_cache (
    path        TEXT PRIMARY KEY,
    inode       INTEGER NOT NULL,
    mtime_ns    INTEGER NOT NULL,
    ctime_ns    INTEGER NOT NULL,
    size        INTEGER NOT NULL,
    sha256      TEXT NOT NULL,
    recorded_ns INTEGER NOT NULL,
    tag         TEXT
);
"""

LOG_SOURCE = """
SELECT seq, id, kind,
       CASE WHEN kind = 'evidence' AND json_valid(payload)
            THEN coalesce(node, json_extract(payload, '$.node')) ELSE node END AS node,
       CASE WHEN kind = 'evidence' AND json_valid(payload)
            THEN coalesce(criterion, json_extract(payload, '$.criterion')) ELSE criterion END
            AS criterion,
       at, by_,
       CASE WHEN kind = 'evidence' AND json_valid(payload)
            THEN json_extract(payload, '$.id') END AS record,
       CASE WHEN kind = 'evidence' AND json_valid(payload)
            THEN json_extract(payload, '$.outcome', '$.reason', '$.criterion_digest',
                              '$.input_digest', '$.subjects')
            ELSE payload END AS body
FROM events
"""
"""What each event's row of the ``log`` table is: the one definition, used by the view
``log_source`` (the trigger, the migration, audit) and by reading an older store as it is."""

LOG_TABLE = f"""
-- What status derivation reads of each event: for evidence its record id and verdict fields
-- (a JSON array of outcome, reason, criterion_digest, input_digest, subjects), for other kinds
-- the payload. Evidence records are most of a store's bytes; status reads this table and never
-- the records themselves. Its rows are made by SQLite from the events (the view log_source),
-- by a trigger in the same statement as each append, so every writer keeps it complete;
-- plangraph audit checks that it still matches the events.
CREATE TABLE log (
    seq       INTEGER PRIMARY KEY,          -- the event's seq
    id        TEXT NOT NULL,
    kind      TEXT NOT NULL,
    node      TEXT,                         -- for evidence, the record's node
    criterion TEXT,                         -- for evidence, the record's criterion
    at        TEXT NOT NULL,
    by_       TEXT NOT NULL,
    record    TEXT,                         -- the evidence record's id; NULL for other kinds
    body      TEXT NOT NULL                 -- JSON, see above
);
-- A payload that is not JSON (edited by hand) is copied as it is: reading it fails as reading
-- the event does.
CREATE VIEW log_source AS
{LOG_SOURCE};
CREATE TRIGGER events_log AFTER INSERT ON events
BEGIN
    INSERT INTO log SELECT * FROM log_source WHERE seq = NEW.seq;
END;
CREATE TRIGGER log_no_update BEFORE UPDATE ON log
BEGIN
    SELECT RAISE(ABORT, 'plangraph events are append-only: an event cannot be changed');
END;
CREATE TRIGGER log_no_delete BEFORE DELETE ON log
BEGIN
    SELECT RAISE(ABORT, 'plangraph events are append-only: an event cannot be deleted');
END;
"""

CREATE = SCHEMA + LOG_TABLE
"""Everything a new store is created with."""

FILL_LOG = """
-- Schema 1 had no log table: its rows are made from the events already stored.
INSERT INTO log SELECT * FROM log_source;
"""

CACHE_TAG = """
-- Schema 2's hash-cache rows carry no tag: they are left to be replaced as files are read again.
ALTER TABLE file_cache ADD COLUMN tag TEXT;
"""

MIGRATIONS: dict[int, str] = {2: LOG_TABLE + FILL_LOG, 3: CACHE_TAG}
"""SQL that upgrades a store from version ``n - 1`` to version ``n``, keyed by ``n``.

A migration only adds (tables, columns, indexes, rows derived from the events); it never
changes or drops an event.
"""

SCHEMA_1 = SCHEMA.replace(",\n    tag         TEXT\n);", "\n);")
"""What schema 1 created: :data:`SCHEMA` without the hash cache's ``tag`` column (the check of a
store's ``sqlite_master``, ``schemacheck.py``, replays it and the migrations)."""

TRIGGERS = ("events_no_update", "events_no_delete", "log_no_update", "log_no_delete")
"""Triggers that keep the event table append-only."""


def statements(script: str) -> Iterator[str]:
    """Split an SQL script into complete statements (trigger bodies stay whole).

    ``executescript`` would commit any open transaction, so scripts run statement by statement
    inside the caller's transaction.
    """
    pending = ""
    for line in script.splitlines(keepends=True):
        pending += line
        if sqlite3.complete_statement(pending):
            yield pending.strip()
            pending = ""
    if pending.strip() and not pending.strip().startswith("--"):
        yield pending.strip()
