"""The ``command`` verifier: a program from the plan exits 0, bound to the files it checked.

Settings: ``run`` (the argv list; no shell is involved), ``timeout_s`` (default 600),
``subjects`` (paths or globs of the files the verdict depends on) and ``cwd`` (a directory
inside the repository; default its root). The evidence's details carry the argv, the exit code,
the duration and the last :data:`TAIL_BYTES` bytes of the merged stdout and stderr; its subjects
are the files ``subjects`` names and the repository files the argv itself names (the script
it runs, a file given to it), hashed before the program runs and again after it.

Reasons: ``COMMAND_FAILED`` (non-zero exit, outcome ``failed``), ``COMMAND_TIMEOUT`` (killed
after ``timeout_s``, ``failed``), ``COMMAND_NOT_FOUND`` and ``COMMAND_NOT_RUNNABLE`` (the
program is missing or cannot be started, or ``cwd`` is not a directory; ``error``),
``ARTIFACT_CHANGED_DURING_RUN`` (the program changed a subject it was to check, ``error``).

The argv comes from the plan, which is reviewed input like the tests themselves: running
``plangraph verify`` or ``pytest --plangraph`` on a plan runs its commands (docs/trust.md).
"""

from __future__ import annotations

import os
import posixpath
import signal
import subprocess
import time
from collections.abc import Mapping
from typing import IO, TYPE_CHECKING, Any

from ..plan.paths import is_glob, path_problem
from . import VerifierResult, settings_of

if TYPE_CHECKING:
    from ..plan.model import Criterion, Node
    from ..vcs.workspace import Workspace

COMMAND_FAILED = "COMMAND_FAILED"
COMMAND_TIMEOUT = "COMMAND_TIMEOUT"
COMMAND_NOT_FOUND = "COMMAND_NOT_FOUND"
COMMAND_NOT_RUNNABLE = "COMMAND_NOT_RUNNABLE"
CHANGED_DURING_RUN = "ARTIFACT_CHANGED_DURING_RUN"

TAIL_BYTES = 4000
"""How much of the end of the program's output is kept in the evidence."""


class CommandType:
    """Built-in ``command`` verifier type (settings ``run``, ``timeout_s``, ``subjects``,
    ``cwd``)."""

    name = "command"
    runs_in_pytest = True

    def config_problems(self, settings: Mapping[str, Any], workspace: Workspace) -> list[str]:
        """Bad argv entries, a ``cwd`` or subject that leaves the repository. A program
        missing on this machine, or a ``cwd`` directory deleted since, is not a problem of the
        plan (lint would then refuse every command): it is reported when the criterion runs."""
        problems = [
            f"run[{i}]: contains a NUL character, which no argument can hold"
            for i, arg in enumerate(settings.get("run") or [])
            if isinstance(arg, str) and "\0" in arg
        ]
        for i, pattern in enumerate(settings.get("subjects") or []):
            if why := path_problem(str(pattern)):
                problems.append(f"subjects[{i}]: {pattern!r}: {why}")
            elif not is_glob(pattern) and workspace.escapes(pattern):
                problems.append(f"subjects[{i}]: {pattern!r} resolves outside the repository")
        cwd = settings.get("cwd")
        if cwd is not None:
            if why := path_problem(str(cwd)):
                problems.append(f"cwd: {cwd!r}: {why}")
            elif workspace.escapes(cwd):
                problems.append(f"cwd: {cwd!r} resolves outside the repository root (symlink)")
        return problems

    def run(self, node: Node, criterion: Criterion, workspace: Workspace) -> VerifierResult:
        """Hash the subjects, run the program, hash them again; exit 0 passes."""
        settings = settings_of(criterion.verifier)
        argv = [str(a) for a in settings["run"]]
        cwd = settings.get("cwd") or "."
        if path_problem(cwd) or workspace.escapes(cwd) or not (workspace.root / cwd).is_dir():
            message = f"cwd {cwd!r} is not a directory inside the repository"
            return VerifierResult("error", COMMAND_NOT_RUNNABLE, message, {"argv": argv})
        named = workspace.expand(settings.get("subjects") or [])
        subjects = tuple(
            dict.fromkeys(
                [p for p in named if not workspace.escapes(p)]
                + _program_files(argv, cwd, workspace)
            )
        )
        before = {path: workspace.hash_file(path) for path in subjects}
        result = _run(argv, workspace.root / cwd, float(settings.get("timeout_s") or 600))
        moved = sorted(p for p in subjects if workspace.hash_file(p) != before[p])
        if moved and result.outcome != "error":
            message = f"the command changed files it was to check: {', '.join(moved)}"
            details = {**result.details, "changed_during_run": moved}
            return VerifierResult("error", CHANGED_DURING_RUN, message, details, subjects)
        return VerifierResult(
            result.outcome, result.reason, result.message, result.details, subjects
        )


