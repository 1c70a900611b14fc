"""Running git: opening a repository, running a command, naming a revision's commit.

The low layer of :mod:`.history` (which asks the questions: changed paths, the commits behind them,
files at a revision). GitPython is imported only when a repository is opened, and every git
failure becomes a :class:`GitError` with a message a person can act on: an unknown revision
says whether it may only be outside the fetched history of a shallow clone, a remote branch
that is not fetched, or a name that does not exist.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import GitError

EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
"""git's empty tree: a base that makes every file of a repository without commits ``added``."""

FETCH_ALL = "`git fetch --unshallow`, or `fetch-depth: 0` in actions/checkout"
"""How to fetch the full history of a shallow clone, said in messages."""


@contextmanager
def open_repo(root: Path) -> Iterator[Any]:
    """The GitPython repository whose working tree top is *root*, closed after use."""
    git = _import_git()
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


@dataclass(frozen=True)
class GitDir:
    """A repository known by its git directory alone, with what :func:`git_text` and the
    revision helpers use of a GitPython repository: ``git`` and ``working_tree_dir``."""

    git: Any
    working_tree_dir: str


@contextmanager
def open_git_dir(git_dir: Path) -> Iterator[GitDir]:
    """The repository of *git_dir* without a working tree (a submodule's history under
    ``.git/modules`` when it is not checked out): its commits and trees can be read."""
    git = _import_git()
    runner = git.Git(str(git_dir))
    # its core.worktree may name a checkout that is gone, and git would go there first: the
    # git directory stands in for it (commands that read commits never look at a work tree)
    runner.update_environment(GIT_DIR=str(git_dir), GIT_WORK_TREE=str(git_dir))
    yield GitDir(runner, str(git_dir))


def _import_git() -> Any:
    try:
        import git
    except ImportError as exc:  # GitPython refuses to load without a git executable
        raise GitError(f"git cannot be run: {exc}") from exc
    return git


def git_text(repo: Any, command: str, *args: str) -> str:
    """The output of ``git COMMAND ARGS`` in *repo*, as text; a failure is a :class:`GitError`."""
    output: str = _run(repo, command, args, stdout_as_string=True)
    return output


def git_bytes(repo: Any, command: str, *args: str) -> bytes:
    """The output of ``git COMMAND ARGS`` in *repo*, as bytes; a failure is a :class:`GitError`."""
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


def verify_object(repo: Any, name: str) -> str | None:
    """The object id *name* resolves to (``REV:path`` for a file), or None."""
    import git

    try:
        sha: str = repo.git.rev_parse("--verify", "--quiet", "--end-of-options", name)
    except git.exc.GitCommandError:
        return None
    return sha.strip() or None


def has_commits(repo: Any) -> bool:
    """True when ``HEAD`` names a commit (False before the first commit)."""
    return verify_commit(repo, "HEAD") is not None


def verify_commit(repo: Any, rev: str) -> str | None:
    """The commit sha *rev* names, or None (never an option: ``-x`` names nothing)."""
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


def resolve(repo: Any, rev: str, *, allow_unborn: bool = False) -> str:
    """The commit sha of *rev*, or a :class:`GitError` saying why there is none."""
    sha = verify_commit(repo, rev)
    if sha is not None:
        return sha
    if rev == EMPTY_TREE or (allow_unborn and rev == "HEAD" and not has_commits(repo)):
        return EMPTY_TREE
    if not has_commits(repo):
        raise GitError(f"unknown revision {rev!r}: the repository has no commits yet")
    raise GitError(_unknown(repo, rev))


def _unknown(repo: Any, rev: str) -> str:
    """Why *rev* names no commit: outside the fetched history of a shallow clone (a commit id,
    or ancestors of a commit that is here), a remote branch not fetched, or no such name."""
    base = re.sub(r"(?:[~^][0-9]*)+$", "", rev)
    ancestry = base not in ("", rev) and verify_commit(repo, base) is not None
    if (ancestry or _COMMIT_ID.fullmatch(rev)) and is_shallow(repo):
        return (
            f"revision {rev!r} is not in this shallow clone: it may be outside the fetched "
            f"history; fetch the full history ({FETCH_ALL})"
        )
    if ancestry:
        if re.search(r"\^([2-9]|[1-9][0-9]+)", rev[len(base) :]):  # ^2: a merge's second parent
            return f"unknown revision {rev!r}: a commit on the way has no such parent (not a merge)"
        return f"unknown revision {rev!r}: the history of {base} does not go back that far"
    remote, _, branch = (base or rev).partition("/")  # fetch the branch, not `feature~1`
    if branch and remote in git_text(repo, "remote").split():
        return (
            f"unknown revision {rev!r}: the remote-tracking branch is not fetched here (run "
            f"`git fetch {remote} {branch}`, or use `fetch-depth: 0` in actions/checkout)"
        )
    where = repo.working_tree_dir
    return f"unknown revision {rev!r} in {where}: no commit, branch or tag has that name"


_COMMIT_ID = re.compile(r"[0-9a-fA-F]{4,40}")


def is_shallow(repo: Any) -> bool:
    """True in a shallow clone (``git rev-parse --is-shallow-repository``)."""
    import git

    try:
        answer: str = repo.git.rev_parse("--is-shallow-repository")
    except git.exc.GitCommandError:
        return False
    return answer.strip() == "true"
