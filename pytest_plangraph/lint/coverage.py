"""``IMPLICIT_DEPENDENCY``: dependencies a coverage run observed that the plan does not declare.

Pure: the plan's graph, the files each node's tests executed (from the ``coverage`` details of
its latest evidence, see ``pytest --plangraph-coverage``) and each node's expanded outputs in,
findings out. When the tests of node *this* executed a file that is an output of node *other*,
and no edge joins the two nodes (in either direction, of any type or status) and *this* does not
already depend on *other* through other nodes, the finding proposes the missing edge
``{from: other, to: this, type: consumes, source: coverage, confidence: 1.0, status: proposed}``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

from .findings import LINT_CODES, Finding

if TYPE_CHECKING:
    from ..plan.file import LoadedPlan
    from ..plan.graph import Graph
    from ..plan.model import Event

CODE = "IMPLICIT_DEPENDENCY"


def implicit_dependencies(
    graph: Graph,
    executed: Mapping[str, Iterable[str]],
    outputs: Mapping[str, Iterable[str]],
    *,
    loaded: LoadedPlan | None = None,
) -> list[Finding]:
    """One finding per (upstream, downstream) pair that coverage joins and the plan does not.

    *executed* maps a node id to the repository-relative files its tests executed; *outputs*
    maps a node id to its output files (globs and directories already expanded). With *loaded*
    each finding is located at the downstream node in the plan file.
    """
    owners: dict[str, list[str]] = {}
    for node_id, paths in outputs.items():
        for path in paths:
            owners.setdefault(path, []).append(node_id)
    findings: list[Finding] = []
    for this in sorted(executed):
        if this not in graph.nodes:
            continue
        found = _undeclared(graph, this, executed[this], owners)
        location = loaded.location(loaded.node_path(this)) if loaded else graph.plan.plan
        findings.extend(
            Finding(CODE, LINT_CODES[CODE][0], this, _hint(other, this, paths), location)
            for other, paths in sorted(found.items())
        )
    return findings


def _undeclared(
    graph: Graph, this: str, paths: Iterable[str], owners: Mapping[str, list[str]]
) -> dict[str, list[str]]:
    """Upstream node → the files of it that *this* executed, for upstreams with no edge."""
    upstream = set(graph.upstream([this]))
    joined = {e.from_ for e in graph.incoming.get(this, ())}
    joined.update(e.to for e in graph.outgoing.get(this, ()))
    found: dict[str, set[str]] = {}
    for path in paths:
        for other in owners.get(path, ()):
            if other != this and other in graph.nodes and other not in upstream | joined:
                found.setdefault(other, set()).add(path)
    return {other: sorted(files) for other, files in found.items()}


def _hint(other: str, this: str, paths: list[str]) -> str:
    shown = ", ".join(paths[:3]) + (f" and {len(paths) - 3} more" if len(paths) > 3 else "")
    return (
        f"the tests of {this} executed {shown}, output of {other}, but no edge joins the two "
        f"nodes: the plan does not say that {this} depends on {other}; add "
        f"{{from: {other}, to: {this}, type: consumes, source: coverage, confidence: 1.0, "
        "status: proposed}"
    )


COVERAGE_KEY = '"coverage"'
"""Text every evidence payload with coverage details contains: a store can skip the records
without it unread (it may also appear in others; :func:`executed_by_node` reads what it gets)."""


def executed_by_node(events: Iterable[Event]) -> dict[str, list[str]]:
    """Node id → the files its tests executed, from the ``coverage`` details of each
    criterion's latest evidence that carries them (events in store order)."""
    from pydantic import ValidationError

    latest: dict[tuple[str, str], list[str]] = {}
    for event in events:
        try:
            record = event.evidence
        except ValidationError:  # not a record plangraph writes (audit's business): no data
            continue
        coverage = record.details.get("coverage") if record is not None else None
        if record is not None and isinstance(coverage, list):
            latest[(record.node, record.criterion)] = [str(path) for path in coverage]
    found: dict[str, set[str]] = {}
    for (node, _), paths in latest.items():
        found.setdefault(node, set()).update(paths)
    return {node: sorted(paths) for node, paths in found.items()}
