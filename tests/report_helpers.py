"""Projects with evidence for the report tests: the JWT-login sample, verified by
``plangraph verify`` (no pytest run needed), and a stale one whose schema changed in a commit."""

from __future__ import annotations

import shutil
from pathlib import Path

from cli_helpers import plangraph_main
from conftest import FIXTURES
from repo_helpers import git


def jwt_verified(target: Path) -> Path:
    """The JWT-login sample in a fresh repository at *target*, its schema criterion verified."""
    shutil.copytree(FIXTURES / "jwt-login", target, dirs_exist_ok=True)
    (target / ".gitignore").write_text(".plangraph/\n__pycache__/\n", encoding="utf-8")
    git(target, "init", "-q", "-b", "main")
    git(target, "add", "-A")
    git(target, "commit", "-q", "-m", "initial")
    result = plangraph_main(target, "verify")
    assert result.code == 0, result.err
    return target


def make_stale(root: Path) -> str:
    """Change the user schema in a new commit (still valid JSON); return its short sha."""
    schema = root / "src/auth/user_schema.json"
    schema.write_text(schema.read_text(encoding="utf-8").replace("}", "} ", 1), encoding="utf-8")
    git(root, "commit", "-q", "-am", "touch the schema")
    return git(root, "rev-parse", "--short=7", "HEAD").strip()
