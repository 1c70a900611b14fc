"""What looking at a kept ``status`` answer found when only files had changed since it was
kept (:func:`pytest_plangraph.derived.kept.kept_answer` records it): the command that then
runs in full takes the files found as kept by their ``lstat`` (:func:`known_files`) and,
when lint's answer cannot have changed with the changed files, the kept warnings
(:func:`kept_lint`). It lives as long as the command that looked."""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

from ..plan.cache import cache_dir_of
from ..values import dataclass
from .watch import Seen, file_entry

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from ..repository import Repository

KEY_SETTINGS = ("PLANGRAPH_SIGNING_KEY", "PLANGRAPH_TRUSTED_KEYS")
"""The settings that configure keys (``store.chain.SIGNING_KEY_ENV`` and
``store.trust.TRUSTED_KEYS_ENV``, named here so that checking them imports neither)."""

__all__ = [
    "KEY_SETTINGS",
    "MISSED",
    "Look",
    "answer_path",
    "checkpoint_of",
    "installed",
    "kept_lint",
    "keys_configured",
    "known_files",
    "settle",
    "still_files",
    "where_of",
]


@dataclass(frozen=True)
class Look:
    """What looking at the kept answer in *path* found when only files had changed: the
    sha256 of the *plan* file and the *installed* packages it was kept with (an answer kept
    from what the look found is kept with the installation the look saw, so that a package
    installed since is a miss next time), what :func:`changed_files` found (*seen*), and the
    kept *answer* when lint's answer cannot have changed with those files, else None, and the
    kept *record* itself."""

    path: str
    plan: str
    seen: Seen
    answer: Any
    installed: Any
    record: Any = None


MISSED: list[Look] = []
"""What the last :func:`kept_answer` of this process found when only files had changed since
the answer was kept: the kept answer's file, the sha256 of the plan file it was kept for,
what :func:`changed_files` found (:func:`known_files` and the next watch take the files found
as kept), and the kept answer when lint's answer cannot have changed with those files
(:func:`kept_lint`), else None. Every :func:`kept_answer` empties it first, so it never
outlives the command that looked."""


def kept_lint(repo: Repository, fmt: str) -> list[str] | None:
    """The warnings the plan's check printed for the kept answer of ``status --format fmt``
    when the check of *repo*'s plan cannot say anything else now: the answer missed because
    files changed whose bytes lint does not read (no verifier type of the plan reads a file's
    bytes to check its settings, and each changed file is a regular file or missing, as it
    was), for the plan file's bytes it was kept with, under the same code, settings and
    installation; None otherwise (the plan is checked)."""
    path = str(answer_path(repo.store_path, f"status-{fmt}"))
    if not MISSED or MISSED[0].path != path or MISSED[0].plan != repo.loaded.source:
        return None
    answer = MISSED[0].answer
    if not isinstance(answer, list) or len(answer) != 3 or not isinstance(answer[1], list):
        return None
    return [str(line) for line in answer[1]]


def still_files(root: str, seen: Seen) -> bool:
    """Whether each file *seen* did not find as kept is a regular file or missing now (as
    every watched file was when the watch was made)."""
    for rel in seen.fresh:
        try:
            info = os.lstat(os.path.join(root, rel))
        except (FileNotFoundError, NotADirectoryError):
            continue
        except OSError:
            return False
        if not stat.S_ISREG(info.st_mode):
            return False
    return True


def known_files(store_path: Path, name: str) -> dict[str, str | None] | None:
    """The files the answer kept as *name* for the store at *store_path* watched, by their
    sha256, that the last :func:`kept_answer` of this process found as kept by their
    ``lstat`` alone (it missed because other files changed); None when it did not look."""
    if not MISSED or MISSED[0].path != str(answer_path(store_path, name)):
        return None
    return MISSED[0].seen.held()


def answer_path(store_path: Path, name: str) -> Path:
    """The file of the answer kept as *name* for the store at *store_path*."""
    return cache_dir_of(store_path) / f"{name}.json"


def installed() -> list[list[Any]]:
    """The inode and mtime of each package folder on ``sys.path``: installing or removing a
    distribution (a plug-in whose verifier type clashes with a built-in one makes lint stop
    the command) changes its folder's listing, without reading every distribution's entry
    points as loading the plug-ins does."""
    found = []
    for entry in sys.path:
        if os.path.basename(entry) in ("site-packages", "dist-packages"):
            try:
                info = os.stat(entry)
            except OSError:
                continue
            found.append([entry, info.st_ino, info.st_mtime_ns])
    return found


def settle(
    record: dict[str, Any], root: str, plan: Path | None, seen: Seen | None, started_ns: int
) -> bool:
    """Trust by their ``lstat`` the files of a kept *record* that its look hashed again and
    found as kept, each one's entry made anew (:func:`~.watch.file_entry`), once it was written
    more than the racy window before the look began (*started_ns*, taken before anything was
    hashed): the plan file's entry when *plan* (its path) is given, the checkpoint's, and the
    watched files *seen* hashed again (given only when none changed). Whether an entry
    changed (then the record is to be written again); an entry still too young, or that
    cannot be made, stays as kept.

    Without this, an answer kept by a status that ran within the racy window of the last
    write of the checkpoint (the run before wrote it) or of the plan file kept them as too
    young to trust, and every later look hashed them again (the checkpoint is the log's
    fold: about 4 MB at 5,000 nodes)."""
    changed = False
    if plan is not None and record["plan"][2] is not True:
        entry = file_entry(str(plan.parent), plan.name, record["plan"][1], started_ns)
        if entry is not None and entry[3]:
            record["plan"] = entry[1:]
            changed = True
    checkpoint = record["checkpoint"]
    if checkpoint is not None and checkpoint[4] is not True:
        entry = file_entry(checkpoint[0], checkpoint[1], checkpoint[3], started_ns)
        if entry is not None and entry[3]:
            record["checkpoint"] = [checkpoint[0], *entry]
            changed = True
    if seen is not None and seen.fresh:
        files = []
        for kept in record["watch"]["files"]:
            entry = kept
            if kept[0] in seen.fresh:
                entry = file_entry(root, kept[0], kept[2], started_ns) or kept
                if entry[3] is not True or entry == kept:
                    entry = kept
            files.append(entry)
        if files != record["watch"]["files"]:
            record["watch"] = {**record["watch"], "files": files}
            changed = True
    return changed


def where_of(root: Path, plan: Path, store: Path) -> list[str]:
    """Where a kept answer was made: the root, plan and store paths and the working folder
    (an answer kept for other places is not this one)."""
    return [str(root), str(plan), str(store), os.getcwd()]


def checkpoint_of(store_path: Path) -> Path:
    """The log checkpoint's file of the store at *store_path* (the place
    ``checkpoint.checkpoint_path`` names, without importing the judge)."""
    return cache_dir_of(store_path) / f"log-{store_path.name}.json"


def keys_configured() -> bool:
    """Whether keys are configured (:data:`KEY_SETTINGS`): then no kept answer counts."""
    return any(os.environ.get(name) for name in KEY_SETTINGS)
