"""Which criteria need running again, and which tests and verifier items that means (pure).

``pytest --plangraph --plangraph-stale`` and ``plangraph impact --select`` share this rule: a
criterion is re-verified when its latest evidence is missing, stale or failed (DESIGN §4–§5),
unless its node is cancelled or it is an ``approval`` (a person decides those; nothing runs).
Everything else keeps its valid evidence and is not run. Closure invalidation (seed 000) is what
makes this sound: a change upstream changes the input digest of every node downstream, so their
evidence is stale too and they are selected with the node that changed.

The plugin knows each criterion's whole test set from the collection; the command line does not
collect, so :func:`select` names the tests from the criterion's latest evidence and its literal
``tests:`` ids, and says which criteria it could not resolve to test ids (no evidence listing
its tests and a pattern or marker that only a collection can expand).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ..plan.graph import Graph
from ..plan.model import LoggedEvent, TestVerifier
from ..values import dataclass, field
from .logfold import LogFold, evidence_key
from .states import PlanState

RERUN_STATES = frozenset({"missing", "stale", "failed"})
"""Criterion states whose criterion runs again."""
GLOB_CHARACTERS = frozenset("*?[")
"""A ``tests:`` pattern holding one of these names tests only a collection can list."""


def rerun_criteria(graph: Graph, state: PlanState) -> dict[str, str]:
    """``node/criterion`` → its state, for every criterion to run again, in topological
    order: state missing, stale or failed; not an approval; its node not cancelled."""
    found: dict[str, str] = {}
    for node_id in graph.topological_order():
        node_state = state.nodes.get(node_id)
        node = graph.nodes[node_id]
        if node_state is None or node_state.status == "cancelled" or node.cancelled:
            continue
        for criterion in node_state.criteria:
            definition = node.criterion(criterion.id)
            if definition is None or definition.verifier.type == "approval":
                continue
            if criterion.state in RERUN_STATES:
                found[f"{node_id}/{criterion.id}"] = criterion.state
    return found


def latest_seqs(fold: LogFold) -> set[int]:
    """The ``seq`` of each criterion's latest counted evidence (the events to read whole for
    :func:`evidence_tests`: a fold may hold lighter rows without ``details``)."""
    return {event.seq for _, event in fold.evidence.values()}


def evidence_tests(events: Iterable[LoggedEvent]) -> dict[str, list[str]]:
    """``node/criterion`` → the test ids each evidence event names (``details.tests``), for
    the whole events of :func:`latest_seqs`; criteria whose evidence names none are left
    out."""
    found: dict[str, list[str]] = {}
    for event in events:
        if event.kind != "evidence":
            continue
        node, criterion = evidence_key(event)
        details = event.payload.get("details")
        tests = details.get("tests") if isinstance(details, Mapping) else None
        if isinstance(tests, Mapping) and tests:
            found[f"{node}/{criterion}"] = sorted(str(t) for t in tests)
    return found


@dataclass(frozen=True)
class Selection:
    """What to run to re-verify every criterion that needs it (``impact --select``)."""

    criteria: dict[str, str]
    """``node/criterion`` → its state (missing, stale, failed)."""
    tests: list[str]
    """Repository-relative pytest node ids, sorted, each once."""
    verifiers: list[str]
    """Node ids of the plan's verifier items (``PLAN::node/criterion``)."""
    unresolved: dict[str, str] = field(default_factory=dict)
    """Criteria whose tests only a collection can name, with why."""

    @property
    def node_ids(self) -> list[str]:
        """Every pytest node id to run: the tests, then the verifier items."""
        return [*self.tests, *self.verifiers]

    def to_json(self) -> dict[str, Any]:
        """The ``impact --select --format json`` object."""
        return {
            "select": self.node_ids,
            "tests": self.tests,
            "verifiers": self.verifiers,
            "criteria": [{"criterion": ref, "state": s} for ref, s in self.criteria.items()],
            "unresolved": [{"criterion": ref, "reason": r} for ref, r in self.unresolved.items()],
        }


def select(
    graph: Graph,
    rerun: Mapping[str, str],
    known_tests: Mapping[str, Iterable[str]],
    plan_file: str,
) -> Selection:
    """The tests and verifier items that re-verify the criteria in *rerun* (see
    :func:`rerun_criteria`); *known_tests* are the tests their latest evidence names
    (:func:`evidence_tests`); *plan_file* is the plan's path as pytest names it."""
    tests: set[str] = set()
    verifiers: list[str] = []
    unresolved: dict[str, str] = {}
    for ref in rerun:
        node_id, _, criterion_id = ref.partition("/")
        definition = graph.nodes[node_id].criterion(criterion_id)
        assert definition is not None
        verifier = definition.verifier
        if not isinstance(verifier, TestVerifier):
            verifiers.append(f"{plan_file}::{ref}")
            continue
        literal = [p for p in verifier.tests if not GLOB_CHARACTERS & set(p)]
        known = list(known_tests.get(ref, ()))
        tests.update(known, literal)
        if not known and len(literal) < len(verifier.tests):
            unresolved[ref] = "no evidence names its tests and a tests: pattern is a glob"
        elif not known and not verifier.tests:
            unresolved[ref] = "no evidence names its tests and it is mapped by markers only"
    return Selection(dict(rerun), sorted(tests), verifiers, unresolved)
