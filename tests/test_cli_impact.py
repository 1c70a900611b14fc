"""``plangraph impact`` in real git repositories: ``main(argv)`` in process for speed, and
the installed command once for the exit code and stderr of a bad revision."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml
from cli_helpers import Result
from cli_helpers import plangraph as installed
from conftest import FIXTURES, git

from pytest_plangraph.cli import main

Run = Callable[..., Result]


@pytest.fixture
def plangraph(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Run:
    """``plangraph ARGS`` run in *cwd* by ``main(argv)``."""
    monkeypatch.setenv("PLANGRAPH_ACTOR", "tester")
    monkeypatch.delenv("PLANGRAPH_STORE", raising=False)

    def run(cwd: Path, *args: str) -> Result:
        capsys.readouterr()
        monkeypatch.chdir(cwd)
        code = main(list(args))
        captured = capsys.readouterr()
        return Result(code, captured.out, captured.err)

    return run


DOWNSTREAM = ["T5", "T6", "T7", "T8", "T9", "T10", "T11", "T12"]


def _change_t5(root: Path, *, commit: bool = True) -> str:
    (root / "out/t5.txt").write_text("step 5, rewritten\n")
    if not commit:
        return ""
    git(root, "commit", "-q", "-am", "rewrite t5")
    return git(root, "rev-parse", "--short=7", "HEAD").strip()


def _invalidated(data: dict[str, object]) -> list[str]:
    entries = data["invalidated"]
    assert isinstance(entries, list)
    return [entry["node"] for entry in entries]


def test_since_previews_exactly_t5_to_t12_without_a_store(
    plangraph: Run, project: Callable[[str], Path]
) -> None:
    root = project("seed-000")
    short = _change_t5(root)

    result = plangraph(root, "impact", "--since", "HEAD~1", "--format", "json")
    assert result.code == 0, result.err
    data = result.json()
    assert data["format"] == 1
    assert list(data) == ["format", "changed", "invalidated", "review_recommended", "blocked"]
    assert _invalidated(data) == DOWNSTREAM
    assert data["changed"] == [{"path": "out/t5.txt", "change": "modified", "nodes": ["T5"]}]
    t12 = data["invalidated"][-1]
    assert t12["evidence"] == []
    assert t12["reasons"] == [
        f"UPSTREAM_CHANGED via T10 ← T8 ← T6 ← T5 ← ARTIFACT_CHANGED out/t5.txt (commit {short})"
    ]
    assert not (root / ".plangraph").exists()
    assert plangraph(root, "impact", "--since", "HEAD~1", "--check").code == 1
    assert plangraph(root, "impact", "--since", "HEAD", "--check").code == 0


def test_evidence_goes_stale_and_apply_records_changes(
    plangraph: Run, project: Callable[[str], Path]
) -> None:
    root = project("seed-000")
    assert plangraph(root, "verify").code == 0
    assert plangraph(root, "impact", "--check").code == 0
    short = _change_t5(root)

    result = plangraph(root, "impact", "--format", "json", "--check")
    assert result.code == 1, result.err
    data = result.json()
    assert _invalidated(data) == DOWNSTREAM
    assert all(len(entry["evidence"]) == 1 for entry in data["invalidated"])
    assert data["invalidated"][0]["reasons"] == [f"ARTIFACT_CHANGED out/t5.txt (commit {short})"]
    assert data["invalidated"][1]["reasons"] == [
        f"UPSTREAM_CHANGED via T5 ← ARTIFACT_CHANGED out/t5.txt (commit {short})"
    ]

    applied = plangraph(root, "impact", "--apply")
    assert applied.code == 0, applied.err
    assert applied.out.rstrip().endswith("recorded 8 change events")
    assert plangraph(root, "impact", "--apply").out.rstrip().endswith("recorded 0 change events")
    history = plangraph(root, "history", "T12", "--format", "json").json()
    changes = [e for e in history["events"] if e["kind"] == "change"]
    assert len(changes) == 1
    assert changes[0]["payload"]["path"] == "out/t5.txt"
    assert changes[0]["payload"]["change"] == "modified"
    assert changes[0]["payload"]["commit"].startswith(short)
    assert changes[0]["status_after"] == "stale"
    text = plangraph(root, "history", "T12").out.splitlines()
    [row] = [line for line in text if " change " in line]
    assert f"modified out/t5.txt (commit {short})" in row  # when and why, in the text too


def test_a_cancelled_node_is_invalidated_by_no_command(
    plangraph: Run, project: Callable[[str], Path]
) -> None:
    """A cancelled node needs no evidence: impact over the store, impact --since and audit
    agree that nothing of it is invalidated, while its evidence is stale underneath."""
    root = project("seed-000")
    assert plangraph(root, "verify").code == 0
    assert plangraph(root, "cancel", "T12", "--by", "lead").code == 0
    _change_t5(root)

    over_store = plangraph(root, "impact", "--format", "json").json()
    assert _invalidated(over_store) == DOWNSTREAM[:-1]
    since = plangraph(root, "impact", "--since", "HEAD~1", "--format", "json").json()
    assert _invalidated(since) == DOWNSTREAM[:-1]
    audit = plangraph(root, "audit", "--format", "json")
    assert audit.code == 1  # T5 … T11 are stale
    assert {entry["node"] for entry in audit.json()["stale"]} == set(DOWNSTREAM[:-1])
    status = plangraph(root, "status", "--format", "json").json()
    [t12] = [node for node in status["nodes"] if node["id"] == "T12"]
    assert t12["status"] == "cancelled"
    assert {c["state"] for c in t12["criteria"]} == {"stale"}


def test_reverified_node_is_no_longer_invalidated(
    plangraph: Run, project: Callable[[str], Path]
) -> None:
    root = project("seed-000")
    assert plangraph(root, "verify").code == 0
    _change_t5(root, commit=False)
    assert plangraph(root, "verify", "T5", "T6", "T7").code == 0

    data = plangraph(root, "impact", "--format", "json").json()
    assert _invalidated(data) == ["T8", "T9", "T10", "T11", "T12"]
    assert data["changed"] == []
    assert data["invalidated"][0]["reasons"] == ["UPSTREAM_CHANGED ac-out: T6"]


def test_a_file_added_to_an_output_directory_is_named_over_the_store(
    plangraph: Run, tmp_path: Path
) -> None:
    """Every record names the node's output files of its time: a file of the outputs that it
    does not name was added since, and impact (and --apply, and history) says so."""
    root = tmp_path / "added"
    (root / "build").mkdir(parents=True)
    (root / "build/a.txt").write_text("a\n")
    (root / "b.txt").write_text("b\n")
    (root / "plangraph.yaml").write_text(ADDED_PLAN)
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "start")
    assert plangraph(root, "verify").code == 0
    (root / "build/new.txt").write_text("new\n")

    data = plangraph(root, "impact", "--format", "json").json()
    assert data["changed"] == [{"path": "build/new.txt", "change": "added", "nodes": ["A"]}]
    assert _invalidated(data) == ["A", "B"]
    assert data["invalidated"][0]["reasons"][0] == "ARTIFACT_CHANGED build/new.txt (added)"
    assert plangraph(root, "impact", "--apply").out.rstrip().endswith("recorded 2 change events")
    history = plangraph(root, "history", "A", "--format", "json").json()["events"]
    assert [e["payload"].get("path") for e in history if e["kind"] == "change"] == ["build/new.txt"]


ADDED_PLAN = """
plangraph: 1
plan: added
nodes:
  - id: A
    outputs: [build]
    acceptance: [{id: ok, verifier: {type: artifact, path: build/a.txt}}]
  - id: B
    outputs: [b.txt]
    acceptance: [{id: ok, verifier: {type: artifact, path: b.txt}}]
