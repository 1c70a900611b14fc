"""The kept answer of ``plangraph impact`` is not believed when it was edited, planted,
written since or of another shape, and prints the bytes the command prints (the rest of the
kept answer's tests: ``tests/test_impact_kept.py``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from cache_helpers import as_tester
from cli_helpers import plangraph_main
from impact_kept_helpers import (
    CACHE,
    edit_history,
    forget_basis,
    fresh_impact,
    run_impact,
)


@pytest.fixture(autouse=True)
def _environment(monkeypatch: pytest.MonkeyPatch) -> None:
    as_tester(monkeypatch)


def test_a_kept_answer_edited_or_planted_is_not_believed(
    project: Callable[[str], Path], made: list[object]
) -> None:
    root = project("seed-000")
    (root / CACHE).mkdir(parents=True)
    edit_history(root, 3)
    args = ("--since", "HEAD~3", "--format", "json", "--check")
    first = run_impact(root, *args)
    assert first.code == 1
    kept = root / CACHE / "impact-since-json.json"
    tag, _, body = kept.read_bytes().partition(b"\n")
    record = json.loads(body)
    record["answer"] = ['{"format": 1, "changed": [], "invalidated": []}', [], 0]
    for planted in (tag + b"\n" + json.dumps(record).encode(), b"0" * 32 + b"\n" + body):
        kept.write_bytes(planted)
        forget_basis(root)  # a miss made from the plan, not from the basis
        before = len(made)
        answer = run_impact(root, *args)
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
    edit_history(root, 2)
    assert plangraph_main(root, "verify").code == 0
    (root / "out/t5.txt").write_text("changed\n")
    first = fresh_impact(root, *args)
    before = len(made)
    assert run_impact(root, *args) == first and len(made) == before  # a hit
    [printed] = (root / CACHE).glob("impact-*.out")
    assert printed.read_text(encoding="utf-8") == first.out.removesuffix("\n")
    damage(printed)
    forget_basis(root)  # a miss made from the plan, not from the basis
    assert run_impact(root, *args) == first
    assert len(made) == before + 1  # not believed: the report is made again
    assert run_impact(root, *args) == first and len(made) == before + 1  # kept again: a hit


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
    edit_history(root, 2)
    args = ("--since", "HEAD~2", "--check")
    first = run_impact(root, *args)
    kept = root / CACHE / "impact-since-text.json"
    record = _read_kept(kept)
    record["answer"] = shape
    write_tagged(kept, record, b"plangraph-status")  # this user's tag: only its shape is wrong
    forget_basis(root)  # a miss made from the plan, not from the basis
    before = len(made)
    assert run_impact(root, *args) == first  # no traceback: the report is made again
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
    edit_history(root, 2)
    assert plangraph_main(root, "verify").code == 0
    (root / "out/t5.txt").write_text("changed → again\n")
    (root / "ünïcödé ← name.txt").write_text("untracked\n")
    env = dict(os.environ)
    env.pop("PYTHONIOENCODING", None)
    if encoding is not None:
        env["PYTHONIOENCODING"] = encoding
    fresh_impact(root)
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
    edit_history(root, 2)
    assert run_impact(root, "--since", "HEAD~2").code == 0
    assert not (root / ".plangraph").exists()
    (root / CACHE).mkdir(parents=True)
    keyed = {**os.environ, "PLANGRAPH_SIGNING_KEY": "a shared secret"}
    assert run_impact(root, "--since", "HEAD~2", env=keyed).code == 0
    assert list((root / CACHE).glob("impact-*")) == []
    assert run_impact(root, "--since", "HEAD~2").code == 0
    assert len(list((root / CACHE).glob("impact-*.out"))) == 1
