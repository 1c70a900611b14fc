"""The outside world of files: the repository root, path safety on disk and sha256 of files.

Git operations (changed paths, commits) live here too, behind plain values; everything else in
the package sees only paths relative to the root and hex digests.
"""

from __future__ import annotations

import functools
import hashlib
import os
import posixpath
import stat
import time
from collections.abc import Collection, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol

from .errors import GitError, UsageError
from .paths import is_glob, normalize, path_problem

_CHUNK = 1024 * 1024

RACY_NS = 2_000_000_000
"""git's racy-clean guard, with room for coarse file-system clocks: a cached hash is trusted
only for a file whose mtime is more than this much older than the moment it was hashed."""


@dataclass(frozen=True)
class HashRecord:
    """A file's sha256 with the stat it was computed for and when (``time_ns``)."""

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


def find_root(start: Path) -> Path:
    """The nearest directory at or above *start* holding ``.git`` (a dir, or a file in a
    worktree or submodule); *start* itself when there is none."""
    start = start.resolve()
    for candidate in (start, *start.parents):
        if (candidate / ".git").exists():
            return candidate
    return start


_SKIPPED_DIRS = frozenset({".git", ".plangraph"})


@functools.lru_cache(maxsize=8192)
def _inside(root: Path, rel: str) -> bool:
    """True when *rel* under *root* resolves inside it (a symlink loop does not). Cached so a
    batch of thousands of files resolves each parent once; every batch (:meth:`Workspace.hashes`,
    :meth:`Workspace.expand`) starts with an empty cache, so a directory swapped for a symlink
    between two batches is seen."""
    try:
        target = (root / rel).resolve()
    except (OSError, RuntimeError):  # RuntimeError: a symlink loop (Python < 3.13)
        return False
    return target == root or root in target.parents


