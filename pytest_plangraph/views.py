"""What :class:`~pytest_plangraph.api.PlanGraph` reports without judging a claim: the store's
head, the impact report, what to run again, and the audit."""

from __future__ import annotations

from typing import TYPE_CHECKING

from . import apicheck
from .repository import Repository

if TYPE_CHECKING:
    from datetime import timedelta

    from .audit import AuditReport
    from .impact.report import ImpactReport
    from .judge.rerun import Selection
    from .store.tail import Head

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

    def impact(self, since: str | None = None, *, commits: bool = True) -> ImpactReport:
        """What changed and what it invalidates (DESIGN §6). With *since*: the diff from that
        revision to the working tree, plan edits included, no store needed (a store's evidence
        ids and claims are used when one exists). Without: every evidence subject against the
        files now. *commits* names the commit behind each change (a ``git log`` over the
        range, the slowest part of a preview of a long range)."""
        from .derived import derived_state  # the state status keeps, when it stands
        from .survey import impact_now, impact_since

        apicheck.optional_text(since, "since")
        self._ready()
        if since is not None:
            return impact_since(self, since, commits=commits, judged=derived_state)
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
