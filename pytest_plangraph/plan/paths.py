"""Lexical rules for paths in plan files (pure): relative, forward slashes, inside the root."""

from __future__ import annotations

import functools
import posixpath
from fnmatch import fnmatchcase


@functools.lru_cache(maxsize=1 << 16)
def path_problem(path: str) -> str | None:
    """Why *path* may not appear in a plan, or None when it is a clean relative path.

    Remembered per text: linting, expanding and hashing ask it of the same paths again and
    again, thousands at a time in a large plan."""
    if not path or path.strip() != path:
        return "empty or padded with spaces"
    if "\0" in path:
        return "contains a NUL character, which no file name can hold"
    if path.startswith(("/", "\\")):
        return "absolute paths are not allowed; write it relative to the repository root"
    if path[1:2] == ":" and path[0].isascii() and path[0].isalpha():  # a drive: ``C:``
        return (
            f"{path[:2]!r} is a drive on Windows, where the path would leave the repository; "
            "write it relative to the repository root without a colon after its first letter"
        )
    if "\\" in path:
        return "use '/' as the separator"
    normal = posixpath.normpath(path)
    if normal == ".." or normal.startswith("../"):
        return "climbs out of the repository with '..'; write it relative to the repository root"
    return None


UTF8_HINT = "rename it (plangraph keeps paths as UTF-8 text)"
"""What a message about a path that is not UTF-8 tells to do."""

COLLECT = "/::collect"
"""What the subject path of what a run could collect under a folder holds between the folder
and the run's settings (:func:`pytest_plangraph.vcs.testglob.collect_key`): no file's path
holds ``::``, so no file is hashed or watched for it."""


def not_utf8(path: str) -> str | None:
    """None when *path* (a name read from the disk, undecodable bytes kept as surrogates) is
    UTF-8 text; else the path as it can be shown, those bytes replaced (a lone surrogate no
    byte read stands for, as in a name a test gave, written as its escape)."""
    if path.isascii():
        return None
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        try:
            return path.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
        except UnicodeEncodeError:
            return path.encode("utf-8", "backslashreplace").decode("utf-8")
    return None


def normalize(path: str) -> str:
    """``a/./b/../c`` → ``a/c`` (call only on paths without a :func:`path_problem`)."""
    return posixpath.normpath(path)


def is_glob(path: str) -> bool:
    """True when *path* holds glob characters."""
    return "*" in path or "?" in path or "[" in path


def glob_match(pattern: str, path: str) -> bool:
    """True when the clean relative *path* is among the files *pattern* names, as
    :meth:`Workspace.expand <pytest_plangraph.vcs.history.Workspace.expand>` expands a plan's glob:
    ``*``, ``?`` and ``[...]`` stay within one name, ``**`` spans any number of directories
    (none included), and a directory the glob matches stands for every file under it.

    The path's names are read once, left to right, keeping the set of places in the pattern
    that can have been reached (:func:`glob_step`), so its cost is the path's length times the
    pattern's, never exponential, however many ``**`` the pattern holds."""
    pieces = glob_pieces(pattern)
    end = len(pieces)
    if not end:  # the root itself: every file
        return True
    states = glob_start(pieces)
    for name in path.split("/"):
        states = glob_step(pieces, states, name)
        if end in states:
            return True
        if not states:
            return False
    return False


@functools.lru_cache(maxsize=1024)
def glob_pieces(pattern: str) -> tuple[str, ...]:
    """The names of *pattern*, normalized, with ``**`` written twice or more in a row kept
    once (they name the same paths)."""
    clean = normalize(pattern) if not path_problem(pattern) else pattern
    pieces: list[str] = []
    for part in clean.split("/"):
        if part not in ("", ".") and not (part == "**" and pieces[-1:] == ["**"]):
            pieces.append(part)
    return tuple(pieces)


def glob_start(pieces: tuple[str, ...], at: int = 0) -> frozenset[int]:
    """The places in *pieces* reachable before any name is read, from the place *at*."""
    return _past_globstars(pieces, {at})


def glob_step(pieces: tuple[str, ...], states: frozenset[int], name: str) -> frozenset[int]:
    """The places in *pieces* reachable after reading one more *name* from *states*; the
    place ``len(pieces)`` means the names read so far match the whole pattern."""
    reached: set[int] = set()
    for i in states:
        if i == len(pieces):
            continue
        piece = pieces[i]
        if piece == "**":
            reached.add(i)
        elif fnmatchcase(name, piece):
            reached.add(i + 1)
    return _past_globstars(pieces, reached)


def _past_globstars(pieces: tuple[str, ...], states: set[int]) -> frozenset[int]:
    """*states* plus the places a ``**`` matching no directory leads to."""
    found = set(states)
    for i in sorted(states):
        while i < len(pieces) and pieces[i] == "**":
            i += 1
            found.add(i)
    return frozenset(found)
