"""``report``: the plan's state for people to look at, as Markdown with a Mermaid graph, one
self-contained HTML page, Graphviz DOT, text or JSON (the renderers are in
:mod:`pytest_plangraph.report`)."""

from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import UsageError
from .common import Output, common_options, open_plangraph
from .writing import check_output

if TYPE_CHECKING:
    from ..api import PlanGraph
    from ..report.view import ReportView

FORMATS = ("text", "json", "markdown", "html", "dot")


def register(commands: Any) -> None:
    """Add the ``report`` subcommand."""
    report = commands.add_parser(
        "report",
        parents=[common_options(formats=FORMATS)],
        help="the plan's state as Markdown + Mermaid, HTML, DOT, text or JSON",
        description="Report every node's status, the evidence behind each criterion, what is "
        "stale and why (back to the commit), what to run next and the audit. HTML is one "
        "self-contained file (no network); DOT is for Graphviz.",
    )
    report.add_argument(
        "--output",
        "-o",
        type=Path,
        metavar="FILE",
        help="write the report to FILE instead of standard output",
    )
    report.add_argument(
        "--no-audit",
        action="store_true",
        help="leave the audit out (it reads every event and hashes every file again)",
    )
    report.set_defaults(handler=_report)


def _report(args: argparse.Namespace, out: Output) -> int:
    with open_plangraph(args, reading=True) as plangraph:
        if args.output is not None:
            check_output(args.output, plangraph, "report")
        view = report_view(plangraph, audit=not args.no_audit, chains=True)
    text = render(view, args.format)
    if args.output is None:
        print(text, end="" if text.endswith("\n") else "\n")
        return 0
    try:
        args.output.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise UsageError(
            f"cannot write the report to {args.output}: {exc.strerror or exc}; "
            "name a file in a folder that exists and can be written"
        ) from exc
    return 0


def report_view(plangraph: PlanGraph, *, audit: bool, chains: bool) -> ReportView:
    """The view of *plangraph* now: its state, the evidence behind it, and (when asked) the stale
    chains of the impact report and the audit's findings."""
    from ..report.view import build

    state = plangraph.status()
    stale: dict[str, tuple[str, ...]] = {}
    if chains and any(n.status == "stale" for n in state.nodes.values()):
        stale = {i.node: i.reasons for i in plangraph.impact().invalidated}
    checked = plangraph.audit() if audit else None
    return build(
        plangraph.graph,
        state,
        plangraph.plan_ref(create=False).version,
        plangraph.decided_by(state),
        stale_chains=stale,
        audit=None if checked is None else checked.findings,
        audit_notes=() if checked is None else checked.notes,
    )


def render(view: ReportView, fmt: str) -> str:
    """*view* in the format *fmt* (one of :data:`FORMATS`)."""
    if fmt == "markdown":
        from ..report.markdown import markdown

        return markdown(view)
    if fmt == "html":
        from ..report.html import html

        return html(view)
    if fmt == "dot":
        from ..report.dot import dot

        return dot(view)
    if fmt == "json":
        import json

        from ..plan.formats import FORMAT_VERSION

        data = {"format": FORMAT_VERSION, **dataclasses.asdict(view)}
        return json.dumps(data, indent=2, ensure_ascii=False, default=list)
    from ..report.text import text

    return text(view)
