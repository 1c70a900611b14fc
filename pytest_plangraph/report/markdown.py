"""Markdown with a Mermaid graph: the state table, what is stale and why, what to run for each
node that is not completed, the graph coloured by status, and the audit when there is one.

GitHub renders it in pull requests, issues and ``$GITHUB_STEP_SUMMARY``. Every text that comes
from a plan or a store is escaped: a node title cannot open a link, a table cell or an HTML tag,
and a Mermaid label cannot end its node.
"""

from __future__ import annotations

import re

from .view import COLOURS, STATUSES, NodeView, ReportView

__all__ = ["code", "markdown", "mermaid", "text"]

MERMAID_MAX_NODES = 300
"""Past this many nodes the Markdown names the HTML report instead of drawing a diagram."""

_EDGE_ARROWS = {
    "requires": "-->",
    "consumes": "==>",
    "validates": "-.->",
    "conflicts": "x--x",
    "related": "---",
    "contains": "-.-",
}


def markdown(view: ReportView, *, graph: bool = True) -> str:
    """The whole report as GitHub-flavoured Markdown (with a Mermaid block when *graph*)."""
    title = f" — {text(view.title)}" if view.title else ""
    tally = " · ".join(f"{status} {count}" for status, count in view.tally.items())
    lines = [
        f"## plangraph: {text(view.plan)} v{view.version}{title}",
        "",
        f"**{view.completed}/{len(view.nodes)} nodes completed**"
        + (f" · {tally}" if tally else ""),
        "",
        "| node | kind | status | criteria | reasons |",
        "| --- | --- | --- | --- | --- |",
    ]
    lines += [_row(node) for node in view.nodes]
    lines += _stale(view)
    lines += _fixes(view)
    if graph and len(view.nodes) <= MERMAID_MAX_NODES:
        lines += ["", "### Graph", "", "```mermaid", mermaid(view), "```"]
    elif graph:
        lines += [
            "",
            "### Graph",
            "",
            f"{len(view.nodes)} nodes are more than a Mermaid diagram shows legibly (and GitHub "
            f"draws at most about {MERMAID_MAX_NODES}): see `plangraph report --format html`.",
        ]
    lines += _audit(view)
    return "\n".join(lines) + "\n"


def _row(node: NodeView) -> str:
    reasons = "; ".join(node.reasons[:3]) + (" …" if len(node.reasons) > 3 else "")
    cells = [
        code(node.id, cell=True),
        text(node.kind),
        f"**{node.status}**",
        node.counts,
        text(reasons),
    ]
    return "| " + " | ".join(cells) + " |"


def _stale(view: ReportView) -> list[str]:
    stale = [n for n in view.nodes if n.status == "stale"]
    if not stale:
        return []
    lines = ["", "### Stale, and why", ""]
    for node in stale:
        chains = node.stale_chains or node.reasons
        lines.append(f"- {code(node.id)}")
        lines += [f"  - {text(chain)}" for chain in chains]
    return lines


def _fixes(view: ReportView) -> list[str]:
    todo = [n for n in view.nodes if n.fixes or n.waits_on]
    if not todo:
        return []
    lines = ["", "### What to run", ""]
    for node in todo:
        lines.append(f"- {code(node.id)} ({node.status})")
        lines += [f"  - {code(fix)}" for fix in node.fixes]
        if node.waits_on:
            lines.append("  - first complete " + ", ".join(code(n) for n in node.waits_on))
    return lines


def _audit(view: ReportView) -> list[str]:
    if view.audit is None:
        return []
    found = {kind: items for kind, items in view.audit.items() if items}
    lines = ["", "### Audit", ""]
    if not found:
        lines.append("The store's chain and every event check out: no findings.")
    for kind, items in found.items():
        lines.append(f"- **{text(kind)}**: {len(items)} finding(s)")
        lines += [f"  - {text(_said(item))}" for item in items[:20]]
    lines += [f"- {text(note)}" for note in view.audit_notes]
    return lines


def _said(item: object) -> str:
    if isinstance(item, dict):
        return ", ".join(f"{k}: {v}" for k, v in item.items())
    return str(item)


def mermaid(view: ReportView) -> str:
    """The graph as a Mermaid flowchart: one class per status, edges drawn by type, each child
    joined to its parent by a dotted ``part of`` link."""
    ids = {node.id: f"n{i}" for i, node in enumerate(view.nodes)}
    lines = ["flowchart TD"]
    for node in view.nodes:
        label = node.id + (f"<br/>{node.title}" if node.title else "") + f"<br/>{node.status}"
        lines.append(f'  {ids[node.id]}["{_label(label)}"]:::{_class(node.status)}')
    for edge in view.edges:
        arrow = _EDGE_ARROWS.get(edge.type, "-->")
        lines.append(f"  {ids[edge.source]} {arrow}|{edge.type}| {ids[edge.target]}")
    for node in view.nodes:
        if node.parent is not None:
            lines.append(f"  {ids[node.id]} -. part of .-> {ids[node.parent]}")
    for status in STATUSES:
        fill, ink = COLOURS[status]
        lines.append(f"  classDef {_class(status)} fill:{fill},stroke:#24292f,color:{ink}")
    return "\n".join(lines)


def _class(status: str) -> str:
    return f"st_{status}"


def _label(value: str) -> str:
    """Mermaid label text: entity codes for the characters that would end or bend it; the
    ``<br/>`` this module writes is kept."""
    parts = value.split("<br/>")
    return "<br/>".join(_entities(part) for part in parts)


def _entities(value: str) -> str:
    value = value.replace("#", "#35;")
    for char, entity in (('"', "#quot;"), ("<", "#lt;"), (">", "#gt;"), ("`", "#96;")):
        value = value.replace(char, entity)
    return " ".join(value.split())


_MARKUP = re.compile(r"([\\`*_\[\]{}()<>#+!|~])")


def text(value: str) -> str:
    """Plain text for a Markdown line or table cell: markup characters escaped, ``&`` as an
    entity, line breaks as spaces."""
    flat = " ".join(value.split())
    return _MARKUP.sub(r"\\\1", flat.replace("&", "&amp;"))


def code(value: str, *, cell: bool = False) -> str:
    """*value* as an inline code span, fenced with more backticks than it holds; in a table
    *cell*, a pipe is escaped so that the span stays in its cell."""
    flat = " ".join(value.split())
    flat = flat.replace("|", "\\|") if cell else flat
    longest = max((len(run) for run in re.findall(r"`+", flat)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if flat.startswith("`") or flat.endswith("`") else ""
    return f"{fence}{pad}{flat}{pad}{fence}"
