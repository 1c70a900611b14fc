"""``plangraph status`` after an edit of a large plan's comments or layout: the plan is read
(its content key says its meaning is the same) and the answer kept for that meaning stands
while nothing else it depends on changed; it is then kept under the new bytes. Any other
change is a miss whose answer is the derived one, and an answer that printed warnings (which
name lines of the plan) is not used for other bytes."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from cache_helpers import as_tester
from cli_helpers import Result, plangraph_main
from conftest import git

from pytest_plangraph.api import PlanGraph
from pytest_plangraph.cli import state_cmds
from pytest_plangraph.derived import kept, planfree
from pytest_plangraph.store.derived import read_tagged, write_tagged

CACHE = Path(".plangraph/cache")
_PERSON = b"plangraph-status"


@pytest.fixture(autouse=True)
def _environment(monkeypatch: pytest.MonkeyPatch) -> None:
    as_tester(monkeypatch)


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """How many status calls read the plan (missed the kept answer before it), and how many
    derived the state (missed the answer kept for the plan's meaning too)."""
    counts = {"read": 0, "derived": 0}
    read, derived = state_cmds._derived_status, PlanGraph.status

    def reading(*args: Any) -> Any:
        counts["read"] += 1
        return read(*args)

    def deriving(self: PlanGraph, *args: Any, **kwargs: Any) -> Any:
        counts["derived"] += 1
        return derived(self, *args, **kwargs)

    monkeypatch.setattr(state_cmds, "_derived_status", reading)
    monkeypatch.setattr(PlanGraph, "status", deriving)
    return counts


def _project(tmp_path: Path, count: int = 200) -> Path:
    """A repository with a plan above the plan cache's size (its content key is kept), every
    node's output written and verified."""
    root = tmp_path / "repo"
    (root / "out").mkdir(parents=True)
    nodes = "".join(
        f"- id: n{i}\n  title: {'x' * 40}\n  outputs: [out/n{i}.txt]\n  acceptance:\n"
        f"  - id: ac\n    verifier: {{type: artifact, path: out/n{i}.txt}}\n"
        for i in range(count)
    )
    edges = "".join(f"- {{from: n{i}, to: n{i + 1}, type: requires}}\n" for i in range(count - 1))
    (root / "plangraph.yaml").write_text(f"plangraph: 1\nplan: big\nnodes:\n{nodes}edges:\n{edges}")
    for i in range(count):
        (root / f"out/n{i}.txt").write_text(f"output {i}\n")
    git(root, "init", "-q", "-b", "main")
    assert plangraph_main(root, "verify").code == 0
    return root


def _status(root: Path, *args: str) -> Result:
    return plangraph_main(root, "status", *args)


def _fresh(root: Path, *args: str) -> Result:
    """The answer with every cache deleted."""
    import shutil

    shutil.rmtree(root / CACHE, ignore_errors=True)
    answer = _status(root, *args)
    _status(root, *args)  # kept again (the checkpoint written just now is read first)
    _status(root, *args)
    return answer


def _comment(root: Path, text: str = "# a comment\n") -> None:
    plan = root / "plangraph.yaml"
    plan.write_text(plan.read_text().replace("edges:\n", f"{text}edges:\n", 1))


def _steady(root: Path, *args: str) -> Result:
    """Status until its answer is kept (a checkpoint written just now is read first)."""
    for _ in range(3):
        answer = _status(root, *args)
    return answer


@pytest.mark.parametrize("fmt", ["text", "json", "markdown"])
def test_a_comment_edit_is_answered_from_the_answer_kept_for_the_same_meaning(
    tmp_path: Path, calls: dict[str, int], fmt: str
) -> None:
    root = _project(tmp_path)
    args = ("--format", fmt, "--check")
    first = _steady(root, *args)
    assert first.code == 0 and first.out
    _comment(root)
    before = dict(calls)
    edited = _status(root, *args)
    assert calls["read"] == before["read"] + 1  # the plan is read: its bytes are new
    assert calls["derived"] == before["derived"]  # but nothing is derived
    assert edited == first
    again = _status(root, *args)  # kept under the new bytes: a hit before reading the plan
    assert calls["read"] == before["read"] + 1 and again == first
    assert _fresh(root, *args) == first


def test_any_other_change_with_a_comment_edit_is_derived(
    tmp_path: Path, calls: dict[str, int]
) -> None:
    root = _project(tmp_path)
    args = ("--format", "json", "--check")

    def derived_again() -> dict[str, str]:
        before = calls["derived"]
        answer = _status(root, *args)
        assert calls["derived"] == before + 1
        assert answer == _fresh(root, *args)
        return {n["id"]: n["status"] for n in json.loads(answer.out)["nodes"]}

    _steady(root, *args)
    (root / "out/n7.txt").write_text("changed\n")  # a bound file
    _comment(root)
    assert derived_again()["n7"] == "stale"
    assert plangraph_main(root, "verify", "n7").code == 0  # a new event
    _comment(root, "# another\n")
    assert derived_again()["n7"] == "completed"
    # a change of meaning: the edge n6 -> n7 gone
    plan = root / "plangraph.yaml"
    plan.write_text(plan.read_text().replace("- {from: n6, to: n7, type: requires}\n", ""))
    derived_again()


def test_an_answer_that_printed_warnings_does_not_stand_for_other_bytes(
    tmp_path: Path, calls: dict[str, int]
) -> None:
    root = _project(tmp_path)
    _steady(root)
    path = root / CACHE / "status-text.json"
    record = read_tagged(path, _PERSON)
    assert isinstance(record, dict) and record["meaning"]
    record["answer"][1] = ["plangraph: warning: plangraph.yaml:3:1: a warning"]
    write_tagged(path, record, _PERSON)
    _comment(root)
    before = calls["derived"]
    answer = _status(root)
    assert calls["derived"] == before + 1 and "a warning" not in answer.err
    assert answer == _fresh(root)


@pytest.mark.parametrize(
    "damage",
    [
        lambda record: record.update(meaning="0" * 64),
        lambda record: record.update(meaning=None),
        lambda record: record.pop("meaning"),
        lambda record: record.update(answer=["text", "not a list", []]),
    ],
)
def test_a_kept_meaning_that_is_not_this_plans_is_a_miss(
    tmp_path: Path, calls: dict[str, int], damage: Callable[[dict[str, Any]], None]
) -> None:
    root = _project(tmp_path)
    _steady(root)
    path = root / CACHE / "status-text.json"
    record = read_tagged(path, _PERSON)
    assert isinstance(record, dict)
    damage(record)
    write_tagged(path, record, _PERSON)
    _comment(root)
    before = calls["derived"]
    answer = _status(root)
    assert calls["derived"] == before + 1 and answer.code == 0
    assert answer == _fresh(root)


def test_a_miss_over_files_reads_the_kept_answer_once(
    tmp_path: Path, calls: dict[str, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    """When only bound files changed, the look that found them is the only read of the kept
    answer: the plan file's bytes are the ones it was kept for, so the answer kept for the
    plan's meaning is not looked for again (after a comment edit, it is: above)."""
    root = _project(tmp_path)
    first = _steady(root, "--check")
    held: list[Any] = []
    real = kept._held

    def counting(*args: Any) -> Any:
        held.append(args)
        return real(*args)

    monkeypatch.setattr(kept, "_held", counting)
    # the miss that opens the plan (the one without: tests/test_plan_free_miss.py)
    monkeypatch.setattr(planfree, "plan_free_miss", lambda fmt: None)
    (root / "out/n7.txt").write_text("changed\n")
    before = calls["derived"]
    changed = _status(root, "--check")
    assert calls["derived"] == before + 1  # a miss, derived
    assert len(held) == 1  # the look alone
    assert changed != first and changed == _fresh(root, "--check")
