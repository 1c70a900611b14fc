"""Progress lines: on stderr when it is a terminal (a real pseudo-terminal here), never when it
is a pipe, and never on stdout."""

from __future__ import annotations

import io
import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest
from cli_helpers import PLANGRAPH, _environment
from repo_helpers import git

from pytest_plangraph.progress import Progress

PY = sys.executable
PLAN = """
plangraph: 1
plan: slow
nodes:
""" + "".join(
    f"""  - id: step-{i}
    acceptance:
      - id: ac-run
        verifier: {{type: command, run: ["{PY}", "-c", "import time; time.sleep(0.2)"]}}
"""
    for i in range(3)
)


def run_with_terminal(cwd: Path, *args: str) -> tuple[int, str, str]:
    """Run ``plangraph ARGS`` with stderr on a pseudo-terminal; (exit code, stdout, what the
    terminal showed)."""
    leader, follower = pty.openpty()
    try:
        proc = subprocess.Popen(
            [str(PLANGRAPH), *args],
            cwd=cwd,
            env=_environment({"PLANGRAPH_PROGRESS": "1"}),
            stdout=subprocess.PIPE,
            stderr=follower,
            stdin=subprocess.DEVNULL,
        )
        os.close(follower)
        shown = bytearray()
        while True:
            try:
                chunk = os.read(leader, 4096)
            except OSError:  # the terminal closed: the program has ended
                break
            if not chunk:
                break
            shown += chunk
        out, _ = proc.communicate(timeout=60)  # small: it fits the pipe while the loop reads
        code = proc.returncode
    finally:
        os.close(leader)
    return code, out.decode(), shown.decode(errors="replace")


@pytest.fixture
def slow_project(tmp_path: Path) -> Path:
    (tmp_path / "plangraph.yaml").write_text(PLAN)
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "mod.py").write_text("from . import other\n")
    (tmp_path / "pkg" / "other.py").write_text("")
    git(tmp_path, "init", "-q", "-b", "main")
    git(tmp_path, "add", "-A")
    git(tmp_path, "commit", "-q", "-m", "initial")
    return tmp_path


def test_verify_shows_progress_on_a_terminal_and_not_in_a_pipe(slow_project: Path) -> None:
    code, out, shown = run_with_terminal(slow_project, "verify")
    assert code == 0, shown
    assert "plangraph: verify 0/3 running step-0/ac-run" in shown
    assert "plangraph: verify" not in out
    piped = subprocess.run(
        [str(PLANGRAPH), "verify"],
        cwd=slow_project,
        env=_environment(None),
        capture_output=True,
        text=True,
        check=False,
    )
    assert piped.returncode == 0
    assert piped.stderr == "" and "plangraph: verify" not in piped.stdout


def test_init_and_impact_show_progress_on_a_terminal(slow_project: Path) -> None:
    code, _, shown = run_with_terminal(slow_project, "init", "--output", "starter.yaml")
    assert code == 0, shown
    assert "plangraph: init" in shown and "reading pkg/" in shown
    git(slow_project, "add", "-A")
    git(slow_project, "commit", "-q", "-m", "starter")
    code, out, shown = run_with_terminal(slow_project, "impact", "--since", "HEAD~1")
    assert code == 0, shown
    assert "plangraph: impact reading the diff from HEAD~1" in shown
    assert "plangraph: impact" not in out


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_line_is_erased_and_off_by_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    stream = _Terminal()
    with Progress("work", 2, stream) as progress:
        progress.stage("first")
        progress.step("a")
        progress.step("b")
    text = stream.getvalue()
    assert "plangraph: work 0/2 first" in text and "plangraph: work 2/2 b" in text
    assert text.endswith("\r")  # the line is blanked out at the end
    monkeypatch.setenv("PLANGRAPH_PROGRESS", "0")
    quiet = _Terminal()
    with Progress("work", 1, quiet) as progress:
        progress.stage("x")
    assert quiet.getvalue() == ""
