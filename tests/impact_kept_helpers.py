"""Helpers of the tests of ``plangraph impact``'s kept answer (``tests/test_impact_kept*.py``)."""

from __future__ import annotations

from pathlib import Path

from cli_helpers import Result, plangraph_main
from conftest import git

CACHE = Path(".plangraph/cache")


def run_impact(root: Path, *args: str, env: dict[str, str] | None = None) -> Result:
    result = plangraph_main(root, "impact", *args, env=env)
    assert "Traceback" not in result.err
    return result


def fresh_impact(root: Path, *args: str) -> Result:
    """The answer with every kept answer deleted (made afresh, and kept again)."""
    for kept in (root / CACHE).glob("impact-*.json"):
        kept.unlink()
    return run_impact(root, *args)


def forget_basis(root: Path) -> None:
    """Delete the kept basis of ``impact --since`` (``cli/impact_basis.py``): a miss of the
    kept answer is then made from the plan."""
    (root / CACHE / "impact-since-basis.json").unlink(missing_ok=True)


def edit_history(root: Path, commits: int) -> None:
    for i in range(commits):
        target = root / f"out/t{i % 12 + 1}.txt"
        target.write_text(f"{target.read_text()}edit {i}\n")
        git(root, "commit", "-q", "-am", f"edit {i}")
