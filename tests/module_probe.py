"""What a ``plangraph`` command or a ``pytest`` run imported: the run in a new process, its
``sys.modules`` read at exit (the lean-imports and pydantic-boundary tests share it)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

PROBE = """
import atexit, contextlib, io, json, sys
def report():
    with open(sys.argv[1], "w") as out:
        json.dump(sorted(sys.modules), out)
atexit.register(report)
args = sys.argv[2:]
if args[0] == "pytest":
    import pytest
    code = pytest.main(args[1:])
else:
    from pytest_plangraph.cli import main
    with contextlib.redirect_stdout(io.StringIO()):
        code = main(args)
raise SystemExit(int(code))
"""


def imported(
    root: Path, tmp_path: Path, *args: str, env: Mapping[str, str] | None = None
) -> tuple[int, list[str], str]:
    """Run *args* (``pytest …`` or a ``plangraph`` command) in a new process in *root* (with
    *env*, else this one's): its exit code, the modules it had imported at exit, and its
    output (for a failing assertion's message)."""
    report = tmp_path / "modules.json"
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(report), *args],
        cwd=root,
        env=None if env is None else dict(env),
        capture_output=True,
        text=True,
        check=False,
    )
    return done.returncode, json.loads(report.read_text()), done.stdout + done.stderr
