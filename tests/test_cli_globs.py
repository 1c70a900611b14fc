"""Globs no search can finish the naive way (hundreds of ``**`` or ``*`` names), in every place
a plan holds a pattern, through the real ``plangraph`` command on a real git repository: a
correct answer, or one lint finding with its location — never a hang or a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_helpers import plangraph_main
from conftest import git

DEEP = "d/" * 40 + "x.txt"
PATTERNS = {
    "globstars": "**/" * 100 + "x.txt",
    "stars": "*/" * 300 + "x.txt",
    "stars-to-the-file": "*/" * 40 + "x.txt",
}


def _repo(root: Path, pattern: str, artifact: str = "data/x.bin") -> Path:
    """A plan whose outputs, consumes-edge artifacts and ``tests:`` patterns are *pattern*,
    and whose artifact verifier checks *artifact*; the deep file exists and is committed."""
    (root / DEEP).parent.mkdir(parents=True)
    (root / DEEP).write_text("one")
    (root / "data").mkdir()
    (root / "data/x.bin").write_text("bin")
    (root / "plangraph.yaml").write_text(
        "plangraph: 1\nplan: globs\nnodes:\n"
        f"  - id: made\n    outputs: ['{pattern}']\n"
        "    acceptance: [{id: ok, verifier: {type: approval}}]\n"
        "  - id: used\n"
        f"    acceptance: [{{id: t, verifier: {{type: test, tests: ['{pattern}::test_x']}}}},\n"
        f"                 {{id: a, verifier: {{type: artifact, path: '{artifact}'}}}}]\n"
        "edges:\n"
        f"  - {{from: made, to: used, type: consumes, artifacts: ['{pattern}']}}\n"
    )
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "deep globs")
    return root


@pytest.mark.parametrize("pattern", PATTERNS.values(), ids=PATTERNS.keys())
def test_a_deep_glob_gives_a_correct_answer_in_every_command(tmp_path: Path, pattern: str) -> None:
    root = _repo(tmp_path, pattern)
    lint = plangraph_main(root, "lint")
    assert (lint.code, lint.err) == (0, "")
    assert plangraph_main(root, "approve", "made/ok", "--by", "lead").code == 0
    status = plangraph_main(root, "status", "--format", "json")
    assert status.code == 0, status.err
    assert {n["id"]: n["status"] for n in status.json()["nodes"]}["made"] == "completed"

    (root / DEEP).write_text("two")  # found by the glob only when it was expanded right
    finds = pattern != PATTERNS["stars"]  # 300 names are deeper than the file
    nodes = {n["id"]: n for n in plangraph_main(root, "status", "--format", "json").json()["nodes"]}
    reasons = [r["code"] for c in nodes["made"]["criteria"] for r in c["reasons"]]
    assert (nodes["made"]["status"], reasons) == (
        ("stale", ["APPROVAL_STALE"]) if finds else ("completed", [])
    )
    impact = plangraph_main(root, "impact", "--since", "HEAD", "--format", "json")
    assert impact.code in (0, 1), impact.err
    [changed] = impact.json()["changed"]
    # "used" maps the file as a test file (its `tests:` pattern): listed under it too
    assert (changed["path"], changed["nodes"]) == (DEEP, ["made", "used"] if finds else [])
    assert plangraph_main(root, "verify").err == ""


def test_a_deep_glob_as_a_verifier_path_is_one_located_lint_error(tmp_path: Path) -> None:
    root = _repo(tmp_path, PATTERNS["globstars"], artifact=PATTERNS["stars"])
    lint = plangraph_main(root, "lint", "--format", "json")
    assert lint.code == 1
    [finding] = lint.json()["findings"]
    assert (finding["code"], finding["node"]) == ("VERIFIER_CONFIG", "used")
    assert finding["location"] == "plangraph.yaml:9:26"  # the `verifier` of criterion a
    assert "is a glob pattern; name one file" in finding["hint"]
    status = plangraph_main(root, "status")
    assert status.code == 2 and "VERIFIER_CONFIG" in status.err
    assert "Traceback" not in status.err
