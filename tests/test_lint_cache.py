"""The lint errors of the rules that read a large plan alone are kept in the plan cache and
used by the next check of the same bytes; the rules that look at files run every time."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import git

from pytest_plangraph.api import PlanGraph
from pytest_plangraph.errors import PlanError
from pytest_plangraph.plan.cache import lint_version


def _repo(tmp_path: Path, edge_to: str = "n1") -> Path:
    """A repository with a plan large enough for the plan cache (over 16 KiB), whose one edge
    points at *edge_to*."""
    root = tmp_path / "repo"
    (root / "out").mkdir(parents=True)
    git(root, "init", "-q")
    nodes = "".join(
        f"  - id: n{i}\n    title: {'x' * 40}\n    outputs: [out/n{i}.txt]\n    acceptance:\n"
        f"      - id: ac\n        verifier: {{type: artifact, path: out/n{i}.txt}}\n"
        for i in range(300)
    )
    edges = f"edges:\n  - {{from: n0, to: {edge_to}, type: requires}}\n"
    (root / "plangraph.yaml").write_text(f"plangraph: 1\nplan: big\nnodes:\n{nodes}{edges}")
    return root


def _check(root: Path, plan: Path | None = None) -> str:
    """The lint errors a command's plan check reports ("" when none)."""
    with PlanGraph.open(root, plan=plan) as graph:
        try:
            graph.check_plan()
        except PlanError as exc:
            return str(exc)
    return ""


def _entry(root: Path) -> Path:
    [entry] = (root / ".plangraph" / "cache").glob("lint-*.json")
    return entry


def test_kept_errors_are_used_by_the_next_check(tmp_path: Path) -> None:
    root = _repo(tmp_path, edge_to="nowhere")
    first = _check(root)
    assert "MISSING_DEP" in first and "nowhere" in first
    kept = json.loads(_entry(root).read_text())
    assert kept["version"] == lint_version()
    assert [f["code"] for f in kept["data"]["findings"]] == ["MISSING_DEP"]
    # the next check takes the kept findings instead of running those rules again
    kept["data"]["findings"][0]["hint"] = "the kept hint"
    _entry(root).write_text(json.dumps(kept))
    assert "the kept hint" in _check(root)


_ERROR = {"code": "MISSING_DEP", "severity": "error", "node": "n1", "hint": "h", "location": ""}


@pytest.mark.parametrize(
    "damage",
    [
        lambda kept: "{not json",
        lambda kept: json.dumps({**kept, "version": "0.0.0+other"}),
        lambda kept: json.dumps({**kept, "data": {**kept["data"], "types": ["artifact"]}}),
        lambda kept: json.dumps({**kept, "data": {**kept["data"], "findings": [{"code": 1}]}}),
        lambda kept: json.dumps({**kept, "data": None}),
        lambda kept: json.dumps(
            {**kept, "data": {**kept["data"], "findings": [{**_ERROR, "location": None}]}}
        ),
        lambda kept: json.dumps(
            {**kept, "data": {**kept["data"], "findings": [{**_ERROR, "severity": "warning"}]}}
        ),
    ],
    ids=[
        "unreadable",
        "other-code",
        "other-verifier-types",
        "malformed-finding",
        "no-data",
        "location-not-text",
        "severity-not-the-codes",
    ],
)
def test_an_untrusted_entry_is_found_again_and_rewritten(tmp_path: Path, damage) -> None:
    root = _repo(tmp_path, edge_to="nowhere")
    first = _check(root)
    kept = json.loads(_entry(root).read_text())
    lying = {**kept, "data": {**kept["data"], "findings": []}}  # would hide the error
    _entry(root).write_text(damage(lying))
    assert _check(root) == first
    assert json.loads(_entry(root).read_text()) == kept


def test_file_checks_run_every_time(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    assert _check(root) == ""
    assert json.loads(_entry(root).read_text())["data"]["findings"] == []
    outside = tmp_path / "secret.txt"
    outside.write_text("secret")
    (root / "out" / "n7.txt").symlink_to(outside)  # same plan bytes, a link out of the root
    found = _check(root)
    assert "PATH_OUTSIDE_ROOT" in found and "out/n7.txt" in found


def test_an_edited_plan_is_checked_afresh(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    assert _check(root) == ""
    plan = root / "plangraph.yaml"
    plan.write_text(plan.read_text().replace("to: n1,", "to: nowhere,"))
    assert "MISSING_DEP" in _check(root)
    assert len(list((root / ".plangraph" / "cache").glob("lint-*.json"))) == 2


def test_kept_errors_name_the_file_they_are_read_from(tmp_path: Path) -> None:
    root = _repo(tmp_path, edge_to="nowhere")
    first = _check(root)
    copy = root / "plans" / "next.yaml"
    copy.parent.mkdir()
    copy.write_bytes((root / "plangraph.yaml").read_bytes())  # same bytes: the same entry
    found = _check(root, plan=copy)
    assert len(list((root / ".plangraph" / "cache").glob("lint-*.json"))) == 1
    [line] = [line for line in found.splitlines() if "MISSING_DEP" in line]
    [before] = [line for line in first.splitlines() if "MISSING_DEP" in line]
    assert "next.yaml:" in line and "next.yaml" not in before
    assert line.split("next.yaml", 1)[1] == before.split("plangraph.yaml", 1)[1]


def test_builtin_settings_are_kept_and_schema_files_looked_at_each_time(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    plan = root / "plangraph.yaml"
    text = plan.read_text().replace("path: out/n3.txt}", "path: 'out/*.txt'}")
    text = text.replace(
        "{type: artifact, path: out/n5.txt}",
        "{type: schema, schema: s.json, artifact: out/n5.txt}",
    )
    plan.write_text(text)
    (root / "s.json").write_text('{"type": "object"}')
    first = _check(root)
    assert "n3/ac: path: 'out/*.txt' is a glob pattern; name one file" in first
    kept = json.loads(_entry(root).read_text())["data"]["findings"]
    assert [(f["code"], f["node"]) for f in kept] == [("VERIFIER_CONFIG", "n3")]
    assert _check(root) == first  # from the kept entry
    (root / "s.json").write_text("[not a schema")
    with PlanGraph.open(root) as graph:
        blocking, goes_on = graph.plan_problems()  # a schema file is looked at every time
    assert [f.node for f in blocking] == ["n3"]
    assert [f.node for f in goes_on] == ["n5"] and "s.json" in goes_on[0].hint
