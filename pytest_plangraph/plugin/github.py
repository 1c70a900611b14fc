"""``pytest --plangraph`` in a GitHub Actions job: the run's Markdown summary appended to
``$GITHUB_STEP_SUMMARY`` when that variable is set, and an ``::error`` (``::warning`` without
``--plangraph-gate``) annotation at the plan's line for each node the gate refused, when
``GITHUB_ACTIONS=true``. Called once, from the summary hook."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TYPE_CHECKING

from ..errors import PlangraphError

if TYPE_CHECKING:
    from ..api import PlanGraph
    from .summary import RunReport


def publish(plangraph: PlanGraph, report: RunReport, write_line: Callable[[str], None]) -> None:
    """Write the step summary and the annotations of *report*; a summary file that cannot be
    written is said in one line, and the run's outcome is not changed by it."""
    if report.after is None or report.plan is None:
        return
    try:
        if os.environ.get("GITHUB_STEP_SUMMARY"):
            _summary(plangraph, report)
    except PlangraphError as exc:
        write_line(f"plangraph: warning: {exc}")
    if "GITHUB_ACTIONS" not in os.environ:  # not a GitHub Actions job: nothing to import
        return
    from ..report.github import in_actions

    if in_actions():
        for line in refusal_annotations(plangraph, report):
            write_line(line)


def _summary(plangraph: PlanGraph, report: RunReport) -> None:
    from ..report.github import append_summary
    from ..report.markdown import markdown
    from ..report.view import build

    state = report.after
    assert state is not None and report.plan is not None
    view = build(plangraph.graph, state, report.plan.version, plangraph.decided_by(state))
    kept = [p for p in (plangraph.plan_path, plangraph.store_path) if p is not None]
    append_summary(markdown(view), protected=kept)


def refusal_annotations(plangraph: PlanGraph, report: RunReport) -> list[str]:
    """One workflow command per refused node, at the node's ``line:column`` in the plan file
    (the path relative to the repository root, as GitHub names files)."""
    from ..report.github import annotation
    from ..report.sarif import split_location

    level = "error" if report.gate else "warning"
    found = []
    for decision in report.refusals:
        location = plangraph.loaded.location(plangraph.loaded.node_path(decision.node))
        _, line, column = split_location(location)
        reasons = "; ".join(r.message or r.code for r in decision.reasons[:5])
        more = " …" if len(decision.reasons) > 5 else ""
        found.append(
            annotation(
                f"{decision.node} is {decision.status}: {reasons}{more}",
                level=level,
                file=_plan_file(plangraph),
                line=line,
                col=column,
                title=f"plangraph gate refused {decision.node}",
            )
        )
    return found


def _plan_file(plangraph: PlanGraph) -> str:
    if plangraph.plan_path is None:
        return plangraph.loaded.file
    try:
        return plangraph.plan_path.resolve().relative_to(plangraph.root.resolve()).as_posix()
    except ValueError:
        return plangraph.loaded.file
