"""``IMPLICIT_DEPENDENCY``: dependencies a coverage run observed that the plan does not declare.

Pure: the plan's graph, the files each node's tests executed (from the ``coverage`` details of
its latest evidence, see ``pytest --plangraph-coverage``) and each node's expanded outputs in,
findings out. When the tests of node *this* executed a file that is an output of node *other*,
and no edge joins the two nodes (in either direction, of any type or status) and *this* does not
already depend on *other* through other nodes, the finding proposes the missing edge
``{from: other, to: this, type: consumes, source: coverage, confidence: 1.0, status: proposed}``,
one per pair of nodes, with the files that justify it.

A proposal never closes a dependency cycle: when *other* already depends on *this* (through the
plan's dependencies, or through a proposal made before it — two nodes whose tests run each
other's outputs), the consumes edge would give ``CYCLE`` once made active, so the finding says
so, names the cycle and proposes a ``related`` edge instead (which waits for nothing).
Proposals are made in the plan's order of the downstream nodes, so that every proposed edge
added as written leaves the plan without a cycle.
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
    proposed: dict[str, set[str]] = {}  # node → the upstream nodes proposed for it so far
    for this in sorted(n for n in executed if n in graph.nodes):
        found = _undeclared(graph, this, executed[this], owners)
        location = loaded.location(loaded.node_path(this)) if loaded else graph.plan.plan
        for other, paths in sorted(found.items()):
            cycle = _path(graph, proposed, other, this)
            if cycle is None:
                proposed.setdefault(this, set()).add(other)
            hint = _hint(other, this, paths, cycle)
            findings.append(Finding(CODE, LINT_CODES[CODE][0], this, hint, location))
    return findings


def _path(
    graph: Graph, proposed: Mapping[str, set[str]], start: str, goal: str
) -> list[str] | None:
    """A chain of dependencies from *start* up to *goal* (``start`` depends on … on
    ``goal``), over the plan's strong active dependencies and the edges *proposed*, or None."""
    parent: dict[str, str] = {}
    stack = [start]
    seen = {start}
    while stack:
        node = stack.pop()
        if node == goal:
            chain = [goal]
            while chain[-1] != start:
                chain.append(parent[chain[-1]])
            return chain[::-1]
        for upstream in (*graph.prerequisites(node), *sorted(proposed.get(node, ()))):
            if upstream not in seen:
                seen.add(upstream)
                parent[upstream] = node
                stack.append(upstream)
    return None


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


def _hint(other: str, this: str, paths: list[str], cycle: list[str] | None = None) -> str:
    shown = ", ".join(paths[:5]) + (f" and {len(paths) - 5} more" if len(paths) > 5 else "")
    said = (
        f"the tests of {this} executed {shown}, output of {other}, but no edge joins the two "
        f"nodes: the plan does not say that {this} depends on {other}; "
    )
    if cycle is None:
        kind = "consumes"
    else:
        kind = "related"
        ring = " -> ".join([*cycle[::-1], this])  # as edges run: from upstream to downstream
        said += (
            f"a consumes edge from {other} to {this} would close the dependency cycle "
            f"{ring} (CYCLE), so it is not proposed; "
        )
    return said + (
        f"add {{from: {other}, to: {this}, type: {kind}, source: coverage, confidence: 1.0, "
        "status: proposed}"
    )


COVERAGE_KEY = '"coverage"'
"""Text every evidence payload with coverage details contains: a store can skip the records
without it unread (it may also appear in others; :func:`executed_by_node` reads what it gets)."""


def executed_by_node(events: Iterable[Event]) -> dict[str, list[str]]:
    """Node id → the files its tests executed, from the ``coverage`` details of each
    criterion's latest evidence that carries them (events in store order)."""
    latest: dict[tuple[str, str], list[str]] = {}
    for event in events:
        try:
            record = event.evidence
        except ValueError:  # not a record plangraph writes (audit's business): no data
            continue
        coverage = record.details.get("coverage") if record is not None else None
        if record is not None and isinstance(coverage, list):
            latest[(record.node, record.criterion)] = [str(path) for path in coverage]
    found: dict[str, set[str]] = {}
    for (node, _), paths in latest.items():
        found.setdefault(node, set()).update(paths)
    return {node: sorted(paths) for node, paths in found.items()}
