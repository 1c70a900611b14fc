"""Starter plans, which need no open repository: ``plangraph init`` writes one from the code and
tests a repository has, ``plangraph import`` converts the task lists agents already write.
:class:`~pytest_plangraph.api.PlanGraph` offers both as static methods."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from . import apicheck

if TYPE_CHECKING:
    from pathlib import Path

    from .importers.starter import ImportedPlan

__all__ = ["Starters"]


class Starters:
    """The static methods of :class:`~pytest_plangraph.api.PlanGraph` that make a plan."""

    @staticmethod
    def init(
        root: Path | None = None,
        *,
        output: Path | None = None,
        packages: Sequence[str] = (),
        from_tests: bool = False,
    ) -> Path:
        """Write a starter plan from the repository's code and tests (``plangraph init``); return
        its path. Never overwrites a file. See :func:`pytest_plangraph.scaffold.init_plan`."""
        from .scaffold import init_plan

        return init_plan(
            root,
            output=output,
            packages=apicheck.texts(packages, "packages"),
            from_tests=from_tests,
        )

    @staticmethod
    def import_tasks(
        source: str, text: str, *, name: str, tag: str | None = None, plan_id: str | None = None
    ) -> ImportedPlan:
        """A starter plan from a spec-kit ``tasks.md`` or a task-master ``tasks.json`` (*source*
        ``spec-kit`` or ``task-master``); needs no repository.
        See :mod:`pytest_plangraph.importers`."""
        from .importers.starter import import_tasks  # YAML: only when importing

        return import_tasks(source, text, name=name, tag=tag, plan_id=plan_id)
