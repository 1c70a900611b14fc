"""Git, the only git in the project: the state of the repository, changed paths between
revisions and the working tree, the commits behind them, files as they were at a revision.
The state comes from :mod:`.status` (one ``git status`` call); the rest runs plain ``git``
processes through :mod:`.run` (opening a repository, running a command, naming a revision's
commit), as few as answer the question: ``impact --since`` with its commits named from a warm
cache is four (both ends named, the diff, the untracked files, the commits of the range), or
three when the revision cache (:mod:`.revcache`) names both ends.
Changed submodules are looked into (:mod:`.diff`, GitPython): their files are listed under
their path.

Everything returns plain values (shas, root-relative POSIX paths) and every git failure is a
:class:`GitError` with a message a person can act on. Files on disk and their hashes are
:mod:`.workspace`'s; its names are re-exported here for existing imports.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from ..errors import GitError
from ..values import dataclass
from .changes import Change
from .diff import tree_changes
from .revcache import RevisionCache
from .run import (
    EMPTY_TREE,
    FETCH_ALL,
    Repo,
    commits_of,
    git_succeeds,
    git_text,
    is_shallow,
    open_repo,
    resolve,
    rewritable,
    run_git_bytes,
    verify_commit,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .commitcache import CommitCache
    from .status import GitStatus as GitState

__all__ = [
    "SinceDiff",
    "changed_paths",
    "changes_since",
    "commits_since",
    "diff_since",
    "environ_flag",
    "file_at",
    "git_state",
    "is_ancestor",
    "last_commit_touching",
    "last_commits",
    "revision_exists",
]


def environ_flag(name: str) -> bool:
    """True when the environment variable *name* is set to a true-ish value."""
    return os.environ.get(name, "").lower() in {"1", "true", "yes", "on"}


def git_state(root: Path, ignore: Iterable[str] = ()) -> GitState:
    """The git state of the repository at *root*; outside git, an empty state (hash-only mode).

    Untracked files under the *ignore* prefixes (the evidence store and its journal files) do
    not make the tree dirty: recording evidence must not change the verdict on the tree. One
    ``git status`` call (:mod:`.status`, imported here: ``impact --since`` needs none), no
    repository object.
    """
    from .status import read_git_status

    return read_git_status(root, ignore)


# --- changes between revisions ---------------------------------------------------------------


def changed_paths(
    root: Path, since: str, until: str | None = None, *, working_tree: bool = True
) -> list[Change]:
    """What changed from revision *since* to *until*, sorted by path.

    Without *until*: to the working tree (staged and unstaged edits of tracked files, and
    untracked files that are not ignored) when *working_tree* is true, else to ``HEAD``.
    With *until*, the two revisions are compared and *working_tree* plays no part. Renames
    are detected. In a repository without commits, ``HEAD`` (or :data:`EMPTY_TREE`) as *since*
    gives every file as ``added`` (staged) or ``untracked``.

    A changed submodule (a gitlink) is replaced by the paths that changed inside it, prefixed
    with its path: between the commits recorded at both ends, or from the commit recorded at
    *since* to the submodule's working tree (untracked files included), and so on down nested
    submodules. A renamed submodule renames each of its files; a removed one deletes each file
    it had (read from the history git keeps under ``.git/modules``). A submodule whose files
    cannot be listed (not checked out, lacking one of the commits) is reported as its own path
    with a :attr:`Change.note`, standing for every path under it (:attr:`Change.subtree`).
    """
    with open_repo(root) as repo:
        base = resolve(repo, since, allow_unborn=True)
        if until is not None:
            target: str | None = resolve(repo, until)
        elif working_tree:
            target = None
        else:
            target = resolve(repo, "HEAD", allow_unborn=True)
        changes = tree_changes(repo, base, target)
    return sorted(changes, key=_by_path)


@dataclass(frozen=True)
class SinceDiff:
    """What the diff from *since* to the working tree is: the commits both ends name (*head*
    None before the first commit) and the changed paths (:func:`diff_since`)."""

    root: Path
    since: str
    base: str
    head: str | None
    changes: tuple[Change, ...]
    rewritable: bool = False
    """Whether git may show a commit id with other content (:func:`~.run.rewritable`): then
    nothing keyed by commit ids may name the commits behind the changes."""

    def key(self, ignore: Iterable[str] = ()) -> list[object]:
        """Everything of the diff as JSON values: what an answer computed from it depends on
        (both ends' commits name the range's commits; the changes, the working tree's). The
        paths in *ignore*, and those under an entry ending in ``/``, are left out, as the
        report leaves out plangraph's own files."""
        left = tuple(ignore)
        folders = tuple(p for p in left if p.endswith("/"))
        changes = [
            [c.path, c.change, c.old_path, c.note, c.subtree]
            for c in self.changes
            if c.path not in left and not c.path.startswith(folders)
        ]
        return [self.since, self.base, self.head, changes]


def diff_since(root: Path, since: str, revisions: RevisionCache | None = None) -> SinceDiff:
    """Both ends of ``since..HEAD`` named by one git process (none when *revisions* holds
    them: :mod:`.revcache`; not used where git may show a commit id otherwise), then the
    changed paths from *since* to the working tree (:func:`changed_paths`: the diff and the
    untracked files)."""
    with open_repo(root) as repo:
        rewritten = rewritable(repo)
        base, head = _ends(repo, since, None if rewritten else revisions)
        changes = sorted(tree_changes(repo, base, None), key=_by_path)
    return SinceDiff(root, since, base, head, tuple(changes), rewritten)


def changes_since(
    root: Path,
    since: str,
    *,
    commits: bool = True,
    cache: CommitCache | None = None,
    diff: SinceDiff | None = None,
) -> tuple[list[Change], dict[str, str]]:
    """:func:`changed_paths` from *since* to the working tree and, with *commits*, the newest
    commit in ``since..HEAD`` behind each changed path (:func:`last_commits` of those paths),
    read together: both ends are named by one git process, then the diff, the untracked files
    and the commits of the range are one process each (the commits read only when *cache*
    lacks them). *diff* is :func:`diff_since` of the same *root* and *since* read already
    (then only the commits are read)."""
    if diff is None or diff.root != root or diff.since != since:
        diff = diff_since(root, since)
    changes = list(diff.changes)
    if not commits or diff.head is None:
        return changes, {}
    with open_repo(root) as repo:
        walked = _walk(repo, diff.base, cache)
    return changes, _newest_commits(walked, [c.path for c in changes])


def _by_path(change: Change) -> tuple[str, str]:
    return change.path, change.change


def _ends(repo: Repo, since: str, revisions: RevisionCache | None = None) -> tuple[str, str | None]:
    """The commit *since* names (:data:`EMPTY_TREE` for the empty tree, or for ``HEAD`` before
    the first commit) and ``HEAD``'s commit (None before the first), named by one process
    when both name commits (through *revisions* when given: never where git may show a
    commit id otherwise, which the caller checks); otherwise a :class:`GitError` says why
    *since* names none."""
    ends = [since, "HEAD"]
    base, head = commits_of(repo, ends) if revisions is None else revisions.commits_of(repo, ends)
    if base is None:
        base = resolve(repo, since, allow_unborn=True)
    return base, head


def last_commit_touching(root: Path, path: str, since: str) -> str | None:
    """The newest commit in ``since..HEAD`` that changed *path*, or None."""
    return last_commits(root, since, [path]).get(path)


def last_commits(
    root: Path,
    since: str,
    paths: Iterable[str] | None = None,
    *,
    cache: CommitCache | None = None,
) -> dict[str, str]:
    """For each path changed in ``since..HEAD`` (only *paths* when given), the newest commit
    that changed it; renames count as a deletion of the old path and an addition of the new.

    A path inside a submodule gets the newest commit of this repository that moved the
    submodule's pointer (the submodule's own commits are not in this history), whether or not
    that move changed the path itself; a path changed only in the submodule's working tree
    gets that commit too when there is one in the range.

    With a *cache* (:mod:`.commitcache`), the commits of the range are listed
    (``git rev-list``) and only those not kept yet are read with their paths; the answer is
    the same as without it. A shallow clone uses no cache (the paths of its oldest commits
    change when more history is fetched), nor does a repository with grafts or replace refs
    (``git replace``: a commit id shows other content)."""
    with open_repo(root) as repo:
        base, head = _ends(repo, since)
        if head is None:
            return {}
        walked = _walk(repo, base, cache)
    return _newest_commits(walked, paths)


def _walk(repo: Repo, base: str, cache: CommitCache | None) -> list[tuple[str, tuple[str, ...]]]:
    """The (commit, changed paths) pairs of ``base..HEAD`` (all of ``HEAD`` from the empty
    tree), newest first, read through *cache* unless git may show a commit id otherwise
    (:func:`~.run.rewritable`: shallow, grafts, replace refs)."""
    span = "HEAD" if base == EMPTY_TREE else f"{base}..HEAD"
    if cache is None or rewritable(repo):
        return _commit_paths(git_text(repo, *_LOG, span))
    return _cached_commit_paths(repo, span, cache)


def _newest_commits(
    walked: list[tuple[str, tuple[str, ...]]], paths: Iterable[str] | None
) -> dict[str, str]:
    """For each path of *walked* (only *paths* when given), the first commit naming it; a path
    inside a submodule gets the commit of the nearest enclosing path named."""
    newest: dict[str, str] = {}
    for sha, files in walked:
        for name in files:
            newest.setdefault(name, sha)
    if paths is None:
        return newest
    return {p: commit for p in set(paths) if (commit := _newest_of(p, newest)) is not None}


_LOG = ("log", "-z", "--no-renames", "--name-only", "--format=%x01%H")
"""Each commit's id and the paths it changed against its first parent (none for a merge)."""

_BY_ID = 2000
"""Up to how many unseen commits are read by id; past it, the whole range is read again."""


def _commit_paths(raw: str) -> list[tuple[str, tuple[str, ...]]]:
    """The (commit, changed paths) pairs of :data:`_LOG` output, in its order."""
    walked: list[tuple[str, tuple[str, ...]]] = []
    for entry in raw.split("\x01")[1:]:
        sha, _, files = entry.partition("\0")
        names = tuple(n for name in files.split("\0") if (n := name.strip("\n")))
        walked.append((sha.strip(), names))
    return walked


def _cached_commit_paths(
    repo: Repo, span: str, cache: CommitCache
) -> list[tuple[str, tuple[str, ...]]]:
    """:func:`_commit_paths` of *span*, reading from git only the commits *cache* lacks (and
    keeping them there): one ``rev-list`` when all are kept."""
    shas = git_text(repo, "rev-list", span).split()
    kept = cache.load()
    unseen = [sha for sha in shas if sha not in kept]
    if not unseen:
        return [(sha, kept[sha]) for sha in shas]
    if len(unseen) <= _BY_ID:
        read = dict(_commit_paths(git_text(repo, *_LOG, "--no-walk=unsorted", *unseen)))
    else:
        read = dict(_commit_paths(git_text(repo, *_LOG, span)))
    if any(sha not in read for sha in unseen):  # git listed them, and should have read them
        return _commit_paths(git_text(repo, *_LOG, span))
    cache.save(kept, {sha: read[sha] for sha in unseen})
    return [(sha, read[sha] if sha in read else kept[sha]) for sha in shas]


def _newest_of(path: str, newest: dict[str, str]) -> str | None:
    """The commit of *path*, else of the nearest enclosing path that is in *newest*: a
    submodule's pointer (``git log`` lists files, so a folder is never one of its names)."""
    while path:
        if path in newest:
            return newest[path]
        path = path.rpartition("/")[0]
    return None


def file_at(root: Path, rev: str, path: str) -> bytes | None:
    """The content of *path* (root-relative POSIX) at revision *rev*, or None when the file
    did not exist there (or the repository had no commits)."""
    with open_repo(root) as repo:
        if not rev.startswith("-") and ":" not in rev and "\n" not in rev + path:
            commit = f"{rev}^{{commit}}"  # one process: the commit, then the file in it
            found = _objects(repo, [commit, f"{commit}:{path}"])
            if found[0] is not None:
                return _blob(found[1], path, rev)
        base = resolve(repo, rev, allow_unborn=True)  # says why there is none
        if base == EMPTY_TREE or "\n" in path:  # no file of a plan has a newline in its name
            return None
        return _blob(_objects(repo, [f"{base}:{path}"])[0], path, rev)


def _objects(repo: Repo, names: list[str]) -> list[tuple[str, bytes] | None]:
    """The type and content of each object *names* name (None for one that names none), from
    one ``git cat-file --batch`` (names are its input, never options; none holds a newline)."""
    given = "".join(f"{name}\n" for name in names).encode("utf-8", "surrogateescape")
    out = run_git_bytes(repo, "cat-file", "--batch", stdin=given)
    found: list[tuple[str, bytes] | None] = []
    at = 0
    for _ in names:
        end = out.find(b"\n", at)
        fields = out[at:end].split() if end >= 0 else []
        if len(fields) != 3 or not fields[2].isdigit():  # `NAME missing`, `NAME ambiguous`
            found.append(None)
            at = end + 1 if end >= 0 else len(out)
            continue
        size = int(fields[2])
        found.append((fields[1].decode("ascii", "replace"), out[end + 1 : end + 1 + size]))
        at = end + 1 + size + 1  # the content, then a newline
    return found


def _blob(found: tuple[str, bytes] | None, path: str, rev: str) -> bytes | None:
    """The content of a file found at *rev*; None when there is none, a :class:`GitError` when
    *path* names something else there (a folder)."""
    if found is None:
        return None
    kind, content = found
    if kind != "blob":
        raise GitError(f"{path} at {rev} is a {kind}, not a file")
    return content


def revision_exists(root: Path, rev: str) -> bool:
    """True when *rev* names a commit of the repository at *root*."""
    with open_repo(root) as repo:
        return verify_commit(repo, rev) is not None


def is_ancestor(root: Path, rev: str, of: str = "HEAD") -> bool:
    """True when commit *rev* is in the history of *of* (False after a rebase dropped it)."""
    if rev.startswith("-") or of.startswith("-"):
        return False
    with open_repo(root) as repo:  # git says no for a name that is no commit
        return git_succeeds(repo, "merge-base", "--is-ancestor", rev, of)


def commits_since(
    root: Path, pairs: Iterable[tuple[str, str | None]], *, cache: CommitCache | None = None
) -> tuple[dict[str, str], list[str]]:
    """For (path, evidence commit) pairs: the newest commit since the evidence commit that
    changed each path (read through *cache* when given), and notes for a person. Outside git,
    or for an evidence commit no longer in the history of ``HEAD`` (a rebase), paths get no
    commit and a note says so."""
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
            notes.append(_lost_commit_note(root, since))
            continue
        for path, sha in last_commits(root, since, paths, cache=cache).items():
            commits.setdefault(path, sha)
    return commits, notes


def _lost_commit_note(root: Path, since: str) -> str:
    """Why evidence commit *since* is not in the history of ``HEAD``: rebased or dropped, or,
    in a shallow clone, maybe only not fetched."""
    with open_repo(root) as repo:
        shallow = is_shallow(repo)
    if not shallow:
        return (
            f"evidence commit {since[:7]} is not in the history of HEAD (rebased or dropped); "
            "its subjects are judged by file hashes alone"
        )
    return (
        f"evidence commit {since[:7]} is not in the fetched history of this shallow clone (it "
        "may be outside it, or rebased or dropped); its subjects are judged by file hashes "
        f"alone; to name the commits behind the changes, fetch the full history ({FETCH_ALL})"
    )
