"""Files under the repository root: path safety on disk, expanding outputs, sha256 with a cache.

Everything else in the package sees only paths relative to the root and hex digests. Git lives
in :mod:`.history`; this module never runs it.

The hash cache follows git's index: a file whose inode, mtime, ctime and size match its record
is not read again, unless it is *racily clean* (its mtime is not clearly older than the moment
it was hashed, so a write in the same clock tick could have gone unseen).
"""

from __future__ import annotations

import functools
import os
import posixpath
import stat
import time
from collections.abc import Collection, Iterable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Any, NamedTuple, Protocol

from ..errors import UsageError
from ..hashes import sha256
from ..plan.paths import glob_pieces, is_glob, normalize, path_problem
from ..regularfile import open_regular
from ..usercache import RACY_NS
from ..values import dataclass, field

_CHUNK = 1024 * 1024

# RACY_NS (usercache's): git's racy-clean guard, with room for coarse file-system clocks; a
# cached hash is trusted only for a file whose mtime is more than this much older than the
# moment it was hashed

_SKIPPED_DIRS = frozenset({".git", ".plangraph"})

_LISTED_FROM = 32
"""A directory that :meth:`Workspace.escaping` asks about for this many paths is listed once
(finding its symlinks) instead of looking at each path."""


class HashRecord(NamedTuple):
    """A file's sha256 with the stat it was computed for and when (``time_ns``). A named tuple:
    the cache builds one per file of every output, thousands at a time."""

    path: str
    inode: int
    mtime_ns: int
    ctime_ns: int
    size: int
    sha256: str
    recorded_ns: int


class HashCache(Protocol):
    """Where hashes are kept between runs (the store's ``file_cache`` table)."""

    def cache_get(self, path: str) -> Any:
        """The record of *path* (fields of :class:`HashRecord`), or None."""

    def cache_put(self, *entries: Any) -> None:
        """Keep these :class:`HashRecord` entries, replacing older ones."""

    def cache_many(self, paths: Collection[str]) -> Mapping[str, Any]:
        """The records of those *paths* that have one, by path (one query for all)."""


@functools.lru_cache(maxsize=8192)
def _inside(root: Path, rel: str) -> bool:
    """True when *rel* under *root* resolves inside it (a symlink loop does not). Cached so a
    batch of thousands of files resolves each parent once; every batch (:meth:`Workspace.hashes`,
    :meth:`Workspace.expand`, a :func:`remembered_escapes` block) and every workspace opened
    (:meth:`Workspace.at`: a command, a pytest session) starts with an empty cache, so a
    directory swapped for a symlink between two batches, or two commands of one process, is
    seen."""
    try:
        target = (root / rel).resolve()
    except (OSError, RuntimeError):  # RuntimeError: a symlink loop (Python < 3.13)
        return False
    return target == root or root in target.parents


_ESCAPES: ContextVar[dict[tuple[Path, str], bool] | None] = ContextVar("escapes", default=None)


@contextmanager
def remembered_escapes() -> Iterator[None]:
    """Within the block, :meth:`Workspace.escapes` looks at each path on disk once: one lint
    run asks about most paths twice (an output is often its artifact criterion's path too,
    which the verifier's settings check asks about again)."""
    _inside.cache_clear()  # nor takes what an earlier command of this process found
    token = _ESCAPES.set({})
    try:
        yield
    finally:
        _ESCAPES.reset(token)


def _climbs(rel: str) -> bool:
    """True when *rel* has a ``..`` part: after a symlink, the system resolves it from the
    link's target, not from where the text says."""
    return ".." in rel and ".." in rel.split("/")


def _trusted(entry: HashRecord, info: os.stat_result) -> bool:
    """True when the cache *entry* was made for this very stat and not racily: the file's
    last change (its mtime, or its ctime when later: an mtime can be set back, and a file
    system with a coarse ctime gives two writes within one tick the same one) lies more than
    the racy window before the entry was recorded, as the status watch asks."""
    return (
        entry.inode == info.st_ino
        and entry.mtime_ns == info.st_mtime_ns
        and entry.ctime_ns == info.st_ctime_ns
        and entry.size == info.st_size
        and max(info.st_mtime_ns, info.st_ctime_ns) + RACY_NS < entry.recorded_ns
    )


