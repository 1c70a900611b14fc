"""The check that a store file holds exactly the SQL objects plangraph made, and nothing else.

The store file can be written by anyone who can write the repository, an agent included, and
SQLite runs the SQL that the file itself holds: its views, its triggers (inside our own writes)
and its indexes (which answer our queries). A view ``log_source`` replaced by hand would let the
``log`` table's check compare forged rows with themselves; a trigger planted on ``events`` could
drop CI's signed failures inside CI's own write. So before a store is read or written, its
``sqlite_master`` is compared with the exact set of (type, name, table, SQL text) that the schema
of its version makes, and any table, view, trigger or index that is extra, missing or changed is
refused with ``STORE_TAMPERED`` naming the object. The one exception is an append-only
trigger removed: it runs nothing, the chain exposes any edit it would have stopped, and audit
reports it as ``APPEND_ONLY_DISABLED`` (one put back must have its exact text again).

The expected sets are made once, each only when needed, by running the schema's own SQL in an
in-memory database, and kept between runs in the per-user cache, tagged with this user's key
(:func:`~.derived.write_tagged`) under the sha256 of the scripts, the SQLite library's version
and the package's code (a file that is not the one kept, or kept for other scripts, is made
again; deleting it changes no answer; with keys configured none is kept or read, as for
every cache of this user's): a store created as a new store is now and migrated by
any later migration, or created at schema 1 and migrated in place (SQLite rewrites a table's
text when a column is added, so the two differ). SQLite's statistics tables (``sqlite_stat1``,
``sqlite_stat4``, made by ``ANALYZE``) are allowed: they steer which index answers a query,
never what the answer is.

An index whose text is right but whose entries are not (``PRAGMA writable_schema``) is not seen
here; the gate reads nothing through an index it trusts for security, and ``plangraph audit``
runs ``PRAGMA integrity_check``, which compares every index with its table.
"""

from __future__ import annotations

import sqlite3
from functools import cache
from pathlib import Path
from typing import Any

from ..errors import StoreTamperedError
from . import schema

SchemaObject = tuple[str, str, str, str | None]
"""A row of ``sqlite_master``: type, name, table name and SQL text (None for an autoindex)."""

_ALLOWED = frozenset({"sqlite_stat1", "sqlite_stat4"})
"""Objects SQLite itself may add that change no answer (statistics for the query planner)."""

_QUERY = "SELECT type, name, tbl_name, sql FROM sqlite_master"


@cache
def _objects(scripts: tuple[str, ...]) -> frozenset[SchemaObject] | None:
    """The objects *scripts* make in an empty database, None when they cannot run in turn:
    as kept (:data:`KEPT`) for these scripts, this SQLite and this code, else made. With keys
    configured no shape is kept or read: the user's key that tags it can be read by any
    process of this user, an agent's included (:func:`~.trust.local_caches_count`)."""
    from .trust import local_caches_count

    if not local_caches_count():
        return _made(scripts)
    key = _shape_key(scripts)
    kept = _kept_shapes()
    found = kept.get(key)
    shape = _shape_of(found) if found is not None else None
    if shape is not None:
        return shape
    shape = _made(scripts)
    if shape is not None:
        kept[key] = sorted(shape, key=lambda row: (row[0], row[1], row[2], row[3] or ""))
        _keep_shapes(dict(list(kept.items())[-_KEEP:]))
    return shape


KEPT = "schema-shapes.json"
"""The kept shapes' file in the per-user cache folder (:func:`~..usercache.folder`)."""

_PERSON = b"plangraph-schema"
_KEEP = 8


def _shape_key(scripts: tuple[str, ...]) -> str:
    """What the shape of *scripts* is kept under (a code fingerprint unique to the process,
    when the package's files cannot be read, keeps it for that process alone)."""
    from ..codehash import code_fingerprint
    from ..hashes import sha256_hex

    text = "\0".join((sqlite3.sqlite_version, code_fingerprint(), *scripts))
    return sha256_hex(text.encode("utf-8", "surrogatepass"))


def _kept_path() -> Path | None:
    from ..usercache import folder

    path = Path(folder()) / KEPT
    return path if path.is_absolute() else None


def _kept_shapes() -> dict[str, Any]:
    """The shapes kept (by :func:`_shape_key`), or none."""
    from .derived import read_tagged

    path = _kept_path()
    found = None if path is None else read_tagged(path, _PERSON)
    return found if isinstance(found, dict) else {}


def _keep_shapes(shapes: dict[str, Any]) -> None:
    from .derived import write_tagged

    path = _kept_path()
    if path is not None:
        write_tagged(path, shapes, _PERSON)


def _shape_of(rows: Any) -> frozenset[SchemaObject] | None:
    """The shape *rows* (as kept) name, or None when they are not rows of ``sqlite_master``."""
    if not isinstance(rows, list):
        return None
    found: list[SchemaObject] = []
    for row in rows:
        if not (isinstance(row, list) and len(row) == 4):
            return None
        kind, name, table, sql = row
        if not (isinstance(kind, str) and isinstance(name, str) and isinstance(table, str)):
            return None
        if sql is not None and not isinstance(sql, str):
            return None
        found.append((kind, name, table, sql))
    return frozenset(found)


