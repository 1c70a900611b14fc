"""Lint's answer for a command kept (the plan's errors, and the settings warnings a command
goes on past), so that an unchanged plan in an unchanged tree is checked without building the
verifier registry or running lint's rules.

The answer is kept in ``lint-answer.json`` in the plan cache folder, tagged with this user's
key as every cache file is (:func:`~pytest_plangraph.store.derived.write_tagged`), under a key
of everything it depends on:

* the plan file's bytes (its sha256: findings say which lines they are on) and where it is
  (the repository root and the plan file's name);
* the package's code (:func:`~pytest_plangraph.plan.cache.lint_version`) and the ``PLANGRAPH_*``
  settings (:func:`settings`);
* the plug-ins (the caller names them: :func:`~pytest_plangraph.hooks.entrypoints.plugins_key`):
  every ``plangraph`` entry point of the installed distributions, each named by its metadata
  folder, which carries the version, and by its code's files (a plug-in edited in place keeps
  its version), and the plugins registered with this process's manager
  when it was built before the check; a plugin a ``conftest.py`` registered is named by no
  version, and then nothing is kept or taken.

With the answer goes a watch (:mod:`pytest_plangraph.vcs.watch`, as with ``status``'s kept
answer) of what the file checks looked at: each directory above each path the plan names
(and the root), by inode, mode, mtime and ctime — a file created, removed or replaced by a
symlink there changes its directory's listing — and the directories a glob walks. An answer
is kept only when the file checks read nothing else: no verifier type's own settings check
was asked (``schema``, ``command`` and plug-in types may read any file), no path climbs with
``..`` and no path or directory on the way is a symlink (where a link leads can change under
an unchanged listing). A directory modified within the racy window is not trusted by its
times: nothing is kept.

A cache never decides: on a miss (no file, another key, a tag that is not this user's, damaged
data, a directory changed) the plan is checked as without it, and the answer kept again.
"""

from __future__ import annotations

import json
import os
import posixpath
import stat
import time
from collections.abc import Iterable

from ..errors import GIT_TIMEOUT_SETTING
from ..hashes import sha256_hex
from ..plan.cache import lint_version
from ..plan.paths import is_glob, normalize, path_problem
from ..store.derived import read_tagged, write_tagged
from ..vcs.watch import changed_files, make_watch
from .findings import Finding, from_kept, to_kept

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from ..plan.file import LoadedPlan
    from ..vcs.workspace import Workspace
    from .files import WorkspaceFileCheck

__all__ = ["NAME", "KeptCheck", "kept_problems"]

NAME = "lint-answer.json"
"""The kept answer's file in the plan cache folder."""
PERSON = b"plangraph-lint"
"""The tag of the kept answer's file (a file of another kind never reads as this one)."""
FORMAT = 1
"""The kept answer's record format: changes when the record does."""

Problems = tuple[list[Finding], list[Finding]]


class KeptCheck:
    """One command's look at the kept answer: :meth:`found` gives it when it holds, and
    :meth:`keep` keeps the answer worked out on a miss under the key the look made (what it
    depends on as the look found it, before the check built anything)."""

    def __init__(self, loaded: LoadedPlan, workspace: Workspace, plugins: Any) -> None:
        self.loaded = loaded
        self.workspace = workspace
        self.started_ns = time.time_ns()
        self.key = None if plugins is None else _key(loaded, workspace, plugins)
        self.settled: dict[str, bool] | None = None
        """On a hit: the built-in types the plan uses that no plug-in registers too, and
        whether each runs (:func:`~pytest_plangraph.hooks.manager.get_registry`)."""

    def found(self) -> Problems | None:
        """The kept (errors, settings warnings) when the key and the watch hold, else None."""
        cache = self.workspace.cache
        if self.key is None or cache is None:
            return None
        kept = read_tagged(cache / NAME, PERSON)
        if not isinstance(kept, dict) or kept.get("key") != self.key:
            return None
        file = self.loaded.file
        errors = from_kept(kept.get("errors"), file)
        warnings = from_kept(kept.get("warnings"), file)
        if errors is None or warnings is None:
            return None
        try:
            changed = changed_files(str(self.workspace.root), kept["watch"])
        except (KeyError, TypeError, ValueError, IndexError):  # damaged: checked again
            return None
        if changed != []:
            return None
        settled = kept.get("settled")
        if isinstance(settled, dict) and all(
            isinstance(k, str) and isinstance(v, bool) for k, v in settled.items()
        ):
            self.settled = settled
        return errors, warnings

    def keep(self, files: WorkspaceFileCheck, problems: Problems, settled: dict[str, bool]) -> None:
        """Keep *problems*, which the file check *files* helped find, when a watch can stand
        for what it read (see the module docstring), with the *settled* types (see
        :attr:`settled`)."""
        cache = self.workspace.cache
        if self.key is None or cache is None or files.settings_read:
            return
        watch = _watch(str(self.workspace.root), files.asked, self.started_ns)
        if watch is None:
            return
        file = self.loaded.file
        errors, warnings = problems
        record = {
            "key": self.key,
            "errors": to_kept(errors, file),
            "warnings": to_kept(warnings, file),
            "watch": watch,
            "settled": settled,
        }
        write_tagged(cache / NAME, record, PERSON)


def kept_problems(
    loaded: LoadedPlan, workspace: Workspace, plugins: Any
) -> tuple[KeptCheck, Problems | None]:
    """The look at *workspace*'s kept answer for *loaded* with the plug-ins *plugins* names
    (None: plug-ins no version names, nothing kept or taken), and what it found (None: a
    miss)."""
    look = KeptCheck(loaded, workspace, plugins)
    return look, look.found()


def settings() -> list[list[str]]:
    """The ``PLANGRAPH_*`` settings of this process, sorted (the one that turns the plug-ins
    off among them; keys left out: with keys configured nothing is kept; the bound on git's
    time left out: it changes no finding, a git past it fails the command)."""
    return sorted(
        [k, v]
        for k, v in os.environ.items()
        if k.startswith("PLANGRAPH_") and "KEY" not in k and k != GIT_TIMEOUT_SETTING
    )


def _key(loaded: LoadedPlan, workspace: Workspace, plugins: Any) -> str:
    """The sha256 of what the answer depends on (see the module docstring); its text all
    ASCII, so a setting or a path holding text no UTF-8 carries (a lone surrogate from bytes
    that are not UTF-8) is hashed as its escape, not refused here."""
    parts: list[Any] = [
        FORMAT,
        lint_version(),
        loaded.source,
        str(loaded.file),
        str(workspace.root),
        settings(),
        plugins,
    ]
    return sha256_hex(json.dumps(parts).encode())


def _watch(root: str, asked: Iterable[str], started_ns: int) -> dict[str, Any] | None:
    """The watch of the directories above each of the *asked* paths and of those its globs
    walk; None when a path climbs, one on the way is a symlink or changed too recently."""
    listed: dict[str, None] = {"": None}
    globs = []
    for rel in asked:
        if path_problem(rel) is not None:
            continue  # answered from its text alone
        if ".." in rel.split("/"):
            return None  # resolved from where a link leads: not watched
        if is_glob(rel):
            globs.append(rel)
        path = normalize(rel)
        try:
            info = os.lstat(os.path.join(root, path))
        except (FileNotFoundError, NotADirectoryError):
            info = None
        except OSError:
            return None
        if info is not None and stat.S_ISLNK(info.st_mode):
            return None
        parent = posixpath.dirname(path)
        while parent and parent not in listed:
            listed[parent] = None
            parent = posixpath.dirname(parent)
    return make_watch(root, {}, globs, started_ns, listed=listed)
