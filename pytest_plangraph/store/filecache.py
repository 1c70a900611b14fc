"""The store's file-hash cache: each file's sha256 with the stat it was computed for, so a file
whose stat has not changed is not read again (the ``file_cache`` table; not part of the log,
never chained or exported).

Each row carries a tag: a keyed digest of its fields with this user's key
(:func:`~.localkey.local_key`), which the store file does not hold. A row written
by anything but plangraph run by this user — an ``INSERT`` of an old sha256 for a changed file's
current stat, a row copied from another store or machine — has no tag that matches, so it is
taken for a miss: the file is read and hashed again, and status and claim see its real content.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Collection, Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

from ..hashes import blake2b
from ..vcs.workspace import HashRecord
from .localkey import local_key

CacheEntry = HashRecord
"""A file's sha256 together with the stat it was computed for (the hashing layer's record)."""

_CACHE_COLUMNS = "path, inode, mtime_ns, ctime_ns, size, sha256, recorded_ns, tag"
_PERSON = b"plangraph-cache"


def row_tag(key: bytes, entry: Sequence[Any]) -> str:
    """The tag of a hash record (its seven fields, in the order of :class:`CacheEntry`): a
    keyed BLAKE2b digest, one C call — status checks thousands of rows (*person* keeps this
    use of the key from vouching for another)."""
    e = entry
    text = f"{e[0]}\0{e[1]}\0{e[2]}\0{e[3]}\0{e[4]}\0{e[5]}\0{e[6]}"
    data = text.encode("utf-8", "surrogateescape")
    return blake2b(data, key=key, person=_PERSON, digest_size=16).hexdigest()


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
        return None if row is None else _authentic(local_key(), row)

    def cache_many(self, paths: Collection[str]) -> dict[str, CacheEntry]:
        """The cached hash records of those *paths* that have one, by path (one query; when
        most of the table is wanted, reading all of it is cheaper than looking each one up)."""
        with self._reading() as con:
            total = con.execute("SELECT count(*) FROM file_cache").fetchone()[0]
            if total <= 2 * len(paths):
                rows = con.execute(f"SELECT {_CACHE_COLUMNS} FROM file_cache").fetchall()
                wanted = paths if isinstance(paths, (set, frozenset)) else set(paths)
                rows = [row for row in rows if row[0] in wanted]
            else:
                rows = con.execute(
                    f"SELECT {_CACHE_COLUMNS} FROM file_cache "
                    "WHERE path IN (SELECT value FROM json_each(?))",
                    (json.dumps(list(paths)),),
                ).fetchall()
        key = local_key()
        found = (_authentic(key, row) for row in rows)
        return {entry.path: entry for entry in found if entry is not None}

    def cache_put(self, *entries: CacheEntry) -> None:
        """Record (or replace) hash records, all in one transaction."""
        key = local_key()
        with self._transaction() as con:
            con.executemany(
                "INSERT OR REPLACE INTO file_cache "
                "(path, inode, mtime_ns, ctime_ns, size, sha256, recorded_ns, tag) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    (
                        e.path,
                        e.inode,
                        e.mtime_ns,
                        e.ctime_ns,
                        e.size,
                        e.sha256,
                        e.recorded_ns,
                        row_tag(key, e),
                    )
                    for e in entries
                ],
            )


def _authentic(key: bytes, row: Sequence[Any]) -> CacheEntry | None:
    """The record of *row* when its tag is the one this user's key gives it, else None."""
    if row[7] != row_tag(key, row):
        return None
    return CacheEntry(*row[:7])
