"""A node's history (``plangraph history``), pure: each of its events with the status the node
had right after it, replayed from the log.

The log is folded one event at a time and the node derived after each of its own events. A claim
recorded without the gate's verdict (appended as a bare event through the API, or merged from
another store) is judged when the replay reaches it, as :func:`~.gate.replay_claims` judges it,
and folded with that verdict: folded bare, it would make every later derivation replay the whole
log from its start, and a history of *n* such claims cost *n*² steps.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple, TypeVar

from ..errors import UsageError, quoted
from ..memory import collector_paused
from ..plan.graph import Graph
from ..plan.model import LoggedEvent
from .derive import derive_node
from .inputs import Snapshot
from .ledger import Context
from .logfold import LogFold

__all__ = ["event_node", "history"]

E = TypeVar("E", bound=LoggedEvent)


def history(
    graph: Graph,
    events: Sequence[E],
    snapshot: Snapshot,
    node_id: str,
    untrusted: Mapping[int, str] | None = None,
) -> list[tuple[E, str]]:
    """Each event of *node_id* with the node's status right after it (replayed from the log);
    the events whose seq is in *untrusted* are not counted (:mod:`..store.trust`)."""
    if node_id not in graph.nodes:
        raise UsageError(f"unknown node {quoted(node_id)}")
    with collector_paused():
        context = Context.of(graph, snapshot)
        # each event folded once, the node derived after each of its own; the fold keeps no
        # event list: a claim without its verdict is judged when it is reached (below)
        fold = LogFold(events=None)
        steps: list[tuple[E, str]] = []
        for event in events:
            fold.extend([_judged(graph, fold, snapshot, context, event)], untrusted)
            if event_node(event) == node_id:
                state = derive_node(graph, fold, snapshot, node_id, context=context)
                steps.append((event, state.status))
        return steps


class _JudgedClaim(NamedTuple):
    """A claim recorded without the gate's verdict, with the verdict the gate gives it."""

    seq: int
    id: str
    kind: str
    node: str | None
    criterion: str | None
    by: str
    payload: Mapping[str, Any]


def _judged(
    graph: Graph, fold: LogFold, snapshot: Snapshot, context: Context, event: LoggedEvent
) -> LoggedEvent:
    """*event*, or when it is a claim without a verdict, the same claim carrying the verdict of
    the gate over the events folded before it (and today's file hashes), as a replay of the
    whole log gives it (:func:`~.gate.replay_claims`). A claim is judged once, when the replay
    reaches it, so ``history`` stays linear in the events; folding the bare claim would make
    every later derivation replay the log from its start."""
    if event.kind != "claim" or event.payload.get("verdict") in ("PASSED", "FAILED"):
        return event
    node = event.node or ""
    passed = (
        node in graph.nodes
        and derive_node(graph, fold, snapshot, node, context=context).status == "completed"
    )
    payload = {**event.payload, "verdict": "PASSED" if passed else "FAILED"}
    return _JudgedClaim(
        event.seq, event.id, event.kind, event.node, event.criterion, event.by, payload
    )


def event_node(event: LoggedEvent) -> str | None:
    """The node an event is about (an evidence record may name it in its payload only)."""
    return event.node or (event.payload.get("node") if event.kind == "evidence" else None)
