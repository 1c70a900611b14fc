"""What derivation says about a plan, as values: reasons, criterion, node and plan states.

The gate (:mod:`pytest_plangraph.judge.gate`) decides from these states and the derivation
(:mod:`pytest_plangraph.judge.derive`) produces them; both import them from here.

A derivation makes these by the ten thousand, so each class stores its fields in its own
``__init__`` (kept by :func:`~pytest_plangraph.values.dataclass`): the same fields, in the same
order, with the same defaults as the shared one would store, without finding them at each call.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, Literal

from ..values import dataclass, field

__all__ = [
    "CriterionState",
    "CriterionStatus",
    "NodeState",
    "NodeStatus",
    "PlanState",
    "Reason",
]


_NO_DATA: Mapping[str, Any] = MappingProxyType({})
"""A :class:`Reason` made without data (its ``data``: a new empty dict)."""

CriterionStatus = Literal["valid", "stale", "failed", "missing", "awaiting_approval"]


@dataclass(frozen=True)
class Reason:
    """Why a criterion is not valid or a node is not completed: a code, a sentence, data."""

    code: str
    message: str
    data: Mapping[str, Any] = field(default_factory=dict)

    def __init__(self, code: str, message: str, data: Mapping[str, Any] = _NO_DATA) -> None:
        fields = self.__dict__
        fields["code"] = code
        fields["message"] = message
        fields["data"] = {} if data is _NO_DATA else data  # a new dict each, as the factory

    def to_json(self) -> dict[str, Any]:
        """``{"code", "message", **data}``."""
        return {"code": self.code, "message": self.message, **self.data}

    def for_criterion(self, criterion_id: str) -> Reason:
        """This reason, tagged with the criterion it is about."""
        return Reason(
            self.code, f"{criterion_id}: {self.message}", {"criterion": criterion_id, **self.data}
        )


NodeStatus = Literal[
    "cancelled",
    "completed",
    "stale",
    "failed",
    "blocked",
    "awaiting_approval",
    "awaiting_verification",
    "in_progress",
    "ready",
    "pending",
]


@dataclass(frozen=True)
class CriterionState:
    """The state of one criterion and the evidence (or approval event) that decides it."""

    id: str
    required: bool
    state: CriterionStatus
    evidence: str | None
    reasons: tuple[Reason, ...] = ()

    def __init__(
        self,
        id: str,
        required: bool,
        state: CriterionStatus,
        evidence: str | None,
        reasons: tuple[Reason, ...] = (),
    ) -> None:
        fields = self.__dict__
        fields["id"] = id
        fields["required"] = required
        fields["state"] = state
        fields["evidence"] = evidence
        fields["reasons"] = reasons

    def to_json(self) -> dict[str, Any]:
        """The criterion entry of ``plangraph status --format json``."""
        return {
            "id": self.id,
            "required": self.required,
            "state": self.state,
            "evidence": self.evidence,
            "reasons": [r.to_json() for r in self.reasons],
        }


@dataclass(frozen=True)
class NodeState:
    """A node's derived status, the reasons its gate fails, and its criteria."""

    id: str
    kind: str
    status: NodeStatus
    reasons: tuple[Reason, ...]
    criteria: tuple[CriterionState, ...]
    claimed: bool = False
    failed_claims: int = 0

    def __init__(
        self,
        id: str,
        kind: str,
        status: NodeStatus,
        reasons: tuple[Reason, ...],
        criteria: tuple[CriterionState, ...],
        claimed: bool = False,
        failed_claims: int = 0,
    ) -> None:
        fields = self.__dict__
        fields["id"] = id
        fields["kind"] = kind
        fields["status"] = status
        fields["reasons"] = reasons
        fields["criteria"] = criteria
        fields["claimed"] = claimed
        fields["failed_claims"] = failed_claims

    @property
    def satisfied(self) -> int:
        """Required criteria in state ``valid``."""
        return sum(1 for c in self.criteria if c.required and c.state == "valid")

    @property
    def required_count(self) -> int:
        """Required criteria."""
        return sum(1 for c in self.criteria if c.required)

    def to_json(self) -> dict[str, Any]:
        """The node entry of ``plangraph status --format json``."""
        return {
            "id": self.id,
            "kind": self.kind,
            "status": self.status,
            "reasons": [r.to_json() for r in self.reasons],
            "criteria": [c.to_json() for c in self.criteria],
            "satisfied": self.satisfied,
            "required_count": self.required_count,
        }


@dataclass(frozen=True)
class PlanState:
    """Every node's state, in topological order, and the input digests they were judged by."""

    nodes: dict[str, NodeState]
    input_digests: dict[str, str]