def _program_files(argv: list[str], cwd: str, workspace: Workspace) -> list[str]:
    """The repository files the argv names, relative to *cwd* (``scripts/check.py``,
    ``./check.sh``, ``--config=ci/rules.toml``): the program, a script it runs and the files
    given to it are part of what the verdict depends on, so editing one of them stales it
    whatever ``subjects`` lists. Arguments that name no regular file inside the root are
    left out."""
    found: list[str] = []
    for arg in argv:
        for part in (arg, arg.partition("=")[2]):
            if not part or "\0" in part or posixpath.isabs(part):
                continue
            rel = posixpath.normpath(posixpath.join(cwd, part))
            if rel.startswith("../") or rel in ("..", "."):
                continue
            if not workspace.escapes(rel) and workspace.hash_file(rel) is not None:
                found.append(rel)
    return found


def _run(argv: list[str], cwd: Any, timeout: float) -> VerifierResult:
    """Run *argv* in its own process group with stdin closed; the output goes to a temporary
    file, so a chatty program costs no memory, and only its tail is read back."""
    details: dict[str, Any] = {"argv": argv, "timeout_s": timeout}
    started = time.monotonic()
    import tempfile  # a command's output goes to a file: only when one runs

    with tempfile.TemporaryFile() as output:
        try:
            process = subprocess.Popen(
                argv,
                cwd=cwd,
                stdin=subprocess.DEVNULL,
                stdout=output,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # so a timeout kills the program's children too
            )
        except FileNotFoundError:
            message = (
                f"program {argv[0]!r} was not found (not on PATH, or no such file); install it "
                "or fix `run` in the plan"
            )
            return VerifierResult("error", COMMAND_NOT_FOUND, message, details)
        except (OSError, ValueError) as exc:  # ValueError: a NUL inside an argument
            message = f"program {argv[0]!r} cannot be started: {getattr(exc, 'strerror', 0) or exc}"
            return VerifierResult("error", COMMAND_NOT_RUNNABLE, message, details)
        timed_out = _wait(process, timeout)
        details["duration_s"] = round(time.monotonic() - started, 3)
        details["output_tail"] = _tail(output)
    details["exit_code"] = process.returncode
    if timed_out:
        message = f"`{' '.join(argv)}` did not finish within timeout_s={timeout:g} and was killed"
        return VerifierResult("failed", COMMAND_TIMEOUT, message, details)
    if process.returncode != 0:
        message = f"`{' '.join(argv)}` exited with {process.returncode}"
        return VerifierResult("failed", COMMAND_FAILED, message, details)
    return VerifierResult("passed", None, f"`{' '.join(argv)}` exited with 0", details)


def _wait(process: subprocess.Popen[bytes], timeout: float) -> bool:
    """Wait for *process*; on timeout kill its whole process group. True when it timed out."""
    try:
        process.wait(timeout)
        return False
    except subprocess.TimeoutExpired:
        _kill_group(process)
        return True
    except BaseException:  # Ctrl-C in the middle: leave no program behind
        _kill_group(process)
        raise


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        process.kill()
    process.wait()


def _tail(output: IO[bytes]) -> str:
    """The last :data:`TAIL_BYTES` bytes written to *output*, as text."""
    size = output.seek(0, os.SEEK_END)
    output.seek(max(0, size - TAIL_BYTES))
    text = output.read().decode("utf-8", "replace")
    return ("…" if size > TAIL_BYTES else "") + text
