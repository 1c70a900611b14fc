"""The starter plan of ``plangraph init``, written as commented YAML (pure: values in, text out).

One step per unit (:mod:`pytest_plangraph.scaffold.scan`) under one objective; a ``test``
criterion per unit that test files test; ``consumes`` edges along the imports (the importing
unit depends on the imported one, so a change to a module makes the evidence of every module
that imports it stale). Imports that form a cycle cannot all be ``consumes`` edges (lint's
``CYCLE``): the edges among the units of one cycle become ``related`` edges, which carry no
staleness, with a comment naming the cycle.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable

from ..plan.model import FORMAT_VERSION
from .scan import Scan, Unit

_NOT_ID = re.compile(r"[^A-Za-z0-9._-]+")


def plan_id(name: str) -> str:
    """A plan id from a directory name (ids are ASCII letters, digits, ``.``, ``_``, ``-``)."""
    cleaned = _NOT_ID.sub("-", name).strip("-._")[:100]
    return cleaned or "project"


def step_ids(units: Iterable[Unit]) -> dict[str, str]:
    """``step-<module>`` per unit, unique and a valid id; the top package's name is left out
    when all units share it (``step-store`` rather than ``step-pkg.store``)."""
    modules = [u.module for u in units]
    tops = {m.split(".")[0] for m in modules}
    prefix = f"{next(iter(tops))}." if len(tops) == 1 else ""
    ids: dict[str, str] = {}
    taken: set[str] = set()
    for module in modules:
        short = module.removeprefix(prefix) if module != prefix[:-1] else module
        base = "step-" + (_NOT_ID.sub("-", short).strip("-") or "module")[:150]
        step, n = base, 1
        while step in taken:  # two names that differ only in characters ids cannot hold
            n += 1
            step = f"{base}-{n}"
        taken.add(step)
        ids[module] = step
    return ids


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one node (Tarjan, iterative), each
    sorted; every import cycle lies inside one."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph.get(start, ()))))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def starter_plan(scan: Scan, name: str, *, from_tests: bool, schema_ref: str) -> str:
    """The plan's YAML text."""
    tested: dict[str, list[str]] = {}
    for test_file, owners in sorted(scan.tests.items()):
        for module in owners:
            tested.setdefault(module, []).append(test_file)
    units = [u for u in scan.units.values() if tested.get(u.module) or not from_tests]
    ids = step_ids(units)
    pid = plan_id(name)
    lines = [
        f"# yaml-language-server: $schema={schema_ref}",
        "# A starter plan written by `plangraph init` from the code and tests of this repository:",
        "# one step per module or package, its tests as its criterion, the imports as edges.",
        "# Edit it freely (docs/plan-format.md); check it with `plangraph lint`, then record",
        "# evidence with `pytest --plangraph`.",
        f"plangraph: {FORMAT_VERSION}",
        f"plan: {pid}",
        f"title: {_text(name + ': every module does what its tests check')}",
        "nodes:",
        f"  - id: objective-{pid}",
        "    kind: objective",
        f"    title: {_text(name)}",
    ]
    marked = {node: list(criteria) for node, criteria in scan.markers.items()}
    if on_objective := marked.pop(f"objective-{pid}", []):
        lines += ["    acceptance:", *_marked(on_objective, ())]
    for unit in units:
        step = ids[unit.module]
        lines += _step(unit, step, f"objective-{pid}", tested.get(unit.module, []))
        lines += _marked(marked.pop(step, []), ("ac-tests", "ac-exists"))
    for node, criteria in marked.items():
        lines += [
            f"  - id: {node}",
            f"    parent: objective-{pid}",
            "    # named by `@pytest.mark.criterion` in the tests; add its outputs",
            "    acceptance:",
            *_marked(criteria, ()),
        ]
    lines += _edges(units, ids)
    return "\n".join(lines) + "\n"


def _step(unit: Unit, step: str, parent: str, tests: list[str]) -> list[str]:
    lines = [f"  - id: {step}", f"    parent: {parent}"]
    if unit.title:
        lines.append(f"    title: {_text(unit.title)}")
    lines.append(f"    outputs: [{', '.join(_text(o) for o in unit.outputs)}]")
    lines.append("    acceptance:")
    if tests:
        lines += [
            "      - id: ac-tests",
            f"        assertion: {_text('the tests of ' + unit.module + ' pass')}",
            "        # test files named after the module or importing it",
            "        verifier:",
            "          type: test",
            "          tests:",
            *(f"            - {_text(t)}" for t in tests),
        ]
    else:
        lines += [
            "      # TODO: no test file tests this module yet; write tests, then map them here",
            "      # (`verifier: {type: test, tests: [tests/test_....py]}`)",
            "      - id: ac-exists",
            f"        assertion: {_text(unit.module + ' exists (a placeholder criterion)')}",
            f"        verifier: {{type: artifact, path: {_text(unit.files[0])}}}",
        ]
    return lines


def _marked(criteria: list[str], taken: tuple[str, ...]) -> list[str]:
    """Criteria that tests name in ``@pytest.mark.criterion``: verified by those tests."""
    lines: list[str] = []
    for criterion in criteria:
        if criterion not in taken:
            lines += [
                f"      - id: {criterion}",
                "        # the tests marked @pytest.mark.criterion with it",
                "        verifier: {type: test}",
            ]
    return lines


def _edges(units: list[Unit], ids: dict[str, str]) -> list[str]:
    graph = {u.module: {m for m in u.imports if m in ids} for u in units}
    member = {m: tuple(c) for c in cycles(graph) for m in c}
    lines: list[str] = []
    noted: set[tuple[str, ...]] = set()
    for module in sorted(graph):
        for imported in sorted(graph[module]):
            cycle = member.get(module)
            if cycle is not None and member.get(imported) == cycle:
                if cycle not in noted:
                    noted.add(cycle)
                    names = " <-> ".join(ids[m] for m in cycle)
                    lines.append(
                        f"  # import cycle among {names}: related edges, no staleness flows"
                    )
                lines.append(f"  - {{from: {ids[imported]}, to: {ids[module]}, type: related}}")
            else:
                lines.append(f"  - {{from: {ids[imported]}, to: {ids[module]}, type: consumes}}")
    if not lines:
        return ["edges: []"]
    return [
        "# `to` imports `from`: a change to `from` makes the evidence of `to` stale",
        "edges:",
        *lines,
    ]


def _text(value: str) -> str:
    """A YAML scalar: JSON's double-quoted form is valid YAML and survives any text (with
    every character that is not printable escaped)."""
    return json.dumps(value, ensure_ascii=not value.isprintable())
