"""A glance at a store: its head, read with the checks of opening it, and nothing else.

What a ``status`` answered from the kept state (:mod:`pytest_plangraph.derived.kept`) needs
from the store: the store's file is checked and its schema compared with the tables this code
made (:func:`~.schemacheck.check_schema`, as :meth:`Store.open <.sqlite.Store.open>` does),
then the seq and chain hash of its last event are read. It imports none of the modules that
read or write events. Any problem is raised as the store opening raises it; a store at another
schema version (one to migrate) gives None: the caller opens it in full instead.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from typing import NamedTuple

from . import schema
from .faults import check_file, translate
from .opening import connect, schema_version
from .schemacheck import check_schema

__all__ = ["Glance", "glance"]


class Glance(NamedTuple):
    """The store's last event (0 and "" when it has none) and how many rows of its ``log``
    table come after the event at *after* (a row there that no event backs is a store edited
    by hand, which a full read reports)."""

    seq: int
    hash: str
    log_after: int


def glance(path: Path, after: int) -> Glance | None:
    """The head of the store at *path* and the ``log`` rows after event *after*; None when
    there is no store there yet or it has another schema version (StoreError or
    StoreTamperedError as opening the store says them)."""
    try:
        info = path.stat()
    except OSError:
        return None
    if info.st_size == 0:
        return None
    check_file(path)
    readonly = not os.access(path, os.W_OK)
    try:
        con = connect(path, readonly)
    except sqlite3.Error as exc:
        raise translate(exc, path, readonly=readonly) from exc
    try:
        return _read(con, path, after)
    except sqlite3.Error as exc:
        raise translate(exc, path, readonly=readonly) from exc
    finally:
        con.close()


def _read(con: sqlite3.Connection, path: Path, after: int) -> Glance | None:
    con.execute("BEGIN")  # one read transaction: the schema and the head seen together
    try:
        version = schema_version(con, path)
        if version != schema.SCHEMA_VERSION:
            return None
        check_schema(con, path, version)
        row = con.execute("SELECT seq, hash FROM events ORDER BY seq DESC LIMIT 1").fetchone()
        (log_after,) = con.execute("SELECT count(*) FROM log WHERE seq > ?", (after,)).fetchone()
    finally:
        if con.in_transaction:
            con.execute("ROLLBACK")
    seq, chain = (0, "") if row is None else (int(row[0]), str(row[1]))
    return Glance(seq, chain, int(log_after))
