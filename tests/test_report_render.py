"""The renderers on views built by hand: what a plan or a store holds can neither break the
Markdown, the Mermaid, the DOT, the HTML nor a GitHub workflow command; the layout puts every
node in a layer after what it depends on."""

from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest

from pytest_plangraph.report.dot import dot
from pytest_plangraph.report.github import annotation
from pytest_plangraph.report.html import html
from pytest_plangraph.report.layout import WIDTH, layout
from pytest_plangraph.report.markdown import code, markdown, mermaid, text
from pytest_plangraph.report.view import EdgeView, NodeView, ReportView

HOSTILE = 'x</script><script>alert(1)</script>"] | `tick` [link](http://e.invalid) #1 & \\'


def _node(node_id: str, status: str = "ready", parent: str | None = None, **kw: object) -> NodeView:
    fields: dict[str, object] = {
        "kind": "step",
        "title": "",
        "parent": parent,
        "status": status,
        "reasons": (),
        "criteria": (),
        "fixes": (),
    }
    fields.update(kw)
    return NodeView(id=node_id, **fields)  # type: ignore[arg-type]


def _view(nodes: list[NodeView], edges: list[EdgeView] | None = None) -> ReportView:
    return ReportView("p", 3, HOSTILE, tuple(nodes), tuple(edges or ()))


def test_hostile_text_stays_text_in_markdown() -> None:
    view = _view([_node("a", "stale", title=HOSTILE, reasons=(HOSTILE,), fixes=(HOSTILE,))])
    out = markdown(view)
    prose = out.split("```mermaid", 1)[0]  # the Mermaid labels have a test of their own
    for line in prose.splitlines():  # raw markup only inside a code span, which shows it as text
        if "<script>" in line or "](http" in line:
            span = re.fullmatch(r"\s*- (`+) ?(.*?) ?\1", line)
            assert span is not None and "`" * len(span.group(1)) not in span.group(2), line
    row = next(line for line in out.splitlines() if line.startswith("| `a` |"))
    assert row.count(" | ") == 4  # no cell was split by a pipe in the text
    assert text("a|b\nc") == "a\\|b c"
    assert code("run `x`") == "`` run `x` ``"
    assert code("a|b", cell=True) == "`a\\|b`"


def test_hostile_text_cannot_end_a_mermaid_label() -> None:
    out = mermaid(_view([_node("a", title=HOSTILE)]))
    label = re.search(r'n0\["(.*)"\]:::st_ready', out)
    assert label is not None and '"' not in label.group(1) and "<script" not in label.group(1)
    assert "#quot;" in label.group(1) and "#lt;script#gt;" in label.group(1)


def test_hostile_text_is_one_quoted_dot_string() -> None:
    out = dot(_view([_node("a", title=HOSTILE + "\nsecond line")]))
    line = next(row for row in out.splitlines() if row.startswith('  "a" ['))
    strings = re.findall(r'"((?:[^"\\]|\\.)*)"', line)
    assert strings[0] == "a" and "\\n" in strings[1] and '\\"]' in strings[1]
    assert "\n" not in line


def test_hostile_text_is_escaped_in_html() -> None:
    page = html(_view([_node("a", "failed", title=HOSTILE, reasons=(HOSTILE,))]))
    assert "<script>alert(1)" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    scripts = re.findall(r"<script>", page)
    assert len(scripts) == 1  # the page's own filter script, nothing else

    class Tags(HTMLParser):
        def __init__(self) -> None:
            super().__init__()
            self.found: list[str] = []

        def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            self.found.append(tag)

    parser = Tags()
    parser.feed(page)
    assert parser.found.count("g") == 1 and "a" not in parser.found
    assert parser.found.count("script") == 1


@pytest.mark.parametrize(
    ("message", "props", "expected"),
    [
        ("plain", {}, "::error::plain"),
        ("a\nb%c", {"file": "p.yaml", "line": 3}, "::error file=p.yaml,line=3::a%0Ab%25c"),
        ("m", {"title": "x, y: z"}, "::error title=x%2C y%3A z::m"),
        ("m", {"level": "warning", "col": 2}, "::warning col=2::m"),
    ],
)
def test_workflow_commands_are_escaped(message: str, props: dict, expected: str) -> None:  # type: ignore[type-arg]
    assert annotation(message, **props) == expected


def test_the_layout_puts_a_node_right_of_what_it_depends_on() -> None:
    nodes = [_node(n) for n in ("a", "b", "c", "d", "e")]
    edges = [
        EdgeView("a", "b", "requires", "strong", "active"),
        EdgeView("b", "c", "consumes", "strong", "active"),
        EdgeView("a", "c", "validates", "strong", "active"),
        EdgeView("d", "e", "related", "weak", "active"),  # no order: same layer
        EdgeView("c", "a", "conflicts", "strong", "active"),
    ]
    drawing = layout(_view(nodes, edges))
    layer = {n: box.layer for n, box in drawing.boxes.items()}
    assert layer == {"a": 0, "b": 1, "c": 2, "d": 0, "e": 0}
    spots = {(box.x, box.y) for box in drawing.boxes.values()}
    assert len(spots) == 5  # no two boxes overlap
    assert all(box.x + WIDTH <= drawing.width for box in drawing.boxes.values())
    assert len(drawing.lines) == 5 and all(line.path.startswith("M") for line in drawing.lines)


def test_each_child_is_drawn_joined_to_its_parent() -> None:
    nodes = [_node("top", kind="objective"), _node("a", parent="top"), _node("b", parent="top")]
    nodes.append(_node("c", parent="gone"))  # a parent the view does not hold: no branch
    drawing = layout(_view(nodes, [EdgeView("a", "b", "requires", "strong", "active")]))
    assert {(b.parent, b.child) for b in drawing.branches} == {("top", "a"), ("top", "b")}
    page = html(_view(nodes))
    drawn = r'<path class="branch"[^>]*data-source="([^"]+)" data-target="([^"]+)"'
    branches = re.findall(drawn, page)
    assert sorted(branches) == [("top", "a"), ("top", "b")]


def test_a_large_plan_names_the_html_report_instead_of_a_diagram() -> None:
    from pytest_plangraph.report.markdown import MERMAID_MAX_NODES

    small = markdown(_view([_node(f"n{i}") for i in range(MERMAID_MAX_NODES)]))
    large = markdown(_view([_node(f"n{i}") for i in range(MERMAID_MAX_NODES + 1)]))
    assert "```mermaid" in small and "```mermaid" not in large
    assert f"{MERMAID_MAX_NODES + 1} nodes are more than a Mermaid diagram" in large
    assert large.count("| `n") == MERMAID_MAX_NODES + 1  # the table still has every node
