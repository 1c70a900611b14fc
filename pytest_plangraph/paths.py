"""Lexical rules for paths in plan files (pure): relative, forward slashes, inside the root."""

from __future__ import annotations

import functools
import posixpath
import re
from fnmatch import fnmatchcase

_DRIVE = re.compile(r"^[A-Za-z]:")


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
    if _DRIVE.match(path):
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


def normalize(path: str) -> str:
    """``a/./b/../c`` → ``a/c`` (call only on paths without a :func:`path_problem`)."""
    return posixpath.normpath(path)


def is_glob(path: str) -> bool:
    """True when *path* holds glob characters."""
    return "*" in path or "?" in path or "[" in path


def glob_match(pattern: str, path: str) -> bool:
    """True when the clean relative *path* is among the files *pattern* names, as
    :meth:`pathlib.Path.glob` expands a plan's glob: ``*``, ``?`` and ``[...]`` stay within one
    name, ``**`` spans any number of directories (none included), and a directory the glob
    matches stands for every file under it."""
    pieces = _glob_pieces(pattern)
    if not pieces:  # the root itself: every file
        return True
    parts = tuple(path.split("/"))
    return any(_match(pieces, parts[:depth]) for depth in range(1, len(parts) + 1))


@functools.lru_cache(maxsize=1024)
def _glob_pieces(pattern: str) -> tuple[str, ...]:
    clean = normalize(pattern) if not path_problem(pattern) else pattern
    return tuple(part for part in clean.split("/") if part not in ("", "."))


def _match(pieces: tuple[str, ...], parts: tuple[str, ...]) -> bool:
    if not pieces:
        return not parts
    head, rest = pieces[0], pieces[1:]
    if head == "**":
        return any(_match(rest, parts[i:]) for i in range(len(parts) + 1))
    return bool(parts) and fnmatchcase(parts[0], head) and _match(rest, parts[1:])