@dataclass(frozen=True)
class Workspace:
    """Files under one repository root, addressed by relative POSIX paths."""

    root: Path
    ignored: frozenset[str] = frozenset()
    """Files never taken as outputs (the evidence store and its journal files)."""
    cache: Path | None = field(default=None, compare=False)
    """Where checks may keep what they found out about a file's content (the plan cache's
    folder), or None."""
    linked: set[str] = field(default_factory=set, compare=False, repr=False)
    """The paths the checks and walks found to be symbolic links: the stat they took is the
    target's, which a link made anew does not change (a caller that tells from a stat when a
    file was changed looks at the link too)."""

    @classmethod
    def at(cls, root: Path, ignored: Iterable[str] = (), cache: Path | None = None) -> Workspace:
        """A workspace rooted at *root* (resolved), taking no answer an earlier one found."""
        _inside.cache_clear()
        return cls(root.resolve(), frozenset(ignored), cache)

    def relative(self, path: Path) -> str:
        """The root-relative POSIX form of an absolute or cwd-relative *path*."""
        try:
            return path.resolve().relative_to(self.root).as_posix()
        except ValueError:
            raise UsageError(f"{path} is outside the repository root {self.root}") from None

    def escapes(self, rel: str) -> bool:
        """True when *rel* is not a clean relative path or a symlink resolves outside the root
        (inside :func:`remembered_escapes`, each path's answer is taken once)."""
        memo = _ESCAPES.get()
        if memo is None:
            return self._escapes(rel)
        key = (self.root, rel)
        found = memo.get(key)
        if found is None:
            found = memo[key] = self._escapes(rel)
        return found

    def escaping(self, paths: Iterable[str]) -> set[str]:
        """Those of *paths* that :meth:`escapes` (remembered like its answers). A directory
        holding many of them is listed once instead of looking at each path on disk."""
        memo = _ESCAPES.get()
        asked = list(dict.fromkeys(paths))
        answers: dict[str, bool] = {}
        if memo:
            answers = {rel: memo[key] for rel in asked if (key := (self.root, rel)) in memo}
        by_parent: dict[str, list[tuple[str, str]]] = {}
        for rel in asked:  # once per path a large plan names: kept flat
            if rel not in answers and not path_problem(rel) and not _climbs(rel):
                parent, _, name = normalize(rel).rpartition("/")
                by_parent.setdefault(parent, []).append((rel, name))
        for parent, group in by_parent.items():
            links = self._links_in(parent) if len(group) >= _LISTED_FROM else None
            if links is None:
                continue
            parent_escapes = bool(parent) and not _inside(self.root, parent)
            for rel, name in group:
                answers[rel] = parent_escapes or (name in links and not _inside(self.root, rel))
        for rel in asked:
            if rel not in answers:
                answers[rel] = self._escapes(rel)
        if memo is not None:
            memo.update(((self.root, rel), found) for rel, found in answers.items())
        return {rel for rel, found in answers.items() if found}

    def _links_in(self, parent: str) -> set[str] | None:
        """The names of the symlinks in the directory *parent* (one listing), or None when it
        cannot be listed."""
        try:
            with os.scandir(os.path.join(self.root, parent)) as listing:
                return {entry.name for entry in listing if entry.is_symlink()}
        except OSError:
            return None

    def _escapes(self, rel: str) -> bool:
        if path_problem(rel):
            return True
        if _climbs(rel):  # the system takes `..` after following a link: resolve it as it does
            return not _inside(self.root, rel)
        parent = posixpath.dirname(normalize(rel))
        if parent and not _inside(self.root, parent):
            return True
        # a string join and one lstat: lint asks this of every path a large plan names;
        # normalized, so that `link/` or `link/.` is the link itself, not what it points to
        full = os.path.join(self.root, normalize(rel))
        return os.path.islink(full) and not _inside(self.root, rel)

    # --- hashing -----------------------------------------------------------------------------

    def occupied(self, rel: str) -> bool:
        """True when a file is at *rel* as Python's import system would find it: a regular
        file or a link to one, wherever it leads and whether it can be read or not (where
        :meth:`hash_file` says None for some)."""
        return not path_problem(rel) and os.path.isfile(os.path.join(self.root, rel))

    def hash_file(self, rel: str) -> str | None:
        """sha256 of the file at *rel*, or None when it is missing, not a regular file (a FIFO
        would block), or escapes."""
        if self._regular(rel, None) is None:
            return None
        found = self._read(rel)
        return None if found is None else found[0]

    def _read(
        self, rel: str, seen: dict[str, os.stat_result] | None = None
    ) -> tuple[str, os.stat_result] | None:
        """sha256 of the file at *rel* (checked by the caller) and the ``fstat`` of the open
        file, taken before reading: a write during the read changes the ctime, so a cache
        record made with this stat is never trusted for the new content. *seen*, when given,
        receives the ``fstat`` taken once the bytes were read: a write during the read shows
        in its ctime (the bytes hashed may be the new ones, which the stat taken before
        reading does not tell)."""
        try:  # a file swapped for a FIFO since the check is refused, not waited on
            handle, info = open_regular(os.path.join(self.root, rel))
            with handle:
                digest = sha256(expected=info.st_size)
                while chunk := handle.read(_CHUNK):
                    digest.update(chunk)
                if seen is not None:
                    seen[rel] = os.fstat(handle.fileno())
        except OSError:
            return None
        return digest.hexdigest(), info

    def hashes(
        self,
        paths: Iterable[str],
        cache: HashCache | None = None,
        *,
        stats: Mapping[str, os.stat_result] | None = None,
        seen: dict[str, os.stat_result] | None = None,
    ) -> dict[str, str | None]:
        """sha256 of each path (None for missing ones). With *cache*, a file whose inode,
        mtime, ctime and size match its record, and that is not racily clean, is not read.

        *stats* are those of :meth:`expand`: files already known to be regular files inside
        the root, with their stat; they are neither checked nor stat'ed again. *seen*, when
        given, receives the stat each hash found stands on (the ``fstat`` of the file read,
        taken once it was read, or the stat its cache record was matched with), as of this
        call, for each path hashed.
        """
        wanted = sorted(set(paths))
        _inside.cache_clear()
        known = stats or {}
        if cache is None:
            return {rel: self._hash_checked(rel, known.get(rel), seen) for rel in wanted}
        records = cache.cache_many(wanted)
        found: dict[str, str | None] = {}
        misses: list[str] = []
        for rel in wanted:  # the warm path: two dict lookups and one comparison per file
            info = known.get(rel) or self._regular(rel, None)
            if info is None:
                found[rel] = None
                continue
            entry = records.get(rel)
            if entry is not None and _trusted(entry, info):
                found[rel] = entry.sha256
                if seen is not None:
                    seen[rel] = info
            else:
                misses.append(rel)
        if misses:
            found.update(self._hash_and_keep(misses, cache, seen))
        return found

    def _hash_checked(
        self, rel: str, info: os.stat_result | None, seen: dict[str, os.stat_result] | None
    ) -> str | None:
        if info is None and self._regular(rel, None) is None:
            return None
        found = self._read(rel, seen)
        return None if found is None else found[0]

    def _hash_and_keep(
        self,
        paths: Iterable[str],
        cache: HashCache,
        seen: dict[str, os.stat_result] | None = None,
    ) -> dict[str, str | None]:
        """Hash *paths* (regular files inside the root) and keep a record of each (*seen*:
        as :meth:`hashes` says)."""
        found: dict[str, str | None] = {}
        fresh: list[HashRecord] = []
        for rel in paths:
            recorded = time.time_ns()  # before the stat: a later write is racily clean
            read = self._read(rel, seen)
            found[rel] = None if read is None else read[0]
            if read is not None:
                sha, info = read
                key = (info.st_ino, info.st_mtime_ns, info.st_ctime_ns, info.st_size)
                fresh.append(HashRecord(rel, *key, sha, recorded))
        if fresh:
            cache.cache_put(*fresh)
        return found

    def _regular(self, rel: str, info: os.stat_result | None) -> os.stat_result | None:
        """The stat of the regular file at *rel*, or None when it is missing, something else,
        or escapes (the checks of :meth:`escapes`, with one ``lstat`` unless *info* is one)."""
        if path_problem(rel) or (_climbs(rel) and not _inside(self.root, rel)):
            return None
        parent = posixpath.dirname(normalize(rel))
        if parent and not _inside(self.root, parent):
            return None
        full = os.path.join(self.root, rel)
        try:
            info = os.lstat(full) if info is None else info
            if stat.S_ISLNK(info.st_mode):
                self.linked.add(rel)
                if not _inside(self.root, rel):
                    return None
                info = os.stat(full)
        except OSError:
            return None
        return info if stat.S_ISREG(info.st_mode) else None

    # --- expanding outputs -------------------------------------------------------------------

    def expand(
        self, patterns: Iterable[str], stats: dict[str, os.stat_result] | None = None
    ) -> list[str]:
        """Files named by *patterns*: a directory gives every file under it, a glob its
        matches; a plain path that does not exist is kept (its absence is a change too).

        With *stats*, the stat of every file found that is a regular file inside the root
        goes into it (for :meth:`hashes`); a file of a walked directory costs one ``lstat``.
        """
        _inside.cache_clear()
        return self._expand(patterns, stats)

    def expand_each(
        self,
        patterns: Mapping[str, Iterable[str]],
        stats: dict[str, os.stat_result] | None = None,
    ) -> dict[str, tuple[str, ...]]:
        """:meth:`expand` of each entry of *patterns* (say, every node's outputs) as one batch:
        a parent directory shared by thousands of outputs is resolved once."""
        _inside.cache_clear()
        top = os.fspath(self.root)
        return {key: tuple(self._expand(each, stats, top)) for key, each in patterns.items()}

    def _expand(
        self,
        patterns: Iterable[str],
        stats: dict[str, os.stat_result] | None,
        top: str | None = None,
    ) -> list[str]:
        top = os.fspath(self.root) if top is None else top
        found: set[str] = set()
        for pattern in patterns:  # once per output of every node of a large plan: kept flat
            if path_problem(pattern):
                continue
            if is_glob(pattern):
                found.update(self._glob(pattern, stats))
                continue
            rel = normalize(pattern)
            full = f"{top}/{rel}"
            try:
                info: os.stat_result | None = os.lstat(full)
            except OSError:
                info = None
            linked = info is not None and stat.S_ISLNK(info.st_mode) and os.path.isdir(full)
            if linked or (info is not None and stat.S_ISDIR(info.st_mode)):
                found.update(self._walk(rel, stats))
                continue
            found.add(rel)
            if info is None or stats is None:
                continue
            if stat.S_ISREG(info.st_mode):  # the common case: only the parent can escape
                parent = rel.rpartition("/")[0]
                if not parent or _inside(self.root, parent):
                    stats[rel] = info
            elif (checked := self._regular(rel, info)) is not None:
                stats[rel] = checked
        return sorted(found) if len(found) > 1 else list(found)

    def _glob(self, pattern: str, stats: dict[str, os.stat_result] | None) -> Iterator[str]:
        """The files *pattern* names, found by :func:`~pytest_plangraph.vcs.globwalk.matches`
        (never a search per combination of wildcards); a directory the glob matches gives
        every file under it."""
        from .globwalk import matches  # a plan naming plain paths alone walks no glob

        pieces = glob_pieces(pattern)
        for rel, directory in matches(self.root, pieces, self._skipped, self.escapes):
            if directory:
                yield from self._walk(rel, stats)  # which refuses a link out
            elif (info := self._regular(rel, None)) is not None:
                if stats is not None:
                    stats[rel] = info
                yield rel

    def _skipped(self, rel: str, name: str) -> bool:
        return name in _SKIPPED_DIRS or rel in self.ignored

    def _walk(self, top: str, stats: dict[str, os.stat_result] | None = None) -> list[str]:
        """Every file under the directory *top* (one ``scandir`` per directory): symlinked
        directories are not entered, a symlinked file counts only when it resolves inside the
        root; ``.git``, ``.plangraph`` and the store are skipped. With *stats*, each file's
        stat (of the target, for a link) goes into it."""
        if top != "." and self.escapes(top):
            return []
        found: list[str] = []
        stack = [top]
        while stack:
            current = stack.pop()
            prefix = "" if current == "." else f"{current}/"
            try:
                with os.scandir(os.path.join(self.root, current)) as listing:
                    entries = list(listing)
            except OSError:
                continue
            for entry in entries:  # runs once per file of every output directory: kept flat
                rel = prefix + entry.name
                if entry.name in _SKIPPED_DIRS or rel in self.ignored:
                    continue
                if entry.is_dir(follow_symlinks=False):
                    stack.append(rel)
                elif entry.is_file(follow_symlinks=False):
                    found.append(rel)
                    if stats is not None:
                        _stat_into(stats, rel, entry)
                elif entry.is_symlink() and entry.is_file() and not self.escapes(rel):
                    found.append(rel)
                    self.linked.add(rel)
                    if stats is not None:
                        _stat_into(stats, rel, entry)
        return found


def _stat_into(stats: dict[str, os.stat_result], rel: str, entry: os.DirEntry[str]) -> None:
    """Put the stat of the regular file *entry* into *stats*, unless it is gone or no longer
    a regular file (then :meth:`Workspace.hashes` checks it again)."""
    try:
        info = entry.stat()  # follows a link, which is known to stay inside the root
    except OSError:
        return
    if stat.S_ISREG(info.st_mode):
        stats[rel] = info
