"""Git, the only git in the project: the state of the repository, changed paths between
revisions and the working tree, the commits behind them, files as they were at a revision.
The state comes from :mod:`.gitstate` (one ``git status`` call); the rest uses GitPython.

Everything returns plain values (shas, root-relative POSIX paths) and every git failure is a
:class:`GitError` with a message a person can act on. Files on disk and their hashes are
:mod:`.workspace`'s; its names are re-exported here for existing imports.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from .errors import GitError
from .gitstate import GitStatus as GitState
from .gitstate import read_git_status
from .workspace import RACY_NS, HashCache, HashRecord, Workspace, find_root, read_text

__all__ = [
    "EMPTY_TREE",
    "RACY_NS",
    "Change",
    "GitState",
    "HashCache",
    "HashRecord",
    "Workspace",
    "changed_paths",
    "commits_since",
    "environ_flag",
    "file_at",
    "find_root",
    "git_state",
    "is_ancestor",
    "last_commit_touching",
    "last_commits",
    "read_text",
    "revision_exists",
]


def environ_flag(name: str) -> bool:
    """True when the environment variable *name* is set to a true-ish value."""
    return os.environ.get(name, "").lower() in {"1", "true", "yes", "on"}


def git_state(root: Path, ignore: Iterable[str] = ()) -> GitState:
    """The git state of the repository at *root*; outside git, an empty state (hash-only mode).

    Untracked files under the *ignore* prefixes (the evidence store and its journal files) do
    not make the tree dirty: recording evidence must not change the verdict on the tree. One
    ``git status`` call (:mod:`.gitstate`), no repository object.
    """
    return read_git_status(root, ignore)


# --- changes between revisions ---------------------------------------------------------------

ChangeKind = Literal["modified", "added", "deleted", "renamed", "untracked"]

EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
"""git's empty tree: a base that makes every file of a repository without commits ``added``."""

_STATUS: dict[str, ChangeKind] = {
    "M": "modified",
    "T": "modified",
    "A": "added",
    "C": "added",
    "D": "deleted",
    "R": "renamed",
}


@dataclass(frozen=True)
class Change:
    """One changed path (root-relative POSIX); *old_path* is set for renames only."""

    path: str
    change: ChangeKind
    old_path: str | None = None


def changed_paths(
    root: Path, since: str, until: str | None = None, *, working_tree: bool = True
) -> list[Change]:
    """What changed from revision *since* to *until*, sorted by path.

    Without *until*: to the working tree (staged and unstaged edits of tracked files, and
    untracked files that are not ignored) when *working_tree* is true, else to ``HEAD``.
    With *until*, the two revisions are compared and *working_tree* plays no part. Renames
    are detected. In a repository without commits, ``HEAD`` (or :data:`EMPTY_TREE`) as *since*
    gives every file as ``added`` (staged) or ``untracked``.
    """
    with _open(root) as repo:
        base = _resolve(repo, since, allow_unborn=True)
        if until is not None:
            target: list[str] = [_resolve(repo, until)]
        elif working_tree:
            target = []
        else:
            target = [_resolve(repo, "HEAD", allow_unborn=True)]
        raw = _git(repo, "diff", "-z", "--name-status", "-M", "--no-ext-diff", base, *target)
        changes = _parse_name_status(raw)
        if until is None and working_tree:
            untracked = _git(repo, "ls-files", "-z", "--others", "--exclude-standard")
            changes += [Change(p, "untracked") for p in untracked.split("\0") if p]
    return sorted(changes, key=lambda c: (c.path, c.change))


def last_commit_touching(root: Path, path: str, since: str) -> str | None:
    """The newest commit in ``since..HEAD`` that changed *path*, or None."""
    return last_commits(root, since, [path]).get(path)


def last_commits(root: Path, since: str, paths: Iterable[str] | None = None) -> dict[str, str]:
    """For each path changed in ``since..HEAD`` (only *paths* when given), the newest commit
    that changed it; renames count as a deletion of the old path and an addition of the new."""
    wanted = None if paths is None else set(paths)
    with _open(root) as repo:
        base = _resolve(repo, since, allow_unborn=True)
        if not _has_commits(repo):
            return {}
        span = "HEAD" if base == EMPTY_TREE else f"{base}..HEAD"
        raw = _git(repo, "log", "-z", "--no-renames", "--name-only", "--format=%x01%H", span)
    found: dict[str, str] = {}
    for entry in raw.split("\x01")[1:]:
        sha, _, files = entry.partition("\0")
        for name in files.split("\0"):
            name = name.strip("\n")
            if name and (wanted is None or name in wanted):
                found.setdefault(name, sha.strip())
    return found


def file_at(root: Path, rev: str, path: str) -> bytes | None:
    """The content of *path* (root-relative POSIX) at revision *rev*, or None when the file
    did not exist there (or the repository had no commits)."""
    with _open(root) as repo:
        base = _resolve(repo, rev, allow_unborn=True)
        if base == EMPTY_TREE or _verify_object(repo, f"{base}:{path}") is None:
            return None
        content: bytes = _git_bytes(repo, "cat-file", "blob", f"{base}:{path}")
    return content


def revision_exists(root: Path, rev: str) -> bool:
    """True when *rev* names a commit of the repository at *root*."""
    with _open(root) as repo:
        return _verify(repo, rev) is not None


