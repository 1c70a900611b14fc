"""docs/reports.md shows real output: its Markdown and Mermaid example is what ``plangraph
status --format markdown`` prints for the JWT-login sample after ``plangraph verify``."""

from __future__ import annotations

from pathlib import Path

from cli_helpers import plangraph_main
from conftest import ROOT
from report_helpers import jwt_verified

START = (
    "<!-- example: plangraph status --format markdown, "
    "fixtures/jwt-login after plangraph verify -->\n"
)
END = "<!-- end of example -->"


def test_the_example_in_the_docs_is_current(tmp_path: Path) -> None:
    doc = (ROOT / "docs/reports.md").read_text(encoding="utf-8")
    shown = doc.split(START, 1)[1].split(END, 1)[0]
    root = jwt_verified(tmp_path / "jwt")
    result = plangraph_main(root, "status", "--format", "markdown")
    assert result.code == 0, result.err
    assert shown == result.out, "regenerate the example in docs/reports.md"
    assert "```mermaid\nflowchart TD\n" in shown


def test_the_docs_show_the_screenshot_they_name() -> None:
    doc = (ROOT / "docs/reports.md").read_text(encoding="utf-8")
    assert "](report-screenshot.png)" in doc
    assert (ROOT / "docs/report-screenshot.png").read_bytes()[:4] == b"\x89PNG"
