"""Attacks on ``plangraph status`` after a title edit (``derived/retitled.py``,
``plan/retitle.py``): each builds the scenario with the real command and compares what it
answers with the answer of the same steps with every cache deleted."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cache_helpers import as_tester
from test_kept_status_meaning import CACHE, _comment, _fresh, _project, _status, _steady

from pytest_plangraph.plan import retitle
from pytest_plangraph.plan.cache import keyed

TITLE = f"  title: {'x' * 40}\n"
LAST_ITEM = f"- id: n199\n{TITLE}  outputs: [out/n199.txt]\n  acceptance:\n  - id: ac\n"
"""The last node's text up to its criterion's verifier line."""


@pytest.fixture(autouse=True)
def _environment(monkeypatch: pytest.MonkeyPatch) -> None:
    as_tester(monkeypatch)


def _alone(root: Path, *args: str) -> object:
    """The command as a process of its own runs it: no head remembered from an earlier call."""
    retitle.LAST_HEAD.clear()
    return _status(root, *args)


def _plant_end(root: Path, text_before: str) -> None:
    """``lastread.txt`` with its key line and bytes as kept, its head saying the list of nodes
    ends right after *text_before* (inside the last node), its check made anew: a file of
    the repository's cache folder anyone who can write the folder can write, no salt
    needed."""
    path = root / CACHE / retitle.LAST
    first, _, body = path.read_bytes().partition(b"\n")
    line, _, raw = body.partition(b"\n")
    text = raw.decode()
    head = json.loads(line)
    head["end"] = text.index(text_before) + len(text_before)
    path.write_bytes(keyed(first.split()[0].decode(), json.dumps(head).encode() + b"\n" + raw))


def test_a_planted_head_is_not_sealed_by_a_patched_read(tmp_path: Path) -> None:
    """A head planted in ``lastread.txt`` (the list ending inside the last node) is taken by
    a command that patches the plan after a title edit, which keeps it under this user's seal;
    the next status keeps it with its answer, and then takes an edit of the last node that
    turns its criterion's verifier into a title for a title edit: it printed the answer of
    the plan before (exit 0) where the plan has no verifier for that criterion."""
    root = _project(tmp_path)
    _comment(root)
    _steady(root, "--check")
    _plant_end(root, LAST_ITEM)
    plan = root / "plangraph.yaml"
    # a title edit, read by a command that patches the plan (json status reads the plan)
    plan.write_text(plan.read_text().replace(f"- id: n5\n{TITLE}", "- id: n5\n  title: y\n", 1))
    _alone(root, "--format", "json")
    for _ in range(3):  # the text status reads the plan, keeps its answer (and the head)
        _alone(root, "--check")
    before = _alone(root, "--check")
    # the last node: its title moved below its criterion's id, as a block scalar that takes
    # the criterion's verifier line
    moved = "- id: n199\n  outputs: [out/n199.txt]\n  acceptance:\n  - id: ac\n  title: |\n"
    plan.write_text(plan.read_text().replace(LAST_ITEM, moved, 1))
    edited = _alone(root, "--check")
    fresh = _fresh(root, "--check")
    assert fresh != before
    assert edited == fresh
