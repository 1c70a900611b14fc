"""``plangraph impact`` answered from what it printed last time (the kept answer of
``derived/kept.py``, keyed by the diff for ``--since``, by ``HEAD`` for the working tree): on
every fixture, in every format, with and without ``--check``, a hit's answer is the answer with
the cache deleted; each kind of change (a commit, a working-tree edit, an untracked file, a
plan edit, a new event, another revision) is a miss whose answer is the one made afresh; a hit
runs three git processes and opens no plan; bad ``--since`` arguments stop the command with
one message; a kept answer imports neither the walk nor pydantic, YAML or GitPython."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from cache_helpers import as_tester, fixture_projects
from cli_helpers import Result, plangraph_main
from conftest import git
from repo_helpers import logging_git

from pytest_plangraph.cli import impact_cmds

CACHE = Path(".plangraph/cache")
FORMATS = ("text", "json", "markdown")


@pytest.fixture(autouse=True)
def _environment(monkeypatch: pytest.MonkeyPatch) -> None:
    as_tester(monkeypatch)


@pytest.fixture
def made(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """The ``impact`` calls that opened the plan and made a report (a hit adds nothing)."""
    calls: list[object] = []
    real = impact_cmds.open_plangraph

    def counting(*args: object, **kwargs: object) -> object:
        calls.append(args)
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(impact_cmds, "open_plangraph", counting)
    return calls


def _impact(root: Path, *args: str, env: dict[str, str] | None = None) -> Result:
    result = plangraph_main(root, "impact", *args, env=env)
    assert "Traceback" not in result.err
    return result


def _fresh(root: Path, *args: str) -> Result:
    """The answer with every kept answer deleted (made afresh, and kept again)."""
    for kept in (root / CACHE).glob("impact-*.json"):
        kept.unlink()
    return _impact(root, *args)


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
                    first = _impact(root, *args)
                    _impact(root, *args)  # reads the checkpoint, if one was written just now
                    before = len(made)
                    warm = _impact(root, *args)
                    hits += len(made) == before
                    fresh = _fresh(root, *args)
                    assert warm == first == fresh, (name, fmt, mode, check)
    assert hits >= 2 * len(FORMATS) * 3 * 2  # jwt-login and seed-000, every way asked


def _history(root: Path, commits: int) -> None:
    for i in range(commits):
        target = root / f"out/t{i % 12 + 1}.txt"
        target.write_text(f"{target.read_text()}edit {i}\n")
        git(root, "commit", "-q", "-am", f"edit {i}")


def test_a_preview_without_a_store_is_kept_by_its_diff(
    project: Callable[[str], Path], tmp_path: Path, made: list[object]
) -> None:
    root = project("seed-000")
    (root / CACHE).mkdir(parents=True)  # a project that uses plangraph has its cache folder
    _history(root, 8)
    env, log = logging_git(tmp_path)
    since = ("--since", "HEAD~8", "--format", "json")

    def asked(expect_hit: bool) -> Any:
        log.unlink(missing_ok=True)
        before = len(made)
        answer = _impact(root, *since, env=env)
        calls = [line.split()[0] for line in log.read_text().splitlines()]
        assert (len(made) == before) is expect_hit
        if expect_hit:  # both ends named, the diff, the untracked files; no plan, no range
            assert calls == ["cat-file", "diff", "ls-files"]
        assert answer == _fresh(root, *since)
        assert not (root / ".plangraph/plangraph.db").exists()  # a preview makes no store
        return json.loads(answer.out)

    first = asked(expect_hit=False)
    assert asked(expect_hit=True) == first
    (root / "out/t3.txt").write_text("edited in the working tree\n")
    asked(expect_hit=False)
    assert asked(expect_hit=True)
    (root / "notes ü\nline.txt").write_text("untracked, an odd name\n")
    untracked = asked(expect_hit=False)
    assert any("notes ü" in c["path"] for c in untracked["changed"])
    assert asked(expect_hit=True) == untracked
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "one more")  # HEAD moves: another range
    asked(expect_hit=False)
    plan = root / "plangraph.yaml"
    plan.write_text(plan.read_text() + "# a comment\n")
    asked(expect_hit=False)
    plan.write_text(plan.read_text().replace("title:", "title: edited", 1))
    edited = asked(expect_hit=False)
    assert any(c["path"] == "plangraph.yaml" for c in edited["changed"])
    assert asked(expect_hit=True) == edited
    # another revision naming the same commit: the same range, its own text in notes
    other = _impact(root, "--since", git(root, "rev-parse", "HEAD~8").strip(), "--format", "json")
    assert other.out == _impact(root, *since).out


def test_the_working_tree_answer_is_kept_by_head_and_the_files(
    project: Callable[[str], Path], made: list[object]
) -> None:
    root = project("seed-000")
    assert plangraph_main(root, "verify").code == 0
    text = ("--check",)

    def asked(expect_hit: bool) -> Result:
        before = len(made)
        answer = _impact(root, *text)
        assert (len(made) == before) is expect_hit
        assert answer == _fresh(root, *text)
        return answer

    _impact(root, *text)
    _impact(root, *text)  # reads the checkpoint, if one was written just now
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
    _impact(root)
    _impact(root)
    before = len(made)
    applied = _impact(root, "--apply")
    assert applied.code == 0 and "recorded 8 change events" in applied.out
    assert len(made) == before + 1
    again = _impact(root, "--apply")  # the same observations: nothing new recorded
    assert again.code == 0 and "recorded 0 change events" in again.out
    _impact(root, "--select")
    _impact(root, "--select")
    assert len(made) == before + 4
    # the event recorded is a new store head: the next plain call makes its report again
    assert _impact(root) == _fresh(root)


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
        result = _impact(root, f"--since={since}")
        assert result.code == 2, result
        assert result.err.count("plangraph: error:") == 1
        assert result.out == ""
    assert not (root / "elsewhere").exists()
    assert list((root / CACHE).glob("impact-*")) == []


def test_a_range_is_told_to_be_one_revision(project: Callable[[str], Path]) -> None:
    root = project("seed-000")
    _history(root, 2)
    result = _impact(root, "--since", "HEAD~2..HEAD")
    assert result.code == 2
    assert "a range names no single commit" in result.err


def test_a_name_that_is_not_utf8_is_answered_as_without_the_kept_answer(
    project: Callable[[str], Path],
) -> None:
    root = project("seed-000")
    (root / CACHE).mkdir(parents=True)
    _history(root, 2)
    odd = bytes(root) + b"/bad\xffname.txt"
    with open(odd, "wb") as handle:
        handle.write(b"untracked\n")
    since = ("--since", "HEAD~2", "--format", "json", "--check")
    answers = [_impact(root, *since) for _ in range(3)]
    assert answers[0] == answers[1] == answers[2] == _fresh(root, *since)
    assert answers[0].code == 1 and "bad" in answers[0].out


PROBE = """
import contextlib, io, json, sys
from pytest_plangraph.cli import main
with contextlib.redirect_stdout(io.StringIO()):
    code = main(sys.argv[2:])
