"""The HTML report in a real headless Chromium (Debian's ``chromium``, installed by ``make
test``): every node is drawn (the page measures each box it drew), the status filter and the
collapse by parent work from the address's ``#status=…&collapse=…``, and a screenshot is taken.

Chromium prints the DOM after the page's script has run (``--dump-dom``); the assertions read
the classes and counts the script set, so they fail when the script or the drawing does."""

from __future__ import annotations

import os
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest
from cli_helpers import plangraph_main
from repo_helpers import git
from report_helpers import jwt_verified

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


def _chromium(tmp_path: Path, *args: str) -> str:
    if CHROMIUM is None:
        pytest.fail("no chromium on PATH: `make test` installs Debian's chromium package")
    flags = ["--headless", "--disable-gpu", f"--user-data-dir={tmp_path / 'profile'}"]
    if os.geteuid() == 0:
        flags.append("--no-sandbox")  # Chromium refuses to run as root with its sandbox
    proc = subprocess.run(
        [CHROMIUM, *flags, *args], capture_output=True, text=True, timeout=180, check=False
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout


class _Dom(HTMLParser):
    """The drawn nodes, the table rows and the counters of a dumped page."""

    def __init__(self) -> None:
        super().__init__()
        self.svg_nodes: dict[str, set[str]] = {}
        self.rows: dict[str, set[str]] = {}
        self.statuses: dict[str, str] = {}
        self.graph: dict[str, str | None] = {}
        self._text_of: str | None = None
        self.texts: dict[str, str] = {}

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        node, classes = found.get("data-node"), set((found.get("class") or "").split())
        if tag == "svg" and found.get("id") == "graph":
            self.graph = found
        if node and tag == "g":
            self.svg_nodes[node] = classes
            self.statuses[node] = found.get("data-status") or ""
        if node and tag == "tr":
            self.rows[node] = classes
        if found.get("id") in ("drawn", "shown"):
            self._text_of = found["id"]

    def handle_data(self, data: str) -> None:
        if self._text_of:
            self.texts[self._text_of] = data
            self._text_of = None


def _dump(tmp_path: Path, page: Path, fragment: str = "") -> _Dom:
    dom = _Dom()
    dom.feed(_chromium(tmp_path, "--dump-dom", page.as_uri() + fragment))
    return dom


def _hidden(classes: set[str]) -> bool:
    return bool(classes & {"filtered", "collapsed"})


def _big_plan(root: Path) -> Path:
    """A plan of one objective, three milestones and ten chained steps under each."""
    lines = ["plangraph: 1", "plan: big", "nodes:", "  - {id: goal, kind: objective}"]
    edges = []
    for m in range(3):
        lines.append(f"  - {{id: m{m}, kind: milestone, parent: goal}}")
        for s in range(10):
            step = f"s{m}-{s}"
            lines.append(f"  - id: {step}\n    parent: m{m}\n    title: step {s} of m{m}")
            lines.append("    acceptance: [{id: ac, verifier: {type: approval}}]")
            if s:
                edges.append(f"  - {{from: s{m}-{s - 1}, to: {step}, type: requires}}")
        if m:
            edges.append(f"  - {{from: m{m - 1}, to: s{m}-0, type: consumes}}")
    root.mkdir()
    plan = "\n".join([*lines, "edges:", *edges]) + "\n"
    (root / "plangraph.yaml").write_text(plan, encoding="utf-8")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "big plan")
    return root


def test_every_node_is_drawn_and_the_filter_hides_the_others(tmp_path: Path) -> None:
    root = jwt_verified(tmp_path / "jwt")
    page = tmp_path / "report.html"
    assert plangraph_main(root, "report", "--format", "html", "-o", str(page)).code == 0
    status = plangraph_main(root, "status", "--format", "json").json()["nodes"]
    expected = {n["id"]: n["status"] for n in status}

    everything = _dump(tmp_path, page)
    assert everything.statuses == expected
    assert everything.graph["data-drawn"] == str(len(expected))
    assert everything.texts["drawn"] == f"{len(expected)} of {len(expected)} nodes drawn"
    assert not any(_hidden(c) for c in everything.svg_nodes.values())

    wanted = "completed"
    assert wanted in expected.values()
    filtered = _dump(tmp_path, page, f"#status={wanted}")
    for node, node_status in expected.items():
        assert _hidden(filtered.svg_nodes[node]) == (node_status != wanted), node
        assert _hidden(filtered.rows[node]) == (node_status != wanted), node
    shown = sum(s == wanted for s in expected.values())
    assert filtered.texts["shown"] == f"{shown} of {len(expected)} nodes shown"

    shot = tmp_path / "report.png"
    _chromium(
        tmp_path,
        "--hide-scrollbars",
        "--window-size=1280,900",
        f"--screenshot={shot}",
        page.as_uri(),
    )
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 10_000


def test_a_large_plan_collapses_by_parent(tmp_path: Path) -> None:
    root = _big_plan(tmp_path / "big")
    page = tmp_path / "big.html"
    result = plangraph_main(root, "report", "--format", "html", "-o", str(page))
    assert result.code == 0, result.err
    total = 1 + 3 + 3 * 10

    drawn = _dump(tmp_path, page)
    assert len(drawn.svg_nodes) == total and drawn.graph["data-drawn"] == str(total)

    folded = _dump(tmp_path, page, "#collapse=m1")
    hidden = {n for n, classes in folded.svg_nodes.items() if _hidden(classes)}
    assert hidden == {f"s1-{s}" for s in range(10)}
    assert folded.texts["shown"] == f"{total - 10} of {total} nodes shown"

    statuses = {
        n["id"]: n["status"]
        for n in plangraph_main(root, "status", "--format", "json").json()["nodes"]
    }
    ready = {n for n, status in statuses.items() if status == "ready"}
    assert ready and len(ready) < total
    both = _dump(tmp_path, page, "#collapse=goal&status=ready")
    visible = {n for n, classes in both.svg_nodes.items() if not _hidden(classes)}
    assert visible == ready & {"goal"}  # every other node is under the folded goal
