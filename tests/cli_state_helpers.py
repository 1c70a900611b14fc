"""Statuses, test runs and store paths of the JWT-login sample, for the CLI state tests."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from cli_helpers import plangraph_main

STORE = Path(".plangraph/store.db")

TOKEN = "step-token-endpoint"

SCHEMA = "step-user-schema"


def statuses(root: Path, *extra: str) -> dict[str, str]:
    result = plangraph_main(root, "status", "--format", "json", *extra)
    assert result.code in (0, 1), result.err
    return {n["id"]: n["status"] for n in result.json()["nodes"]}


def record_token_tests(root: Path) -> None:
    """Record passing evidence for the two test criteria by running pytest --plangraph."""
    proc = pytest_plangraph_run(root)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def pytest_plangraph_run(root: Path) -> subprocess.CompletedProcess[str]:
    """``pytest --plangraph -q`` run in *root* as a separate process."""
    return subprocess.run(
        [sys.executable, "-m", "pytest", "--plangraph", "-q", "-p", "no:cacheprovider"],
        cwd=root,
        capture_output=True,
        text=True,
        check=False,
    )
