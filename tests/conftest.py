"""Shared helpers of the test suite: plan files written into tmp_path, real git repositories."""

from __future__ import annotations

import shutil
import subprocess
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

# Imported before any pytester run takes its snapshot of sys.modules. The package imports PyYAML
# only when it parses a plan; a module imported during an in-process run is dropped after it,
# and a fresh `yaml` would not match the node classes of its C parser, which stays loaded.
import yaml  # noqa: F401

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "fixtures"


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


@pytest.fixture
def write_plan(tmp_path: Path) -> Callable[[str, str], Path]:
    """Write dedented YAML text to a file in tmp_path and return its path."""

    def write(text: str, name: str = "plangraph.yaml") -> Path:
        path = tmp_path / name
        path.write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
        return path

    return write


@pytest.fixture
def project(tmp_path: Path) -> Callable[[str], Path]:
    """Copy a fixture project into tmp_path/<name>, make it a git repository with one commit."""

    def make(name: str) -> Path:
        target = tmp_path / name
        shutil.copytree(FIXTURES / name, target)
        git(target, "init", "-q", "-b", "main")
        git(target, "add", "-A")
        git(target, "commit", "-q", "-m", "initial")
        return target

    return make
