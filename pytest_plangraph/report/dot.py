"""Graphviz DOT: nodes filled by status, edges styled by type, each child joined to its parent
by a dotted grey line. Every id and label is a quoted DOT string."""

from __future__ import annotations

from .view import COLOURS, ReportView

__all__ = ["dot"]

_EDGE_STYLES = {
    "requires": 'style=solid, color="#24292f"',
    "consumes": 'style=bold, color="#0969da"',
    "validates": 'style=dashed, color="#1a7f37"',
    "conflicts": 'style=dotted, color="#cf222e", dir=both, arrowhead=tee, arrowtail=tee',
    "related": 'style=dotted, color="#6e7781", arrowhead=none',
    "contains": 'style=dashed, color="#6e7781"',
}


def dot(view: ReportView) -> str:
    """The plan's graph in the DOT language (``dot -Tsvg`` draws it)."""
    lines = [
        f"digraph {_quoted(view.plan)} {{",
        "  rankdir=LR;",
        f"  label={_quoted(f'{view.plan} v{view.version}')};",
        '  node [shape=box, style="rounded,filled", fontname="Helvetica"];',
        '  edge [fontname="Helvetica", fontsize=10];',
    ]
    for node in view.nodes:
        fill, ink = COLOURS.get(node.status, ("#ffffff", "#000000"))
        label = (
            f"{node.id}\n{node.title}\n{node.status}" if node.title else f"{node.id}\n{node.status}"
        )
        lines.append(
            f"  {_quoted(node.id)} [label={_quoted(label)}, fillcolor={_quoted(fill)}, "
            f"fontcolor={_quoted(ink)}, tooltip={_quoted(node.status)}];"
        )
    for edge in view.edges:
        style = _EDGE_STYLES.get(edge.type, "style=solid")
        weak = ", penwidth=0.6" if edge.strength == "weak" or edge.status != "active" else ""
        lines.append(
            f"  {_quoted(edge.source)} -> {_quoted(edge.target)} "
            f"[label={_quoted(edge.type)}, {style}{weak}];"
        )
    for node in view.nodes:
        if node.parent is not None:
            lines.append(
                f"  {_quoted(node.id)} -> {_quoted(node.parent)} "
                '[style=dotted, color="#8c959f", arrowhead=empty, label="part of"];'
            )
    lines.append("}")
    return "\n".join(lines) + "\n"


def _quoted(value: str) -> str:
    """A DOT double-quoted string: backslashes and quotes escaped, line breaks as ``\\n``."""
    escaped = value.replace("\\", "\\\\").replace('"', '\\"')
    return '"' + escaped.replace("\r", "").replace("\n", "\\n") + '"'
