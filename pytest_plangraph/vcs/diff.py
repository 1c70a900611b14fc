"""The paths that changed between two commits, or from a commit to the working tree, with
changed submodules looked into: the diff part of :mod:`.history`.

A submodule is a gitlink in its parent repository: a commit id, not files. A changed gitlink
is replaced by the files that changed inside it, under its path, down nested submodules. The
submodule is read from its checkout or, when that is gone (removed, deinitialized), from the
history git keeps of it under ``.git/modules``. A renamed submodule renames every file in it.
When the files inside cannot be listed, the submodule is reported as its own path with a note,
and the change stands for every path under it (:attr:`Change.subtree`).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ..errors import GitError
from ..values import replace
from .changes import Change, made_change
from .run import EMPTY_TREE, git_text, is_shallow, open_git_dir, open_submodule, verify_commit
from .spawn import GitTimeoutError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from .changes import ChangeKind

_STATUS: dict[str, ChangeKind] = {
    "M": "modified",
    "T": "modified",
    "A": "added",
    "C": "added",
    "D": "deleted",
    "R": "renamed",
}


def tree_changes(repo: Any, base: str, target: str | None) -> list[Change]:
    """The changes from commit *base* to commit *target* (None: the working tree and its
    untracked files) in *repo*, changed submodules expanded, in git's order."""
    return _changes(repo, base, target, "")


_GITLINK = "160000"
_NO_FILE = "000000"
_NO_SHA = "0" * 40


class _Raw:
    """One record of ``git diff --raw``: the change and the modes and objects at both ends (a
    plain class: one is made per changed path, and a diff of a long range has thousands)."""

    __slots__ = ("change", "new_mode", "new_sha", "old_mode", "old_sha")

    def __init__(
        self, change: Change, old_mode: str, new_mode: str, old_sha: str, new_sha: str
    ) -> None:
        self.change = change
        self.old_mode = old_mode
        self.new_mode = new_mode
        self.old_sha = old_sha
        self.new_sha = new_sha


def _changes(repo: Any, base: str, target: str | None, prefix: str) -> list[Change]:
    """:func:`tree_changes`, paths prefixed with *prefix*. Submodules are compared whatever
    ``diff.ignoreSubmodules`` or ``submodule.*.ignore`` say: a change must not be missed
    because it is hidden from ``git status``."""
    revs = (base,) if target is None else (base, target)
    options = ("-z", "--raw", "--no-abbrev", "-M", "--no-ext-diff", "--ignore-submodules=none")
    changes: list[Change] = []
    records = list(_parse_raw(git_text(repo, "diff", *options, *revs)))
    for record in _paired(repo, records, (base, target)):
        if _mode_only(repo, record):
            continue
        modes = {record.old_mode, record.new_mode}
        if _GITLINK not in modes:
            changes.append(_prefixed(record.change, prefix))
            continue
        if modes - {_GITLINK, _NO_FILE}:  # a file became a submodule, or a submodule a file
            changes.append(_prefixed(record.change, prefix))
        changes += _submodule_changes(repo, record, (base, target), prefix)
    if target is None:
        untracked = git_text(repo, "ls-files", "-z", "--others", "--exclude-standard")
        changes += [made_change(prefix + p, "untracked") for p in untracked.split("\0") if p]
    return changes


_REGULAR = frozenset({"100644", "100755"})


def _mode_only(repo: Any, record: _Raw) -> bool:
    """Whether only the file's mode changed (``chmod +x``): evidence binds content, not modes.
    A file of the working tree has no object yet; it is hashed as git would store it."""
    if record.change.change != "modified" or record.old_mode == record.new_mode:
        return False
    if not {record.old_mode, record.new_mode} <= _REGULAR:
        return False
    new_sha = record.new_sha
    if new_sha == _NO_SHA:
        new_sha = git_text(repo, "hash-object", "--", record.change.path).strip()
    return new_sha == record.old_sha


