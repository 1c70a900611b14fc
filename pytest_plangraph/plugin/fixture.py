"""The ``plangraph`` fixture: the plan under test, and artifacts a test declares it produced.

``plangraph.artifact(path)`` binds a file the test wrote as a subject of the evidence of every
criterion the test verifies. The path travels as a ``plangraph_artifact`` user property (a plain
string, so it crosses xdist) and is hashed by the controller at session end. Without
``--plangraph`` the fixture still works: ``plan`` loads the plan file on first use and
``artifact`` only checks and returns the path.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from ..errors import UsageError
from ..plan.paths import normalize, path_problem

if TYPE_CHECKING:
    from ..plan.model import Plan
    from .session import PlangraphSession


class PlangraphFixture:
    """What the ``plangraph`` fixture gives a test."""

    def __init__(self, item: pytest.Item, session: PlangraphSession | None) -> None:
        self._item = item
        self._session = session
        self._plan: Plan | None = None

    @classmethod
    def for_request(
        cls, request: pytest.FixtureRequest, session: PlangraphSession | None
    ) -> PlangraphFixture:
        """The fixture value for the test of *request*."""
        item = request.node
        assert isinstance(item, pytest.Item)
        return cls(item, session)

    @property
    def active(self) -> bool:
        """True when the run records evidence (``--plangraph`` was given)."""
        return self._session is not None

    @property
    def plan(self) -> Plan:
        """The loaded plan."""
        if self._session is not None:
            return self._session.plangraph.plan
        if self._plan is None:
            from ..plan.file import load_plan
            from .config import plan_path

            try:
                self._plan = load_plan(plan_path(self._item.config)).plan
            except Exception as exc:
                raise pytest.UsageError(f"plangraph fixture: {exc}") from None
        return self._plan

    def artifact(self, path: str | os.PathLike[str]) -> str:
        """Declare that this test produced *path* (relative to the repository root, or an
        absolute path inside it); returns the repository-relative path."""
        given = Path(path)
        if self._session is None:
            return given.as_posix()
        if given.is_absolute():
            try:
                rel = self._session.plangraph.workspace.relative(given)
            except UsageError as exc:  # a test's mistake: an exception of the test's own kind
                raise ValueError(f"plangraph.artifact({str(given)!r}): {exc}") from None
        else:
            rel = given.as_posix()
            if problem := path_problem(rel):
                raise ValueError(f"plangraph.artifact({rel!r}): {problem}")
            rel = normalize(rel)
        if self._session.plangraph.workspace.escapes(rel):
            raise ValueError(f"plangraph.artifact({rel!r}) resolves outside the repository root")
        if (self._session.plangraph.root / rel).is_dir():
            raise ValueError(
                f"plangraph.artifact({rel!r}) is a directory; declare each file it produced"
            )
        from .evidence import ARTIFACT_PROPERTY  # what the run's session imported already

        self._item.user_properties.append((ARTIFACT_PROPERTY, rel))
        return rel
