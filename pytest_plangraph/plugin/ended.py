"""What the subjects that name no file are at the end of a ``pytest --plangraph`` run.

Two kinds of subject stand for a fact, not a file's bytes: what pytest could collect under a
folder (:func:`~pytest_plangraph.vcs.testglob.collect_key`; which of its test files quote a
criterion's reference, :func:`~pytest_plangraph.vcs.quotes.quotes_key`) and whether a
configuration file pytest passed over holds a pytest section (``pyproject.toml#pytest``,
:func:`~pytest_plangraph.judge.sections.section_subject`). Hashing their path finds no file, so
the record maker asks :class:`EndValues` for them instead: a test file written into a
collected folder, a marker written into a test file, or a pytest table written into
``pyproject.toml``, while the tests ran then differs from what the run bound when it started,
and voids the record (``ARTIFACT_CHANGED_DURING_RUN``) as a changed file does.

:class:`EndHashes` hashes the files themselves, once each per run, for both the record maker and
:class:`EndValues`. It is an object of its own, not a method of
:class:`~.building.EvidenceBuilder`: the builder holds its :class:`EndValues`, so a bound method
of the builder held there would make a reference cycle, which kept the builder and all it
reaches (the plan, both snapshots, every record made) alive after the session closed until a
full run of the garbage collector found them (pytest runs two at ``pytest_unconfigure``).
Without the cycle they are freed by their reference counts when the session lets go of them.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from ..judge.sections import has_pytest_section, section_file
from ..plan.evidence import ABSENT
from ..vcs.quotes import CollectValues
from ..vcs.testglob import is_collect_key

if TYPE_CHECKING:
    from ..vcs.workspace import Workspace

__all__ = ["EndHashes", "EndValues"]


class EndHashes:
    """The sha256 of each file the run's records bind, at the end of the run: each hashed once
    per run (:meth:`of`). Holds the workspace and the hashes only, so nothing that holds it is
    kept alive by it (no reference cycle through a record builder)."""

    def __init__(self, workspace: Workspace) -> None:
        self._workspace = workspace
        self._hashes: dict[str, str | None] = {}

    def of(self, path: str) -> str | None:
        """The sha256 of the file at *path*, hashed once per run; None for a walk's subject,
        which names no file (its value is the run's), and for no file."""
        hashes = self._hashes
        if path not in hashes:
            collect = is_collect_key(path)
            hashes[path] = None if collect else self._workspace.hash_file(path)
        return hashes[path]


class EndValues:
    """The end-of-run value of each collect key and pytest-section subject, each found once
    per run (a folder is walked once however many records bind it, a test file read once for
    the references it quotes however many criteria ask)."""

    def __init__(self, root: Path, hash_file: Callable[[str], str | None]) -> None:
        self.root = root
        self._hash_file = hash_file
        self._found: dict[str, str] = {}
        self._walks = CollectValues(os.fspath(root))
        self._files: set[str] = set()
        """The paths found to name a file (no collect key, no pytest section): told once."""

    def of(self, paths: Iterable[str]) -> dict[str, str]:
        """The value now of each subject of *paths* that names no file (others left out):
        the digest of what the folder could collect, and for a pytest section the sha256 of
        its file when it holds one, else :data:`~pytest_plangraph.plan.evidence.ABSENT`."""
        found: dict[str, str] = {}
        for path in paths:
            if path in self._files:
                continue
            if path in self._found:
                found[path] = self._found[path]
            elif is_collect_key(path):
                found[path] = self._walks.value(path)
            elif (config := section_file(path)) is not None:
                found[path] = self._section(config)
            else:
                self._files.add(path)
                continue
            self._found[path] = found[path]
        return found

    def _section(self, config: str) -> str:
        sha = self._hash_file(config)
        if sha is None:
            return ABSENT
        try:
            text = (self.root / config).read_text(encoding="utf-8", errors="replace")
        except OSError:
            return sha  # there but unreadable: not what was bound absent
        return sha if has_pytest_section(config, text) else ABSENT
