"""What the files were when an answer was kept, and whether they still are: the watch of
``status``'s kept answer (:mod:`pytest_plangraph.derived.kept`) and of lint's
(:mod:`pytest_plangraph.lint.kept`).

A watch lists every file the answer read (the snapshot's paths, each with its ``lstat``
signature and sha256, or none when it was missing), the directories above them (a directory
swapped for a symlink changes which file a path names), and every directory that expanding an
output walked, the whole tree of a directory a glob matches (a file added to or removed from
it changes its mtime, and its ctime too when the mtime is set back, and so what the output
expands to). Whether the watch holds is answered with one ``lstat`` per entry; a file whose
signature changed, or that was written too close to the moment it was hashed to trust its
signature (git's racy-clean rule, as the hash cache applies it), is hashed again and holds
when its bytes are the same. A watch that cannot be made (a symlink among the files or to a
directory an output walks, a directory changed while it was walked) is no watch: nothing is
kept.
"""

from __future__ import annotations

import os
import posixpath
import stat
from collections.abc import Iterable, Mapping, Sequence
from fnmatch import fnmatchcase

from ..hashes import sha256
from ..plan.paths import COLLECT, glob_pieces, is_glob, path_problem
from ..regularfile import open_regular
from ..usercache import RACY_NS
from ..values import dataclass

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "Seen",
    "changed_files",
    "file_entry",
    "file_holds",
    "file_signature",
    "make_watch",
    "sha256_of",
]

_CHUNK = 1024 * 1024


def make_watch(
    root: str,
    files: Mapping[str, str | None],
    outputs: Iterable[str],
    started_ns: int,
    previous: Seen | None = None,
    listed: Iterable[str] = (),
) -> dict[str, Any] | None:
    """The watch of *files* (path under *root* → the sha256 the answer used, None for a file
    missing) hashed no earlier than *started_ns*, and of the directories the output patterns
    *outputs* walk; None when no watch can stand for them.

    *previous* is what :func:`changed_files` found of an older watch of the same outputs in
    this process: its entries that were found as they were kept, by their ``lstat`` alone, and
    whose sha256 is the one the answer used, are taken as they are (they say what the file was
    when it was looked at, and were trusted then: a file changed since has another signature,
    and the next look hashes it), and so are its directories (found unchanged).

    *listed* are directories whose listing the answer read (where the ``tests:`` globs looked
    for test files, and the folders a recording run could collect tests in: a
    :func:`~pytest_plangraph.vcs.testglob.collect_key` subject of *files* is no file, and is
    watched through them): each is watched by its mtime and ctime, as the directories an
    output walks are."""
    entries: list[list[Any]] = []
    parents: dict[str, None] = {}
    kept_files: dict[str, list[Any]] = {}
    kept_dirs: dict[str, list[Any]] = {}
    if previous is not None:
        kept_files = {e[0]: e for e in previous.watch["files"] if e[0] not in previous.fresh}
        kept_dirs = {d[0]: d for d in previous.watch["dirs"]}
    for rel, sha in sorted(files.items()):  # once per file of a large plan: kept flat
        if COLLECT in rel:  # what a test folder holds: its folders are among *listed*
            continue
        entry = kept_files.get(rel)
        if entry is None or entry[2] != sha or not entry[3]:
            entry = file_entry(root, rel, sha, started_ns)
            if entry is None:
                return None
        entries.append(entry)
        parent = posixpath.dirname(rel)
        while parent and parent not in parents:
            parents[parent] = None
            parent = posixpath.dirname(parent)
    dirs = []
    for rel in parents:
        if rel in kept_dirs:
            dirs.append(kept_dirs[rel])
            continue
        info = _lstat(os.path.join(root, rel))
        if info is not None and stat.S_ISLNK(info.st_mode):
            return None
        dirs.append([rel, *((info.st_ino, info.st_mode) if info is not None else ())])
    walked = previous.watch["walked"] if previous is not None else None
    if walked is None:
        walked = _walked(root, outputs, started_ns, listed)
        if walked is None:
            return None
    return {"files": entries, "dirs": dirs, "walked": walked}


