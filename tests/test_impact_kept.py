"""``plangraph impact`` answered from what it printed last time (the kept answer of
``derived/kept.py``, keyed by the diff for ``--since``, by ``HEAD`` for the working tree): on
every fixture, in every format, with and without ``--check``, a hit's answer is the answer with
the cache deleted; each kind of change (a commit, a working-tree edit, an untracked file, a
plan edit, a new event, another revision) is a miss whose answer is the one made afresh; a hit
runs two git processes and opens no plan; bad ``--since`` arguments stop the command with
one message; a kept answer imports neither the walk nor pydantic, YAML, GitPython or hashlib."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from cache_helpers import as_tester, fixture_projects
from cli_helpers import Result, plangraph_main
from conftest import git
from impact_kept_helpers import (
    CACHE,
    edit_history,
    fresh_impact,
    run_impact,
)
from repo_helpers import logging_git

FORMATS = ("text", "json", "markdown")


@pytest.fixture(autouse=True)
def _environment(monkeypatch: pytest.MonkeyPatch) -> None:
    as_tester(monkeypatch)


def _projects(tmp_path: Path) -> Iterator[tuple[str, Path, Path]]:
    """Every fixture project and plan: (name, root, plan file)."""
    return fixture_projects(tmp_path, lint_plans=6)


def test_every_fixture_and_format_answers_the_same_from_the_kept_answer(
    tmp_path: Path, made: list[object]
) -> None:
    hits = 0
    for name, root, plan in _projects(tmp_path):
        git(root, "init", "-q", "-b", "main")
        git(root, "add", "-A")
        git(root, "commit", "-q", "-m", "initial")
        plangraph_main(root, "verify", "--plan", str(plan))
        for output in sorted((root / "out").glob("*"))[:1] if (root / "out").is_dir() else ():
            output.write_text("changed in the working tree\n")  # something to report
        for fmt in FORMATS:
            for mode in ((), ("--since", "HEAD"), ("--since", "HEAD", "--no-commits")):
                for check in ((), ("--check",)):
                    args = ("--plan", str(plan), "--format", fmt, *mode, *check)
                    first = run_impact(root, *args)
                    run_impact(root, *args)  # reads the checkpoint, if one was written just now
                    before = len(made)
                    warm = run_impact(root, *args)
                    hits += len(made) == before
                    fresh = fresh_impact(root, *args)
                    assert warm == first == fresh, (name, fmt, mode, check)
    assert hits >= 2 * len(FORMATS) * 3 * 2  # jwt-login and seed-000, every way asked


def test_a_preview_without_a_store_is_kept_by_its_diff(
    project: Callable[[str], Path], tmp_path: Path, made: list[object]
) -> None:
    root = project("seed-000")
    (root / CACHE).mkdir(parents=True)  # a project that uses plangraph has its cache folder
    edit_history(root, 8)
    env, log = logging_git(tmp_path)
    since = ("--since", "HEAD~8", "--format", "json")

    def asked(expect_hit: bool, *, basis: bool = False) -> Any:
        """The answer, asked once: a hit (*expect_hit*), made from the kept basis (*basis*:
        another diff, no plan opened), or made from the plan."""
        log.unlink(missing_ok=True)
        before = len(made)
        answer = run_impact(root, *since, env=env)
        calls = [line.split()[0] for line in log.read_text().splitlines()]
        assert (len(made) == before) is (expect_hit or basis)
        if expect_hit:  # the diff, the untracked files (both ends named from the refs and
            assert calls == ["diff", "ls-files"]  # the revision cache); no plan, no range
        assert answer == fresh_impact(root, *since)
        assert not (root / ".plangraph/plangraph.db").exists()  # a preview makes no store
        return json.loads(answer.out)

    first = asked(expect_hit=False)
    assert asked(expect_hit=True) == first
    (root / "out/t3.txt").write_text("edited in the working tree\n")  # its bytes alone
    assert asked(expect_hit=False, basis=True)  # the basis stands: an answer of it, not kept
    (root / "out/t3.txt").unlink()  # a bound file gone: the plan's check may say otherwise
    asked(expect_hit=False)
    assert asked(expect_hit=True)
    (root / "notes ü\nline.txt").write_text("untracked, an odd name\n")  # bound by no node
    untracked = asked(expect_hit=False, basis=True)
    assert any("notes ü" in c["path"] for c in untracked["changed"])
    assert asked(expect_hit=False, basis=True) == untracked  # an answer of the basis: not kept
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "one more")  # HEAD moves: another range
    asked(expect_hit=False, basis=True)
    plan = root / "plangraph.yaml"
    plan.write_text(plan.read_text() + "# a comment\n")
    asked(expect_hit=False)
    plan.write_text(plan.read_text().replace("title:", "title: edited", 1))
    edited = asked(expect_hit=False)
    assert any(c["path"] == "plangraph.yaml" for c in edited["changed"])
    assert asked(expect_hit=True) == edited
    # another revision naming the same commit: the same range, its own text in notes
    other = run_impact(
        root, "--since", git(root, "rev-parse", "HEAD~8").strip(), "--format", "json"
    )
    assert other.out == run_impact(root, *since).out


def test_the_working_tree_answer_is_kept_by_head_and_the_files(
    project: Callable[[str], Path], made: list[object]
) -> None:
    root = project("seed-000")
    assert plangraph_main(root, "verify").code == 0
    text = ("--check",)

    def asked(expect_hit: bool) -> Result:
        before = len(made)
        answer = run_impact(root, *text)
        assert (len(made) == before) is expect_hit
        assert answer == fresh_impact(root, *text)
        return answer

    run_impact(root, *text)
    run_impact(root, *text)  # reads the checkpoint, if one was written just now
    clean = asked(expect_hit=True)
    assert clean.code == 0
    artifact = root / "out/t5.txt"
    artifact.write_text("changed\n")
    stale = asked(expect_hit=False)
    assert stale.code == 1 and "out/t5.txt" in stale.out
    assert asked(expect_hit=True).code == 1  # --check's answer kept with it
    git(root, "commit", "-q", "-am", "commit the change")  # the commit behind it named now
    named = asked(expect_hit=False)
    assert "commit " in named.out and named.out != stale.out
    assert plangraph_main(root, "verify", "T5").code == 0  # a new event
    after = asked(expect_hit=False)
    assert after.out != named.out and "out/t5.txt" not in after.out
    assert asked(expect_hit=True) == after


def test_apply_and_select_are_never_answered_from_a_kept_answer(
    project: Callable[[str], Path], made: list[object]
) -> None:
    root = project("seed-000")
    assert plangraph_main(root, "verify").code == 0
    (root / "out/t5.txt").write_text("changed\n")
    run_impact(root)
    run_impact(root)
    before = len(made)
    applied = run_impact(root, "--apply")
    assert applied.code == 0 and "recorded 8 change events" in applied.out
    assert len(made) == before + 1
    again = run_impact(root, "--apply")  # the same observations: nothing new recorded
    assert again.code == 0 and "recorded 0 change events" in again.out
    run_impact(root, "--select")
    run_impact(root, "--select")
    assert len(made) == before + 4
    # the event recorded is a new store head: the next plain call makes its report again
    assert run_impact(root) == fresh_impact(root)


BAD_SINCE = [
    "",
    "nonexistent",
    "HEAD~99999",
    "HEAD..HEAD~1",
    "HEAD...main",
    "HEAD\nHEAD",
    "ünïcödé",
    "HEAD:plangraph.yaml",
    "HEAD^{tree}",
    "-x",
    "--output=elsewhere",
    "a" * 3000,
    ":/no such message",
]


@pytest.mark.parametrize("since", BAD_SINCE)
def test_a_bad_since_stops_with_one_message(project: Callable[[str], Path], since: str) -> None:
    root = project("seed-000")
    (root / CACHE).mkdir(parents=True)
    for _ in range(2):  # the second call: nothing kept from the first stands in
        result = run_impact(root, f"--since={since}")
        assert result.code == 2, result
        assert result.err.count("plangraph: error:") == 1
        assert result.out == ""
    assert not (root / "elsewhere").exists()
    assert list((root / CACHE).glob("impact-*")) == []


def test_a_range_is_told_to_be_one_revision(project: Callable[[str], Path]) -> None:
    root = project("seed-000")
    edit_history(root, 2)
    result = run_impact(root, "--since", "HEAD~2..HEAD")
    assert result.code == 2
    assert "a range names no single commit" in result.err


def test_a_name_that_is_not_utf8_is_answered_as_without_the_kept_answer(
    project: Callable[[str], Path],
) -> None:
    root = project("seed-000")
    (root / CACHE).mkdir(parents=True)
    edit_history(root, 2)
    odd = bytes(root) + b"/bad\xffname.txt"
    with open(odd, "wb") as handle:
        handle.write(b"untracked\n")
    since = ("--since", "HEAD~2", "--format", "json", "--check")
    answers = [run_impact(root, *since) for _ in range(3)]
    assert answers[0] == answers[1] == answers[2] == fresh_impact(root, *since)
    assert answers[0].code == 1 and "bad" in answers[0].out


PROBE = """
import contextlib, io, json, sys
from pytest_plangraph.cli import main
with contextlib.redirect_stdout(io.StringIO()):
    code = main(sys.argv[2:])
