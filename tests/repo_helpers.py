"""Plain helpers the tests and the reliability benchmark share (no pytest needed): git with a
fixed identity, and a store file edited by hand as an attacker would."""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import textwrap
from pathlib import Path


def git(cwd: Path, *args: str) -> str:
    """Run git in *cwd* with a fixed identity; return stdout."""
    env = {
        "GIT_AUTHOR_NAME": "Test",
        "GIT_AUTHOR_EMAIL": "test@example.invalid",
        "GIT_COMMITTER_NAME": "Test",
        "GIT_COMMITTER_EMAIL": "test@example.invalid",
        "PATH": "/usr/bin:/bin:/usr/local/bin",
        "HOME": str(cwd),
    }
    result = subprocess.run(
        ["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True
    )
    return result.stdout


def commit_files(root: Path, files: dict[str, str]) -> None:
    """Write *files* (a relative path each, its text dedented) under *root*, make it a git
    repository (branch ``main``) and commit them."""
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "initial")


def edit_store(store: Path, *statements: str) -> None:
    """Run *statements* on the store file at *store* with its append-only triggers lifted, then
    put the triggers back exactly as they were (their text unchanged)."""
    con = sqlite3.connect(store)
    try:
        with con:
            rows = con.execute("SELECT name, sql FROM sqlite_master WHERE type = 'trigger'")
            saved = [(name, sql) for name, sql in rows if "_no_" in name]
            for name, _ in saved:
                con.execute(f"DROP TRIGGER {name}")
            for statement in statements:
                con.execute(statement)
            for _, sql in saved:
                con.execute(sql)
    finally:
        con.close()


def logging_git(tmp_path: Path) -> tuple[dict[str, str], Path]:
    """An environment whose ``git`` logs each invocation (one line of arguments) and runs the
    real git: the environment to run a command with, and the log."""
    real = shutil.which("git")
    assert real is not None
    folder = tmp_path / "bin"
    folder.mkdir()
    log = tmp_path / "git.log"
    shim = folder / "git"
    shim.write_text(  # `git -C DIR ARGS` (how plangraph runs git) is logged as ARGS
        "#!/bin/sh\n"
        'if [ "$1" = "-C" ]; then\n'
        f'  where="$2"; shift 2; printf "%s\\n" "$*" >> "{log}"; exec "{real}" -C "$where" "$@"\n'
        "fi\n"
        f'printf "%s\\n" "$*" >> "{log}"\nexec "{real}" "$@"\n'
    )
    shim.chmod(0o755)
    return {"PATH": f"{folder}{os.pathsep}{os.environ['PATH']}"}, log
