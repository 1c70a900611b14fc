"""Other ways a git process hangs or blocks, found by attacking the bound on git's time: a
FIFO ``.gitattributes``, a huge sparse ``.gitignore``, a ``core.fsmonitor`` command or an
alias that never ends, FIFOs under ``.git`` that this package reads itself, a held
``index.lock``, a pager, a prompt. Each ends within the bound (or never waits), with one
message; what git starts is killed with it."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from cli_helpers import PLANGRAPH
from repo_helpers import git
from submodule_helpers import PLAN, _commit, _repo, _write

from pytest_plangraph.vcs.run import Repo, git_text, open_git_dir, run_git
from pytest_plangraph.vcs.spawn import GitTimeoutError, run_git_process
from pytest_plangraph.vcs.status import read_git_status

GUARD = 120
"""The seconds a subprocess may take here before the test fails as a hang."""


def _run(cwd: Path, *args: str, bound: str = "2") -> tuple[int, str, str]:
    """The real ``plangraph ARGS`` in *cwd*, git bound to *bound* seconds."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PLANGRAPH_")}
    env.update({"PLANGRAPH_ACTOR": "tester", "PLANGRAPH_GIT_TIMEOUT": bound})
    proc = subprocess.run(
        [str(PLANGRAPH), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=GUARD
    )
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc.returncode, proc.stdout, proc.stderr


def _stopped(err: str, command: str, bound: str = "2") -> bool:
    lines = err.strip().splitlines()
    return (
        len(lines) == 1
        and lines[0].startswith(f"plangraph: error: {command} ")
        and (f"did not finish in {bound} s" in lines[0])
    )


def test_a_fifo_gitattributes_is_stopped_at_the_bound(project: Callable[[str], Path]) -> None:
    root = project("jwt-login")
    login = root / "src" / "auth" / "login.py"
    text = login.read_bytes()  # edited, its size kept: git reads it to see, with attributes
    login.write_bytes(text[:-2] + b"#\n")
    later = login.stat().st_mtime_ns + 10**10
    os.utime(login, ns=(later, later))
    os.mkfifo(root / "src" / ".gitattributes")  # git status opens it then, and waits
    code, _, err = _run(root, "verify")
    assert code == 2 and _stopped(err, "git status")


def test_a_huge_sparse_gitignore_is_stopped_before_git_reads_it_whole(
    project: Callable[[str], Path],
) -> None:
    """git 2.39 reads an 8 GiB sparse ``.gitignore`` whole into memory: 44 s and 8 GiB
    resident here. The bound stops it; git that refuses such a file answers at once."""
    root = project("jwt-login")
    (root / "notes").mkdir()
    with open(root / "notes" / ".gitignore", "wb") as file:
        file.truncate(8 << 30)  # no block written
    probe = (
        "import resource, subprocess, sys\n"
        "done = subprocess.run(sys.argv[1:], capture_output=True, text=True)\n"
        "print(done.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
        "sys.stderr.write(done.stderr)\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("PLANGRAPH_")}
    env.update({"PLANGRAPH_ACTOR": "tester", "PLANGRAPH_GIT_TIMEOUT": "1"})
    started = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-c", probe, str(PLANGRAPH), "verify"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=GUARD,
    )
    assert time.monotonic() - started < GUARD / 2
    code, kib = map(int, proc.stdout.split())
    assert kib < 4 << 20  # the largest process under the command held less than 4 GiB
    assert code == 0 or (code == 2 and _stopped(proc.stderr, "git status", "1")), proc.stderr


def _alive(pid: int) -> bool:
    """Whether process *pid* runs (a zombie, killed and not reaped yet, does not)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as file:
            return file.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="Linux's /proc")
def test_a_core_fsmonitor_command_that_never_ends_is_killed_with_git(
    project: Callable[[str], Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = project("jwt-login")
    noted = tmp_path / "hook.pid"
    hook = tmp_path / "fsmonitor-hook"
    hook.write_text(f"#!/bin/sh\necho $$ > '{noted}'\nexec sleep 300\n", encoding="utf-8")
    hook.chmod(0o755)
    git(root, "config", "core.fsmonitor", str(hook))
    monkeypatch.setenv("PLANGRAPH_GIT_TIMEOUT", "1")
    with pytest.raises(GitTimeoutError, match="did not finish in 1 s"):
        read_git_status(root)
    pid = int(noted.read_text(encoding="ascii"))
    deadline = time.monotonic() + 10
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(pid)  # killed with git's process group, not left to sleep on


def test_git_that_keeps_writing_past_the_bound_is_stopped(
    project: Callable[[str], Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Output ready at every wake-up does not keep the loop from seeing the bound."""
    root = project("jwt-login")
    git(root, "config", "alias.chatty", "!while :; do echo y; sleep 0.01; done")
    monkeypatch.setenv("PLANGRAPH_GIT_TIMEOUT", "1")
    started = time.monotonic()
    with pytest.raises(GitTimeoutError, match=r"^git chatty did not finish in 1 s"):
        run_git(Repo(str(root)), "chatty")
    assert time.monotonic() - started < 30


def test_git_run_through_gitpython_is_bound_too(
    project: Callable[[str], Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Submodule history is read with GitPython: its ``kill_after_timeout`` is the bound."""
    root = project("jwt-login")
    git(root, "config", "alias.stall", "!sleep 300")
    monkeypatch.setenv("PLANGRAPH_GIT_TIMEOUT", "1")
    started = time.monotonic()
    with open_git_dir(root / ".git") as repo, pytest.raises(GitTimeoutError) as caught:
        git_text(repo, "stall")
    assert time.monotonic() - started < 30
    assert str(caught.value).startswith(f"git stall did not finish in 1 s in {root / '.git'}")


@pytest.mark.parametrize("name", ["packed-refs", "HEAD"])
def test_a_fifo_under_git_blocks_no_command_here(project: Callable[[str], Path], name: str) -> None:
    """``packed-refs`` and ``HEAD`` are read by this package too (is the history rewritable,
    what does a name point to): as regular files only, else git is asked, within the bound."""
    root = project("jwt-login")
    assert _run(root, "verify")[0] == 0
    (root / ".git" / name).unlink(missing_ok=True)
    os.mkfifo(root / ".git" / name)
    for args in (("impact",), ("impact", "--since", "HEAD"), ("status",)):
        code, _, err = _run(root, *args)
        assert code in (0, 2), (args, err)
        assert code == 0 or _stopped(err, "git"), (args, err)


def test_a_held_index_lock_is_not_waited_for(project: Callable[[str], Path]) -> None:
    """Reading git never takes the index lock: another git command holding it changes
    nothing (``git status`` with optional locks off; ``git diff`` skips its refresh)."""
    root = project("jwt-login")
    (root / "src" / "new.py").write_text("x = 1\n", encoding="utf-8")
    (root / ".git" / "index.lock").write_text("", encoding="utf-8")
    assert _run(root, "verify")[0] == 0
    code, out, _ = _run(root, "impact", "--since", "HEAD", "--format", "json")
    assert code == 0 and '"path": "src/new.py"' in out


def test_no_pager_and_no_prompt(
    project: Callable[[str], Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """git's output is a pipe, so it starts no pager whatever is configured, and it is told
    never to ask at the terminal (``GIT_TERMINAL_PROMPT=0``), through GitPython as well."""
    root = project("jwt-login")
    git(root, "config", "core.pager", "sleep 300")
    git(root, "config", "alias.showenv", "!env")
    for name in ("GIT_PAGER", "PAGER"):
        monkeypatch.setenv(name, "sleep 300")
    monkeypatch.setenv("GIT_TERMINAL_PROMPT", "1")
    monkeypatch.setenv("PLANGRAPH_GIT_TIMEOUT", "20")
    assert read_git_status(root).is_repo
    code, out, _ = run_git_process(["showenv"], str(root), dict(os.environ))
    assert code == 0 and "\nGIT_TERMINAL_PROMPT=0\n" in f"\n{out.decode()}"
    with open_git_dir(root / ".git") as repo:
        said = git_text(repo, "showenv")
    assert "\nGIT_TERMINAL_PROMPT=0\n" in f"\n{said}"


def test_a_fifo_in_a_submodules_config_blocks_no_command_here(tmp_path: Path) -> None:
    """A submodule's history is read through GitPython's runner, never a repository object,
    which would read the submodule's config and what it includes in this process."""
    lib = _repo(tmp_path / "lib", {"out/s.txt": "one\n"})
    root = _repo(tmp_path / "parent", {"plangraph.yaml": PLAN})
    git(root, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(lib), "sub")
    _commit(root, "add the submodule")
    _write(root / "sub", {"out/s.txt": "two\n"})
    _commit(root / "sub", "work in the submodule")
    _commit(root, "move the submodule pointer")
    fifo = tmp_path / "included"
    os.mkfifo(fifo)
    git(root / "sub", "config", "include.path", str(fifo))
    code, _, err = _run(root, "impact", "--since", "HEAD~1")  # git looks into the submodule
    assert code == 2 and _stopped(err, "git"), err
    # between two commits the superproject's git never enters the submodule: this package
    # does, for the commits inside it, in a process of its own here (a hang fails the test)
    probe = (
        "import sys\n"
        "from pathlib import Path\n"
        "from pytest_plangraph.vcs.history import changed_paths\n"
        "from pytest_plangraph.vcs.spawn import GitTimeoutError\n"
        "try:\n"
        "    changed_paths(Path(sys.argv[1]), 'HEAD~1', 'HEAD')\n"
        "except GitTimeoutError as exc:\n"
        "    print(exc)\n"
    )
    env = {**os.environ, "PLANGRAPH_GIT_TIMEOUT": "2"}
    done = subprocess.run(
        [sys.executable, "-c", probe, str(root)],
        env=env,
        capture_output=True,
        text=True,
        timeout=GUARD,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("git rev-parse") and "did not finish in 2 s" in done.stdout
