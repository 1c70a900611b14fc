"""Where a repository's store and plan cache are, and what tells its plan file changed:
the checks :class:`~pytest_plangraph.repository.Repository` makes before it opens them."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from .errors import UsageError
from .plan.cache import cache_dir_of
from .store.trust import local_caches_count

__all__ = ["cache_dir_for", "check_store_path", "identity", "stat_or_none"]


def cache_dir_for(store_path: Path) -> Path | None:
    """The plan cache's folder for the store at *store_path*, or None when keys are configured
    and this user's caches do not count (:func:`~.store.trust.local_caches_count`)."""
    return cache_dir_of(store_path) if local_caches_count() else None


def check_store_path(path: Path) -> None:
    """Refuse a store path that names no file a store can be: a directory (``/``, ``.``), or
    something else than a regular file (a FIFO, a socket, a device)."""
    try:
        info = path.stat()
    except OSError:  # not there (a new store), or opening it says what is wrong
        info = None
    if not path.name or (info is not None and stat.S_ISDIR(info.st_mode)):
        raise UsageError(
            f"the store path {path} is a directory; pass --store (or set PLANGRAPH_STORE) "
            "with a file path such as .plangraph/store.db"
        )
    if info is not None and not stat.S_ISREG(info.st_mode):
        raise UsageError(
            f"the store path {path} is not a regular file (a FIFO, socket or device); pass "
            "--store (or set PLANGRAPH_STORE) with a file path such as .plangraph/store.db"
        )


def stat_or_none(path: Path) -> os.stat_result | None:
    """The status of the file at *path*, None when it cannot be had."""
    try:
        return path.stat()
    except OSError:  # gone or unreadable: reading it says what is wrong
        return None


def identity(seen: os.stat_result | None) -> tuple[int, ...] | None:
    """What tells a plan file changed without reading it: size, inode and both times."""
    if seen is None:
        return None
    return (seen.st_size, seen.st_ino, seen.st_mtime_ns, seen.st_ctime_ns)