def _submodule_changes(
    repo: Any, record: _Raw, ends: tuple[str, str | None], prefix: str
) -> list[Change]:
    """What changed inside the submodule of *record*: from the commit recorded at the start to
    the one recorded at the end, or, when *ends* ends at the working tree and the submodule is
    checked out, to its working tree. Either end may be no submodule at all (the empty tree)."""
    old = record.old_sha if record.old_mode == _GITLINK else EMPTY_TREE
    new: str | None = record.new_sha if record.new_mode == _GITLINK else EMPTY_TREE
    with _open_submodule(repo, record, ends) as (inner, checked_out):
        if inner is None:
            if record.new_mode == _NO_FILE:
                return [_unlisted(record, prefix, "it was removed and its history is gone", "")]
            return [_unlisted(record, prefix, "it is not checked out here", _UPDATE)]
        if ends[1] is None and record.new_mode == _GITLINK and checked_out:
            new = None
        for sha in (old, new):
            if sha not in (None, EMPTY_TREE) and verify_commit(inner, sha) is None:
                fix = _fetch(inner, prefix + record.change.path, checked_out, record)
                return [_unlisted(record, prefix, f"it lacks commit {sha[:7]}", fix)]
        now = f"{prefix}{record.change.path}/"
        inside = _changes(inner, old, new, now)
        if record.change.old_path is None or old == EMPTY_TREE:
            return inside
        return _moved(inner, old, inside, f"{prefix}{record.change.old_path}/", now)


def _paired(repo: Any, records: list[_Raw], ends: tuple[str, str | None]) -> list[_Raw]:
    """*records* with a removed submodule and an added one of the same name (``.gitmodules``
    at each end) made one rename: git pairs a moved submodule only when its commit stays."""
    gone = [i for i, r in enumerate(records) if (r.old_mode, r.new_mode) == (_GITLINK, _NO_FILE)]
    new = [i for i, r in enumerate(records) if (r.old_mode, r.new_mode) == (_NO_FILE, _GITLINK)]
    if not gone or not new:
        return records
    was, now = _module_names(repo, ends[0]), _module_names(repo, ends[1])
    by_name = {was.get(records[i].change.path, records[i].change.path): i for i in gone}
    paired = list(records)
    dropped: set[int] = set()
    for i in new:
        added = records[i]
        j = by_name.pop(now.get(added.change.path, added.change.path), None)
        if j is not None:
            change = Change(added.change.path, "renamed", records[j].change.path)
            paired[i] = _Raw(change, _GITLINK, _GITLINK, records[j].old_sha, added.new_sha)
            dropped.add(j)
    return [r for k, r in enumerate(paired) if k not in dropped]


@contextmanager
def _open_submodule(
    repo: Any, record: _Raw, ends: tuple[str, str | None]
) -> Iterator[tuple[Any, bool]]:
    """The submodule of *record* and whether it is its checkout; else its history under the
    git directory's ``modules`` (a removed or deinitialized submodule; not for a working tree
    end that git could not name, all zeros); else None."""
    checkout = Path(repo.working_tree_dir) / record.change.path
    if (checkout / ".git").exists():
        with open_submodule(checkout) as inner:
            yield inner, True
        return
    unnamed = record.new_mode == _GITLINK and record.new_sha == _NO_SHA
    git_dir = None if unnamed else _module_dir(repo, record, ends)
    if git_dir is None:
        yield None, False
        return
    with open_git_dir(git_dir) as inner:
        yield inner, False


def _module_dir(repo: Any, record: _Raw, ends: tuple[str, str | None]) -> Path | None:
    """Where git keeps the history of the submodule of *record* (``modules/NAME`` of the git
    directory, NAME from ``.gitmodules`` at either end: a moved submodule keeps its name)."""
    common = git_text(repo, "rev-parse", "--git-common-dir").strip()
    modules = Path(repo.working_tree_dir) / common / "modules"
    names = {**_module_names(repo, ends[0]), **_module_names(repo, ends[1])}
    for path in (record.change.path, record.change.old_path):
        if path is not None and (modules / names.get(path, path) / "HEAD").is_file():
            return modules / names.get(path, path)
    return None


