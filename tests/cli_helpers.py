"""Running the ``plangraph`` command: as a real subprocess, or in-process through ``main``."""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

PLANGRAPH = Path(sys.executable).parent / "plangraph"


@dataclass
class Result:
    """What a command printed and how it exited."""

    code: int
    out: str
    err: str

    def json(self) -> Any:
        """stdout parsed as JSON."""
        return json.loads(self.out)


def _environment(env: dict[str, str] | None) -> dict[str, str]:
    full = {**os.environ, "PLANGRAPH_ACTOR": "tester", **(env or {})}
    for name in (
        "PLANGRAPH_STORE",
        "PLANGRAPH_SIGNING_KEY",
        "PLANGRAPH_SIGNING_KEY_FILE",
        "PLANGRAPH_TRUSTED_KEYS",
    ):
        if name not in (env or {}):
            full.pop(name, None)
    return full


def plangraph(cwd: Path, *args: str, env: dict[str, str] | None = None) -> Result:
    """Run the installed ``plangraph`` console script in *cwd*."""
    proc = subprocess.run(
        [str(PLANGRAPH), *args],
        cwd=cwd,
        env=_environment(env),
        capture_output=True,
        text=True,
        check=False,
    )
    return Result(proc.returncode, proc.stdout, proc.stderr)


def plangraph_main(cwd: Path, *args: str, env: dict[str, str] | None = None) -> Result:
    """Run ``pytest_plangraph.cli.main(args)`` in this process, in *cwd* (fast)."""
    from pytest_plangraph.cli import main

    out, err = io.StringIO(), io.StringIO()
    with (
        _inside(cwd, _environment(env)),
        contextlib.redirect_stdout(out),
        contextlib.redirect_stderr(err),
    ):
        try:
            code = main(list(args))
        except SystemExit as exc:  # argparse usage errors
            code = int(exc.code or 0)
    return Result(code, out.getvalue(), err.getvalue())


@contextlib.contextmanager
def _inside(cwd: Path, env: dict[str, str]) -> Iterator[None]:
    old_cwd, old_env = Path.cwd(), dict(os.environ)
    os.chdir(cwd)
    os.environ.clear()
    os.environ.update(env)
    try:
        yield
    finally:
        os.chdir(old_cwd)
        os.environ.clear()
        os.environ.update(old_env)


def status_without_caches(root: Path, scratch: Path) -> Result:
    """``plangraph status --check`` with every cache deleted, run in a copy of *root* made at
    ``scratch / "fresh"`` (the caches of *root* stay)."""
    other = scratch / "fresh"
    shutil.rmtree(other, ignore_errors=True)
    shutil.copytree(root, other, symlinks=True)
    shutil.rmtree(other / ".plangraph" / "cache")
    return plangraph_main(other, "status", "--check")
