"""File-backed lint checks: symlinks out of the root and verifier settings read from disk.

Lint itself is pure; this adapter gives it what only the repository and the installed verifier
types can answer.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .model import Criterion, Node
from .vcs import Workspace

if TYPE_CHECKING:
    from .verifiers import Registry


@dataclass(frozen=True)
class _Remembering(Workspace):
    """A workspace that looks at each path on disk once: one lint run asks about most paths
    twice (an output is often its artifact criterion's path too, which the verifier's settings
    check asks about again)."""

    answers: dict[str, bool] = field(default_factory=dict, compare=False, repr=False)

    def escapes(self, rel: str) -> bool:
        """:meth:`Workspace.escapes`, remembered per path for this workspace's life."""
        found = self.answers.get(rel)
        if found is None:
            found = self.answers[rel] = super().escapes(rel)
        return found


class WorkspaceFileCheck:
    """Answers lint's file questions from a :class:`Workspace` and the verifier registry (each
    path is looked at once per check: the verifiers' settings checks share the answers)."""

    def __init__(self, workspace: Workspace, registry: Registry) -> None:
        self.workspace: Workspace = _Remembering(workspace.root, workspace.ignored)
        self.registry = registry
        self.types = frozenset(registry.names())

    def escapes(self, path: str) -> bool:
        """True when *path* resolves outside the repository (e.g. through a symlink)."""
        return self.workspace.escapes(path)

    def verifier_problems(self, node: Node, criterion: Criterion) -> list[str]:
        """What is wrong with the criterion's verifier settings (empty for unknown types)."""
        if criterion.verifier.type not in self.types:
            return []
        return list(self.registry.config_problems(criterion, self.workspace))
