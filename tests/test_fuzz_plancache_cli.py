"""Differential fuzzing of the plan cache through the ``plangraph`` command on a real git
repository: after generated plans and edits (``test_fuzz_plancache.py``'s), and with each file
of ``.plangraph/cache`` damaged in turn, ``status --format json`` and ``lint --format json``
answer as they do with the cache folder deleted."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from cache_helpers import as_tester
from cli_helpers import plangraph_main
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from repo_helpers import git
from test_fuzz_plancache import (
    AFTER,
    EDIT,
    EDITS,
    FIXED,
    PLAN_PARTS,
    _damaged_copies,
    _plan,
    _text,
    _write,
)


def _command_answers(root: Path) -> list[Any]:
    """``status --format json`` and ``lint --format json`` in *root*: exit codes and output,
    *root*'s path taken out (a copy answers from elsewhere)."""
    answers: list[Any] = []
    for args in (("status", "--format", "json"), ("lint", "--format", "json")):
        result = plangraph_main(root, *args)
        answers.append([result.code, result.out.replace(str(root), "ROOT"), result.err[:500]])
    return answers


def _without_cache(root: Path, scratch: Path) -> list[Any]:
    other = scratch / "fresh"
    shutil.rmtree(other, ignore_errors=True)
    shutil.copytree(root, other, symlinks=True)
    shutil.rmtree(other / ".plangraph" / "cache", ignore_errors=True)
    found = _command_answers(other)
    return json.loads(json.dumps(found).replace(str(other), "ROOT"))


def _repository(folder: Path, parts: dict[str, Any]) -> tuple[Path, Any]:
    """A git repository in *folder* holding the plan made of *parts*, committed: its root and
    the plan's data (edited in place by :data:`EDITS`)."""
    root = folder / "repo"
    root.mkdir()
    plan = _plan(parts)
    _write(root / "plangraph.yaml", _text(plan), 1)
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "plan")
    return root, plan


@settings(max_examples=5, deadline=None, suppress_health_check=list(HealthCheck))
@given(parts=PLAN_PARTS, edits=st.lists(EDIT, min_size=1, max_size=3))
def test_status_and_lint_answer_as_without_the_cache(
    tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
    parts: dict[str, Any],
    edits: list[Any],
) -> None:
    as_tester(monkeypatch)
    scratch = tmp_path_factory.mktemp("cli")
    root, plan = _repository(scratch, parts)
    assert _command_answers(root) == _without_cache(root, scratch)
    for n, (name, at, title) in enumerate(edits):
        EDITS[name](plan, at, title)
        _write(root / "plangraph.yaml", _text(plan), n)
        assert _command_answers(root) == _without_cache(root, scratch), (name, at, title)


@pytest.mark.parametrize("damage", ["flipped", "values swapped", "swapped with its kind"])
def test_status_and_lint_with_a_damaged_cache_file_answer_as_without_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, damage: str
) -> None:
    """Every file of ``.plangraph/cache`` (the derived state and the lint entries included),
    after two versions of the plan were answered, damaged in turn."""
    as_tester(monkeypatch)
    root, plan = _repository(tmp_path, FIXED)
    _command_answers(root)
    for step in AFTER[:2]:
        EDITS[step[0]](plan, step[1], step[2])
        _write(root / "plangraph.yaml", _text(plan), 1)
        _command_answers(root)
    expected = _without_cache(root, tmp_path)
    cache = root / ".plangraph" / "cache"
    for name, kept in _damaged_copies(cache, tmp_path / "copies", damage):
        copy = tmp_path / "damaged"
        shutil.rmtree(copy, ignore_errors=True)
        shutil.copytree(root, copy, symlinks=True, ignore=shutil.ignore_patterns("cache"))
        shutil.copytree(kept, copy / ".plangraph" / "cache", symlinks=True)
        found = json.loads(json.dumps(_command_answers(copy)).replace(str(copy), "ROOT"))
        assert found == expected, f"{name} {damage}"
