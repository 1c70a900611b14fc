"""The store's file-hash cache: each file's sha256 with the stat it was computed for, so a file
whose stat has not changed is not read again (the ``file_cache`` table; not part of the log,
never chained or exported)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Collection
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING

from ..vcs import HashRecord

CacheEntry = HashRecord
"""A file's sha256 together with the stat it was computed for (the hashing layer's record)."""

_CACHE_COLUMNS = "path, inode, mtime_ns, ctime_ns, size, sha256, recorded_ns"


class FileCache:
    """The file-hash cache methods of :class:`~pytest_plangraph.store.Store`: reads in the
    store's read connection, each write one transaction."""

    if TYPE_CHECKING:

        def _reading(self) -> AbstractContextManager[sqlite3.Connection]: ...
        def _transaction(self) -> AbstractContextManager[sqlite3.Connection]: ...

    def cache_get(self, path: str) -> CacheEntry | None:
        """The cached hash record of *path* (repository-relative), or None."""
        with self._reading() as con:
            row = con.execute(
                f"SELECT {_CACHE_COLUMNS} FROM file_cache WHERE path = ?",
                (path,),
            ).fetchone()
        return None if row is None else CacheEntry(*row)

    def cache_many(self, paths: Collection[str]) -> dict[str, CacheEntry]:
        """The cached hash records of those *paths* that have one, by path (one query; when
        most of the table is wanted, reading all of it is cheaper than looking each one up)."""
        with self._reading() as con:
            total = con.execute("SELECT count(*) FROM file_cache").fetchone()[0]
            if total <= 2 * len(paths):
                rows = con.execute(f"SELECT {_CACHE_COLUMNS} FROM file_cache").fetchall()
                wanted = paths if isinstance(paths, (set, frozenset)) else set(paths)
                return {row[0]: CacheEntry(*row) for row in rows if row[0] in wanted}
            rows = con.execute(
                f"SELECT {_CACHE_COLUMNS} FROM file_cache "
                "WHERE path IN (SELECT value FROM json_each(?))",
                (json.dumps(list(paths)),),
            ).fetchall()
        return {row[0]: CacheEntry(*row) for row in rows}

    def cache_put(self, *entries: CacheEntry) -> None:
        """Record (or replace) hash records, all in one transaction."""
        with self._transaction() as con:
            con.executemany(
                "INSERT OR REPLACE INTO file_cache "
                "(path, inode, mtime_ns, ctime_ns, size, sha256, recorded_ns) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                [
                    (e.path, e.inode, e.mtime_ns, e.ctime_ns, e.size, e.sha256, e.recorded_ns)
                    for e in entries
                ],
            )