edges:
  - {from: A, to: B, type: consumes}
"""


def test_markdown_for_a_step_summary(plangraph: Run, project: Callable[[str], Path]) -> None:
    root = project("jwt-login")
    schema = root / "src/auth/user_schema.json"
    schema.write_text(schema.read_text().replace("}", "} ", 1))
    git(root, "commit", "-q", "-am", "touch the schema")
    short = git(root, "rev-parse", "--short=7", "HEAD").strip()

    result = plangraph(root, "impact", "--since", "HEAD~1", "--format", "markdown")
    assert result.code == 0, result.err
    lines = result.out.splitlines()
    assert lines[0] == "## plangraph impact"
    assert "**2 node(s) invalidated** by 1 changed path(s)." in lines
    assert "| modified | `src/auth/user_schema.json` | step-user-schema |" in lines
    assert (
        "| step-token-endpoint | — | UPSTREAM_CHANGED via step-user-schema ← ARTIFACT_CHANGED "
        f"src/auth/user_schema.json (commit {short}) |"
    ) in lines


def test_nothing_changed_in_markdown(plangraph: Run, project: Callable[[str], Path]) -> None:
    root = project("seed-000")
    result = plangraph(root, "impact", "--since", "HEAD", "--format", "markdown", "--check")
    assert result.code == 0
    assert "**Nothing invalidated** by 0 changed path(s)." in result.out


def test_rebased_evidence_commit_falls_back_to_hashes(
    plangraph: Run, project: Callable[[str], Path]
) -> None:
    root = project("seed-000")
    assert plangraph(root, "verify").code == 0
    git(root, "commit", "-q", "--amend", "-m", "initial, reworded")
    _change_t5(root)

    result = plangraph(root, "impact", "--format", "json")
    assert result.code == 0
    assert "is not in the history of HEAD (rebased or dropped)" in result.err
    data = result.json()
    assert _invalidated(data) == DOWNSTREAM
    assert data["invalidated"][0]["reasons"] == ["ARTIFACT_CHANGED out/t5.txt"]


def test_outside_git_is_hash_only(plangraph: Run, tmp_path: Path) -> None:
    root = tmp_path / "plain"
    shutil.copytree(FIXTURES / "seed-000", root)
    assert plangraph(root, "verify", "--root", ".").code == 0
    (root / "out/t5.txt").unlink()

    result = plangraph(root, "impact", "--root", ".", "--format", "json")
    assert result.code == 0
    assert result.err.count("not a git repository") == 1
    data = result.json()
    assert _invalidated(data) == DOWNSTREAM
    assert data["invalidated"][0]["reasons"] == ["ARTIFACT_DELETED out/t5.txt"]
    assert data["changed"] == [{"path": "out/t5.txt", "change": "deleted", "nodes": ["T5"]}]
    since = plangraph(root, "impact", "--root", ".", "--since", "HEAD")
    assert since.code == 2
    assert "is not a git repository" in since.err


def test_bad_revision_and_bad_options_exit_2(
    plangraph: Run, project: Callable[[str], Path]
) -> None:
    root = project("seed-000")
    bad = installed(root, "impact", "--since", "no-such-branch")
    assert bad.code == 2
    assert bad.err.startswith("plangraph: error: unknown revision 'no-such-branch'")
    assert "Traceback" not in bad.err
    mixed = plangraph(root, "impact", "--since", "HEAD", "--apply")
    assert mixed.code == 2
    assert "--apply" in mixed.err


def _edit_plan(root: Path, old: str, new: str) -> None:
    plan = root / "plangraph.yaml"
    text = plan.read_text(encoding="utf-8")
    assert old in text
    plan.write_text(text.replace(old, new, 1), encoding="utf-8")


def test_since_reports_a_changed_criterion_and_its_downstream(
    plangraph: Run, project: Callable[[str], Path]
) -> None:
    root = project("seed-000")
    _edit_plan(root, "step 5 wrote its output", "step 5 wrote its output, twice")
    _edit_plan(root, "title: Step 2", "title: Step two")  # a title binds no evidence
    git(root, "commit", "-q", "-am", "tighten T5")
    short = git(root, "rev-parse", "--short=7", "HEAD").strip()

    result = plangraph(root, "impact", "--since", "HEAD~1", "--format", "json")
    assert result.code == 0, result.err
    data = result.json()
    assert data["changed"] == [{"path": "plangraph.yaml", "change": "modified", "nodes": ["T5"]}]
    assert _invalidated(data) == DOWNSTREAM
    cause = f"CRITERION_CHANGED T5/ac-out (plangraph.yaml, commit {short})"
    assert data["invalidated"][0]["reasons"] == [cause]
    assert data["invalidated"][-1]["reasons"] == [
        f"UPSTREAM_CHANGED via T10 ← T8 ← T6 ← T5 ← {cause}"
    ]
    assert result.err == ""


def test_since_sees_uncommitted_plan_edits_without_commits(
    plangraph: Run, project: Callable[[str], Path]
) -> None:
    root = project("seed-000")
    _edit_plan(root, "outputs: [out/t11.txt]", "outputs: [out/t11.txt, out/t11.log]")
    _change_t5(root, commit=False)

    result = plangraph(root, "impact", "--since", "HEAD", "--no-commits", "--format", "json")
    assert result.code == 0, result.err
    data = result.json()
    assert [c["path"] for c in data["changed"]] == ["out/t5.txt", "plangraph.yaml"]
    t11 = next(entry for entry in data["invalidated"] if entry["node"] == "T11")
    assert t11["reasons"][0] == "NODE_CHANGED T11 (outputs, plangraph.yaml)"
    assert all("commit" not in r for e in data["invalidated"] for r in e["reasons"])


def test_a_plan_unreadable_at_the_revision_is_said_once(
    plangraph: Run, project: Callable[[str], Path]
) -> None:
    root = project("seed-000")
    good = (root / "plangraph.yaml").read_text(encoding="utf-8")
    (root / "plangraph.yaml").write_text("plangraph: 1\nnodes: [oops\n", encoding="utf-8")
    git(root, "commit", "-q", "-am", "break the plan")
    (root / "plangraph.yaml").write_text(good, encoding="utf-8")

    result = plangraph(root, "impact", "--since", "HEAD", "--format", "json")
    assert result.code == 0
    assert result.err.count("the plan at HEAD could not be read") == 1
    assert result.json()["invalidated"] == []


def test_a_plan_new_since_the_revision_has_no_edits(plangraph: Run, tmp_path: Path) -> None:
    root = tmp_path / "late-plan"
    shutil.copytree(FIXTURES / "seed-000", root)
    (root / "plangraph.yaml").rename(tmp_path / "plan.yaml")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "outputs first")
    (tmp_path / "plan.yaml").rename(root / "plangraph.yaml")

    result = plangraph(root, "impact", "--since", "HEAD", "--format", "json")
    assert result.code == 0, result.err
    assert result.json()["changed"] == [
        {"path": "plangraph.yaml", "change": "untracked", "nodes": []}
    ]
    assert result.json()["invalidated"] == []


def test_a_plan_moved_and_rewritten_past_gits_rename_still_gives_its_edits(
    plangraph: Run, project: Callable[[str], Path]
) -> None:
    """plangraph.yaml becomes plan.json (too different for git to pair them) with an edited
    criterion: the deleted file holding the same plan is the plan as it was."""
    root = project("seed-000")
    data = yaml.safe_load((root / "plangraph.yaml").read_text())
    [t5] = [n for n in data["nodes"] if n["id"] == "T5"]
    t5["acceptance"][0]["assertion"] = "a stricter assertion"
    (root / "plan.json").write_text(json.dumps(data, indent=2))
    git(root, "rm", "-q", "plangraph.yaml")
    git(root, "add", "plan.json")
    git(root, "commit", "-q", "-m", "the plan moves to JSON")

    result = plangraph(
        root, "impact", "--plan", "plan.json", "--since", "HEAD~1", "--check", "--format", "json"
    )
    assert result.code == 1, result.err
    assert _invalidated(result.json()) == DOWNSTREAM
    assert result.json()["invalidated"][0]["reasons"][0].startswith("CRITERION_CHANGED T5/")


def test_impact_leaves_out_the_store_and_its_cache_and_nothing_else(
    plangraph: Run, project: Callable[[str], Path]
) -> None:
    root = project("seed-000")
    store = ["--store", "data/store.db"]
    assert plangraph(root, "verify", *store).code == 0
    (root / "data/store.db.cache").mkdir()  # the store's cache folder, before its .gitignore
    (root / "data/store.db.cache/kept.json").write_text("{}\n")
    (root / "data/store.db.bak").write_text("a copy the user keeps\n")
    data = plangraph(root, "impact", "--since", "HEAD", "--format", "json", *store).json()
    assert [change["path"] for change in data["changed"]] == ["data/store.db.bak"]
