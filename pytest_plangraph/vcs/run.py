"""Running git: opening a repository, running a command, naming a revision's commit.

The low layer of :mod:`.history` (which asks the questions: changed paths, the commits behind them,
files at a revision). The repository a command works in is run with plain ``git`` processes
(:class:`Repo`: no library to import, one process a question); GitPython reads the history of
submodules (:func:`open_submodule`, :func:`open_git_dir`) and is imported only then. Every git
failure becomes a :class:`GitError` with a message a person can act on: an unknown revision
says whether it may only be outside the fetched history of a shallow clone, a remote branch
that is not fetched, or a name that does not exist.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from ..errors import GitError, quoted
from ..regularfile import read_regular
from ..values import dataclass
from .refs import read_git_dirs
from .spawn import git_timeout, run_git_process, timed_out

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
"""git's empty tree: a base that makes every file of a repository without commits ``added``."""

FETCH_ALL = "`git fetch --unshallow`, or `fetch-depth: 0` in actions/checkout"
"""How to fetch the full history of a shallow clone, said in messages."""


@dataclass(frozen=True)
class Repo:
    """The repository whose working tree top is *working_tree_dir*, asked through plain
    ``git`` processes run there (as GitPython runs them: ``LC_ALL=C``, no input)."""

    working_tree_dir: str

    @property
    def common_dir(self) -> str:
        """The git directory shared by all working trees (``.git``, or what a linked working
        tree's ``.git`` file and ``commondir`` point to), read from the files; asked of git
        when they are not plain (``GIT_DIR`` set, an unreadable ``.git`` file)."""
        found = None if "GIT_DIR" in os.environ else _common_dir(Path(self.working_tree_dir))
        if found is not None:
            return str(found)
        asked = run_git(self, "rev-parse", "--git-common-dir").strip()
        return str(Path(self.working_tree_dir) / asked)


def _common_dir(top: Path) -> Path | None:
    """The common git directory of the working tree *top*, from its files, or None."""
    found = read_git_dirs(top)
    return None if found is None else found[1]


@contextmanager
def open_repo(root: Path) -> Iterator[Repo]:
    """The repository whose working tree top is *root* (it holds ``.git``)."""
    if not (root / ".git").exists() and "GIT_DIR" not in os.environ:
        raise GitError(f"{root} is not a git repository")
    yield Repo(str(root))


def run_git(repo: Repo, *args: str, stdin: bytes | None = None, check: bool = True) -> str:
    """The output of ``git ARGS`` run in *repo* (UTF-8, undecodable bytes kept as surrogates);
    a failure is a :class:`GitError` naming the command (with *check*) or an empty answer."""
    return run_git_bytes(repo, *args, stdin=stdin, check=check).decode("utf-8", "surrogateescape")


def run_git_bytes(repo: Repo, *args: str, stdin: bytes | None = None, check: bool = True) -> bytes:
    """:func:`run_git`, the output as bytes."""
    done = _process(repo, args, stdin)
    if done.returncode != 0:
        if not check:
            return b""
        detail = done.stderr.decode("utf-8", "replace").strip()
        raise GitError(f"git {args[0]} failed in {repo.working_tree_dir}: {detail}")
    output: bytes = done.stdout
    return output


def git_succeeds(repo: Repo, *args: str) -> bool:
    """Whether ``git ARGS`` in *repo* exits with 0 (a question git answers with its status)."""
    return bool(_process(repo, args, None).returncode == 0)


@dataclass(frozen=True)
class _Done:
    """How a git process ended: its exit code, stdout and stderr."""

    returncode: int
    stdout: bytes
    stderr: bytes


def _process(repo: Repo, args: Sequence[str], stdin: bytes | None) -> _Done:
    """``git ARGS`` run to its end in *repo*, *stdin* its input (none without)."""
    env = {**os.environ, "LANGUAGE": "C", "LC_ALL": "C"}
    try:
        done = _Done(*run_git_process(args, repo.working_tree_dir, env, stdin))
    except OSError as exc:  # no git on PATH, or the folder is gone
        raise GitError(f"git cannot be run in {repo.working_tree_dir}: {exc}") from exc
    if done.returncode < 0:  # killed by a signal (a person, the OOM killer): no answer at all
        raise GitError(
            f"git {args[0]} was stopped by signal {-done.returncode} in "
            f"{repo.working_tree_dir} before it answered; run the command again"
        )
    return done


