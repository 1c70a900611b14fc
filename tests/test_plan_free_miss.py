"""``plangraph status`` after files changed, answered without opening the plan
(:mod:`pytest_plangraph.derived.planfree`): on the benchmark's kind of repository (a DAG of
artifact and approval criteria with evidence, approvals and claims), every sequence of file
changes gives the answer a status with every cache deleted gives, the path is taken for
them (the plan is not opened), and what it cannot judge without the plan falls back."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
from cache_helpers import as_tester
from cli_helpers import plangraph_main, status_without_caches
from conftest import ROOT
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_plangraph.derived import planfree

sys.path.insert(0, str(ROOT / "bench"))

import bench_status

CACHE = Path(".plangraph/cache")
SIZE = 30


@pytest.fixture(autouse=True)
def _environment(monkeypatch: pytest.MonkeyPatch) -> None:
    as_tester(monkeypatch)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The benchmark's repository at a small size, its status kept."""
    root = tmp_path_factory.mktemp("built") / "repo"
    root.mkdir()
    bench_status.build(root, SIZE, per_node=3)
    for _ in range(3):  # the checkpoint, the derived state, the kept answer
        plangraph_main(root, "status")
    return root


def _copy(built: Path, tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    shutil.copytree(built, root, symlinks=True)
    # the kept answer names where it ran: keep it for the copy
    plangraph_main(root, "status")
    plangraph_main(root, "status")
    return root


CHANGES = st.lists(
    st.tuples(
        st.integers(0, SIZE - 1),
        st.sampled_from(["edit", "delete", "restore", "dir", "link", "hidden"]),
    ),
    min_size=1,
    max_size=4,
)


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(rounds=st.lists(CHANGES, min_size=1, max_size=3))
def test_every_sequence_of_file_changes_gives_the_answer_without_any_cache(
    built: Path, tmp_path_factory: pytest.TempPathFactory, rounds: list[list[tuple[int, str]]]
) -> None:
    tmp_path = tmp_path_factory.mktemp("round")
    root = _copy(built, tmp_path)
    found: list[Any] = []
    real = planfree._judge

    def judging(*args: Any) -> Any:
        result = real(*args)
        found.append(result)
        return result

    planfree._judge = judging  # type: ignore[assignment]
    try:
        for changes in rounds:
            for node, change in changes:
                path = root / f"out/n{node}.txt"
                if change == "hidden" and path.is_file() and not path.is_symlink():
                    _hidden_edit(path)
                    continue
                if path.is_dir() and not path.is_symlink():
                    shutil.rmtree(path)
                elif change != "dir":
                    path.unlink(missing_ok=True)
                if change == "link":  # another node's output, through a link
                    path.symlink_to(f"n{(node + 1) % SIZE}.txt")
                elif change == "edit":
                    path.write_text(f"edited {node} {len(found)}\n")
                elif change == "restore":
                    path.write_text(f"output {node}\n")
                elif change == "dir":
                    path.unlink(missing_ok=True)
                    path.mkdir()
            answer = plangraph_main(root, "status", "--check")
            assert answer == status_without_caches(root, tmp_path)
            assert plangraph_main(root, "status", "--check") == answer  # kept as given
    finally:
        planfree._judge = real  # type: ignore[assignment]


def _hidden_edit(path: Path) -> None:
    """Other bytes of the same size, the file's mtime set back to what it was."""
    was = path.stat()
    data = path.read_bytes()
    path.write_bytes(bytes(b ^ 1 for b in data[:1]) + data[1:])
    os.utime(path, ns=(was.st_atime_ns, was.st_mtime_ns))


def test_a_leaf_change_is_judged_without_opening_the_plan(
    built: Path, tmp_path: Path, taken: list[Any]
) -> None:
    root = _copy(built, tmp_path)
    taken.clear()
    (root / f"out/n{SIZE - 1}.txt").write_text("changed\n")
    answer = plangraph_main(root, "status", "--check")
    assert "opened" not in taken  # the plan was not opened
    assert len(taken) == 1 and taken[0] is not None
    assert taken[0].states.keys() == {f"n{SIZE - 1}"}  # one node judged again
    assert f"n{SIZE - 1}" in answer.out and "changed since the evidence" in answer.out
    assert answer == status_without_caches(root, tmp_path)
    # a change upstream of most of the plan is a derivation from the whole plan
    taken.clear()
    (root / "out/n2.txt").write_text("changed\n")
    answer = plangraph_main(root, "status", "--check")
    assert taken[-1] == "opened"
    assert answer == status_without_caches(root, tmp_path)


def test_a_file_that_became_a_folder_falls_back(
    built: Path, tmp_path: Path, taken: list[Any]
) -> None:
    root = _copy(built, tmp_path)
    taken.clear()
    (root / "out/n3.txt").unlink()
    (root / "out/n3.txt").mkdir()
    answer = plangraph_main(root, "status", "--check")
    assert "opened" in taken  # today's path
    assert answer == status_without_caches(root, tmp_path)


def test_a_kept_state_for_other_files_falls_back(
    built: Path, tmp_path: Path, taken: list[Any]
) -> None:
    from pytest_plangraph.store.derived import NAME, read_tagged, write_tagged

    root = _copy(built, tmp_path)
    kept = read_tagged(root / CACHE / NAME)
    kept["observed"]["files"][0][1] = "0" * 64  # not the files the kept answer watched
    write_tagged(root / CACHE / NAME, kept)
    (root / f"out/n{SIZE - 1}.txt").write_text("changed\n")
    taken.clear()
    answer = plangraph_main(root, "status", "--check")
    assert "opened" in taken
    assert answer == status_without_caches(root, tmp_path)


def test_an_event_recorded_since_falls_back(built: Path, tmp_path: Path, taken: list[Any]) -> None:
    root = _copy(built, tmp_path)
    assert plangraph_main(root, "approve", "n4/ac-ok", "--by", "tester").code == 0
    (root / "out/n5.txt").write_text("changed\n")
    taken.clear()
    answer = plangraph_main(root, "status", "--check")
    assert taken == ["opened"]  # a new head: the kept answer missed on the store, no look
    assert answer == status_without_caches(root, tmp_path)


def test_a_miss_keeps_the_derived_state_and_writes_only_the_judged_nodes(
    built: Path, tmp_path: Path, taken: list[Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    from pytest_plangraph.cli import state_cmds
    from pytest_plangraph.cli import tables as kept_tables
    from pytest_plangraph.store.derived import FREE, FREE_PERSON, NAME, read_tagged

    tables: list[str | None] = []  # the kept table patched by the judged node's line

    def patching(*args: Any) -> str | None:
        tables.append(kept_tables.patched(*args))
        return tables[-1]

    monkeypatch.setattr(state_cmds, "patched", patching)
    root = _copy(built, tmp_path)
    state = (root / CACHE / NAME).read_bytes()
    leaf = root / f"out/n{SIZE - 1}.txt"
    for round_ in range(3):  # each miss judged from the kept state and the overlay
        leaf.write_text(f"changed {round_}\n")
        taken.clear()
        answer = plangraph_main(root, "status", "--check")
        assert "opened" not in taken and taken[0] is not None
        assert answer == status_without_caches(root, tmp_path)
        assert (root / CACHE / NAME).read_bytes() == state  # not written again
        free = read_tagged(root / CACHE / FREE, FREE_PERSON)
        assert free["rows"].keys() == free["reads"].keys() == {f"n{SIZE - 1}"}
        assert free["files"].keys() == {f"out/n{SIZE - 1}.txt"}
        assert tables[-1] is not None  # the same widths: the kept table patched
    assert plangraph_main(root, "status", "--check") == answer  # the hit, kept as given


@pytest.mark.parametrize("damage", ["deleted", "garbage", "another state", "other files"])
def test_an_overlay_deleted_damaged_or_not_this_states_falls_back(
    built: Path, tmp_path: Path, taken: list[Any], damage: str
) -> None:
    from pytest_plangraph.store.derived import FREE, FREE_PERSON, read_tagged, write_tagged

    root = _copy(built, tmp_path)
    leaf = root / f"out/n{SIZE - 1}.txt"
    leaf.write_text("changed once\n")
    assert plangraph_main(root, "status", "--check") == status_without_caches(root, tmp_path)
    overlay = root / CACHE / FREE
    free = read_tagged(overlay, FREE_PERSON)
    if damage == "deleted":
        overlay.unlink()
    elif damage == "garbage":
        overlay.write_bytes(overlay.read_bytes()[:-9] + b"damaged}")
    elif damage == "another state":
        write_tagged(overlay, {**free, "base": "0" * 32}, FREE_PERSON)
    else:  # a path the kept state never read
        write_tagged(overlay, {**free, "files": {"out/elsewhere.txt": None}}, FREE_PERSON)
    leaf.write_text("changed twice\n")
    taken.clear()
    answer = plangraph_main(root, "status", "--check")
    assert "opened" in taken  # the kept state alone is for other files: today's path
    assert answer == status_without_caches(root, tmp_path)
    assert plangraph_main(root, "status", "--check") == answer
