"""The plan's non-test verifiers as pytest items of their own.

The plan file becomes a :class:`PlanFile` collector with one :class:`VerifierItem` per runnable
criterion (``schema``, ``artifact`` and plug-in types; not ``test`` or ``approval``), with node
ids such as ``plangraph.yaml::step-user-schema/ac-schema-valid``. They are ordinary items, so
they show in the terminal, JUnit XML, ``--collect-only``, ``-k`` and xdist distribution.

Running one calls the verifier registry in whichever process runs the item; the verdict travels
to the controller as plain values on the report (see ``PlangraphSession``).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import pytest

from ..errors import PlangraphError
from . import SESSION_KEY

if TYPE_CHECKING:
    from _pytest._code.code import ExceptionInfo, TerminalRepr

    from ..plan.file import LoadedPlan
    from ..plan.model import Criterion, Node
    from ..vcs.workspace import Workspace
    from ..verifiers import Registry


class VerifierFailedError(Exception):
    """Raised by a :class:`VerifierItem` whose verdict is not ``passed``."""

    def __init__(self, verdict: dict[str, Any]) -> None:
        self.verdict = verdict
        super().__init__(verdict.get("message") or verdict.get("reason") or verdict["outcome"])


class PlanFile(pytest.File):
    """The plan file, collected into one item per criterion a verifier can run."""

    def collect(self) -> Iterator[VerifierItem]:
        """One :class:`VerifierItem` per runnable criterion, in topological order."""
        session = self.config.stash[SESSION_KEY]
        for node, criterion in session.runnable_criteria():
            yield VerifierItem.from_parent(
                self, name=f"{node.id}/{criterion.id}", plan_node=node, criterion=criterion
            )


class VerifierItem(pytest.Item):
    """One criterion checked by its verifier (not by tests)."""

    def __init__(self, *, plan_node: Node, criterion: Criterion, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.plan_node = plan_node
        self.criterion = criterion
        self.verdict: dict[str, Any] | None = None

    @property
    def ref(self) -> str:
        """``node/criterion``."""
        return f"{self.plan_node.id}/{self.criterion.id}"

    def runtest(self) -> None:
        """Run the verifier; fail with its reason unless it passed."""
        session = self.config.stash[SESSION_KEY]
        self.verdict = run_verifier(
            session.registry, session.plangraph.workspace, self.plan_node, self.criterion
        )
        session.item_verdicts[self.nodeid] = self.verdict  # put on the call report
        if self.verdict["outcome"] != "passed":
            raise VerifierFailedError(self.verdict)

    def repr_failure(
        self,
        excinfo: ExceptionInfo[BaseException],
        style: Any = None,
    ) -> str | TerminalRepr:
        """The verifier's reason and message instead of a traceback."""
        if isinstance(excinfo.value, VerifierFailedError):
            verdict = excinfo.value.verdict
            reason = verdict.get("reason") or verdict["outcome"]
            message = verdict.get("message") or ""
            return f"{self.ref} ({self.criterion.verifier.type}) {verdict['outcome']}: {reason}" + (
                f"\n{message}" if message else ""
            )
        return super().repr_failure(excinfo, style=style)

    def reportinfo(self) -> tuple[Any, int | None, str]:
        """Point at the criterion's line in the plan file."""
        loaded = self.config.stash[SESSION_KEY].plangraph.loaded
        return self.path, criterion_line(loaded, self.plan_node, self.criterion), self.ref


def criterion_line(loaded: LoadedPlan, node: Node, criterion: Criterion) -> int | None:
    """0-based line of *criterion* in the plan file, when known."""
    index = node.acceptance.index(criterion)
    position = loaded.positions.get((*loaded.node_path(node.id), "acceptance", index))
    return position[0] - 1 if position else None


def run_verifier(
    registry: Registry, workspace: Workspace, node: Node, criterion: Criterion
) -> dict[str, Any]:
    """Run one verifier; its verdict in plain values (they travel on xdist reports), with the
    sha256 of its subjects taken before it ran."""
    try:
        declared = registry.declared_subjects(criterion)
    except PlangraphError:
        declared = []
    before = {path: workspace.hash_file(path) for path in declared}
    result = registry.run_safely(node, criterion, workspace)
    for path in result.subjects:
        before.setdefault(path, workspace.hash_file(path))
    return {
        "outcome": result.outcome,
        "reason": result.reason,
        "message": result.message,
        "details": dict(result.details),
        "subjects": before,
    }
