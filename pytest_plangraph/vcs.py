"""The outside world of files: the repository root, path safety on disk and sha256 of files.

Git operations (changed paths, commits) live here too, behind plain values; everything else in
the package sees only paths relative to the root and hex digests.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from .errors import GitError, UsageError
from .paths import is_glob, normalize, path_problem

_CHUNK = 1024 * 1024


def find_root(start: Path) -> Path:
    """The nearest directory at or above *start* holding ``.git`` (a dir, or a file in a
    worktree or submodule); *start* itself when there is none."""
    start = start.resolve()
    for candidate in (start, *start.parents):
        if (candidate / ".git").exists():
            return candidate
    return start


@dataclass(frozen=True)
class Workspace:
    """Files under one repository root, addressed by relative POSIX paths."""

    root: Path

    @classmethod
    def at(cls, root: Path) -> Workspace:
        """A workspace rooted at *root* (resolved)."""
        return cls(root.resolve())

    def relative(self, path: Path) -> str:
        """The root-relative POSIX form of an absolute or cwd-relative *path*."""
        try:
            return path.resolve().relative_to(self.root).as_posix()
        except ValueError:
            raise UsageError(f"{path} is outside the repository root {self.root}") from None

    def escapes(self, rel: str) -> bool:
        """True when *rel* is not a clean relative path or a symlink resolves outside the root."""
        if path_problem(rel):
            return True
        target = (self.root / rel).resolve()
        return target != self.root and self.root not in target.parents

    def hash_file(self, rel: str) -> str | None:
        """sha256 of the file at *rel*, or None when it is missing, not a file, or escapes."""
        if self.escapes(rel):
            return None
        path = self.root / rel
        try:
            with path.open("rb") as handle:
                digest = hashlib.sha256()
                while chunk := handle.read(_CHUNK):
                    digest.update(chunk)
        except (FileNotFoundError, IsADirectoryError, NotADirectoryError, PermissionError):
            return None
        return digest.hexdigest()

    def hashes(self, paths: Iterable[str]) -> dict[str, str | None]:
        """sha256 of each path (None for missing ones)."""
        return {rel: self.hash_file(rel) for rel in sorted(set(paths))}

    def expand(self, patterns: Iterable[str]) -> list[str]:
        """Files named by *patterns*: a directory gives every file under it, a glob its
        matches; a plain path that does not exist is kept (its absence is a change too)."""
        found: set[str] = set()
        for pattern in patterns:
            if path_problem(pattern):
                continue
            if is_glob(pattern):
                found.update(self._files(self.root.glob(pattern)))
                continue
            rel = normalize(pattern)
            target = self.root / rel
            if target.is_dir():
                found.update(self._files(target.rglob("*")))
            else:
                found.add(rel)
        return sorted(found)

    def _files(self, candidates: Iterable[Path]) -> Iterable[str]:
        for candidate in candidates:
            rel = candidate.relative_to(self.root).as_posix()
            if candidate.is_file() and ".git" not in rel.split("/") and not self.escapes(rel):
                yield rel


def read_text(workspace: Workspace, rel: str) -> str:
    """The UTF-8 text of a file in *workspace* (raises OSError / UnicodeDecodeError)."""
    if workspace.escapes(rel):
        raise PermissionError(f"{rel} resolves outside the repository")
    return (workspace.root / rel).read_text(encoding="utf-8")


def environ_flag(name: str) -> bool:
    """True when the environment variable *name* is set to a true-ish value."""
    return os.environ.get(name, "").lower() in {"1", "true", "yes", "on"}


@dataclass(frozen=True)
class GitState:
    """Where the repository stands: commit (None before the first commit or outside git),
    branch (None when detached), and whether tracked or untracked files differ from HEAD."""

    commit: str | None
    branch: str | None
    dirty: bool
    is_repo: bool


def git_state(root: Path) -> GitState:
    """The git state of the repository at *root*; outside git, an empty state (hash-only mode)."""
    import git  # GitPython is imported only when evidence is made

    try:
        repo = git.Repo(root, search_parent_directories=False)
    except (git.exc.InvalidGitRepositoryError, git.exc.NoSuchPathError):
        return GitState(None, None, False, False)
    try:
        commit = repo.head.commit.hexsha if repo.head.is_valid() else None
        branch = None if repo.head.is_detached else repo.active_branch.name
        dirty = repo.is_dirty(untracked_files=True)
    except (git.exc.GitError, ValueError, TypeError) as exc:
        raise GitError(f"cannot read the git state of {root}: {exc}") from exc
    finally:
        repo.close()
    return GitState(commit, branch, dirty, True)
