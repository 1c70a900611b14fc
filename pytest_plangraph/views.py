"""What :class:`~pytest_plangraph.api.PlanGraph` reports without judging a claim: the store's
head, the state table as JSON, what to work on next, the impact report, what to run again, and
the audit."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from . import apicheck
from .errors import UsageError
from .memory import collector_paused
from .repository import Repository

if TYPE_CHECKING:
    from datetime import timedelta

    from .audit import AuditReport
    from .impact.report import ImpactReport
    from .judge.agenda import Agenda
    from .judge.logfold import LogFold
    from .judge.rerun import Selection
    from .judge.states import NodeState, PlanState
    from .store.tail import Head
    from .vcs.history import SinceDiff

__all__ = ["Views"]


class Views(Repository):
    """The reading reports of :class:`~pytest_plangraph.api.PlanGraph`."""

    def head(self) -> Head:
        """The last event of the store's chain, ``SEQ:HASH`` as ``str()`` gives it: what CI
        publishes so that ``plangraph audit --expect-head`` can tell a store rolled back or cut
        short. ``Head(0, "", None)`` without events (and no store is made)."""
        from .store.tail import Head

        if not self.has_store():
            return Head(0, "", None)
        return self.store.head()

    def status_json(self, fold: LogFold, state: PlanState) -> dict[str, Any]:
        """The state table as ``plangraph status --format json`` prints it (without the
        ``format`` key), for *state* derived from *fold*: the plan reference and every node,
        a failed criterion's reasons naming the tests that did not pass, and a criterion
        whose evidence allowed skips or xfails listing them. Makes no store."""
        from .judge.logfold import LogFold
        from .judge.states import PlanState

        if not isinstance(fold, LogFold) or not isinstance(state, PlanState):
            raise UsageError(
                "status_json() takes the fold and the state derived from it "
                "(fold = graph.fold(); graph.status_json(fold, graph.status(fold)))"
            )
        plan = self.plan_ref(create=False)
        notes = self._test_notes(fold, state)
        nodes = [_node_json(n, notes) for n in state.nodes.values()]
        return {"plan": plan.to_json(), "nodes": nodes}

    def _test_notes(self, fold: LogFold, state: PlanState) -> dict[tuple[str, str], dict[str, Any]]:
        """The details of the latest evidence that failed, and of any that lists allowed
        skips or xfails: what names the tests in the state table."""
        nodes = state.nodes.values()
        failed = [(n.id, c.id) for n in nodes for c in n.criteria if c.state == "failed"]
        judged = [(n.id, c.id) for n in nodes for c in n.criteria if c.evidence]
        notes = self.evidence_details(fold, judged, mentioning='"allowed"')
        notes.update(self.evidence_details(fold, failed))
        return notes

    def next(self) -> Agenda:
        """The nodes ready to work on — every strong prerequisite completed, the node itself
        neither completed, cancelled nor blocked — in topological order, each explained as
        :meth:`explain <pytest_plangraph.api.PlanGraph.explain>` does (its status, the criteria
        still missing and the tests or commands that settle them). Makes no store."""
        from .derived import derived_state
        from .judge.agenda import agenda, ready_nodes
        from .judge.explain import UNSETTLED, explain

        self._ready()
        fold = self.fold()
        with collector_paused():
            state = derived_state(self, fold, self.snapshot(fold))
        ready = ready_nodes(self.graph, state)
        keys = [(n, c.id) for n in ready for c in state.nodes[n].criteria if c.state in UNSETTLED]
        found = self.evidence_details(fold, keys)

        def explained(node: str) -> Any:
            details = {c: d for (n, c), d in found.items() if n == node}
            return explain(self.graph, state, node, details)

        plan = self.plan_ref(create=False).to_json()
        return agenda(self.graph, state, plan, explained)

    def impact(
        self, since: str | None = None, *, commits: bool = True, diff: SinceDiff | None = None
    ) -> ImpactReport:
        """What changed and what it invalidates (DESIGN §6). With *since*: the diff from that
        revision to the working tree, plan edits included, no store needed (a store's evidence
        ids and claims are used when one exists). Without: every evidence subject against the
        files now. *commits* names the commit behind each change (a ``git log`` over the
        range, the slowest part of a preview of a long range). *diff* is the diff from *since*
        read already (:func:`~pytest_plangraph.vcs.history.diff_since`; read again when it is
        of another repository or revision)."""
        from .derived import derived_state  # the state status keeps, when it stands
        from .survey import impact_now, impact_since
        from .vcs.history import SinceDiff

        apicheck.optional_text(since, "since")
        if diff is not None and not isinstance(diff, SinceDiff):
            raise UsageError("diff must be what vcs.history.diff_since() returned, or None")
        self._ready()
        if since is not None:
            return impact_since(self, since, commits=commits, judged=derived_state, diff=diff)
        return impact_now(self, commits=commits, judged=derived_state)

    def rerun_selection(self) -> Selection:
        """What to run so that every criterion whose evidence is missing, stale or failed is
        verified again (``plangraph impact --select``): a
        :class:`~pytest_plangraph.judge.rerun.Selection` of pytest node ids (relative to the
        repository root) and the criteria no evidence resolves to tests. ``pytest --plangraph
        --plangraph-stale`` runs the same criteria, each with its whole collected test set."""
        from .survey import rerun_selection

        self._ready()
        return rerun_selection(self)

    def audit(
        self, *, expect_head: tuple[int, str] | None = None, max_age: timedelta | None = None
    ) -> AuditReport:
        """What ``plangraph audit`` reports, as data (:class:`~pytest_plangraph.audit.AuditReport`):
        the store's chain, signatures and checkpoint checked, and what every event says
        derived afresh. *expect_head* is a ``(seq, chain hash)`` the store must still hold;
        *max_age* also reports evidence behind valid criteria recorded longer ago than that.
        Without a store, nothing is audited and none is made."""
        from .audit import audit

        self._ready()
        return audit(self, expected_head=expect_head, max_age=max_age)


def _node_json(node: NodeState, notes: Mapping[tuple[str, str], Mapping[str, Any]]) -> Any:
    """A node's entry in the state table; a failed criterion's ``EVIDENCE_FAILED`` reasons name
    the tests that did not pass (``tests``, and the evidence's message), and a criterion whose
    evidence allowed skips or xfails lists them (``allowed``)."""
    data = node.to_json()
    for entry in data["criteria"]:
        details = notes.get((node.id, entry["id"]))
        if not details:
            continue
        if details.get("allowed"):
            entry["allowed"] = details["allowed"]
        tagged = [r for r in data["reasons"] if r.get("criterion") == entry["id"]]
        for reason in [*entry["reasons"], *tagged]:
            if reason["code"] == "EVIDENCE_FAILED":
                reason["tests"] = details.get("not_passed", [])
                if isinstance(message := details.get("message"), str):
                    reason["message"] += f": {message}"
    return data
