"""The plan-only lint findings of a plan whose meaning changed, with the rules that read one
node alone (:data:`~.rules.NODE_RULES`) run only on the nodes not known to pass them.

A node those rules found nothing wrong with is kept in ``nodelint.txt`` in the plan cache
folder, one line each, under the sha256 of the lint code's version
(:func:`~pytest_plangraph.plan.cache.lint_version`: the package's code), the verifier types
known and the key of the node's content (:attr:`~pytest_plangraph.plan.file.LoadedPlan.
node_keys`: the machine salt, the code and the node's parsed data). Only "nothing found" is
kept: a node with a finding is looked at again every time, so every finding is found and
located by the rules themselves. A line that does not read is a miss; a cache never decides.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Collection
from pathlib import Path

from ..plan.cache import lint_version
from ..plan.file import LoadedPlan
from ..plan.graph import Graph
from ..plan.linestore import TextLines
from .findings import Finding, Severity
from .runner import plan_findings

__all__ = ["FILE_NAME", "plan_findings_by_node"]

FILE_NAME = "nodelint.txt"
SPARE = 256
_CLEAN = "clean"


def plan_findings_by_node(
    loaded: LoadedPlan,
    cache_dir: Path,
    *,
    verifier_types: Collection[str],
    graph: Graph,
    severities: Collection[Severity] | None,
) -> list[Finding]:
    """:func:`~.runner.plan_findings` of *loaded*, the rules that read one node alone skipping
    the nodes kept under *cache_dir* as passing them, and the nodes they pass now kept."""
    keys = loaded.node_keys
    if keys is None or len(keys) != len(loaded.plan.nodes):
        return plan_findings(
            loaded, verifier_types=verifier_types, graph=graph, severities=severities
        )
    base = hashlib.sha256(b"node lint\0" + lint_version().encode() + b"\0")
    base.update(json.dumps(sorted(verifier_types), ensure_ascii=False).encode() + b"\0")
    lint_keys = []
    for key in keys:
        each = base.copy()
        each.update(key.encode())
        lint_keys.append(each.hexdigest())
    store = TextLines(cache_dir / FILE_NAME, SPARE, _CLEAN)
    entries = store.entries
    clean = frozenset(i for i, key in enumerate(lint_keys) if entries.get(key) == _CLEAN)
    wrong: set[int] = set()
    found = plan_findings(
        loaded,
        verifier_types=verifier_types,
        graph=graph,
        severities=severities,
        clean=clean,
        wrong=wrong,
    )
    found_clean = set(range(len(lint_keys))) - clean - wrong
    for index in found_clean:
        store.add(lint_keys[index], _CLEAN)
    store.save({lint_keys[index] for index in clean | found_clean})
    return found