heavy = ["pydantic", "yaml", "git", "pytest_plangraph.impact.walk", "pytest_plangraph.survey",
         "argparse", "subprocess", "pytest_plangraph.cli.impact_cmds"]
with open(sys.argv[1], "w") as out:
    json.dump([code, sorted(m for m in heavy if m in sys.modules)], out)
"""


@pytest.mark.parametrize("args", [(), ("--since", "HEAD~2")])
def test_a_kept_answer_loads_no_walk_no_yaml_and_no_pydantic(
    project: Callable[[str], Path], tmp_path: Path, args: tuple[str, ...]
) -> None:
    root = project("seed-000")
    _history(root, 2)
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
    assert loaded[2] == [loaded[0][0], []]  # nor the parser, subprocess or the command


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
    _history(root, 2)
    assert plangraph_main(root, "verify").code == 0
    (root / "out/t5.txt").write_text("changed\n")
    fresh = _fresh(root, *plain)
    before = len(made)
    assert _impact(root, *plain) == fresh
    assert _impact(root, *other) == fresh
    assert len(made) == before  # both hits: no report made
    assert _fresh(root, *other) == fresh


def test_a_kept_answer_edited_or_planted_is_not_believed(
    project: Callable[[str], Path], made: list[object]
) -> None:
    root = project("seed-000")
    (root / CACHE).mkdir(parents=True)
    _history(root, 3)
    args = ("--since", "HEAD~3", "--format", "json", "--check")
    first = _impact(root, *args)
    assert first.code == 1
    kept = root / CACHE / "impact-since-json.json"
    tag, _, body = kept.read_bytes().partition(b"\n")
    record = json.loads(body)
    record["answer"] = ['{"format": 1, "changed": [], "invalidated": []}', [], 0]
    for planted in (tag + b"\n" + json.dumps(record).encode(), b"0" * 32 + b"\n" + body):
        kept.write_bytes(planted)
        before = len(made)
        answer = _impact(root, *args)
        assert len(made) == before + 1  # not believed: the report is made again
        assert answer == first


def _same_size(path: Path) -> None:
    data = path.read_bytes()
    with open(path, "r+b") as handle:  # in place: the same inode and size, other bytes
        handle.write(data[:1].swapcase() if data[:1].isalpha() else b"#")


def _symlink(path: Path) -> None:
    copy = path.with_name("elsewhere.out")
    copy.write_bytes(path.read_bytes())
    path.unlink()
    path.symlink_to(copy.name)


def _fifo(path: Path) -> None:
    path.unlink()
    os.mkfifo(path)


def _same_bytes(path: Path) -> None:
    """Written again with the same bytes (a new inode, a new date): not known as the same."""
    data = path.read_bytes()
    path.unlink()
    path.write_bytes(data)


@pytest.mark.parametrize(
    "damage",
    [
        _same_size,
        lambda path: path.write_bytes(path.read_bytes() + b"more"),
        lambda path: path.write_bytes(b""),
        lambda path: path.unlink(),
        _symlink,
        _fifo,
        _same_bytes,
    ],
)
@pytest.mark.parametrize(
    "args",
    [
        ("--since", "HEAD~2", "--check"),
        (
            "--format",
            "markdown",
        ),
    ],
)
def test_a_printed_answer_written_since_it_was_kept_is_not_believed(
    project: Callable[[str], Path],
    made: list[object],
    damage: Callable[[Path], object],
    args: tuple[str, ...],
) -> None:
    """What ``impact`` printed is kept in its own file, known by its size, inode and dates
    (dated in the past when written): any write to it since, or another file in its place,
    is a miss whose answer is the fresh one."""
    root = project("seed-000")
    (root / CACHE).mkdir(parents=True)
    _history(root, 2)
    assert plangraph_main(root, "verify").code == 0
    (root / "out/t5.txt").write_text("changed\n")
    first = _fresh(root, *args)
    before = len(made)
    assert _impact(root, *args) == first and len(made) == before  # a hit
    [printed] = (root / CACHE).glob("impact-*.out")
    assert printed.read_text(encoding="utf-8") == first.out.removesuffix("\n")
    damage(printed)
    assert _impact(root, *args) == first
    assert len(made) == before + 1  # not believed: the report is made again
    assert _impact(root, *args) == first and len(made) == before + 1  # kept again: a hit


@pytest.mark.parametrize(
    "shape",
    [
        ["a", "b", "c", "d", "e"],
        "abc",
        1,
        [None, "x", 0],
        [1, [], 0],
        ["x", [1], 0],
        ["x", [], "1"],
        [[1, 2, 3], [], 0],
        [[1, 2, 3, "4"], [], 0],
        [[1, 2, 3, 4.0], [], 0],
    ],
)
def test_a_kept_answer_of_another_shape_is_made_again(
    project: Callable[[str], Path], made: list[object], shape: Any
) -> None:
    from pytest_plangraph.store.derived import write_tagged

    root = project("seed-000")
    (root / CACHE).mkdir(parents=True)
    _history(root, 2)
    args = ("--since", "HEAD~2", "--check")
    first = _impact(root, *args)
    kept = root / CACHE / "impact-since-text.json"
    record = _read_kept(kept)
    record["answer"] = shape
    write_tagged(kept, record, b"plangraph-status")  # this user's tag: only its shape is wrong
    before = len(made)
    assert _impact(root, *args) == first  # no traceback: the report is made again
    assert len(made) == before + 1


def _read_kept(path: Path) -> dict[str, Any]:
    from pytest_plangraph.store.derived import read_tagged

    record = read_tagged(path, b"plangraph-status")
    assert isinstance(record, dict)
    return record


def _run(root: Path, env: dict[str, str], *args: str) -> tuple[int, bytes, bytes]:
    command = [sys.executable, "-m", "pytest_plangraph", "impact", *args]
    done = subprocess.run(command, cwd=root, env=env, capture_output=True, check=False, timeout=300)
    return done.returncode, done.stdout, done.stderr


@pytest.mark.parametrize("encoding", [None, "utf-8", "latin-1:replace", "ascii:backslashreplace"])
@pytest.mark.parametrize("args", [("--format", "markdown"), ("--since", "HEAD~2", "--check")])
def test_a_kept_answer_prints_the_bytes_the_command_prints(
    project: Callable[[str], Path], encoding: str | None, args: tuple[str, ...]
) -> None:
    """A hit copies the kept bytes to a UTF-8 stdout and prints the text to any other, as the
    command does: the same bytes on stdout and stderr either way, names beyond ASCII
    included (a name that is not UTF-8 is never kept: see the test above)."""
    root = project("seed-000")
    (root / CACHE).mkdir(parents=True)
    _history(root, 2)
    assert plangraph_main(root, "verify").code == 0
    (root / "out/t5.txt").write_text("changed → again\n")
    (root / "ünïcödé ← name.txt").write_text("untracked\n")
    env = dict(os.environ)
    env.pop("PYTHONIOENCODING", None)
    if encoding is not None:
        env["PYTHONIOENCODING"] = encoding
    _fresh(root)
    for kept in (root / CACHE).glob("impact-*"):
        kept.unlink()
    fresh = _run(root, env, *args)
    [printed] = (root / CACHE).glob("impact-*.out")

    def signature() -> tuple[int, int, int]:
        info = printed.stat()
        return info.st_ino, info.st_mtime_ns, info.st_ctime_ns

    kept = signature()
    hits = [_run(root, env, *args) for _ in range(2)]
    assert hits == [fresh, fresh]
    assert fresh[1]  # something printed
    assert signature() == kept  # hits: the kept file read, not written again


def test_nothing_printed_is_kept_where_nothing_may_be(project: Callable[[str], Path]) -> None:
    """No cache folder (a preview in a repository that keeps nothing), or keys configured:
    no printed answer is written either."""
    root = project("seed-000")
    _history(root, 2)
    assert _impact(root, "--since", "HEAD~2").code == 0
    assert not (root / ".plangraph").exists()
    (root / CACHE).mkdir(parents=True)
    keyed = {**os.environ, "PLANGRAPH_SIGNING_KEY": "a shared secret"}
    assert _impact(root, "--since", "HEAD~2", env=keyed).code == 0
    assert list((root / CACHE).glob("impact-*")) == []
    assert _impact(root, "--since", "HEAD~2").code == 0
    assert len(list((root / CACHE).glob("impact-*.out"))) == 1
