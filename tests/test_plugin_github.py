"""``pytest --plangraph`` in a GitHub Actions job: the Markdown summary appended to
``$GITHUB_STEP_SUMMARY`` and an annotation at the plan's line for each refused node."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from cli_helpers import plangraph
from plugin_helpers import jwt_project

NODE = "step-token-endpoint"


def _node_line(root: Path, node: str) -> int:
    lines = (root / "plangraph.yaml").read_text(encoding="utf-8").splitlines()
    return next(i for i, line in enumerate(lines, 1) if line.strip() == f"- id: {node}")


def test_summary_appended_and_refusals_annotated(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = jwt_project(pytester)
    summary = root.parent / "step-summary.md"
    summary.write_text("earlier step\n", encoding="utf-8")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    assert plangraph(root, "claim", NODE, "--by", "agent-7").code == 1

    result = pytester.runpytest_subprocess("--plangraph", "--plangraph-gate")
    assert result.ret == 1
    written = summary.read_text(encoding="utf-8")
    assert written.startswith("earlier step\n## plangraph: auth-login v1")
    assert f"| `{NODE}` | step | **awaiting_approval** | 2/3 |" in written
    assert "```mermaid\nflowchart TD\n" in written
    assert f"`plangraph approve {NODE}/ac-security-review --by NAME --role security`" in written

    commands = [line for line in result.outlines if line.startswith("::")]
    assert len(commands) == 1, commands
    found = re.fullmatch(
        r"::error file=([^,]+),line=(\d+),col=(\d+),title=([^:]+)::(.*)", commands[0]
    )
    assert found is not None, commands[0]
    assert found.group(1) == "plangraph.yaml"
    assert int(found.group(2)) == _node_line(root, NODE)
    assert found.group(5).startswith(f"{NODE} is awaiting_approval: ")
    assert "ac-security-review" in found.group(5)

    again = pytester.runpytest_subprocess("--plangraph")  # no gate: a warning, the run passes
    assert again.ret == 0
    assert [line[:10] for line in again.outlines if line.startswith("::")] == ["::warning "]
    assert summary.read_text(encoding="utf-8").count("## plangraph: auth-login") == 2


def test_nothing_for_github_outside_a_job(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = jwt_project(pytester)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    assert plangraph(root, "claim", NODE, "--by", "agent-7").code == 1
    result = pytester.runpytest_subprocess("--plangraph", "--plangraph-gate")
    assert result.ret == 1
    assert not [line for line in result.outlines if line.startswith("::")]


def test_a_summary_file_that_cannot_be_written_is_one_warning(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = jwt_project(pytester)
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(root / "no-such-folder" / "summary.md"))
    result = pytester.runpytest_subprocess("--plangraph")
    assert result.ret == 0
    warning = [line for line in result.outlines if "GITHUB_STEP_SUMMARY" in line]
    assert len(warning) == 1 and warning[0].startswith("plangraph: warning: cannot append")
    assert "Traceback" not in result.stdout.str() + result.stderr.str()


def test_a_summary_aimed_at_the_store_is_refused_and_the_store_kept(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = jwt_project(pytester)
    assert pytester.runpytest_subprocess("--plangraph").ret == 0
    store = root / ".plangraph" / "store.db"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(store))
    result = pytester.runpytest_subprocess("--plangraph")
    assert result.ret == 0
    warning = [line for line in result.outlines if "GITHUB_STEP_SUMMARY" in line]
    assert len(warning) == 1 and "is the plan or the evidence store" in warning[0]
    assert b"## plangraph" not in store.read_bytes()
    assert plangraph(root, "audit").code == 0
