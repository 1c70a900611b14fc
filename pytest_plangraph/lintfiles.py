"""File-backed lint checks: symlinks out of the root and verifier settings read from disk.

Lint itself is pure; this adapter gives it what only the repository and the installed verifier
types can answer.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from .model import Criterion, Node
from .vcs import Workspace

if TYPE_CHECKING:
    from .verifiers import Registry


class WorkspaceFileCheck:
    """Answers lint's file questions from a :class:`Workspace` and the verifier registry (run
    inside :func:`~pytest_plangraph.workspace.remembered_escapes`, each path is looked at on
    disk once, the verifiers' settings checks included)."""

    def __init__(self, workspace: Workspace, registry: Registry) -> None:
        self.workspace = workspace
        self.registry = registry
        self.types = frozenset(registry.names())

    def escapes(self, path: str) -> bool:
        """True when *path* resolves outside the repository (e.g. through a symlink)."""
        return self.workspace.escapes(path)

    def escaping(self, paths: Iterable[str]) -> set[str]:
        """Those of *paths* that resolve outside the repository (see :meth:`escapes`)."""
        return self.workspace.escaping(paths)

    def verifier_problems(self, node: Node, criterion: Criterion) -> list[str]:
        """What is wrong with the criterion's verifier settings (empty for unknown types)."""
        if criterion.verifier.type not in self.types:
            return []
        return list(self.registry.config_problems(criterion, self.workspace))