@dataclass(frozen=True)
class Seen:
    """What :func:`changed_files` found of a *watch*: the files it did not find as kept by
    their ``lstat`` alone (*fresh*: changed, hashed again, or written too recently to trust),
    when every directory it names was found unchanged."""

    watch: Mapping[str, Any]
    fresh: frozenset[str]

    def held(self) -> dict[str, str | None]:
        """The sha256 of each watched file found as kept by its ``lstat`` (None: missing)."""
        fresh = self.fresh
        return {e[0]: e[2] for e in self.watch["files"] if e[0] not in fresh}


def changed_files(
    root: str, watch: Mapping[str, Any], seen: list[Seen] | None = None
) -> list[str] | None:
    """The watched files whose bytes (or presence) are not what the watch says, in its order;
    None when a directory the watch names changed (the files an output names may have).
    *seen*, when given, gets what was found (:class:`Seen`) unless a directory changed (or
    cannot be looked at: a folder above it made a link loop, say)."""
    try:
        for rel, *kept in watch["dirs"]:
            info = _lstat(os.path.join(root, rel))
            now = [] if info is None else [info.st_ino, info.st_mode]
            if now != kept:
                return None
        for rel, *kept in watch["walked"]:
            info = _lstat(os.path.join(root, rel) if rel else root)
            now = [] if info is None else _folder_signature(info)
            if now != kept:
                return None
    except OSError:
        return None
    changed = []
    fresh = []
    prefix = os.path.join(root, "")
    lstat = os.lstat
    for rel, sig, sha, trusted in watch["files"]:  # once per file of a large plan: kept flat
        if trusted and sig is not None:
            try:
                info = lstat(prefix + rel)
            except OSError:
                info = None
            if info is not None and sig == [
                info.st_ino,
                info.st_mtime_ns,
                info.st_ctime_ns,
                info.st_size,
                info.st_mode,
            ]:
                continue
        if not file_holds(root, rel, sig, sha, trusted):
            changed.append(rel)
            fresh.append(rel)
        elif sig is not None or not trusted:  # hashed again, or not to be trusted by its lstat
            fresh.append(rel)
    if seen is not None:
        seen.append(Seen(watch, frozenset(fresh)))
    return changed


def file_signature(info: os.stat_result) -> list[int]:
    """What tells a file changed without reading it: inode, mtime, ctime, size and mode."""
    return [info.st_ino, info.st_mtime_ns, info.st_ctime_ns, info.st_size, info.st_mode]


def sha256_of(path: str) -> str | None:
    """The sha256 of the regular file at *path*, None when it is not one (or cannot be read);
    a FIFO put in its place is not waited for."""
    try:
        handle, info = open_regular(path)
        with handle:
            digest = sha256(expected=info.st_size)
            while chunk := handle.read(_CHUNK):
                digest.update(chunk)
    except OSError:
        return None
    return digest.hexdigest()


def file_entry(root: str, rel: str, sha: str | None, started_ns: int) -> list[Any] | None:
    """``[rel, signature or None, sha, trusted]``; None for a file the watch cannot stand for
    (a symlink, whose target can change under an unchanged link, or one that cannot be
    looked at)."""
    full = os.path.join(root, rel)
    try:
        info = os.lstat(full)
    except (FileNotFoundError, NotADirectoryError):
        return [rel, None, sha, True] if sha is None else None
    except OSError:
        return None
    if stat.S_ISLNK(info.st_mode) or (sha is not None) != stat.S_ISREG(info.st_mode):
        return None  # a regular file without a sha256 escapes the root or cannot be read
    # written since the hashing began, or within the racy window before it: the signature
    # may belong to other bytes than those hashed, so a hit hashes it again
    trusted = max(info.st_mtime_ns, info.st_ctime_ns) + RACY_NS < started_ns
    return [rel, file_signature(info), sha, trusted]


def file_holds(
    root: str, rel: str, sig: Sequence[int] | None, sha: str | None, trusted: bool
) -> bool:
    full = os.path.join(root, rel)
    try:
        info = _lstat(full)
    except OSError:  # cannot be looked at (a link loop on the way): not as it was
        return False
    if info is None or sig is None:
        return info is None and sig is None
    if trusted and file_signature(info) == list(sig):
        return True
    if sha is None:  # not a file then (a directory, a FIFO): it holds while it is none now
        return not stat.S_ISREG(info.st_mode) and not stat.S_ISLNK(info.st_mode)
    return stat.S_ISREG(info.st_mode) and sha256_of(full) == sha


