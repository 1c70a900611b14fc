"""The ``test`` verifier type: only the checking of its settings lives here.

Running tests, mapping them to criteria by ``tests:`` patterns and ``@pytest.mark.criterion``
markers, and judging their outcomes belong to the pytest plugin. The registry never runs a
``test`` criterion (``runs_in_pytest`` is False because the plugin maps tests itself rather than
making an item per criterion).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from . import VerifierResult, not_runnable

if TYPE_CHECKING:
    from ..plan.model import Criterion, Node
    from ..vcs.workspace import Workspace


class TestType:
    """Built-in ``test`` verifier type (optional ``tests``: node ids or fnmatch patterns)."""

    __test__ = False
    name = "test"
    runs_in_pytest = False

    def config_problems(self, settings: Mapping[str, Any], workspace: Workspace) -> list[str]:
        """``tests`` must be a list of non-empty strings without surrounding spaces (nothing
        on disk is looked at)."""
        return self.settings_problems(settings)

    @staticmethod
    def settings_problems(settings: Mapping[str, Any]) -> list[str]:
        """:meth:`config_problems`, from the settings alone."""
        patterns = settings.get("tests", [])
        if not isinstance(patterns, list):
            return ["tests: expected a list of pytest node ids or patterns"]
        return [
            f"tests[{index}]: expected a pytest node id or pattern such as"
            f" 'tests/test_login.py::*', got {pattern!r}"
            for index, pattern in enumerate(patterns)
            if not isinstance(pattern, str) or not pattern.strip() or pattern.strip() != pattern
        ]

    def run(self, node: Node, criterion: Criterion, workspace: Workspace) -> VerifierResult:
        """Tests are run by ``pytest --plangraph``; running one here is an error."""
        return not_runnable(self.name)