def commits_of(repo: Repo, revs: Sequence[str]) -> list[str | None]:
    """The commit each of *revs* names (None for one that names none), all in one process
    (``git cat-file --batch-check``: names are read from its input, never as options)."""
    asked = [r for r in revs if r and "\n" not in r and not r.startswith("-")]
    answers: dict[str, str | None] = dict.fromkeys(revs)
    if asked:
        lines = "".join(f"{rev}^{{commit}}\n" for rev in asked).encode("utf-8", "surrogateescape")
        out = run_git(repo, "cat-file", "--batch-check", stdin=lines, check=False).splitlines()
        for rev, line in zip(asked, out, strict=False):
            sha, _, kind = line.partition(" ")
            if kind.startswith("commit ") and _COMMIT_ID.fullmatch(sha):
                answers[rev] = sha
    return [answers[rev] for rev in revs]


def rewritable(repo: Repo) -> bool:
    """Whether git may show a commit id with other content than its object's, now or after a
    fetch: a shallow clone (its oldest commits get their parents when more history is
    fetched), grafts, or replace objects (``git replace``: a ref under ``refs/replace/``, loose
    or packed, or another place named by ``GIT_REPLACE_REF_BASE``). A repository whose refs
    are not plain files (``reftable``) counts as rewritable: its replace refs are not read
    here. Nothing keyed by commit ids alone may answer for such a repository."""
    common = Path(repo.common_dir)
    if "GIT_REPLACE_REF_BASE" in os.environ:
        return True
    for marker in ("shallow", "info/grafts", "reftable"):
        if os.path.lexists(common / marker):
            return True
    return _has_file(common / "refs" / "replace") or _packed_replace(common / "packed-refs")


def _has_file(folder: Path) -> bool:
    """Whether *folder* holds anything but folders, at any depth (a loose ref)."""
    try:
        entries = list(os.scandir(folder))
    except FileNotFoundError:
        return False
    except OSError:  # unreadable: assume a ref is there
        return True
    return any(not e.is_dir(follow_symlinks=False) or _has_file(Path(e.path)) for e in entries)


def _packed_replace(packed: Path) -> bool:
    """Whether the packed refs hold a replace ref (``SHA refs/replace/…`` lines)."""
    try:
        data = read_regular(packed)  # a FIFO would block: not a regular file, an OSError
    except FileNotFoundError:
        return False
    except OSError:
        return True
    return b" refs/replace/" in data


def head_commit(root: Path, revisions: Any = None) -> str | None:
    """``HEAD``'s commit: what the commits named behind the changes of the working tree
    depend on besides the evidence's own commits (one git process, none when *revisions*, a
    :class:`~.revcache.RevisionCache`, holds it). None when there is none to stand for
    them: no repository, no commit, or a history git may show otherwise for the same ids
    (:func:`rewritable`: shallow, grafted, replace refs)."""
    if not (root / ".git").exists():
        return None
    with open_repo(root) as repo:
        if rewritable(repo):
            return None
        named: list[str | None] = (
            commits_of(repo, ["HEAD"])
            if revisions is None
            else revisions.commits_of(repo, ["HEAD"])
        )
        return named[0]


@contextmanager
def open_submodule(root: Path) -> Iterator[GitDir]:
    """The submodule checked out at *root* (it holds ``.git``), asked through GitPython's
    runner in that folder. No GitPython repository object: making one reads the submodule's
    config (and the files it includes) in this process, where a FIFO would block for good
    beyond the reach of the bound on git's time; git reads them itself, within it."""
    git = _import_git()
    if not os.path.lexists(root / ".git"):
        raise GitError(f"{root} is not a git repository")
    runner = git.Git(str(root))
    runner.update_environment(**_NO_PROMPT)
    yield GitDir(runner, str(root))


@dataclass(frozen=True)
class GitDir:
    """A repository asked through GitPython's runner (its git directory alone, or a
    submodule's checkout), with what :func:`git_text` and the revision helpers use of a
    GitPython repository: ``git`` and ``working_tree_dir``."""

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
    runner.update_environment(GIT_DIR=str(git_dir), GIT_WORK_TREE=str(git_dir), **_NO_PROMPT)
    yield GitDir(runner, str(git_dir))


_NO_PROMPT = {"GIT_TERMINAL_PROMPT": "0"}
"""git run through GitPython never asks at the terminal either (as :mod:`.spawn` runs it)."""


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
    """Run a git *command* in *repo* (a plain process for a :class:`Repo`, else through
    GitPython); a failure is a :class:`GitError` naming it."""
    if isinstance(repo, Repo):
        run = run_git if stdout_as_string else run_git_bytes
        return run(repo, command, *args)
    import git

    bound = git_timeout()
    try:
        return getattr(repo.git, command.replace("-", "_"))(
            *args,
            stdout_as_string=stdout_as_string,
            strip_newline_in_stdout=False,
            kill_after_timeout=bound,
        )
    except git.exc.GitError as exc:
        _past_bound(repo, exc, (command, *args), bound)
        detail = str(getattr(exc, "stderr", "") or exc).strip()
        raise GitError(f"git {command} failed in {repo.working_tree_dir}: {detail}") from exc


