"""A bound on every git process (``PLANGRAPH_GIT_TIMEOUT``): git blocks for good opening a
``.gitignore`` that is a FIFO. The real command and a real ``pytest --plangraph`` run, each in a
subprocess with its own guard (a regression fails here instead of hanging the suite), end
within the bound with one message and the documented exit code, and the store keeps every
event it had."""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import PLANGRAPH, plangraph_main
from plugin_helpers import evidence, make_project

from pytest_plangraph.vcs.spawn import DEFAULT_TIMEOUT, GitTimeoutError, git_timeout
from pytest_plangraph.vcs.status import read_git_status

BOUND = "2"
GUARD = 120
"""The seconds a subprocess may take here before the test fails as a hang."""


def _fifo_ignore(root: Path) -> Path:
    """A ``.gitignore`` that is a FIFO, in a folder of its own (git opens it and waits)."""
    folder = root / "notes"
    folder.mkdir(exist_ok=True)
    fifo = folder / ".gitignore"
    os.mkfifo(fifo)
    return fifo


def _run(cwd: Path, *args: str, bound: str | None = BOUND) -> tuple[int, str, str, float]:
    """The real ``plangraph ARGS`` in *cwd* with *bound* as its git time: exit code, stdout,
    stderr, seconds taken."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PLANGRAPH_")}
    env["PLANGRAPH_ACTOR"] = "tester"
    if bound is not None:
        env["PLANGRAPH_GIT_TIMEOUT"] = bound
    started = time.monotonic()
    proc = subprocess.run(
        [str(PLANGRAPH), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=GUARD
    )
    taken = time.monotonic() - started
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc.returncode, proc.stdout, proc.stderr, taken


def _said_once(err: str, command: str) -> None:
    """*err* is the one message of a git *command* stopped at the bound."""
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith(f"plangraph: error: {command} ")
    assert f"did not finish in {BOUND} s in " in lines[0]
    for words in ("FIFO", ".gitignore", "network file system", "PLANGRAPH_GIT_TIMEOUT=SECONDS"):
        assert words in lines[0]


def _open_descriptors() -> int:
    return len(os.listdir("/proc/self/fd"))


def _children() -> set[str]:
    """The processes this one started and has not reaped (zombies too), as Linux lists them."""
    found: set[str] = set()
    for task in os.listdir("/proc/self/task"):
        with open(f"/proc/self/task/{task}/children", encoding="ascii") as file:
            found.update(file.read().split())
    return found


@pytest.mark.skipif(
    not os.path.exists(f"/proc/self/task/{os.getpid()}/children"), reason="Linux's /proc"
)
def test_git_past_the_bound_is_stopped_and_leaves_nothing_open(
    project: Callable[[str], Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    root = project("jwt-login")
    _fifo_ignore(root)
    monkeypatch.setenv("PLANGRAPH_GIT_TIMEOUT", "1")
    before, children = _open_descriptors(), _children()
    started = time.monotonic()
    with pytest.raises(GitTimeoutError) as caught:
        read_git_status(root)
    assert 1 <= time.monotonic() - started < 30
    assert _open_descriptors() == before  # the three pipes closed
    message = str(caught.value)
    assert message.startswith("git status --porcelain=v2 --branch -z")
    assert f"did not finish in 1 s in {root} and was stopped" in message
    assert _children() <= children  # git reaped: no child of this process was left


def test_the_commands_end_at_the_bound_and_the_store_keeps_its_events(
    project: Callable[[str], Path],
) -> None:
    root = project("jwt-login")
    assert _run(root, "verify")[0] == 0
    head = _run(root, "head")[1]
    checked = _run(root, "status", "--check")
    fifo = _fifo_ignore(root)

    code, _, err, taken = _run(root, "verify")  # records the git state: git status
    assert code == 2 and taken < GUARD / 2
    _said_once(err, "git status")
    code, _, err, _ = _run(root, "impact", "--since", "HEAD")  # the working tree's changes
    assert code == 2
    _said_once(err, "git ls-files")
    code, out, err, _ = _run(root, "impact", "--since", "HEAD", "--format", "json")
    assert code == 2 and '"error": "git ls-files' in out
    # the commands that run no git answer as before
    assert _run(root, "status", "--check")[:2] == checked[:2]
    assert _run(root, "lint")[0] == 0

    fifo.unlink()
    assert _run(root, "head")[1] == head  # nothing recorded, nothing lost
    assert _run(root, "audit")[0] == 0
    assert _run(root, "status", "--check")[:2] == checked[:2]
    assert _run(root, "verify")[0] == 0  # and it records again


def test_a_plugin_run_fails_closed_and_keeps_the_outcomes(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_project(pytester)
    monkeypatch.delenv("PLANGRAPH_STORE", raising=False)
    monkeypatch.setenv("PLANGRAPH_GIT_TIMEOUT", BOUND)
    run = ("--plangraph", "-p", "no:cacheprovider")
    pytester.runpytest_subprocess(*run, timeout=GUARD).assert_outcomes(passed=4)
    recorded = len(evidence(root))
    assert recorded > 0
    fifo = _fifo_ignore(root)
    for gate in ((), ("--plangraph-gate",)):
        result = pytester.runpytest_subprocess(*run, *gate, timeout=GUARD)
        assert result.ret == pytest.ExitCode.USAGE_ERROR
        result.assert_outcomes(passed=4)  # the tests' outcomes are not lost
        said = result.stdout.lines + result.stderr.lines
        stopped = [line for line in said if "did not finish in" in line]
        assert len(stopped) == 1, said  # the message, once
        assert "evidence was not recorded: git status --porcelain=v2" in stopped[0]
        assert "Traceback" not in "\n".join(said)
        assert len(evidence(root)) == recorded  # no pass recorded for this run
    fifo.unlink()
    pytester.runpytest_subprocess(*run, timeout=GUARD).assert_outcomes(passed=4)
    assert len(evidence(root)) > recorded


BAD_VALUES = ["abc", "-1", "0", "0.0", "nan", "inf", "1e3", "86401", "1" + "0" * 5000, " ", "5s"]


@pytest.mark.parametrize("value", BAD_VALUES)
def test_a_bound_that_is_no_time_is_a_usage_error(
    project: Callable[[str], Path], value: str
) -> None:
    root = project("jwt-login")
    got = plangraph_main(root, "impact", "--since", "HEAD", env={"PLANGRAPH_GIT_TIMEOUT": value})
    assert got.code == 2 and got.out == ""
    lines = got.err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in got.err
    assert lines[0].startswith("plangraph: error: PLANGRAPH_GIT_TIMEOUT=")
    assert "is not a time git may take" in lines[0] and "at most 86400" in lines[0]
    assert len(lines[0]) < 300  # a huge value is quoted by its start


def test_a_plugin_run_refuses_a_bound_that_is_no_time_before_any_test(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    make_project(pytester)
    monkeypatch.setenv("PLANGRAPH_GIT_TIMEOUT", "nan")
    result = pytester.runpytest_subprocess("--plangraph", "-p", "no:cacheprovider", timeout=GUARD)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "PLANGRAPH_GIT_TIMEOUT='nan' is not a time git may take" in result.stderr.str()
    assert "passed" not in result.stdout.str()


@pytest.mark.parametrize(
    ("value", "seconds"),
    [
        (None, DEFAULT_TIMEOUT),
        ("", DEFAULT_TIMEOUT),
        ("2", 2.0),
        (" 30 ", 30.0),
        ("0.5", 0.5),
        (".25", 0.25),
        ("86400", 86400.0),
        ("007", 7.0),
    ],
)
def test_the_bound_read(monkeypatch: pytest.MonkeyPatch, value: str | None, seconds: float) -> None:
    if value is None:
        monkeypatch.delenv("PLANGRAPH_GIT_TIMEOUT", raising=False)
    else:
        monkeypatch.setenv("PLANGRAPH_GIT_TIMEOUT", value)
    assert git_timeout() == seconds


def test_the_bound_is_in_no_kept_answers_key(monkeypatch: pytest.MonkeyPatch) -> None:
    """It changes no answer (git answers within it as without it, or the command fails and
    keeps nothing): a kept status or lint answer holds whatever it is."""
    from pytest_plangraph.derived import settings
    from pytest_plangraph.lint.kept import settings as lint_settings

    monkeypatch.setenv("PLANGRAPH_PROGRESS", "0")
    monkeypatch.setenv("PLANGRAPH_GIT_TIMEOUT", "7")
    assert settings().get("PLANGRAPH_PROGRESS") == "0"
    assert "PLANGRAPH_GIT_TIMEOUT" not in settings()
    assert ["PLANGRAPH_PROGRESS", "0"] in lint_settings()
    assert all(name != "PLANGRAPH_GIT_TIMEOUT" for name, _ in lint_settings())


def test_a_kept_status_holds_under_another_bound(
    project: Callable[[str], Path], derived: list[str]
) -> None:
    root = project("jwt-login")
    plangraph_main(root, "verify")
    first = plangraph_main(root, "status")
    plangraph_main(root, "status")
    before = len(derived)
    again = plangraph_main(root, "status", env={"PLANGRAPH_GIT_TIMEOUT": "3"})
    assert len(derived) == before  # answered from the kept answer
    assert again.out == first.out and again.code == first.code == 0


def test_the_http_api_answers_503_when_git_does_not_finish(
    project: Callable[[str], Path], serve: Callable[..., Any]
) -> None:
    from server_helpers import is_problem

    root = project("jwt-login")
    _fifo_ignore(root)
    server = serve(root, env={"PLANGRAPH_GIT_TIMEOUT": "1"})
    answer = server.post("/plans/auth-login/impact-analysis", {"since": "HEAD"})
    body = is_problem(answer, 503, "GIT_TIMEOUT")
    assert body["title"] == "Repository unavailable"
    assert body["detail"].startswith("git ls-files") and "did not finish in 1 s" in body["detail"]
