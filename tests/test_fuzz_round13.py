"""What fuzzing the thirteenth round's changes found (status after a title edit, the plan
patched for one), each as the answer a run with every cache deleted gives."""

from __future__ import annotations

from pathlib import Path

import pytest
from cache_helpers import as_tester
from test_kept_status_meaning import _comment, _fresh, _project, _status, _steady

from pytest_plangraph.errors import PlanError
from pytest_plangraph.plan.file import load_plan

TITLE = f"  title: {'x' * 40}\n"
"""Every node's title line in the status tests' plan."""


@pytest.fixture(autouse=True)
def _environment(monkeypatch: pytest.MonkeyPatch) -> None:
    as_tester(monkeypatch)


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert text.count(old) == 1
    path.write_text(text.replace(old, new, 1))


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_a_title_anchored_by_a_name_taken_is_the_yaml_error_of_a_run_without_caches(
    tmp_path: Path, fmt: str
) -> None:
    """A title edit giving a node's title an anchor another node's title already has: the plan
    is no YAML (a second occurrence of the anchor), not the answer kept before the edit."""
    root = _project(tmp_path)
    plan = root / "plangraph.yaml"
    _edit(plan, f"- id: n5\n{TITLE}", "- id: n5\n  title: &same five\n")
    _comment(root)  # the plan read by blocks: its head kept with the answer
    assert _steady(root, "--format", fmt, "--check").code == 0
    _edit(plan, f"- id: n7\n{TITLE}", "- id: n7\n  title: &same seven\n")
    edited = _status(root, "--format", fmt, "--check")
    assert edited.code == 2 and "second occurrence" in edited.err
    assert edited == _fresh(root, "--format", fmt, "--check")


def test_a_title_anchored_by_a_name_taken_is_not_patched_into_a_plan(tmp_path: Path) -> None:
    """The plan read with its cache folder after such an edit is the error read without it."""
    plan, cache = tmp_path / "plangraph.yaml", tmp_path / "cache"
    nodes = "".join(
        f"- id: n{i}\n  title: {'&same ' if i == 5 else ''}t{i}\n  outputs: [out/n{i}.txt]\n"
        f"  acceptance:\n  - id: ac\n    verifier: {{type: artifact, path: out/n{i}.txt}}\n"
        for i in range(300)
    )
    plan.write_text(f"plangraph: 1\nplan: big\nnodes:\n{nodes}edges: []\n")
    first = load_plan(plan, cache_dir=cache)
    assert load_plan(plan, cache_dir=cache).plan.digest == first.plan.digest
    _edit(plan, "  title: t7\n", "  title: &same seven\n")
    with pytest.raises(PlanError) as fresh:
        load_plan(plan, cache_dir=tmp_path / "fresh")
    with pytest.raises(PlanError) as edited:
        load_plan(plan, cache_dir=cache)
    assert str(edited.value) == str(fresh.value)
    assert "second occurrence" in str(edited.value)


def test_one_anchor_named_in_two_blocks_is_the_yaml_error_of_a_read_without_a_cache(
    tmp_path: Path,
) -> None:
    """A large plan naming one anchor in two nodes far apart (two blocks of its split): read
    with a cache folder (by blocks), it is the error the whole file is without one."""
    plan = tmp_path / "plangraph.yaml"
    nodes = "".join(
        f"- id: n{i}\n  title: {'&same ' if i in (5, 250) else ''}t{i}\n"
        f"  outputs: [out/n{i}.txt]\n  acceptance:\n"
        f"  - id: ac\n    verifier: {{type: artifact, path: out/n{i}.txt}}\n"
        for i in range(300)
    )
    plan.write_text(f"plangraph: 1\nplan: big\nnodes:\n{nodes}")
    with pytest.raises(PlanError) as whole:
        load_plan(plan)  # no cache folder: read whole
    assert "second occurrence" in str(whole.value)
    for _ in range(2):  # the blocks read, then kept
        with pytest.raises(PlanError) as blocks:
            load_plan(plan, cache_dir=tmp_path / "cache")
        assert str(blocks.value) == str(whole.value)
