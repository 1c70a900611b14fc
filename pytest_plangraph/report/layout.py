"""A layered drawing of the plan's graph for the HTML report, computed from the topological
order: a node's layer is one more than the deepest node it depends on (active requires,
consumes and validates edges), layers run left to right, and within a layer nodes sit in the
order of the mean height of what they depend on (one barycentre pass, to cross fewer edges).
Each child is joined to its parent by a branch, drawn apart from the edges.
Pure: a :class:`~.view.ReportView` in, boxes and SVG path strings out."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .view import EdgeView, ReportView

__all__ = ["Box", "Branch", "Layout", "Line", "layout"]

WIDTH, HEIGHT = 200, 44
GAP_X, GAP_Y, MARGIN = 90, 22, 20
_LAYERING = frozenset({"requires", "consumes", "validates"})


@dataclass(frozen=True)
class Box:
    """Where one node is drawn."""

    id: str
    x: int
    y: int
    layer: int


@dataclass(frozen=True)
class Line:
    """One edge as an SVG path."""

    edge: EdgeView
    path: str


@dataclass(frozen=True)
class Branch:
    """A parent→child link of the hierarchy as an SVG path."""

    parent: str
    child: str
    path: str


@dataclass(frozen=True)
class Layout:
    """Every node's box, every edge's and branch's path, and the size of the drawing."""

    boxes: dict[str, Box]
    lines: tuple[Line, ...]
    width: int
    height: int
    branches: tuple[Branch, ...] = ()


def layout(view: ReportView) -> Layout:
    """Lay out *view*'s nodes in layers and route its edges between them."""
    order = [node.id for node in view.nodes]
    layers = _layers(order, view.edges)
    columns: list[list[str]] = [[] for _ in range(max(layers.values(), default=-1) + 1)]
    for node_id in order:
        columns[layers[node_id]].append(node_id)
    rows = _ordered(columns, view.edges)
    boxes = {
        node_id: Box(
            node_id, MARGIN + layer * (WIDTH + GAP_X), MARGIN + row * (HEIGHT + GAP_Y), layer
        )
        for layer, column in enumerate(columns)
        for node_id, row in ((n, rows[n]) for n in column)
    }
    lines = tuple(Line(e, _route(boxes[e.source], boxes[e.target])) for e in view.edges)
    branches = tuple(
        Branch(n.parent, n.id, _route(boxes[n.parent], boxes[n.id]))
        for n in view.nodes
        if n.parent is not None and n.parent in boxes and n.parent != n.id
    )
    width = MARGIN * 2 + max(len(columns), 1) * (WIDTH + GAP_X) - GAP_X
    height = MARGIN * 2 + max((len(c) for c in columns), default=1) * (HEIGHT + GAP_Y) - GAP_Y
    return Layout(boxes, lines, width, height, branches)


def _layers(order: Sequence[str], edges: Sequence[EdgeView]) -> dict[str, int]:
    """Each node's layer; an edge that runs against the topological order (a cycle that lint
    reports) does not move its target."""
    position = {node_id: i for i, node_id in enumerate(order)}
    sources: dict[str, list[str]] = {node_id: [] for node_id in order}
    for edge in edges:
        forward = position[edge.source] < position[edge.target]
        if edge.type in _LAYERING and edge.status == "active" and forward:
            sources[edge.target].append(edge.source)
    layers: dict[str, int] = {}
    for node_id in order:
        layers[node_id] = 1 + max((layers[s] for s in sources[node_id]), default=-1)
    return layers


def _ordered(columns: list[list[str]], edges: Sequence[EdgeView]) -> dict[str, int]:
    """Each node's row in its column: the first column in topological order, each later one
    sorted by the mean row of the nodes its incoming edges come from."""
    incoming: dict[str, list[str]] = {}
    for edge in edges:
        incoming.setdefault(edge.target, []).append(edge.source)
    rows: dict[str, int] = {}
    for column in columns:

        def weight(node_id: str, at: int) -> float:
            placed = [rows[s] for s in incoming.get(node_id, ()) if s in rows]
            return sum(placed) / len(placed) if placed else float(at)

        keyed = sorted(enumerate(column), key=lambda item: (weight(item[1], item[0]), item[0]))
        rows.update({node_id: row for row, (_, node_id) in enumerate(keyed)})
    return rows


def _route(source: Box, target: Box) -> str:
    """A cubic curve from the right side of *source* to the left side of *target*; between
    nodes of one layer, or backwards, a loop around the right of both."""
    y1, y2 = source.y + HEIGHT // 2, target.y + HEIGHT // 2
    if target.layer > source.layer:
        x1, x2 = source.x + WIDTH, target.x
        bend = (x2 - x1) // 2
        return f"M{x1},{y1} C{x1 + bend},{y1} {x2 - bend},{y2} {x2},{y2}"
    x1, x2 = source.x + WIDTH, target.x + WIDTH
    reach = max(x1, x2) + GAP_X // 2
    return f"M{x1},{y1} C{reach},{y1} {reach},{y2} {x2},{y2}"
