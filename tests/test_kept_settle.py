"""A kept ``status`` answer whose files were too young to trust by their ``lstat`` when it
was kept (written within the racy window before the status that kept it: the checkpoint
the status before wrote, the plan file, the outputs) trusts them once a later look found
them as kept and older than the window (``derived/look.py``'s ``settle``): a hit writes the
record again, a miss answered without the plan keeps them with its answer. Until then every
look hashes them again (the checkpoint holds the log's fold: about 4 MB at 5,000 nodes).
The answers stay those without any cache, and a file written within the window of the look
stays untrusted.

The racy window is the real rule's (``max(mtime, ctime) + window < the look's start``), set
wide for the statuses that keep the answer, so that their files are too young whatever the
machine's speed, then to nothing, so that a later look may trust them without a wait."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
from cache_helpers import as_tester
from cli_helpers import Result, plangraph_main
from conftest import ROOT

from pytest_plangraph.derived.kept import STATUS_PERSON
from pytest_plangraph.store.derived import read_tagged
from pytest_plangraph.vcs import watch

sys.path.insert(0, str(ROOT / "bench"))

import bench_status

ANSWER = Path(".plangraph/cache/status-text.json")
SIZE = 100  # with ten events a node: a log of 1,000 events, which gets a checkpoint
WIDE = 3_600_000_000_000  # an hour: every file written by this test is too young


@pytest.fixture(autouse=True)
def _environment(monkeypatch: pytest.MonkeyPatch) -> None:
    as_tester(monkeypatch)


def _without_caches(root: Path) -> Result:
    """``plangraph status`` with every cache deleted, in a copy of *root* beside it."""
    other = root.with_name("fresh")
    shutil.rmtree(other, ignore_errors=True)
    shutil.copytree(root, other, symlinks=True)
    shutil.rmtree(other / ".plangraph" / "cache")
    return plangraph_main(other, "status")


def _record(root: Path) -> dict[str, Any]:
    record = read_tagged(root / ANSWER, STATUS_PERSON)
    assert isinstance(record, dict)
    return record


def _trusted(record: dict[str, Any]) -> tuple[bool, bool, list[bool]]:
    """Whether the record trusts the plan file, the checkpoint and each watched file."""
    assert record["checkpoint"] is not None  # read from the checkpoint: it is watched
    return (
        record["plan"][2],
        record["checkpoint"][4],
        [entry[3] for entry in record["watch"]["files"]],
    )


def _kept_young(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The benchmark's repository at a small size, its answer kept by statuses that ran
    within the racy window of everything they read."""
    root = tmp_path / "repo"
    root.mkdir()
    bench_status.build(root, SIZE)
    monkeypatch.setattr(watch, "RACY_NS", WIDE)
    for _ in range(3):  # the checkpoint, the derived state, the kept answer
        assert plangraph_main(root, "status").code == 0
    plan, checkpoint, files = _trusted(_record(root))
    assert (plan, checkpoint) == (False, False) and not any(files)
    return root


def test_a_hit_trusts_the_files_kept_too_young_once_they_are_older_than_the_window(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, derived: list[str]
) -> None:
    root = _kept_young(tmp_path, monkeypatch)
    young = _record(root)
    # still within the window: a hit, and nothing is trusted yet
    before = len(derived)
    hit = plangraph_main(root, "status")
    assert len(derived) == before
    assert _record(root) == young
    # the window passed: the hit hashes them once more, and trusts them from then on
    monkeypatch.setattr(watch, "RACY_NS", 0)
    assert plangraph_main(root, "status") == hit
    assert len(derived) == before
    settled = _record(root)
    plan, checkpoint, files = _trusted(settled)
    assert plan and checkpoint and all(files)
    # the same record but for the entries of the files: their bytes are the ones kept
    assert settled["plan"][1] == young["plan"][1]
    assert settled["checkpoint"][3] == young["checkpoint"][3]
    assert [e[2] for e in settled["watch"]["files"]] == [e[2] for e in young["watch"]["files"]]
    rest = ("plan", "checkpoint", "watch")
    assert {k: v for k, v in settled.items() if k not in rest} == {
        k: v for k, v in young.items() if k not in rest
    }
    # and it is still the answer without any cache, a hit, and written no more
    assert plangraph_main(root, "status") == hit
    assert len(derived) == before
    assert _record(root) == settled
    assert _without_caches(root) == hit


def test_a_file_trusted_so_then_changed_is_a_miss_with_the_derived_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _kept_young(tmp_path, monkeypatch)
    monkeypatch.setattr(watch, "RACY_NS", 0)
    plangraph_main(root, "status")
    assert all(_trusted(_record(root))[2])
    settled = _record(root)
    (root / "out/n3.txt").write_text("changed\n")  # upstream of other nodes
    answer = plangraph_main(root, "status")
    assert answer == _without_caches(root)
    assert answer.code == settled["answer"][0] is None or answer.out != settled["answer"][0]
    changed = {e[0]: e[2] for e in _record(root)["watch"]["files"]}
    kept = {e[0]: e[2] for e in settled["watch"]["files"]}
    assert changed["out/n3.txt"] != kept["out/n3.txt"]
    assert {p: s for p, s in changed.items() if p != "out/n3.txt"} == {
        p: s for p, s in kept.items() if p != "out/n3.txt"
    }


def test_a_miss_without_the_plan_keeps_the_plan_and_checkpoint_trusted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _kept_young(tmp_path, monkeypatch)
    monkeypatch.setattr(watch, "RACY_NS", 0)
    (root / f"out/n{SIZE - 1}.txt").write_text("changed\n")  # a leaf: judged without the plan
    answer = plangraph_main(root, "status")
    plan, checkpoint, files = _trusted(_record(root))
    assert plan and checkpoint
    assert all(files)  # the changed file hashed by the miss, the others by the look
    assert answer == _without_caches(root)


def test_a_look_within_the_window_trusts_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _kept_young(tmp_path, monkeypatch)
    young = _record(root)
    (root / f"out/n{SIZE - 1}.txt").write_text("changed\n")
    plangraph_main(root, "status")
    plan, checkpoint, _ = _trusted(_record(root))
    assert (plan, checkpoint) == (False, False)
    assert _record(root)["checkpoint"] == young["checkpoint"]
