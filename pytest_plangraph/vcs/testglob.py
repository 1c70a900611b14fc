"""The files a ``tests:`` glob of the plan could find tests in, listed from the disk.

A criterion whose ``tests:`` name a glob (``tests/test_auth_*.py::*``) is verified by the tests
the glob matched in the run that recorded its evidence. A test file added later where the glob
matches was not run by that evidence, so the evidence binds every file the glob could find
tests in (:func:`pytest_plangraph.plan.patterns.glob_files_of`) and the gate asks the disk again:
a file found now that the evidence did not bind stales it (``ARTIFACT_CHANGED``, old
``absent``).

:func:`glob_files` walks from the directory the glob's literal start names, enters only the
directories some id under which the glob could match, and lists the Python files
(``*.py``: what pytest collects tests from) a glob could match a test of. It leaves out what
pytest's default ``norecursedirs`` leaves out (hidden directories, ``__pycache__``, virtual
environments, builds) and does not follow a symlinked directory. The recording run and the
gate list with the same function, so what one binds the other finds.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from fnmatch import fnmatchcase
from typing import NamedTuple

from ..plan.paths import is_glob, normalize, path_problem
from ..plan.patterns import glob_may_enter, glob_may_name_file, test_globs

__all__ = ["NOT_ENTERED", "GlobFiles", "glob_files", "globs_files"]

NOT_ENTERED = ("*.egg", ".*", "_darcs", "build", "CVS", "dist", "node_modules", "venv", "{arch}")
"""pytest's default ``norecursedirs``, and ``__pycache__`` (below)."""


class GlobFiles(NamedTuple):
    """What :func:`glob_files` found for one glob."""

    files: tuple[str, ...]
    """The files it could find tests in (sorted)."""
    listed: tuple[str, ...] = ()
    """The directories listed to find them (sorted): a file added to one of those changes
    the directory's mtime."""
    named: tuple[str, ...] = ()
    """The file a glob whose file part is a plain path names (``tests/test_a.py::test_x*``),
    there or not: nothing is listed for it, the snapshot hashes it (missing: none)."""


def glob_files(root: str, pattern: str) -> GlobFiles:
    """The files under *root* the ``tests:`` glob *pattern* could find tests in, and the
    directories listed (see the module docstring). A glob whose literal start leaves the
    repository finds nothing."""
    head, sep, _ = pattern.partition("::")
    if sep and not is_glob(head):  # the glob is in the test's name: one file, not listed
        if path_problem(head) or normalize(head).startswith(".."):
            return GlobFiles(())
        found = os.path.isfile(os.path.join(root, head)) and head.endswith(".py")
        return GlobFiles((head,) if found else (), (), (head,))
    literal = _literal_directory(pattern)
    if literal is None:
        return GlobFiles(())
    files: list[str] = []
    listed: list[str] = []
    pending = [literal]
    while pending:  # once per directory entered: kept flat
        rel = pending.pop()
        listed.append(rel)
        prefix = "" if rel == "" else f"{rel}/"
        try:
            with os.scandir(os.path.join(root, rel) if rel else root) as listing:
                entries = list(listing)
        except OSError:
            continue  # not there (or not a directory): listed, so its appearing is seen
        for entry in entries:
            name = entry.name
            path = prefix + name
            if not _utf8(path):
                continue
            if entry.is_dir(follow_symlinks=False):
                if not _not_entered(name) and glob_may_enter(pattern, path):
                    pending.append(path)
            elif name.endswith(".py") and entry.is_file() and glob_may_name_file(pattern, path):
                files.append(path)  # a link to a file counts: pytest collects it
    return GlobFiles(tuple(sorted(files)), tuple(sorted(listed)))


def globs_files(root: str, patterns: Iterable[str]) -> dict[str, GlobFiles]:
    """:func:`glob_files` of every glob among *patterns* (each once)."""
    return {glob: glob_files(root, glob) for glob in test_globs(patterns)}


def _literal_directory(pattern: str) -> str | None:
    """The directory (``""``: the root) every file a glob could match lies under; None when
    it is not a clean path inside the repository."""
    head = pattern.split("::", 1)[0]
    cut = min((head.find(c) for c in "*?[" if c in head), default=len(head))
    directory = head[:cut].rpartition("/")[0]
    if not directory:
        return ""
    if path_problem(directory):
        return None
    clean = normalize(directory)
    return None if clean.startswith("..") else ("" if clean == "." else clean)


def _not_entered(name: str) -> bool:
    return name == "__pycache__" or any(fnmatchcase(name, p) for p in NOT_ENTERED)


def _utf8(path: str) -> bool:
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