def _past_bound(repo: Any, exc: Exception, args: Sequence[str], bound: float) -> None:
    """A :class:`GitTimeoutError` when GitPython killed git past *bound* (its
    ``kill_after_timeout``: the process and its children killed, exit -9, a stderr it writes
    itself), so that no caller takes it for git's "no"."""
    if getattr(exc, "status", None) == -9 and "did not complete in" in str(exc):
        raise timed_out(args, repo.working_tree_dir, bound) from exc


def _answer(repo: Any, *args: str) -> str:
    """The output of ``git ARGS`` in *repo*, stripped, or ``""`` when git says no."""
    if isinstance(repo, Repo):
        return run_git(repo, *args, check=False).strip()
    import git

    bound = git_timeout()
    try:
        run = getattr(repo.git, args[0].replace("-", "_"))
        answer: str = run(*args[1:], kill_after_timeout=bound)
    except git.exc.GitCommandError as exc:
        _past_bound(repo, exc, args, bound)
        return ""
    return answer.strip()


def verify_object(repo: Any, name: str) -> str | None:
    """The object id *name* resolves to (``REV:path`` for a file), or None."""
    return _answer(repo, "rev-parse", "--verify", "--quiet", "--end-of-options", name) or None


def has_commits(repo: Any) -> bool:
    """True when ``HEAD`` names a commit (False before the first commit)."""
    return verify_commit(repo, "HEAD") is not None


def verify_commit(repo: Any, rev: str) -> str | None:
    """The commit sha *rev* names, or None (never an option: ``-x`` names nothing)."""
    if rev.startswith("-"):
        return None
    name = f"{rev}^{{commit}}"
    return _answer(repo, "rev-parse", "--verify", "--quiet", "--end-of-options", name) or None


def resolve(repo: Any, rev: str, *, allow_unborn: bool = False) -> str:
    """The commit sha of *rev*, or a :class:`GitError` saying why there is none."""
    sha = verify_commit(repo, rev)
    if sha is not None:
        return sha
    if rev == EMPTY_TREE or (allow_unborn and rev == "HEAD" and not has_commits(repo)):
        return EMPTY_TREE
    if not has_commits(repo):
        raise GitError(f"unknown revision {quoted(rev)}: the repository has no commits yet")
    raise GitError(_unknown(repo, rev))


def _unknown(repo: Any, rev: str) -> str:
    """Why *rev* names no commit: outside the fetched history of a shallow clone (a commit id,
    or ancestors of a commit that is here), a remote branch not fetched, or no such name."""
    base = re.sub(r"(?:[~^][0-9]*)+$", "", rev)
    ancestry = base not in ("", rev) and verify_commit(repo, base) is not None
    if (ancestry or _COMMIT_ID.fullmatch(rev)) and is_shallow(repo):
        return (
            f"revision {quoted(rev)} is not in this shallow clone: it may be outside the fetched "
            f"history; fetch the full history ({FETCH_ALL})"
        )
    if ancestry:
        if re.search(r"\^([2-9]|[1-9][0-9]+)", rev[len(base) :]):  # ^2: a merge's second parent
            return (
                f"unknown revision {quoted(rev)}: a commit on the way has no such parent "
                "(not a merge)"
            )
        return f"unknown revision {quoted(rev)}: the history of {base} does not go back that far"
    remote, _, branch = (base or rev).partition("/")  # fetch the branch, not `feature~1`
    if branch and remote in git_text(repo, "remote").split():
        return (
            f"unknown revision {quoted(rev)}: the remote-tracking branch is not fetched here (run "
            f"`git fetch {remote} {branch}`, or use `fetch-depth: 0` in actions/checkout)"
        )
    if ".." in rev and all(part for part in rev.split("..")):
        return (
            f"unknown revision {quoted(rev)}: a range names no single commit; give the revision "
            "it starts from (the range then ends at HEAD and the working tree)"
        )
    where = repo.working_tree_dir
    return f"unknown revision {quoted(rev)} in {where}: no commit, branch or tag has that name"


_COMMIT_ID = re.compile(r"[0-9a-fA-F]{4,40}")


def is_shallow(repo: Any) -> bool:
    """True in a shallow clone (``git rev-parse --is-shallow-repository``)."""
    return _answer(repo, "rev-parse", "--is-shallow-repository") == "true"