def _made(scripts: tuple[str, ...]) -> frozenset[SchemaObject] | None:
    """The objects *scripts* make in a new database in memory (None: they cannot run)."""
    con = sqlite3.connect(":memory:")
    try:
        for script in scripts:
            for statement in schema.statements(script):
                con.execute(statement)
        return frozenset(con.execute(_QUERY).fetchall())
    except sqlite3.Error:  # a migration of what the store was not created without
        return None
    finally:
        con.close()


def _paths(version: int) -> list[tuple[str, ...]]:
    """The scripts that make a store of schema *version*, the most common first: made as a
    new store is (:data:`~.schema.CREATE`) and migrated since by any later migrations, or made
    by schema 1 and migrated up to *version*."""
    migrations = tuple(schema.MIGRATIONS.get(target, "") for target in range(2, version + 1))
    made = [(schema.CREATE, *migrations[n:]) for n in range(len(migrations), -1, -1)]
    return [*made, (schema.SCHEMA_1, *migrations)]


def expected(version: int) -> list[frozenset[SchemaObject]]:
    """The sets of objects a store of schema *version* may hold (see :func:`_paths`)."""
    shapes = (_objects(path) for path in _paths(version))
    return list(dict.fromkeys(shape for shape in shapes if shape is not None))


def check_schema(con: sqlite3.Connection, path: Path, version: int) -> None:
    """Raise :class:`~pytest_plangraph.errors.StoreTamperedError` when the store at *path*
    (of schema *version*) holds a table, view, trigger or index that its schema does not make,
    lacks one, or holds one whose SQL differs: the first such object is named. Each shape is
    made only when the ones before it did not match (a store made today matches the first)."""
    found = frozenset(row for row in con.execute(_QUERY).fetchall() if row[1] not in _ALLOWED)
    for scripts in _paths(version):
        shape = _objects(scripts)
        if shape is not None and _holds(shape, found):
            return
    closest = min(expected(version), key=lambda shape: len(shape ^ found))
    raise StoreTamperedError(_message(path, closest, found), 0, "")


def _holds(shape: frozenset[SchemaObject], found: frozenset[SchemaObject]) -> bool:
    """Whether *found* is *shape*, short of some append-only triggers: those only keep a hand
    from editing events in place, which the chain shows anyway; ``plangraph audit`` reports
    each one missing (``APPEND_ONLY_DISABLED``)."""
    missing = shape - found
    return found <= shape and all(
        row[0] == "trigger" and row[1] in schema.TRIGGERS for row in missing
    )


def _message(path: Path, want: frozenset[SchemaObject], found: frozenset[SchemaObject]) -> str:
    names = {(kind, name) for kind, name, _, _ in want}
    changed = sorted(row for row in found - want if (row[0], row[1]) in names)
    extra = sorted(row for row in found - want if (row[0], row[1]) not in names)
    have = {(kind, name) for kind, name, _, _ in found}
    missing = sorted(row for row in want if (row[0], row[1]) not in have)
    if changed:
        kind, name = changed[0][:2]
        what = f"its {kind} {name} is not the one plangraph created (its SQL was changed)"
    elif extra:
        kind, name = extra[0][:2]
        what = f"it holds a {kind} {name} that plangraph did not create"
    else:
        kind, name = missing[0][:2]
        what = f"its {kind} {name} was removed"
    return (
        f"the store at {path} was edited outside plangraph: {what}. SQLite runs the SQL a store "
        "file holds, so nothing is read from or written to this one; run `sqlite3 "
        f"{path} .schema` to see it, and restore the store from a copy you trust"
    )


def confirm_stored(
    con: sqlite3.Connection, path: Path, after_seq: int, rows: list[tuple[int, str]]
) -> None:
    """Raise :class:`~pytest_plangraph.errors.StoreTamperedError` unless the events after
    *after_seq* and their ``log`` rows are exactly *rows* (seq, id), just inserted: a write
    that SQLite reports done but that something in the file dropped or changed is not kept
    (the caller's transaction is rolled back)."""
    if not rows:  # nothing was inserted
        return
    stored = con.execute("SELECT seq, id FROM events WHERE seq > ? ORDER BY seq", (after_seq,))
    logged = con.execute("SELECT seq, id FROM log WHERE seq > ? ORDER BY seq", (after_seq,))
    events, log = [tuple(row) for row in stored], [tuple(row) for row in logged]
    if events == rows and log == rows:
        return
    kept = set(events) & set(log)
    lost = next((row for row in rows if row not in kept), rows[0])
    raise StoreTamperedError(
        f"event {lost[0]} ({lost[1][:12]}) was written to the store at {path}, but the store "
        "did not keep it (or its log row) as written: the file holds SQL that changes writes. "
        "Nothing was recorded; restore the store from a copy you trust",
        lost[0],
        lost[1],
    )
