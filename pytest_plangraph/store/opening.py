"""Opening a store file: the connection, the schema check, creation and migration.

The order matters: the schema version is read before anything is written, so a foreign or newer
file is refused untouched; only then is WAL switched on and the schema created or migrated, inside
one transaction that a second process opening the same new file waits for.
"""

from __future__ import annotations

import re
import shlex
import sqlite3
import time
from datetime import datetime, timezone
from pathlib import Path
from urllib.parse import quote

from ..errors import StoreError
from . import schema
from .faults import UNTOUCHED, damaged
from .schemacheck import check_schema

_SCHEMA_NUMBER = re.compile(r"[0-9]{1,9}")
"""A schema version as the ``meta`` table keeps it: ASCII digits, short enough to be real."""

BUSY_TIMEOUT_S = 30.0
"""How long a write waits for another process's transaction before giving up."""


def connect(path: Path, readonly: bool) -> sqlite3.Connection:
    """A connection in autocommit mode (transactions are explicit) with the busy timeout.

    Read-only, a WAL store whose directory cannot be written (so SQLite cannot make its shared
    memory file) is opened as immutable — but only when no write-ahead log holds events that
    are not yet in the main file.
    """
    mode = "ro" if readonly else "rwc"
    con = _open(f"file:{quote(str(path))}?mode={mode}")
    if not readonly:
        return con
    try:
        con.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except sqlite3.OperationalError:
        con.close()
        wal = Path(f"{path}-wal")
        if wal.exists() and wal.stat().st_size:
            raise
        con = _open(f"file:{quote(str(path))}?mode=ro&immutable=1")
    return con


def enable_wal(con: sqlite3.Connection) -> None:
    """Switch the store file to WAL (nothing to do when it is already).

    The switch needs the file alone for a moment, and while another connection is inside a
    write SQLite answers "locked" at once instead of waiting (waiting could deadlock): several
    processes opening one new store together would fail. The switch is retried, backing off,
    for up to the busy timeout.
    """
    if str(con.execute("PRAGMA journal_mode").fetchone()[0]).lower() == "wal":
        return
    deadline, delay = time.monotonic() + BUSY_TIMEOUT_S, 0.005
    while True:
        try:
            con.execute("PRAGMA journal_mode=WAL").fetchone()
            return
        except sqlite3.OperationalError as exc:
            text = str(exc).lower()
            if ("locked" not in text and "busy" not in text) or time.monotonic() > deadline:
                raise
        time.sleep(delay)
        delay = min(delay * 2, 0.1)


def _open(uri: str) -> sqlite3.Connection:
    con = sqlite3.connect(uri, uri=True, timeout=BUSY_TIMEOUT_S, isolation_level=None)
    con.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
    return con


def make_parent(path: Path) -> None:
    """Create the store's directory, or say why it cannot be."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise StoreError(
            f"cannot create the directory of the store at {path}: {exc.strerror} — pass --store "
            "to put the store elsewhere"
        ) from exc


def schema_version(con: sqlite3.Connection, path: Path) -> int | None:
    """The schema version of a plangraph store, None for an empty database; refuse a foreign one."""
    application_id = con.execute("PRAGMA application_id").fetchone()[0]
    if application_id == 0 and not con.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]:
        return None
    foreign = f"the store at {path} is an SQLite database, but not a plangraph store. {UNTOUCHED}"
    if application_id != schema.APPLICATION_ID:
        raise StoreError(f"{foreign} Pass --store to use another file.")
    try:
        row = con.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    except sqlite3.OperationalError:  # the table is gone: edited by hand
        raise damaged(path, "has lost its meta table (edited outside plangraph)") from None
    if row is None:
        raise damaged(path, "has no schema version in its meta table (edited outside plangraph)")
    text = str(row[0])
    if not _SCHEMA_NUMBER.fullmatch(text):  # a huge number is refused before int() reads it
        shown = text if len(text) <= 40 else f"{text[:40]}… ({len(text)} characters)"
        raise damaged(
            path, f"has an unreadable schema version {shown!r} (edited outside plangraph)"
        )
    return int(text)


def upgrade(
    con: sqlite3.Connection, path: Path, version: int | None, migrations: dict[int, str]
) -> None:
    """Create the schema in an empty database, or migrate an older one, inside a transaction.

    A migrated store is checked as it now is (:func:`check_schema`). A new one is not: its
    database held no object when this transaction read it (*version* None: no application id,
    an empty ``sqlite_master``), and what it holds now is what :data:`~.schema.CREATE` made in
    it (inside this transaction, which holds the write lock since that read): the very shape
    the check would make again in a database in memory to compare."""
    if version is None:
        for statement in schema.statements(schema.CREATE):
            con.execute(statement)
        con.execute(f"PRAGMA application_id = {schema.APPLICATION_ID}")
        con.execute("INSERT INTO meta (key, value) VALUES ('created', ?)", (now(),))
        _set_version(con)
        return
    _check_version(con, path, version)
    for target in range(version + 1, schema.SCHEMA_VERSION + 1):
        if target not in migrations:
            raise StoreError(f"the store at {path} has schema {version}; no migration found")
        for statement in schema.statements(migrations[target]):
            con.execute(statement)
    _set_version(con)
    # A store migrated in place is checked as it now is (its older objects included), inside
    # the transaction: anything the file held that is not ours undoes the migration.
    check_schema(con, path, schema.SCHEMA_VERSION)


def _set_version(con: sqlite3.Connection) -> None:
    con.execute(
        "INSERT OR REPLACE INTO meta (key, value) VALUES ('schema_version', ?)",
        (str(schema.SCHEMA_VERSION),),
    )


def _check_version(con: sqlite3.Connection, path: Path, version: int) -> None:
    """Refuse to migrate a store whose tables are newer than the version its ``meta`` table
    says (that version was edited by hand): a migration would fail on what is already there."""
    tables = {str(row[0]) for row in con.execute("SELECT name FROM sqlite_master")}
    columns = {str(row[1]) for row in con.execute("PRAGMA table_info(file_cache)")}
    apparent = 3 if "tag" in columns else 2 if "log" in tables else 1
    if apparent <= version:
        return
    raise StoreError(
        f"the store at {path} says schema {version} in its meta table, but its tables are "
        f"those of schema {apparent}: the version was edited outside plangraph. {UNTOUCHED} "
        "No event is lost; put the version back with: sqlite3 "
        f"{shlex.quote(str(path))} \"UPDATE meta SET value = '{apparent}' WHERE key = "
        "'schema_version'\", or restore the file from a backup copy"
    )


def now() -> str:
    """The current UTC time, ISO 8601 with microseconds."""
    return datetime.now(timezone.utc).isoformat(timespec="microseconds")
