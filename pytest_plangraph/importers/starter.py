"""A starter plan from a task list: nodes, ``requires`` edges and criteria to fill in, rendered
as YAML and linted as ``plangraph lint`` lints a plan alone (no file is looked at: the files the
tasks name do not exist yet)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import yaml

from ..errors import PlanError, UsageError
from ..lint.findings import Finding
from ..lint.runner import plan_findings
from ..plan.file import parse_plan
from .speckit import read_speckit
from .taskmaster import read_taskmaster
from .tasks import TaskList

SOURCES = ("spec-kit", "task-master")
"""The formats :func:`import_tasks` reads."""


@dataclass(frozen=True)
class ImportedPlan:
    """A starter plan: its YAML text, its counts, what could not be mapped and its lint
    findings (a plan with an error finding is never written)."""

    source: str
    text: str
    nodes: int
    edges: int
    unmapped: tuple[str, ...]
    findings: tuple[Finding, ...]

    def to_json(self) -> dict[str, Any]:
        """The JSON shape of ``plangraph import`` (without the ``format`` key)."""
        return {
            "source": self.source,
            "nodes": self.nodes,
            "edges": self.edges,
            "unmapped": list(self.unmapped),
            "findings": [f.to_json() for f in self.findings],
            "plan": self.text,
        }


def import_tasks(
    source: str, text: str, *, name: str, tag: str | None = None, plan_id: str | None = None
) -> ImportedPlan:
    """The starter plan of *text* in the format *source* (one of :data:`SOURCES`); *name* is
    the file's name for messages, *tag* the task-master tag, *plan_id* the plan's id."""
    if source == "spec-kit":
        if tag is not None:
            raise UsageError("--tag is a task-master option; spec-kit's tasks.md has no tags")
        tasks = read_speckit(text, name)
    elif source == "task-master":
        tasks = read_taskmaster(text, name, tag)
    else:
        raise UsageError(f"unknown source format {source!r}; choose one of {', '.join(SOURCES)}")
    data = plan_data(tasks, plan_id)
    rendered = render(data, source, name)
    try:
        loaded = parse_plan(rendered.encode("utf-8"), f"<{source} import>")
    except PlanError as exc:  # an id the source allows and a plan does not, say
        raise UsageError(f"{name}: the tasks do not make a valid plan: {exc}") from None
    findings = plan_findings(loaded)
    return ImportedPlan(
        source,
        rendered,
        len(data["nodes"]),
        len(data.get("edges", [])),
        tuple(tasks.unmapped),
        tuple(findings),
    )


def plan_data(tasks: TaskList, plan_id: str | None) -> dict[str, Any]:
    """The plan as the data the YAML says."""
    by_source = {t.source_id: t.node_id for t in tasks.tasks}
    nodes: list[dict[str, Any]] = []
    edges: list[dict[str, Any]] = []
    for task in tasks.tasks:
        node: dict[str, Any] = {"id": task.node_id}
        if task.kind != "step":
            node["kind"] = task.kind
        node["title"] = task.title
        if task.parent is not None:
            node["parent"] = task.parent
        if task.outputs:
            node["outputs"] = task.outputs
        if task.cancelled:
            node["cancelled"] = True
        if task.criteria:
            node["acceptance"] = [_criterion(*c) for c in task.criteria]
        nodes.append(node)
        edges += [
            {"from": by_source[dep], "to": task.node_id, "type": "requires"}
            for dep in task.requires
        ]
    data: dict[str, Any] = {"plangraph": 1, "plan": plan_id or tasks.plan_id}
    if tasks.title:
        data["title"] = tasks.title
    data["nodes"] = nodes
    if edges:
        data["edges"] = edges
    return data


def _criterion(criterion: str, assertion: str, test: str | None) -> dict[str, Any]:
    verifier = {"type": "test", "tests": [f"{test}::*"]} if test else {"type": "approval"}
    return {"id": criterion, "assertion": assertion, "verifier": verifier}


def render(data: dict[str, Any], source: str, name: str) -> str:
    """The plan as YAML, with a header saying where it came from and what to do next."""
    shown = name.rsplit("/", 1)[-1]
    header = (
        f"# A starter plan imported from {source} ({shown}) by plangraph import.\n"
        "# Fill in: replace `approval` verifiers with `test`, `schema` or `artifact` ones where a\n"
        "# check can decide, list each step's outputs, and run `plangraph lint`.\n"
    )
    body = yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100)
    return header + body
