"""The lightweight git reader: commit, branch and dirty flag from one ``git status`` call.

Every evidence record carries the git state it was made in. Reading it needs no repository
object: ``git status --porcelain=v2 --branch -z --untracked-files=all`` prints the commit
(``# branch.oid``), the branch (``# branch.head``), every changed tracked file and every
untracked file, in a format git keeps stable for scripts. One subprocess, no GitPython import:
:func:`pytest_plangraph.vcs.history.git_state` is this reader, and evidence is made through it.

The answer matches GitPython's ``Repo(root)`` reading of the same tree: *root* must be the
top of a working tree (it holds ``.git``); a directory without one is not a repository, even
inside another repository's tree. A tree is dirty when a tracked file differs from HEAD (staged
or not; in a submodule too) or an untracked, not ignored file exists outside the *ignore*
prefixes (an untracked file inside a submodule changes nothing the superproject tracks).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import NamedTuple

from ..errors import GitError
from .spawn import run_git_process

STATUS_COMMAND = (
    "git",
    "status",
    "--porcelain=v2",
    "--branch",
    "-z",
    "--untracked-files=all",
    "--ignore-submodules=untracked",
)
"""What is run in the repository root (``GIT_OPTIONAL_LOCKS=0``: reading never writes the
index, so a concurrent ``git`` command never meets our lock)."""


class GitStatus(NamedTuple):
    """Where a repository stands (``vcs.GitState`` is this type)."""

    commit: str | None
    """HEAD's commit; None before the first commit or outside git."""
    branch: str | None
    """The checked-out branch; None when HEAD is detached or outside git."""
    dirty: bool
    is_repo: bool


NOT_A_REPOSITORY = GitStatus(None, None, False, False)


def read_git_status(root: Path, ignore: Iterable[str] = ()) -> GitStatus:
    """The git state of the working tree at *root* (see the module docstring); untracked files
    under the *ignore* prefixes (the evidence store and its journal files) never make it dirty.

    Raises :class:`GitError` when git is missing or refuses the repository.
    """
    if not (root / ".git").exists() and "GIT_DIR" not in os.environ:
        return NOT_A_REPOSITORY
    env = {**os.environ, "GIT_OPTIONAL_LOCKS": "0"}
    try:
        returncode, stdout, stderr = run_git_process(STATUS_COMMAND[1:], str(root), env)
    except OSError as exc:
        raise GitError(f"cannot run git to read the state of {root}: {exc}") from exc
    if returncode != 0:
        message = stderr.decode("utf-8", "replace").strip()
        if "not a git repository" in message:
            return NOT_A_REPOSITORY
        raise GitError(f"cannot read the git state of {root}: {message}")
    return parse_status(stdout.decode("utf-8", "surrogateescape"), tuple(ignore))


def parse_status(output: str, ignore: tuple[str, ...] = ()) -> GitStatus:
    """A :class:`GitStatus` from the ``-z`` output of :data:`STATUS_COMMAND`."""
    commit: str | None = None
    branch: str | None = None
    dirty = False
    records = iter(output.split("\0"))
    for record in records:
        kind, _, rest = record.partition(" ")
        if kind == "#":
            header, _, value = rest.partition(" ")
            if header == "branch.oid":
                commit = None if value == "(initial)" else value
            elif header == "branch.head":
                branch = None if value == "(detached)" else value
        elif kind in {"1", "2", "u"}:
            dirty = True
            if kind == "2":
                next(records, None)  # a rename's second field is the path it came from
        elif kind == "?" and not (ignore and rest.startswith(ignore)):
            dirty = True
    return GitStatus(commit, branch, dirty, True)
