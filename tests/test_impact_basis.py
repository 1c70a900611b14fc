"""``impact --since`` on a miss made from the kept basis (``cli/impact_basis.py``): on every
fixture, in every format, with and without ``--check`` and ``--no-commits``, the answer made
from the basis (the kept answer deleted, or another diff: a new commit) is the answer made
from the plan with every kept file deleted; a basis answer opens no plan; a damaged basis,
a diff that changes the plan file, a bound file gone or made a link, an edited plan, a store
made since are answered from the plan (a preview's bound file edited in its bytes is not);
the basis read back from its JSON makes the report the graph makes; a basis answer imports
neither the plan's classes, the judge, YAML, pydantic nor the parser."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from cache_helpers import as_tester, fixture_projects
from cli_helpers import Result, plangraph_main
from conftest import git
from impact_kept_helpers import CACHE, edit_history, fresh_impact, run_impact

from pytest_plangraph.api import PlanGraph
from pytest_plangraph.impact.basis import DiffBasis
from pytest_plangraph.vcs.history import diff_since

FORMATS = ("text", "json", "markdown")
BASIS = "impact-since-basis.json"


@pytest.fixture(autouse=True)
def _environment(monkeypatch: pytest.MonkeyPatch) -> None:
    as_tester(monkeypatch)


def _from_basis(root: Path, *args: str, made: list[object]) -> Result:
    """The answer with the kept answers deleted and the basis kept: made from the basis
    (asserted: no plan opened)."""
    assert (root / CACHE / BASIS).is_file()
    for kept in (root / CACHE).glob("impact-*"):
        if kept.name != BASIS:
            kept.unlink()
    before = len(made)
    answer = run_impact(root, *args)
    assert len(made) == before, args  # no plan opened
    return answer


def test_every_fixture_and_format_answers_the_same_from_the_basis(
    tmp_path: Path, made: list[object]
) -> None:
    answered = 0
    for name, root, plan in fixture_projects(tmp_path, lint_plans=6):
        (root / CACHE).mkdir(parents=True, exist_ok=True)
        git(root, "init", "-q", "-b", "main")
        git(root, "add", "-A")
        git(root, "commit", "-q", "-m", "initial")
        for output in sorted((root / "out").glob("*"))[:2] if (root / "out").is_dir() else ():
            output.write_text(f"{output.read_text()}edited\n")
            git(root, "commit", "-q", "-am", f"edit {output.name}")
        since = "HEAD~2" if (root / "out").is_dir() else "HEAD"
        for fmt in FORMATS:
            for mode in ((), ("--no-commits",)):
                for check in ((), ("--check",)):
                    args = ("--plan", str(plan), "--format", fmt, "--since", since, *mode, *check)
                    fresh = fresh_impact(root, *args)
                    if not (root / CACHE / BASIS).is_file():
                        continue  # a plan whose answer is not kept (lint errors, types)
                    assert _from_basis(root, *args, made=made) == fresh, (name, fmt, mode)
                    answered += 1
    assert answered >= 2 * len(FORMATS) * 2 * 2  # jwt-login and seed-000, every way asked


def test_a_new_commit_is_answered_from_the_basis_as_from_the_plan(
    project: Callable[[str], Path], made: list[object]
) -> None:
    root = project("seed-000")
    (root / CACHE).mkdir(parents=True)
    edit_history(root, 6)
    since = ("--since", "HEAD~6")
    run_impact(root, *since)
    assert (root / CACHE / BASIS).is_file()
    (root / "notes.txt").write_text("a file no node binds\n")
    git(root, "add", "notes.txt")
    git(root, "commit", "-q", "-m", "one more")  # another range: the kept answer misses
    before = len(made)
    later = run_impact(root, *since, "--format", "json")
    assert len(made) == before  # made from the basis: no plan opened
    assert "notes.txt" in [c["path"] for c in json.loads(later.out)["changed"]]
    assert later == fresh_impact(root, *since, "--format", "json")
    # a commit editing bound files (their bytes alone): a preview reads none of them
    edit_history(root, 2)
    before = len(made)
    edited = run_impact(root, *since)
    assert len(made) == before
    assert edited == fresh_impact(root, *since)
    assert (root / "out/t1.txt").stat().st_size and "out/t1.txt" in edited.out


@pytest.mark.parametrize(
    "change",
    [
        "damaged",
        "plan edited",
        "plan in the diff",
        "bound file removed",
        "bound file made a link",
        "store made",
    ],
)
def test_what_the_basis_cannot_stand_for_is_answered_from_the_plan(
    project: Callable[[str], Path], made: list[object], change: str
) -> None:
    root = project("seed-000")
    (root / CACHE).mkdir(parents=True)
    edit_history(root, 4)
    since = ("--since", "HEAD~4", "--format", "json")
    run_impact(root, *since)
    basis = root / CACHE / BASIS
    plan = root / "plangraph.yaml"
    if change == "damaged":
        basis.write_text(basis.read_text()[:-40])
    elif change == "plan edited":
        plan.write_text(plan.read_text().replace("title:", "title: edited", 1))
    elif change == "plan in the diff":
        plan.write_text(plan.read_text() + "# a comment\n")
        git(root, "commit", "-q", "-am", "a comment in the plan")
    elif change == "bound file removed":
        (root / "out/t3.txt").unlink()
    elif change == "bound file made a link":
        target = root / "out/t3.txt"
        target.rename(root / "elsewhere.txt")
        target.symlink_to(root / "elsewhere.txt")
    else:
        plangraph_main(root, "verify")  # a store where the basis was kept without one
    for kept in (root / CACHE).glob("impact-since-json*"):
        kept.unlink()
    before = len(made)
    answer = run_impact(root, *since)
    assert len(made) == before + 1  # the plan opened
    assert answer == fresh_impact(root, *since)


def test_the_basis_read_back_makes_the_report_the_graph_makes(
    project: Callable[[str], Path],
) -> None:
    root = project("jwt-login")
    for path in sorted((root / "src").rglob("*.py"))[:3]:
        path.write_text(path.read_text() + "# edited\n")
    git(root, "commit", "-q", "-am", "edits")
    with PlanGraph.open(root) as graph:
        report = graph.impact("HEAD~1")
    assert report.basis is not None and report.invalidated
    again = DiffBasis.from_json(json.loads(json.dumps(report.basis.to_json())))
    assert again is not None
    changes = diff_since(root, "HEAD~1").changes
    commits = {c.path: c.commit for c in report.changed if c.commit}
    made = again.report(changes, commits=commits)
    assert made.to_json() == report.to_json()
    assert [i.paths for i in made.invalidated] == [i.paths for i in report.invalidated]
    assert DiffBasis.from_json({**report.basis.to_json(), "order": ["nowhere"]}) is None
    assert DiffBasis.from_json({"format": 0}) is None


PROBE = """
import contextlib, io, json, sys
from pytest_plangraph.cli import main
with contextlib.redirect_stdout(io.StringIO()):
    code = main(sys.argv[2:])
heavy = ["pydantic", "yaml", "git", "argparse", "pytest_plangraph.impact.walk",
         "pytest_plangraph.plan.model", "pytest_plangraph.judge", "pytest_plangraph.survey",
         "pytest_plangraph.cli.impact_cmds", "dataclasses"]
with open(sys.argv[1], "w") as out:
    json.dump([code, sorted(m for m in heavy if m in sys.modules)], out)
"""


def test_a_basis_answer_loads_neither_the_plan_nor_the_parser(
    project: Callable[[str], Path], tmp_path: Path
) -> None:
    root = project("seed-000")
    (root / CACHE).mkdir(parents=True)
    edit_history(root, 3)
    report = tmp_path / "modules.json"

    def probe() -> list[object]:
        command = [sys.executable, "-c", PROBE, str(report), "impact", "--since", "HEAD~3"]
        subprocess.run(command, cwd=root, check=True, timeout=300)
        loaded: list[object] = json.loads(report.read_text())
        return loaded

    made = probe()  # the report made from the plan, the basis kept
    assert "pytest_plangraph.plan.model" in made[1]  # the probe sees what was imported
    edit_history(root, 1)  # one commit later: another diff, the basis standing
    assert probe() == [made[0], []]
