"""People's decisions about a node, recorded as events: an approval of an ``approval``
criterion (bound to the node's input digest) and its withdrawal, a fresh retry budget, a
cancellation. Part of :class:`~pytest_plangraph.api.PlanGraph`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from . import apicheck
from .errors import UsageError
from .repository import Repository

if TYPE_CHECKING:
    from .plan.model import Event

__all__ = ["Decisions"]


class Decisions(Repository):
    """What a person decides about a node (:class:`~pytest_plangraph.api.PlanGraph`)."""

    if TYPE_CHECKING:

        def append(
            self,
            kind: str,
            node: str,
            *,
            by: str,
            criterion: str | None = None,
            payload: Mapping[str, Any] | None = None,
            idempotency_key: str | None = None,
            expected_plan_version: int | None = None,
        ) -> Event:
            """The event append of :class:`~pytest_plangraph.api.PlanGraph`."""

    def approve(
        self, node: str, criterion: str, *, by: str, note: str = "", role: str | None = None
    ) -> Event:
        """Record an approval of an ``approval`` criterion, bound to the node's input digest,
        given as *role* (by default the role the criterion names, else ``approver``; another is
        refused). With
        keys configured it counts only when signed by a key trusted for that role."""
        from .judge.inputs import input_digests
        from .plan.untrusted import DECISION_ROLE

        self._ready()
        definition = self._approval(node, criterion)
        apicheck.name(by, "by")
        apicheck.text(note, "note")
        if role is not None:
            apicheck.name(role, "role")
            if role != (wanted := definition or DECISION_ROLE):  # the only role that counts
                raise UsageError(
                    f"{node}/{criterion} needs an approval as {wanted!r}, not {role!r}; "
                    f"approve with --role {wanted}"
                )
        digest = input_digests(self.graph, self.snapshot())[node]
        payload = {"input_digest": digest, "note": note, "role": role or definition}
        return self.append("approval", node, criterion=criterion, by=by, payload=payload)

    def revoke(self, node: str, criterion: str, *, by: str, note: str = "") -> Event:
        """Withdraw the approval of an ``approval`` criterion."""
        self._ready()
        self._approval(node, criterion)
        apicheck.name(by, "by")
        apicheck.text(note, "note")
        if not self.has_store():  # nothing to revoke: and a misspelt --store makes no store
            raise UsageError(
                f"{node}/{criterion} has no approval in force to revoke: there is no store at "
                f"{self.store_path} (no file, or an empty one), and none was made; check "
                "--store and $PLANGRAPH_STORE"
            )
        decisions = [
            e.kind
            for e in self.store.events(node=node, kinds=["approval", "revoke"])
            if e.criterion == criterion
        ]
        if not decisions or decisions[-1] != "approval":
            raise UsageError(f"{node}/{criterion} has no approval in force to revoke")
        return self.append("revoke", node, criterion=criterion, by=by, payload={"note": note})

    def allow_retry(self, node: str, *, by: str, note: str = "") -> Event:
        """Grant a node whose retry budget is spent a fresh budget (a person's decision)."""
        apicheck.text(note, "note")
        return self.append("retry", node, by=by, payload={"note": note})

    def cancel(self, node: str, *, by: str, note: str = "") -> Event:
        """Cancel a node: it no longer needs to be completed."""
        apicheck.text(note, "note")
        return self.append("cancel", node, by=by, payload={"note": note})

    def _approval(self, node: str, criterion: str) -> str | None:
        self.require_criterion(node, criterion)
        definition = self.graph.nodes[node].criterion(criterion)
        assert definition is not None
        if definition.verifier.type != "approval":
            raise UsageError(
                f"{node}/{criterion} is verified by {definition.verifier.type!r}, not by approval; "
                "only approval criteria can be approved"
            )
        role: str | None = getattr(definition.verifier, "role", None)
        return role