def _lstat(path: str) -> os.stat_result | None:
    try:
        return os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None


def _walked(
    root: str, outputs: Iterable[str], started_ns: int, listed: Iterable[str] = ()
) -> list[list[Any]] | None:
    """Every directory expanding *outputs* walks (a directory output's tree; a glob's from its
    last plain directory down, as deep as its pieces go, or all the way under ``**``), and
    each directory of *listed*, with its inode, mode, mtime and ctime (a directory not there: its
    path alone); None when one changed too recently to trust its mtime, or is a symlink."""
    found: dict[str, list[Any]] = {}
    for rel in listed:
        if not _walk(root, rel, 0, started_ns, found):
            return None
    for pattern in dict.fromkeys(outputs):
        if path_problem(pattern):
            continue
        pieces = glob_pieces(pattern)
        plain = next((i for i, piece in enumerate(pieces) if is_glob(piece)), len(pieces))
        base = "/".join(pieces[:plain])
        depth: int | None = None
        if plain == len(pieces):  # a plain path: walked only when it is a directory
            info = _lstat(os.path.join(root, base))
            if (
                info is not None
                and stat.S_ISLNK(info.st_mode)
                and os.path.isdir(os.path.join(root, base))
            ):
                return None  # a link to a directory: what it names can change under it
            if info is None or not stat.S_ISDIR(info.st_mode):
                continue
        elif "**" not in pieces[plain:]:
            depth = len(pieces) - plain - 1
        last = pieces[-1] if depth is not None else None
        if not _walk(root, base, depth, started_ns, found, last):
            return None
    return list(found.values())


def _walk(
    root: str,
    top: str,
    depth: int | None,
    started_ns: int,
    found: dict[str, list[Any]],
    last: str | None = None,
) -> bool:
    """Put every directory under *top*, *depth* levels deep (None: all), into *found*; the
    directories the glob piece *last* matches at the bottom level are walked whole (a glob
    that matches a directory names every file under it). False when one cannot be trusted."""
    pending = [(top, depth)]
    while pending:
        rel, left = pending.pop()
        full = os.path.join(root, rel) if rel else root
        info = _lstat(full)
        if info is None:
            found.setdefault(rel, [rel])
            continue
        # an mtime older than the racy window: any later change to the listing gives it
        # another (its ctime is watched for an mtime set back, not judged young or old)
        if stat.S_ISLNK(info.st_mode) or info.st_mtime_ns + RACY_NS >= started_ns:
            return False
        if not stat.S_ISDIR(info.st_mode):
            found.setdefault(rel, [rel, *_folder_signature(info)])
            continue
        found[rel] = [rel, *_folder_signature(info)]
        if left == 0 and last is None:
            continue
        try:
            names = os.listdir(full)
        except OSError:
            return False
        if left == 0:  # the bottom: a directory the last piece matches is walked whole
            names = [name for name in names if fnmatchcase(name, str(last))]
        below = None if left is None or left == 0 else left - 1
        for name in names:
            kind = _kind(full, name)
            if kind == "link":  # a link to a directory: what it names can change under it
                return False
            if kind == "dir":
                pending.append((posixpath.join(rel, name), below))
    return True


def _folder_signature(info: os.stat_result) -> list[int]:
    """What tells a walked directory's listing changed: inode, mode, mtime and ctime (a
    listing changed and its mtime set back with ``utime`` still has another ctime)."""
    return [info.st_ino, info.st_mode, info.st_mtime_ns, info.st_ctime_ns]


def _kind(parent: str, name: str) -> str:
    """``dir`` for a directory, ``link`` for a symlink to one, else ``other``."""
    path = os.path.join(parent, name)
    info = _lstat(path)
    if info is None:
        return "other"
    if stat.S_ISDIR(info.st_mode):
        return "dir"
    return "link" if stat.S_ISLNK(info.st_mode) and os.path.isdir(path) else "other"
