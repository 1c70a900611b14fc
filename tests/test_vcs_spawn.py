"""git run without :mod:`subprocess` (``vcs/spawn.py``): the same exit code, stdout and
stderr as ``subprocess.run`` gives, with inputs and outputs larger than a pipe holds (neither
side may block the other), and the errors of a git that cannot be started."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from repo_helpers import git

from pytest_plangraph.errors import GitError
from pytest_plangraph.vcs.run import Repo, run_git_bytes
from pytest_plangraph.vcs.spawn import run_git_process


def _repo(tmp_path: Path, files: int = 3) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q")
    for i in range(files):
        (root / f"f{i}.txt").write_text(f"file {i}\n")
    git(root, "add", "-A")
    git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "first")
    return root


def _by_subprocess(root: Path, args: list[str], stdin: bytes | None) -> tuple[int, bytes, bytes]:
    done = subprocess.run(
        ["git", *args],
        cwd=root,
        input=stdin,
        stdin=subprocess.DEVNULL if stdin is None else None,
        capture_output=True,
        check=False,
    )
    return done.returncode, done.stdout, done.stderr


def test_large_input_and_output_give_what_subprocess_gives(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    # 30,000 names in (about 300 KB), an answer a line out for each (about 1.4 MB)
    asked = "".join(f"HEAD:f{i % 5}.txt\n" for i in range(30_000)).encode()
    args = ["cat-file", "--batch-check"]
    got = run_git_process(args, str(root), dict(os.environ), asked)
    assert got == _by_subprocess(root, args, asked)
    assert got[0] == 0 and got[1].count(b"\n") == 30_000 and b"missing" in got[1]


def test_a_failure_gives_its_code_and_stderr(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    args = ["rev-parse", "--verify", "no-such-branch"]
    got = run_git_process(args, str(root), dict(os.environ))
    assert got == _by_subprocess(root, args, None)
    assert got[0] != 0 and b"fatal" in got[2]


def test_no_input_reads_nothing(tmp_path: Path) -> None:
    """Without input git reads an empty stdin (``/dev/null``), never the caller's."""
    root = _repo(tmp_path)
    got = run_git_process(["hash-object", "--stdin"], str(root), dict(os.environ))
    empty = run_git_process(["hash-object", "--stdin"], str(root), dict(os.environ), b"")
    assert got == empty and got[0] == 0


def test_git_that_stops_reading_early_is_not_a_hang(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    many = b"x" * 5_000_000  # git reads none of it
    got = run_git_process(["rev-parse", "HEAD"], str(root), dict(os.environ), many)
    assert got[0] == 0 and len(got[1].strip()) == 40


def test_a_missing_folder_or_git_is_an_os_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _repo(tmp_path)
    with pytest.raises(FileNotFoundError):
        run_git_process(["status"], str(tmp_path / "gone"), dict(os.environ))
    with pytest.raises(NotADirectoryError):
        run_git_process(["status"], str(root / "f0.txt"), dict(os.environ))
    monkeypatch.setenv("PATH", str(tmp_path / "nothing"))  # git is looked for on this PATH
    before = set(os.listdir("/proc/self/fd")) if Path("/proc/self/fd").is_dir() else set()
    for _ in range(20):  # no descriptor left open by a failure
        with pytest.raises(FileNotFoundError):
            run_git_process(["status"], str(root), dict(os.environ))
    after = set(os.listdir("/proc/self/fd")) if Path("/proc/self/fd").is_dir() else set()
    assert len(after) <= len(before) + 1


def test_the_runner_tells_a_git_that_cannot_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _repo(tmp_path)
    monkeypatch.setenv("PATH", str(tmp_path / "nothing"))
    with pytest.raises(GitError, match="git cannot be run in"):
        run_git_bytes(Repo(str(root)), "status")


def test_without_posix_spawn_git_runs_through_subprocess(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _repo(tmp_path)
    asked = b"HEAD:f0.txt\nHEAD:nothing\n"
    args = ["cat-file", "--batch-check"]
    spawned = run_git_process(args, str(root), dict(os.environ), asked)
    monkeypatch.delattr(os, "posix_spawnp")
    assert run_git_process(args, str(root), dict(os.environ), asked) == spawned
    assert spawned == _by_subprocess(root, args, asked)