def _module_names(repo: Any, rev: str | None) -> dict[str, str]:
    """Submodule path → name, from ``.gitmodules`` at commit *rev* (None: the working tree)."""
    if rev is None:
        file = Path(repo.working_tree_dir) / ".gitmodules"
        source = ("--file", str(file)) if file.is_file() else None
    else:
        source = None if rev == EMPTY_TREE else ("--blob", f"{rev}:.gitmodules")
    if source is None:
        return {}
    try:
        raw = git_text(repo, "config", *source, "-z", "--get-regexp", r"^submodule\..*\.path$")
    except GitTimeoutError:  # git did not answer: that is no "no"
        raise
    except GitError:  # no .gitmodules there, or no path in it
        return {}
    names: dict[str, str] = {}
    for entry in raw.split("\0"):
        key, _, path = entry.partition("\n")
        if path:
            names[path] = key[len("submodule.") : -len(".path")]
    return names


def _moved(inner: Any, old: str, inside: list[Change], was: str, now: str) -> list[Change]:
    """The changes of a submodule moved from prefix *was* to *now*: every file it had at
    commit *old* is renamed, changed inside or not; a file deleted inside goes from *was*;
    what is new inside (*inside*: the changes under *now*) is new under *now*."""
    moved: list[Change] = []
    seen: set[str] = set()
    for change in inside:
        source = change.old_path or change.path
        seen.update((change.path, source))
        if change.change == "deleted":
            moved.append(replace(change, path=was + change.path[len(now) :]))
        elif change.change in ("modified", "renamed"):
            moved.append(replace(change, change="renamed", old_path=was + source[len(now) :]))
        else:
            moved.append(change)
    for entry in _changes(inner, EMPTY_TREE, old, now):  # every file at *old*, as added
        if entry.path not in seen:
            moved.append(replace(entry, change="renamed", old_path=was + entry.path[len(now) :]))
    return moved


_UPDATE = "`git submodule update --init --recursive`"


def _fetch(inner: Any, where: str, checked_out: bool, record: _Raw) -> str:
    """How to get the commits a submodule lacks."""
    if not checked_out:
        return "" if record.new_mode == _NO_FILE else _UPDATE
    fetch = "fetch --unshallow" if is_shallow(inner) else "fetch"
    return f"`git -C {where} {fetch}`, or {_UPDATE}"


def _unlisted(record: _Raw, prefix: str, reason: str, fix: str) -> Change:
    """The submodule's own path, standing for every path under it, for changes inside it that
    cannot be listed."""
    where = _prefixed(record.change, prefix)
    note = (
        f"submodule {where.path} changed, but the files changed inside it are not listed: "
        f"{reason}{f' (run {fix})' if fix else ''}; the path {where.path} is reported "
        "instead, as a change of every path under it"
    )
    return replace(where, note=note, subtree=True)


def _prefixed(change: Change, prefix: str) -> Change:
    if not prefix:
        return change
    old = None if change.old_path is None else prefix + change.old_path
    return replace(change, path=prefix + change.path, old_path=old)


def _parse_raw(raw: str) -> Iterator[_Raw]:
    """The records of ``git diff -z --raw`` output: ``:modes shas status``, then one path, or
    two for a rename or copy (the old one first)."""
    fields = iter(raw.split("\0"))
    for head in fields:
        if not head.startswith(":"):
            continue
        old_mode, new_mode, old_sha, new_sha, status = head[1:].split()[:5]
        letter = status[:1]
        first = next(fields)
        if letter in ("R", "C"):
            path = next(fields)
            change = made_change(path, _STATUS[letter], first if letter == "R" else None)
        else:
            change = made_change(first, _STATUS.get(letter, "modified"))
        yield _Raw(change, old_mode, new_mode, old_sha, new_sha)
