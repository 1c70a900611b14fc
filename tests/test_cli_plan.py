"""``plangraph lint`` and ``plangraph schema`` through the real command."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from cli_helpers import plangraph, plangraph_main

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
GOLDEN = Path(__file__).resolve().parent / "golden"


def test_lint_clean_plan_exits_0(project):
    root = project("seed-000")
    result = plangraph(root, "lint")
    assert result.code == 0, result.err
    assert result.out.strip().endswith("seed-000: 0 error(s), 0 warning(s)")
    assert result.err == ""


def test_lint_json_matches_golden(tmp_path):
    shutil.copytree(FIXTURES / "lint", tmp_path / "lint")
    result = plangraph(tmp_path / "lint", "lint", "cycle.yaml", "--format", "json")
    assert result.code == 1
    assert result.json() == json.loads((GOLDEN / "lint-cycle.json").read_text())


def test_lint_text_names_code_node_and_location(tmp_path):
    shutil.copytree(FIXTURES / "lint", tmp_path / "lint")
    result = plangraph(tmp_path / "lint", "lint", "cycle.yaml")
    assert result.code == 1
    assert "cycle.yaml:" in result.out
    assert " error CYCLE " in result.out
    assert "->" in result.out


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "file is empty"),
        ("plangraph: 1\nplan: [x\n", "YAML syntax error"),
        ("plangraph: 1\nplan: p\nnodes: a-string\n", "nodes: expected a list"),
        ("plangraph: 1\nplan: p\nwho: me\n", "unknown field 'who'"),
        ("plangraph: 1\nplan: p\nplan: q\n", "duplicate key 'plan'"),
    ],
    ids=["empty", "syntax", "scalar-for-list", "unknown-field", "duplicate-key"],
)
def test_unreadable_plan_exits_2_without_traceback(tmp_path, text, message):
    (tmp_path / "plangraph.yaml").write_text(text)
    (tmp_path / ".git").mkdir()
    result = plangraph(tmp_path, "lint")
    assert result.code == 2
    assert result.out == ""
    assert result.err.startswith("plangraph: error: plangraph.yaml:")
    assert message in result.err
    assert "Traceback" not in result.err


def test_huge_plan_exits_2(tmp_path):
    path = tmp_path / "big.yaml"
    with path.open("wb") as handle:
        handle.write(b"plangraph: 1\nplan: p\n#")
        handle.truncate(50 * 1024 * 1024)
    result = plangraph(tmp_path, "lint", "big.yaml")
    assert result.code == 2
    assert "plan file is 52.4 MB; the limit is 32 MB" in result.err


def test_a_folder_made_a_symlink_out_since_the_last_lint_of_the_process_is_an_error(
    tmp_path: Path,
) -> None:
    """Two lints in one process (a server, an in-process pytest run), ``out/`` made a link
    out of the root in between: the second finds each output under it outside the root, as
    a new process does (it said nothing: the first lint's look at ``out/`` was kept)."""
    root, outside = tmp_path / "repo", tmp_path / "elsewhere"
    for folder in (root / "out", root / ".git", outside):
        folder.mkdir(parents=True)
        (folder / "f.txt").write_text("x", encoding="utf-8")
    (root / "plangraph.yaml").write_text(
        "plangraph: 1\nplan: p\nnodes:\n  - id: a\n    outputs: [out/f.txt]\n"
        "    acceptance: [{id: c, verifier: {type: approval}}]\n"
    )
    assert plangraph_main(root, "lint").code == 0
    shutil.rmtree(root / "out")
    (root / "out").symlink_to(outside)
    again = plangraph_main(root, "lint", "--format", "json")
    assert again.code == 1
    assert [f["code"] for f in again.json()["findings"]] == ["PATH_OUTSIDE_ROOT"]
    assert again.out == plangraph(root, "lint", "--format", "json").out


@pytest.mark.parametrize("path", ["../outside.txt", "/etc/passwd"])
def test_paths_out_of_the_root_are_lint_errors(tmp_path, path):
    (tmp_path / ".git").mkdir()
    (tmp_path / "plangraph.yaml").write_text(
        "plangraph: 1\nplan: p\nnodes:\n  - id: a\n"
        f"    outputs: ['{path}']\n"
        "    acceptance: [{id: c, verifier: {type: approval}}]\n"
    )
    result = plangraph(tmp_path, "lint", "--format", "json")
    assert result.code == 1
    codes = [(f["code"], f["node"], f["location"]) for f in result.json()["findings"]]
    assert ("PATH_OUTSIDE_ROOT", "a", "plangraph.yaml:5:15") in codes


def test_duplicate_id_is_a_lint_error(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / "plangraph.yaml").write_text(
        "plangraph: 1\nplan: p\nnodes:\n  - id: a\n    kind: objective\n"
        "  - id: a\n    kind: objective\n"
    )
    result = plangraph(tmp_path, "lint")
    assert result.code == 1
    assert "plangraph.yaml:6:" in result.out and "DUPLICATE_ID" in result.out


def test_missing_plan_exits_2(tmp_path):
    (tmp_path / ".git").mkdir()
    result = plangraph(tmp_path, "lint")
    assert result.code == 2
    assert "plan file not found" in result.err


@pytest.mark.parametrize("extra", [[], ["--format", "json"]])
def test_schema_prints_the_docs_copy(tmp_path, extra):
    result = plangraph(tmp_path, "schema", *extra)
    assert result.code == 0
    assert (
        result.out
        == (Path(__file__).resolve().parents[1] / "docs/plangraph.schema.json").read_text()
    )


def test_usage_errors_exit_2(tmp_path):
    result = plangraph(tmp_path, "lint", "--format", "xml")
    assert result.code == 2
    assert "invalid choice: 'xml'" in result.err
