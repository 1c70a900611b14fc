"""A derived :class:`~.states.PlanState` as plain JSON values and back (pure), and the key it
is kept under: what :mod:`pytest_plangraph.derived` keeps so that an unchanged repository is
answered without deriving again.

The key names everything a derivation reads (:func:`derivation_key`): the code, the plan (its
canonical digest and node order), the store's head, the checkpoint the log was read from and
the trust policy it was folded under, the ``PLANGRAPH_*`` settings, and the snapshot of the
files (each path's sha256 and each node's expanded outputs, in the order derivation meets
them). Two derivations with the same key give the same state.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import Any, TypeVar, get_args

from .inputs import Snapshot
from .states import CriterionState, CriterionStatus, NodeState, NodeStatus, PlanState, Reason

_V = TypeVar("_V")

__all__ = [
    "KeptNodes",
    "derivation_key",
    "kept_state",
    "node_from_json",
    "node_to_json",
    "state_from_json",
    "state_to_json",
]

FORMAT = 1
"""Changes when the JSON form below does."""


def derivation_key(
    *,
    code: str,
    plan: str,
    head: tuple[int, str, str],
    policy: str,
    settings: Mapping[str, str],
    snapshot: Snapshot,
) -> str:
    """sha256 over every input of a derivation (see the module docstring)."""
    digest = hashlib.sha256()
    fixed = [FORMAT, code, plan, list(head), policy, sorted(settings.items())]
    digest.update(json.dumps(fixed, ensure_ascii=False).encode("utf-8", "surrogateescape"))
    digest.update(b"\0")
    body: list[Any] = [
        list(snapshot.files.items()),
        [[n, list(f)] for n, f in snapshot.outputs.items()],
    ]
    if snapshot.globs:  # the files the tests: globs find (none: the key as before them)
        body.append(sorted([g, list(f)] for g, f in snapshot.globs.items()))
    digest.update(
        json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode(
            "utf-8", "surrogateescape"
        )
    )
    return digest.hexdigest()


def state_to_json(state: PlanState) -> dict[str, Any]:
    """*state* as JSON values (:func:`state_from_json` gives it back, equal)."""
    return {
        "nodes": [node_to_json(n) for n in state.nodes.values()],
        "input_digests": state.input_digests,
    }


def node_to_json(n: NodeState) -> list[Any]:
    """One node's state as JSON values: a row of :func:`state_to_json`'s ``nodes``."""
    return [
        n.id,
        n.kind,
        n.status,
        _reasons(n.reasons),
        [[c.id, c.required, c.state, c.evidence, _reasons(c.reasons)] for c in n.criteria],
        n.claimed,
        n.failed_claims,
    ]


def state_from_json(data: Mapping[str, Any]) -> PlanState:
    """The state :func:`state_to_json` made *data* of (KeyError, TypeError or ValueError when
    *data* is not such a value)."""
    nodes = {str(row[0]): node_from_json(row) for row in data["nodes"]}
    digests = data["input_digests"]
    if not isinstance(digests, dict):
        raise TypeError("input_digests is not an object")
    return PlanState(nodes, {str(k): str(v) for k, v in digests.items()})


class KeptNodes(dict[str, NodeState]):
    """Node states decoded from their rows (:func:`node_to_json`) when first asked for by
    id: a state reused in part decodes only the nodes it keeps. Only what was asked for is
    in it (iterate the ids elsewhere); an id without a row is a KeyError."""

    def __init__(self, rows: Sequence[Sequence[Any]]) -> None:
        super().__init__()
        self.rows = {str(row[0]): row for row in rows}

    def __missing__(self, node_id: str) -> NodeState:
        found = self[node_id] = node_from_json(self.rows[node_id])
        return found


def kept_state(data: Mapping[str, Any]) -> PlanState:
    """:func:`state_from_json`, its nodes decoded when asked for (:class:`KeptNodes`)."""
    digests = data["input_digests"]
    if not isinstance(digests, dict):
        raise TypeError("input_digests is not an object")
    return PlanState(KeptNodes(data["nodes"]), {str(k): str(v) for k, v in digests.items()})


def node_from_json(row: Sequence[Any]) -> NodeState:
    """The node state :func:`node_to_json` made *row* of (KeyError, TypeError or ValueError
    when it is not one).

    Every kept node of a large plan is decoded on a miss, so the values are made without the
    value classes' generic ``__init__`` (which reads its fields from the class for each one):
    the fields are set as that ``__init__`` would set them, each checked for its type."""
    node_id, kind, status, reasons, criteria, claimed, failed = row
    if status not in _NODE_STATUSES:
        raise ValueError(f"not a node status: {status!r}")
    return _value(
        NodeState,
        {
            "id": str(node_id),
            "kind": str(kind),
            "status": status,
            "reasons": _from_reasons(reasons),
            "criteria": tuple(
                _value(
                    CriterionState,
                    {
                        "id": str(c),
                        "required": bool(req),
                        "state": _criterion_status(st),
                        "evidence": None if ev is None else str(ev),
                        "reasons": _from_reasons(rs),
                    },
                )
                for c, req, st, ev, rs in criteria
            ),
            "claimed": bool(claimed),
            "failed_claims": int(failed),
        },
    )


_NODE_STATUSES = frozenset(get_args(NodeStatus))
_CRITERION_STATUSES = frozenset(get_args(CriterionStatus))
_new = object.__new__
_put = object.__setattr__


def _value(cls: type[_V], fields: dict[str, Any]) -> _V:
    """An instance of the value class *cls* holding *fields* (all of them, by name), made as
    its ``__init__`` makes it (the classes of :mod:`.states` keep their fields in the
    instance's ``__dict__``)."""
    made: _V = _new(cls)
    _put(made, "__dict__", fields)
    return made


def _criterion_status(state: object) -> CriterionStatus:
    if state not in _CRITERION_STATUSES:
        raise ValueError(f"not a criterion state: {state!r}")
    return state  # type: ignore[return-value]


def _reasons(reasons: Sequence[Reason]) -> list[list[Any]]:
    return [[r.code, r.message, dict(r.data)] for r in reasons]


def _from_reasons(raw: Sequence[Sequence[Any]]) -> tuple[Reason, ...]:
    if not raw:
        return ()
    found = []
    for code, message, data in raw:
        if not isinstance(data, dict):
            raise TypeError("a reason's data is not an object")
        found.append(_value(Reason, {"code": str(code), "message": str(message), "data": data}))
    return tuple(found)
