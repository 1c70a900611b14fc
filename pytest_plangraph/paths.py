"""Lexical rules for paths in plan files (pure): relative, forward slashes, inside the root."""

from __future__ import annotations

import functools
import posixpath
import re

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
    if path.startswith(("/", "\\")) or _DRIVE.match(path):
        return "absolute paths are not allowed; write it relative to the repository root"
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