heavy = ["pydantic", "yaml", "git", "pytest_plangraph.impact.walk", "pytest_plangraph.survey",
         "argparse", "subprocess", "pytest_plangraph.cli.impact_cmds", "hashlib", "_hashlib"]
with open(sys.argv[1], "w") as out:
    json.dump([code, sorted(m for m in heavy if m in sys.modules)], out)
"""


@pytest.mark.parametrize("args", [(), ("--since", "HEAD~2")])
def test_a_kept_answer_loads_no_walk_no_yaml_and_no_pydantic(
    project: Callable[[str], Path], tmp_path: Path, args: tuple[str, ...]
) -> None:
    root = project("seed-000")
    edit_history(root, 2)
    assert plangraph_main(root, "verify").code == 0
    (root / "out/t5.txt").write_text("changed\n")
    report = tmp_path / "modules.json"
    loaded = []
    for _ in range(3):  # the checkpoint written, then the answer kept, then the kept one
        command = [sys.executable, "-c", PROBE, str(report), "impact", *args]
        subprocess.run(command, cwd=root, check=True, timeout=300)
        loaded.append(json.loads(report.read_text()))
    assert loaded[0][1]  # making the report imports them: the probe sees what was imported
    assert "argparse" in loaded[0][1] and "pytest_plangraph.cli.impact_cmds" in loaded[0][1]
    # nor the parser, subprocess, the command or OpenSSL (``hashes`` does without)
    assert loaded[2] == [loaded[0][0], []]


def test_a_kept_preview_imports_no_typing_and_no_openssl(
    project: Callable[[str], Path], tmp_path: Path
) -> None:
    """Without a store (a preview), the kept answer's modules import :mod:`typing` for the
    type checker alone, and no ``hashlib``: a hit imports neither."""
    from pytest_plangraph.plan.cache import make_cache_dir

    root = project("seed-000")
    edit_history(root, 2)
    make_cache_dir(root / CACHE)  # a project that uses plangraph has one; no store
    probe = PROBE.replace('"hashlib", "_hashlib"]', '"hashlib", "_hashlib", "typing"]')
    report = tmp_path / "modules.json"
    loaded = []
    for _ in range(3):
        command = [sys.executable, "-c", probe, str(report), "impact", "--since", "HEAD~2"]
        subprocess.run(command, cwd=root, check=True, timeout=300)
        loaded.append(json.loads(report.read_text()))
    assert not (root / ".plangraph/store.db").exists()
    assert "typing" in loaded[0][1]  # making the report imports it: the probe sees it
    assert loaded[2] == [loaded[0][0], []]


SPELLINGS = [
    (
        ("--since", "HEAD~2", "--format", "json", "--check"),
        ("--since=HEAD~2", "--format=json", "--check"),
    ),
    (("--since", "HEAD~2"), ("--sin", "HEAD~2")),  # an abbreviation: the parser reads it
    (("--format", "json"), ("--format", "text", "--format", "json")),  # the last one counts
    (("--since", "HEAD~2", "--no-commits"), ("--no-commits", "--since", "HEAD~2")),
    (("--root", "."), ("--root=.",)),
]


@pytest.mark.parametrize(("plain", "other"), SPELLINGS)
def test_every_spelling_of_the_options_gets_the_same_answer(
    project: Callable[[str], Path],
    made: list[object],
    plain: tuple[str, ...],
    other: tuple[str, ...],
) -> None:
    """The kept answer is looked for before the parser in the plain forms of the options
    alone; any other spelling goes through the parser, and the answers are the same."""
    root = project("seed-000")
    edit_history(root, 2)
    assert plangraph_main(root, "verify").code == 0
    (root / "out/t5.txt").write_text("changed\n")
    fresh = fresh_impact(root, *plain)
    before = len(made)
    assert run_impact(root, *plain) == fresh
    assert run_impact(root, *other) == fresh
    assert len(made) == before  # both hits: no report made
    assert fresh_impact(root, *other) == fresh
