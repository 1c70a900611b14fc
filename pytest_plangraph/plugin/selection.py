"""``--plangraph-stale``: run only what re-verifies the criteria that are not valid.

The whole suite is collected, so every criterion's whole test set is known. The controller
decides before the run which criteria to verify again (:func:`~pytest_plangraph.judge.rerun.
rerun_criteria`: evidence missing, stale or failed) and hands the list, as plain values, to each
xdist worker. After pytest's own ``-k``/``-m`` selection (this hook runs last), each collecting
process keeps the tests and verifier items of those criteria — and of any criterion whose
collected test set is not the one its valid evidence names (a test added or removed under a
pattern) — and deselects the rest through ``pytest_deselected``, as ``-k`` does, so that
pytest reports them as deselected.

Soundness is the narrowing rule's: a criterion some of whose tests were deselected is
``DESELECTED`` and records nothing, so a pass is recorded only for a criterion whose whole test
set ran. A test shared by a selected and a kept criterion runs; the kept criterion still records
nothing unless all of its tests ran.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

import pytest

from ..judge.rerun import rerun_criteria
from ..plan.model import Plan
from .items import VerifierItem
from .mapping import MappingBuilder

if TYPE_CHECKING:
    from ..api import PlanGraph
    from ..judge.logfold import LogFold
    from ..judge.states import PlanState

STILL_VALID = "STILL_VALID"
"""Not verified in a ``--plangraph-stale`` run: its evidence is valid, so it was not run."""
WORKER_KEY = "plangraph_stale"
"""The ``workerinput`` key of the selection, and the ``workeroutput`` key of the criteria a
worker selected, under pytest-xdist."""


class StaleSelection:
    """The criteria to verify again in this run; deselects every other item (a pytest plugin)."""

    def __init__(
        self,
        plan: Plan,
        prefix: str,
        rerun: Iterable[str],
        previous: Mapping[str, Iterable[str]],
    ) -> None:
        self.plan = plan
        self.prefix = prefix
        self.rerun = list(rerun)
        """``node/criterion`` of each criterion whose evidence is missing, stale or failed."""
        self.previous = {ref: sorted(tests) for ref, tests in previous.items()}
        """The test ids named by each criterion's latest evidence."""
        self.wanted: set[str] = set(self.rerun)
        """The criteria selected once the collection is known (:attr:`rerun` and those whose
        test set changed)."""
        self.ran = 0
        self.collected = 0

    @classmethod
    def start(
        cls,
        config: pytest.Config,
        plangraph: PlanGraph,
        prefix: str,
        before: tuple[PlanState, LogFold] | None,
    ) -> StaleSelection:
        """The selection of this run, registered as a plugin: decided from the state and the
        log *before* the run on the controller (or in a serial run), received from the
        controller by an xdist worker (*before* is None there)."""
        plan = plangraph.plan
        if before is None:
            selection = cls.from_dict(plan, prefix, config.workerinput[WORKER_KEY])  # type: ignore[attr-defined]
        else:
            state, fold = before
            from ..survey import known_tests

            rerun = rerun_criteria(plangraph.graph, state)
            selection = cls(plan, prefix, rerun, known_tests(plangraph, fold))
        config.pluginmanager.register(selection, "plangraph-stale")
        return selection

    def to_dict(self) -> dict[str, Any]:
        """Plain values for an xdist worker."""
        return {"rerun": self.rerun, "previous": self.previous}

    @classmethod
    def from_dict(cls, plan: Plan, prefix: str, data: Mapping[str, Any]) -> StaleSelection:
        """Inverse of :meth:`to_dict`."""
        return cls(plan, prefix, data["rerun"], data["previous"])

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, config: pytest.Config, items: list[Any]) -> None:
        """Keep the items of the criteria to verify again; deselect the others."""
        builder = MappingBuilder(self.plan, self.prefix)
        refs_of: list[list[str]] = []
        for item in items:
            if isinstance(item, VerifierItem):
                refs_of.append([item.ref])
            else:
                refs_of.append(builder.add(item, builder.test_id(item.nodeid), "", selected=True))
        for ref, entry in builder.mapping.criteria.items():
            if sorted(entry.tests) != self.previous.get(ref):  # its test set moved
                self.wanted.add(ref)
        kept: list[Any] = []
        dropped: list[Any] = []
        for item, refs in zip(items, refs_of, strict=True):
            (kept if self.wanted.intersection(refs) else dropped).append(item)
        self.collected, self.ran = len(items), len(kept)
        if dropped:
            config.hook.pytest_deselected(items=dropped)
            items[:] = kept

    def still_valid(self, found: dict[str, str]) -> tuple[dict[str, str], set[str]]:
        """*found* (criterion → why this run did not verify it) with the criteria this
        selection left out because their evidence is valid said as :data:`STILL_VALID`, and
        those criteria."""
        why = {
            ref: STILL_VALID if reason == "DESELECTED" and ref not in self.wanted else reason
            for ref, reason in found.items()
        }
        return why, {ref for ref, reason in why.items() if reason == STILL_VALID}

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node: Any) -> None:
        """Hand the selection to each xdist worker."""
        node.workerinput[WORKER_KEY] = self.to_dict()

    @pytest.hookimpl
    def pytest_collection_finish(self, session: pytest.Session) -> None:
        """A worker tells the controller which criteria it selected."""
        output = getattr(session.config, "workeroutput", None)
        if output is not None:
            output[WORKER_KEY] = sorted(self.wanted)

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: object) -> None:
        """Hear which criteria a worker selected."""
        self.wanted.update(getattr(node, "workeroutput", {}).get(WORKER_KEY, ()))