def is_ancestor(root: Path, rev: str, of: str = "HEAD") -> bool:
    """True when commit *rev* is in the history of *of* (False after a rebase dropped it)."""
    import git

    with _open(root) as repo:
        if _verify(repo, rev) is None or _verify(repo, of) is None:
            return False
        try:
            repo.git.merge_base("--is-ancestor", rev, of)
        except git.exc.GitCommandError:
            return False
    return True


@contextmanager
def _open(root: Path) -> Iterator[Any]:
    try:
        import git
    except ImportError as exc:  # GitPython refuses to load without a git executable
        raise GitError(f"git cannot be run: {exc}") from exc
    try:
        repo = git.Repo(root, search_parent_directories=False)
    except (git.exc.InvalidGitRepositoryError, git.exc.NoSuchPathError) as exc:
        raise GitError(f"{root} is not a git repository") from exc
    except git.exc.GitError as exc:
        raise GitError(f"cannot open the git repository at {root}: {exc}") from exc
    try:
        yield repo
    finally:
        repo.close()


def _git(repo: Any, command: str, *args: str) -> str:
    output: str = _run(repo, command, args, stdout_as_string=True)
    return output


def _git_bytes(repo: Any, command: str, *args: str) -> bytes:
    output: bytes = _run(repo, command, args, stdout_as_string=False)
    return output


def _run(repo: Any, command: str, args: tuple[str, ...], *, stdout_as_string: bool) -> Any:
    """Run a git *command* through GitPython; a failure is a :class:`GitError` naming it."""
    import git

    try:
        return getattr(repo.git, command.replace("-", "_"))(
            *args, stdout_as_string=stdout_as_string, strip_newline_in_stdout=False
        )
    except git.exc.GitError as exc:
        detail = str(getattr(exc, "stderr", "") or exc).strip()
        raise GitError(f"git {command} failed in {repo.working_tree_dir}: {detail}") from exc


def _verify_object(repo: Any, name: str) -> str | None:
    import git

    try:
        sha: str = repo.git.rev_parse("--verify", "--quiet", "--end-of-options", name)
    except git.exc.GitCommandError:
        return None
    return sha.strip() or None


def _has_commits(repo: Any) -> bool:
    return _verify(repo, "HEAD") is not None


def _verify(repo: Any, rev: str) -> str | None:
    import git

    if rev.startswith("-"):
        return None
    try:
        sha: str = repo.git.rev_parse(
            "--verify", "--quiet", "--end-of-options", f"{rev}^{{commit}}"
        )
    except git.exc.GitCommandError:
        return None
    return sha.strip() or None


def _resolve(repo: Any, rev: str, *, allow_unborn: bool = False) -> str:
    """The commit sha of *rev*, or a :class:`GitError` saying why there is none."""
    sha = _verify(repo, rev)
    if sha is not None:
        return sha
    if rev == EMPTY_TREE or (allow_unborn and rev == "HEAD" and not _has_commits(repo)):
        return EMPTY_TREE
    if _is_shallow(repo):
        raise GitError(
            f"revision {rev!r} is not in this shallow clone; fetch the full history "
            "(e.g. `git fetch --unshallow`, or `fetch-depth: 0` in actions/checkout)"
        )
    if not _has_commits(repo):
        raise GitError(f"unknown revision {rev!r}: the repository has no commits yet")
    raise GitError(f"unknown revision {rev!r} in {repo.working_tree_dir}")


def _is_shallow(repo: Any) -> bool:
    import git

    try:
        answer: str = repo.git.rev_parse("--is-shallow-repository")
    except git.exc.GitCommandError:
        return False
    return answer.strip() == "true"


def _parse_name_status(raw: str) -> list[Change]:
    """Changes of ``git diff -z --name-status`` output (status, then one or two paths)."""
    fields = raw.split("\0")
    changes: list[Change] = []
    i = 0
    while i < len(fields) and fields[i]:
        status = fields[i].strip()[:1]
        if status in ("R", "C"):
            old, new = fields[i + 1], fields[i + 2]
            changes.append(Change(new, _STATUS[status], old if status == "R" else None))
            i += 3
            continue
        changes.append(Change(fields[i + 1], _STATUS.get(status, "modified")))
        i += 2
    return changes


def commits_since(
    root: Path, pairs: Iterable[tuple[str, str | None]]
) -> tuple[dict[str, str], list[str]]:
    """For (path, evidence commit) pairs: the newest commit since the evidence commit that
    changed each path, and notes for a person. Outside git, or for an evidence commit no
    longer in the history of ``HEAD`` (a rebase), paths get no commit and a note says so."""
    if not (root / ".git").exists():
        return {}, ["not a git repository: changes are found by file hashes alone"]
    wanted: dict[str, list[str]] = {}
    for path, since in pairs:
        if since:
            wanted.setdefault(since, []).append(path)
    commits: dict[str, str] = {}
    notes: list[str] = []
    for since, paths in wanted.items():
        if not is_ancestor(root, since):
            notes.append(
                f"evidence commit {since[:7]} is not in the history of HEAD (rebased or "
                "dropped); its subjects are judged by file hashes alone"
            )
            continue
        for path, sha in last_commits(root, since, paths).items():
            commits.setdefault(path, sha)
    return commits, notes
