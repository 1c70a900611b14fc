"""File-backed lint checks: symlinks out of the root and verifier settings read from disk.

Lint itself is pure; this adapter gives it what only the repository and the installed verifier
types can answer.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import TYPE_CHECKING

from ..plan.model import Criterion, Node, SchemaVerifier
from ..plan.paths import is_glob, normalize
from ..vcs.workspace import Workspace

if TYPE_CHECKING:
    from ..verifiers import Registry


class WorkspaceFileCheck:
    """Answers lint's file questions from a :class:`Workspace` and the verifier registry (run
    inside :func:`~pytest_plangraph.vcs.workspace.remembered_escapes`, each path is looked at on
    disk once, the verifiers' settings checks included)."""

    def __init__(self, workspace: Workspace, registry: Registry) -> None:
        self.workspace = workspace
        self.registry = registry
        self.types = frozenset(registry.names())
        self._on_disk: dict[str, bool] = {}
        self.not_settings: set[tuple[str, str]] = set()
        """(node, criterion) whose verifier problems are about the files or the installation,
        not the settings the plan wrote: a ``schema`` verifier's schema file missing or not a
        valid schema, a type name registered by several plugins. A command goes on past
        those (their criteria fail or go stale); lint reports them all the same."""
        self.asked: dict[str, None] = {}
        """Every path whose place on disk was asked about (an escape, a file present): what
        a kept answer watches (:mod:`.kept`)."""
        self.settings_read = False
        """True once a verifier type's settings check was asked (it may read any file)."""

    def escapes(self, path: str) -> bool:
        """True when *path* resolves outside the repository (e.g. through a symlink)."""
        self.asked[path] = None
        return self.workspace.escapes(path)

    def escaping(self, paths: Iterable[str]) -> set[str]:
        """Those of *paths* that resolve outside the repository (see :meth:`escapes`)."""
        paths = list(paths)
        self.asked.update(dict.fromkeys(paths))
        return self.workspace.escaping(paths)

    def settings_on_disk(self, verifier_type: str) -> bool:
        """False for a built-in type whose settings check reads the settings alone (lint's
        plan-only rules check it)."""
        found = self._on_disk.get(verifier_type)
        if found is None:  # asked once per criterion: answered once per type
            found = self._on_disk[verifier_type] = not self.registry.settings_alone(verifier_type)
        return found

    def verifier_problems(self, node: Node, criterion: Criterion) -> list[str]:
        """What is wrong with the criterion's verifier settings (empty for unknown types)."""
        if criterion.verifier.type not in self.types:
            return []
        self.settings_read = True
        problems = list(self.registry.config_problems(criterion, self.workspace))
        if problems and self._not_settings(criterion):
            self.not_settings.add((node.id, criterion.id))
        return problems

    def is_file(self, path: str) -> bool:
        """True when *path*, taken as it is written (glob characters too), names a file."""
        self.asked[path] = None
        return os.path.isfile(self.workspace.root / normalize(path))

    def present(self, patterns: Iterable[str]) -> set[str]:
        """Those of *patterns* that name a file or directory in the repository (a glob: one
        that matches)."""
        found = set()
        for pattern in dict.fromkeys(patterns):
            self.asked[pattern] = None
            # a file may be named with glob characters (`test_[v2].py`): the path itself counts
            # os.path.exists: a name too long to look up is not there (Path.exists raises)
            if os.path.exists(self.workspace.root / normalize(pattern)):
                found.add(pattern)
            elif is_glob(pattern) and self.workspace.expand([pattern]):
                found.add(pattern)
        return found

    def _not_settings(self, criterion: Criterion) -> bool:
        verifier = criterion.verifier
        if self.registry.clashing(verifier.type):
            return True
        if not isinstance(verifier, SchemaVerifier):
            return False
        from ..verifiers import path_setting_problems, settings_of

        # the paths are well written: what is wrong is the schema file as it is now
        settings = settings_of(verifier)
        return not path_setting_problems(settings, ("schema", "artifact"), self.workspace)
