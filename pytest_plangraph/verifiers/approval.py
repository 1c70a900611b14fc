"""The ``approval`` verifier: satisfied by an ``approve`` event, never by running anything.

An approval is bound to the node's input digest when it is given, so it goes stale like any
evidence (DESIGN §5); that binding lives in the status derivation, not here. This type exists so
that the registry knows the name, lint can check the settings, and a request to *run* an
approval criterion gets a clear answer (``error``/``NOT_RUNNABLE``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from . import VerifierResult, not_runnable

if TYPE_CHECKING:
    from ..plan.model import Criterion, Node
    from ..vcs.workspace import Workspace


class ApprovalType:
    """Built-in ``approval`` verifier type (optional setting ``role``)."""

    name = "approval"
    runs_in_pytest = False

    def config_problems(self, settings: Mapping[str, Any], workspace: Workspace) -> list[str]:
        """``role``, when given, must be a non-empty name (nothing on disk is looked at)."""
        return self.settings_problems(settings)

    @staticmethod
    def settings_problems(settings: Mapping[str, Any]) -> list[str]:
        """:meth:`config_problems`, from the settings alone."""
        role = settings.get("role")
        if role is not None and not (isinstance(role, str) and role.strip()):
            return ["role: expected a non-empty name such as 'security'"]
        return []

    def run(self, node: Node, criterion: Criterion, workspace: Workspace) -> VerifierResult:
        """Approvals are given with ``plangraph approve``; running one is an error."""
        return not_runnable(self.name)
