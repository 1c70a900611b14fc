"""One self-contained HTML page: the graph as inline SVG (laid out by :mod:`.layout`), the
table of nodes and criteria with their evidence, the stale chains, what to run, and the
audit. Jinja2 templates with autoescaping; no network, no external file: the styles and the
small filter script are inline."""

from __future__ import annotations

import jinja2

from .layout import HEIGHT, WIDTH, layout
from .view import COLOURS, STATUSES, ReportView

__all__ = ["html"]

_ENVIRONMENT: jinja2.Environment | None = None


def _environment() -> jinja2.Environment:
    global _ENVIRONMENT
    if _ENVIRONMENT is None:
        _ENVIRONMENT = jinja2.Environment(
            loader=jinja2.PackageLoader("pytest_plangraph.report", "templates"),
            autoescape=True,  # every plan and store text is escaped, in .html.j2 and elsewhere
            undefined=jinja2.StrictUndefined,
            trim_blocks=True,
            lstrip_blocks=True,
        )
    return _ENVIRONMENT


def html(view: ReportView, *, generated: str = "") -> str:
    """The report page for *view*; *generated* says when and by what it was made."""
    drawing = layout(view)
    template = _environment().get_template("report.html.j2")
    return template.render(
        view=view,
        drawing=drawing,
        box_width=WIDTH,
        box_height=HEIGHT,
        colours=COLOURS,
        statuses=[s for s in STATUSES if s in view.tally],
        ancestors=_ancestors(view),
        children=_children(view),
        labels={n.id: _short(n.id, 26) for n in view.nodes},
        subtitles={n.id: _short(n.title, 30) for n in view.nodes},
        generated=generated,
    )


def _ancestors(view: ReportView) -> dict[str, str]:
    """Each node's ancestors, space separated, for the collapse script (stops at a loop)."""
    parent: dict[str, str | None] = {n.id: n.parent for n in view.nodes}
    found: dict[str, str] = {}
    for node_id in parent:
        chain: list[str] = []
        current = parent[node_id]
        while current is not None and current not in chain and current != node_id:
            chain.append(current)
            current = parent.get(current)
        found[node_id] = " ".join(chain)
    return found


def _children(view: ReportView) -> dict[str, int]:
    counts: dict[str, int] = {}
    for node in view.nodes:
        if node.parent is not None:
            counts[node.parent] = counts.get(node.parent, 0) + 1
    return counts


def _short(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
