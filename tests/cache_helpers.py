"""Shared by the tests of the kept states and answers: every fixture project as its own copy,
and an environment where no key or store setting turns the caches off."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import FIXTURES


def as_tester(monkeypatch: pytest.MonkeyPatch) -> None:
    """Record as ``tester``, with no signing key, trusted keys or store path configured (with
    keys configured the kept states and answers are not used)."""
    monkeypatch.setenv("PLANGRAPH_ACTOR", "tester")
    for name in ("PLANGRAPH_SIGNING_KEY", "PLANGRAPH_TRUSTED_KEYS", "PLANGRAPH_STORE"):
        monkeypatch.delenv(name, raising=False)


def fixture_projects(
    tmp_path: Path, lint_plans: int | None = None
) -> Iterator[tuple[str, Path, Path]]:
    """Every fixture project and plan as (name, root, plan file), each copied into *tmp_path*:
    the samples, then the lint fixtures' plans (the first *lint_plans* of them, when given)."""
    for name in ("jwt-login", "seed-000"):
        root = tmp_path / name
        shutil.copytree(FIXTURES / name, root)
        yield name, root, root / "plangraph.yaml"
    for plan in sorted((FIXTURES / "lint").glob("*.yaml"))[:lint_plans]:
        root = tmp_path / f"lint-{plan.stem}"
        shutil.copytree(FIXTURES / "lint", root)
        yield plan.name, root, root / plan.name
