"""The JSON payloads of evidence records handed to the store (DESIGN §4).

:func:`checked_payloads` checks records given to :meth:`PlanGraph.record` (made or changed
by hand as well) before any is stored; those a run's own record maker made are taken as they
were made (:meth:`PlanGraph.record_run`), and this module is not imported then.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..canonical import digest
from ..errors import UsageError, field_problem
from ..plan.evidence import Evidence, record_problem

if TYPE_CHECKING:
    from ..plan.graph import Graph


def checked_payloads(graph: Graph, evidence: object) -> list[dict[str, Any]]:
    """The JSON payload of each record :meth:`PlanGraph.record` is given, once it is sure to
    be an evidence record of this plan: an :class:`Evidence` of a node and criterion of the
    plan, valid as the record model says (a record made or changed by hand is checked like
    one the API makes), made for the criterion's verifier type, and whose ``id`` is its
    content address. Anything else is a :class:`UsageError`, and nothing of the batch is stored."""
    if isinstance(evidence, Evidence | str | bytes | Mapping) or not isinstance(evidence, Sequence):
        raise UsageError(
            "record() takes a list of Evidence records (made with make_evidence), not "
            f"{type(evidence).__name__}"
        )
    from .lookup import require_criterion  # a record given by hand: a run's own need no lookup

    payloads = []
    for index, record in enumerate(evidence):
        if not isinstance(record, Evidence):
            raise UsageError(
                f"record(): item {index} is {type(record).__name__}, not an Evidence record; "
                "make records with make_evidence()"
            )
        require_criterion(graph, record.node, record.criterion)
        payload = record.to_json()
        _check(graph, record, payload)
        payloads.append(payload)
    return payloads


def _check(graph: Graph, record: Evidence, payload: dict[str, Any]) -> None:
    ref = record.ref
    if record_problem(payload) is not None:  # the record model says what, or takes it
        from pydantic import ValidationError

        from ..plan.boundary import Evidence as EvidenceModel

        try:
            EvidenceModel.model_validate(payload)
        except ValidationError as exc:
            problem = field_problem(exc.errors()[0])
            raise UsageError(f"record {ref}: not a valid evidence record: {problem}") from None
    definition = graph.nodes[record.node].criterion(record.criterion)
    assert definition is not None
    if payload["verifier"] != definition.verifier.type:
        raise UsageError(
            f"record {ref}: made by a {payload['verifier']!r} verifier, but the plan checks "
            f"this criterion with {definition.verifier.type!r}"
        )
    if payload["id"] != digest({k: v for k, v in payload.items() if k != "id"}):
        raise UsageError(
            f"record {ref}: its id is not its content address (the sha256 of the record "
            "without id); make records with make_evidence() and do not change them after"
        )
