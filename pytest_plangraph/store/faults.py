"""What can go wrong with a store file, said so that a person can act on it.

:func:`check_file` looks at a file's first bytes before SQLite touches it, so a foreign or truncated
file is refused without being opened for writing. :func:`translate` turns an ``sqlite3`` error into
a :class:`StoreError`; every write runs in one transaction, so a failed append leaves the store with
exactly the events it had.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from ..errors import StoreError

SQLITE_MAGIC = b"SQLite format 3\x00"
HEADER_SIZE = 100
UNTOUCHED = "The file was left untouched."


def damaged(path: Path, what: str) -> StoreError:
    """The error for a file that is not a readable plangraph store."""
    return StoreError(
        f"the store at {path} {what}. {UNTOUCHED} Restore it from a backup copy of the "
        "file, or pass --store to use another file."
    )


def check_file(path: Path) -> None:
    """Refuse a directory, a non-SQLite file or a truncated SQLite file at *path*.

    A missing or empty file is fine: it becomes a new store.
    """
    if path.is_dir():
        raise StoreError(f"the store path {path} is a directory; pass --store with a file path")
    if path.exists() and not path.is_file():  # reading a FIFO would wait for a writer
        raise StoreError(
            f"the store path {path} is not a regular file (a FIFO, socket or device); pass "
            "--store with a file path"
        )
    if not path.exists() or path.stat().st_size == 0:
        return
    try:
        with path.open("rb") as handle:
            header = handle.read(HEADER_SIZE)
    except OSError as exc:
        raise StoreError(f"cannot read the store at {path}: {exc.strerror}") from exc
    if not header.startswith(SQLITE_MAGIC):
        raise damaged(path, "is not an SQLite database (not a plangraph store)")
    if len(header) < HEADER_SIZE or _shorter_than_header_says(path, header):
        raise damaged(path, "is truncated (shorter than its own header says)")


def _shorter_than_header_says(path: Path, header: bytes) -> bool:
    # With a non-empty write-ahead log the main file may legitimately lag its header until SQLite
    # replays the log (a checkpoint killed midway), so the size check applies only without one.
    wal = path.with_name(path.name + "-wal")
    if wal.exists() and wal.stat().st_size > 0:
        return False
    page_size = int.from_bytes(header[16:18], "big")
    page_size = 65536 if page_size == 1 else page_size
    size = path.stat().st_size
    if page_size < 512 or size % page_size:
        return True
    counter_valid = header[24:28] == header[92:96]
    pages = int.from_bytes(header[28:32], "big")
    return counter_valid and size < pages * page_size


def translate(exc: sqlite3.Error, path: Path, *, readonly: bool = False) -> StoreError:
    """A :class:`StoreError` that says what failed at *path* and what to do about it."""
    text = str(exc).lower()
    if "locked" in text or "busy" in text:
        return StoreError(
            f"the store at {path} stayed locked by another process past the busy timeout; "
            "retry, or look for a stuck plangraph or pytest process. Nothing was written."
        )
    if "full" in text:
        return StoreError(
            f"the disk is full while writing the store at {path}; the store kept every event "
            "it had. Free some space and retry."
        )
    if readonly and ("readonly" in text or "read-only" in text):
        return StoreError(f"the store at {path} was opened read-only; nothing was written")
    denied = ("unable to open" in text or "disk i/o" in text) and _denied(path)
    if "readonly" in text or "read-only" in text or "permission" in text or denied:
        return StoreError(
            f"cannot write to the store at {path}: permission denied — check the permissions "
            "of the file and its directory, or pass --store to use another file"
        )
    if "unable to open" in text or "disk i/o" in text:
        return StoreError(
            f"cannot open the store at {path} ({exc}) — check that its directory exists and is "
            "writable, or pass --store to use another file"
        )
    if "not a database" in text or "malformed" in text or "corrupt" in text:
        return damaged(path, f"is damaged or not a plangraph store ({exc})")
    if "append-only" in text:
        return StoreError(f"the store at {path} refused the change: {exc}")
    return StoreError(f"the store at {path} failed: {exc}")


def _denied(path: Path) -> bool:
    # SQLite says "unable to open database file" when it cannot create the -wal or -shm file
    # beside the store; the real cause is then a directory (or file) this process cannot write.
    directory = path.parent if str(path.parent) else Path(".")
    if not os.access(directory, os.W_OK | os.X_OK):
        return True
    return path.exists() and not os.access(path, os.R_OK | os.W_OK)