@dataclass(frozen=True)
class Workspace:
    """Files under one repository root, addressed by relative POSIX paths."""

    root: Path
    ignored: frozenset[str] = frozenset()
    """Files never taken as outputs (the evidence store and its journal files)."""

    @classmethod
    def at(cls, root: Path, ignored: Iterable[str] = ()) -> Workspace:
        """A workspace rooted at *root* (resolved)."""
        return cls(root.resolve(), frozenset(ignored))

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
        parent = posixpath.dirname(normalize(rel))
        if parent and not _inside(self.root, parent):
            return True
        full = self.root / rel
        return full.is_symlink() and not _inside(self.root, rel)

    def hash_file(self, rel: str) -> str | None:
        """sha256 of the file at *rel*, or None when it is missing, not a regular file (a FIFO
        would block), or escapes."""
        if self._regular(rel, None) is None:
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

    def hashes(
        self,
        paths: Iterable[str],
        cache: HashCache | None = None,
        *,
        stats: Mapping[str, os.stat_result] | None = None,
    ) -> dict[str, str | None]:
        """sha256 of each path (None for missing ones). With *cache*, a file whose inode,
        mtime, ctime and size match its record, and that is not racily clean, is not read.

        *stats* are ``lstat`` results already taken (by :meth:`expand`), not taken again.
        """
        wanted = sorted(set(paths))
        _inside.cache_clear()
        if cache is None:
            return {rel: self.hash_file(rel) for rel in wanted}
        records = cache.cache_many(wanted)
        known = stats or {}
        fresh: list[HashRecord] = []
        found = {rel: self._cached(rel, records.get(rel), known.get(rel), fresh) for rel in wanted}
        if fresh:
            cache.cache_put(*fresh)
        return found

    def _cached(
        self, rel: str, entry: Any, info: os.stat_result | None, fresh: list[HashRecord]
    ) -> str | None:
        info = self._regular(rel, info)
        if info is None:
            return None
        key = (info.st_ino, info.st_mtime_ns, info.st_ctime_ns, info.st_size)
        if (
            entry is not None
            and (entry.inode, entry.mtime_ns, entry.ctime_ns, entry.size) == key
            and info.st_mtime_ns + RACY_NS < entry.recorded_ns
        ):
            cached: str = entry.sha256
            return cached
        recorded = time.time_ns()
        sha = self.hash_file(rel)
        if sha is not None:
            fresh.append(HashRecord(rel, *key, sha, recorded))
        return sha

    def _regular(self, rel: str, info: os.stat_result | None) -> os.stat_result | None:
        """The stat of the regular file at *rel*, or None when it is missing, something else,
        or escapes (the checks of :meth:`escapes`, with one ``lstat`` unless *info* is one)."""
        if path_problem(rel):
            return None
        parent = posixpath.dirname(normalize(rel))
        if parent and not _inside(self.root, parent):
            return None
        full = os.path.join(self.root, rel)
        try:
            info = os.lstat(full) if info is None else info
            if stat.S_ISLNK(info.st_mode):
                if not _inside(self.root, rel):
                    return None
                info = os.stat(full)
        except OSError:
            return None
        return info if stat.S_ISREG(info.st_mode) else None

    def expand(
        self, patterns: Iterable[str], stats: dict[str, os.stat_result] | None = None
    ) -> list[str]:
        """Files named by *patterns*: a directory gives every file under it, a glob its
        matches; a plain path that does not exist is kept (its absence is a change too).

        The ``lstat`` of each plain path that is not a directory goes into *stats* (for
        :meth:`hashes`)."""
        found: set[str] = set()
        _inside.cache_clear()
        for pattern in patterns:
            if path_problem(pattern):
                continue
            if is_glob(pattern):
                for match in self.root.glob(pattern):  # `dir/**` matches directories only
                    rel = match.relative_to(self.root).as_posix()
                    found.update(self._walk(rel) if match.is_dir() else self._files([match]))
                continue
            rel = normalize(pattern)
            full = os.path.join(self.root, rel)
            try:
                info: os.stat_result | None = os.lstat(full)
            except OSError:
                info = None
            linked = info is not None and stat.S_ISLNK(info.st_mode) and os.path.isdir(full)
            if linked or (info is not None and stat.S_ISDIR(info.st_mode)):
                found.update(self._walk(rel))
                continue
            found.add(rel)
            if info is not None and stats is not None:
                stats[rel] = info
        return sorted(found)

    def _walk(self, top: str) -> Iterator[str]:
        """Every file under the directory *top* (one ``scandir`` per directory, no ``stat`` per
        file): symlinked directories are not entered, a symlinked file counts only when it
        resolves inside the root; ``.git``, ``.plangraph`` and the store are skipped."""
        if top != "." and self.escapes(top):
            return
        stack = [top]
        while stack:
            current = stack.pop()
            try:
                entries = list(os.scandir(os.path.join(self.root, current)))
            except OSError:
                continue
            for entry in entries:
                rel = entry.name if current == "." else f"{current}/{entry.name}"
                if entry.name in _SKIPPED_DIRS or rel in self.ignored:
                    continue
                if entry.is_dir(follow_symlinks=False):
                    stack.append(rel)
                elif entry.is_file(follow_symlinks=False) or (
                    entry.is_symlink() and entry.is_file() and not self.escapes(rel)
                ):
                    yield rel

    def _files(self, candidates: Iterable[Path]) -> Iterable[str]:
        for candidate in candidates:
            rel = candidate.relative_to(self.root).as_posix()
            if _SKIPPED_DIRS.intersection(rel.split("/")) or rel in self.ignored:
                continue
            if candidate.is_file() and not self.escapes(rel):
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


def git_state(root: Path, ignore: Iterable[str] = ()) -> GitState:
    """The git state of the repository at *root*; outside git, an empty state (hash-only mode).

    Untracked files under the *ignore* prefixes (the evidence store and its journal files) do
    not make the tree dirty: recording evidence must not change the verdict on the tree.
    """
    import git  # GitPython is imported only when evidence is made

    prefixes = tuple(ignore)

    try:
        repo = git.Repo(root, search_parent_directories=False)
    except (git.exc.InvalidGitRepositoryError, git.exc.NoSuchPathError):
        return GitState(None, None, False, False)
    try:
        commit = repo.head.commit.hexsha if repo.head.is_valid() else None
        branch = None if repo.head.is_detached else repo.active_branch.name
        dirty = repo.is_dirty(untracked_files=False) or any(
            not path.startswith(prefixes) for path in repo.untracked_files
        )
    except (git.exc.GitError, ValueError, TypeError) as exc:
        raise GitError(f"cannot read the git state of {root}: {exc}") from exc
    finally:
        repo.close()
    return GitState(commit, branch, dirty, True)


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
    import git

    try:
        output: str = getattr(repo.git, command.replace("-", "_"))(
            *args, strip_newline_in_stdout=False
        )
    except git.exc.GitError as exc:
        detail = str(getattr(exc, "stderr", "") or exc).strip()
        raise GitError(f"git {command} failed in {repo.working_tree_dir}: {detail}") from exc
    return output


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
