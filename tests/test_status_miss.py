"""``plangraph status`` when the kept answer misses because files changed: the files its watch
found as kept by their ``lstat`` are taken from it (neither hashed nor looked up again), the
new watch keeps their entries, the kept node states are decoded without the value classes'
generic ``__init__``, and none of it changes an answer: each one is the answer with every
cache deleted, a file changed after the look is seen by the next status, and torn or
garbage cache files are a miss, never a traceback."""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import pytest
from cache_helpers import as_tester
from cli_helpers import Result, plangraph_main

from pytest_plangraph.derived import kept, planfree
from pytest_plangraph.judge.statejson import node_from_json, node_to_json
from pytest_plangraph.judge.states import CriterionState, NodeState, Reason
from pytest_plangraph.store.derived import NAME, read_tagged, write_tagged
from pytest_plangraph.vcs.workspace import RACY_NS, Workspace

CACHE = Path(".plangraph/cache")
_PERSON = b"plangraph-status"


@pytest.fixture(autouse=True)
def _environment(monkeypatch: pytest.MonkeyPatch) -> None:
    as_tester(monkeypatch)
    # the miss that opens the plan (the one without: tests/test_plan_free_miss.py)
    monkeypatch.setattr(planfree, "plan_free_miss", lambda fmt: None)


@pytest.fixture
def hashed(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every path a snapshot asked the workspace to hash."""
    asked: list[str] = []
    real = Workspace.hashes

    def recording(self: Workspace, paths: Iterable[str], *args: Any, **kwargs: Any) -> Any:
        paths = list(paths)
        asked.extend(paths)
        return real(self, paths, *args, **kwargs)

    monkeypatch.setattr(Workspace, "hashes", recording)
    return asked


def _status(root: Path, *args: str) -> Result:
    return plangraph_main(root, "status", *args)


def _fresh(root: Path, *args: str) -> Result:
    """The answer with every cache deleted."""
    shutil.rmtree(root / CACHE, ignore_errors=True)
    return _status(root, *args)


def _aged(root: Path) -> None:
    """Every file and folder of the project ten seconds old: old enough for a watch to trust
    its ``lstat`` (a file written within the racy window of a look is hashed again)."""
    old = os.stat(root).st_mtime_ns - 10**10
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d not in (".git", ".plangraph")]
        for name in [*files, *dirs, "."]:
            os.utime(os.path.join(folder, name), ns=(old, old))


def _watch(root: Path) -> dict[str, list[Any]]:
    record = read_tagged(root / CACHE / "status-text.json", _PERSON)
    assert isinstance(record, dict)
    return {entry[0]: entry for entry in record["watch"]["files"]}


def _kept_answer(project: Callable[[str], Path], *, trusted: bool = False) -> Path:
    """seed-000 verified, with its status kept; with *trusted*, looked at late enough for
    its watch to trust every file's ``lstat`` (their ctimes out of the racy window)."""
    root = project("seed-000")
    assert plangraph_main(root, "verify").code == 0
    _aged(root)
    if trusted:
        time.sleep(RACY_NS / 1e9 + 0.1)
    _status(root, "--check")
    _status(root, "--check")  # reads the checkpoint, if one was written just now
    return root


def test_a_miss_takes_the_files_found_as_kept_and_keeps_their_entries(
    project: Callable[[str], Path], derived: list[str], hashed: list[str]
) -> None:
    root = _kept_answer(project, trusted=True)
    before = _watch(root)
    assert len(before) > 3 and all(entry[3] for entry in before.values())  # all trusted
    (root / "out/t5.txt").write_text("changed\n")
    hashed.clear()
    calls = len(derived)
    answer = _status(root, "--check")
    assert len(derived) == calls + 1  # a miss
    assert hashed == ["out/t5.txt"]  # the other files were found as kept: not looked up
    after = _watch(root)
    assert after.keys() == before.keys()
    assert after["out/t5.txt"][2] != before["out/t5.txt"][2]
    assert {p: e for p, e in after.items() if p != "out/t5.txt"} == {
        p: e for p, e in before.items() if p != "out/t5.txt"
    }
    assert _status(root, "--check") == answer
    assert len(derived) == calls + 1  # the new watch holds: a hit
    assert "T5" in answer.out and "stale" in answer.out
    assert answer == _fresh(root, "--check")


def test_a_file_changed_after_the_look_is_seen_by_the_next_status(
    project: Callable[[str], Path], derived: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _kept_answer(project, trusted=True)
    (root / "out/t5.txt").write_text("changed\n")
    real = kept.known_files

    def then_edited(store_path: Path, name: str) -> Any:
        found = real(store_path, name)
        assert found is not None and "out/t1.txt" in found  # found as kept by the look
        (root / "out/t1.txt").write_text("edited after the look\n")
        return found

    monkeypatch.setattr(kept, "known_files", then_edited)
    _status(root, "--check")
    monkeypatch.setattr(kept, "known_files", real)
    calls = len(derived)
    answer = _status(root, "--check")
    assert len(derived) == calls + 1  # the entry kept for t1 is the one looked at: a miss
    assert answer == _fresh(root, "--check")
    assert "T1" in answer.out


@pytest.mark.parametrize("name", [NAME, "status-text.json"])
@pytest.mark.parametrize("damage", ["torn", "garbage", "empty"])
def test_torn_or_garbage_cache_files_are_a_miss(
    project: Callable[[str], Path], name: str, damage: str
) -> None:
    root = _kept_answer(project)
    (root / "out/t5.txt").write_text("changed\n")
    path = root / CACHE / name
    raw = path.read_bytes()
    path.write_bytes(
        {"torn": raw[: len(raw) // 2], "garbage": os.urandom(len(raw)), "empty": b""}[damage]
    )
    answer = _status(root, "--check")
    assert "Traceback" not in answer.err
    assert answer == _fresh(root, "--check")


@pytest.mark.parametrize(
    "row",
    [
        ["T5", "step", "done", [], [], False, 0],  # not a status
        ["T5", "step", "stale", [], [["ac", True, "fine", None, []]], False, 0],
        ["T5", "step", "stale", [["CODE", "why", []]], [], False, 0],  # data not an object
        ["T5", "step", "stale", [], [], False],
    ],
)
def test_a_kept_state_with_a_damaged_row_is_derived_again(
    project: Callable[[str], Path], row: list[Any]
) -> None:
    root = _kept_answer(project)
    with pytest.raises((ValueError, TypeError)):
        node_from_json(row)
    path = root / CACHE / NAME
    record = read_tagged(path)
    assert isinstance(record, dict)
    rows = [row if r[0] == "T5" else r for r in record["data"]["nodes"]]
    write_tagged(path, {**record, "data": {**record["data"], "nodes": rows}})
    (root / "out/t1.txt").write_text("changed\n")  # a miss that reuses the kept state
    answer = _status(root, "--format", "json", "--check")
    assert "Traceback" not in answer.err
    assert answer == _fresh(root, "--format", "json", "--check")


def test_a_decoded_row_is_the_state_the_generic_constructor_makes() -> None:
    reason = Reason("STALE", "out/a changed", {"criterion": "ac", "paths": ["out/a"]})
    state = NodeState(
        "n1",
        "step",
        "stale",
        (reason,),
        (
            CriterionState("ac", True, "stale", "e1", (reason,)),
            CriterionState("ok", False, "valid", None),
        ),
        claimed=True,
        failed_claims=2,
    )
    decoded = node_from_json(node_to_json(state))
    assert decoded == state and repr(decoded) == repr(state)
    assert decoded.criteria[0].reasons[0].to_json() == reason.to_json()
    with pytest.raises(AttributeError):
        decoded.status = "completed"  # type: ignore[misc]  # still frozen


def test_a_look_is_not_taken_by_a_later_command(
    project: Callable[[str], Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _kept_answer(project, trusted=True)
    store = root / ".plangraph/store.db"
    (root / "out/t5.txt").write_text("changed\n")
    monkeypatch.chdir(root)
    assert kept.kept_status(None, None, None, "text") is None
    assert kept.known_files(store, "status-text") is not None  # what the look found
    monkeypatch.setenv("PLANGRAPH_SIGNING_KEY", "a-key-of-thirty-two-bytes-or-more-0123")
    assert kept.kept_status(None, None, None, "text") is None
    assert kept.known_files(store, "status-text") is None  # forgotten by the next look


@pytest.fixture
def checked(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """One entry per check of a plan by lint, and per load of the verifier registry."""
    from pytest_plangraph import repository
    from pytest_plangraph.hooks import manager

    calls: list[str] = []
    real_check, real_registry = repository.Repository.plan_problems, manager.get_registry

    def check(self: repository.Repository) -> Any:
        calls.append("lint")
        return real_check(self)

    def registry(*args: Any, **kwargs: Any) -> Any:
        calls.append("registry")
        return real_registry(*args, **kwargs)

    monkeypatch.setattr(repository.Repository, "plan_problems", check)
    monkeypatch.setattr(manager, "get_registry", registry)
    return calls


def test_a_miss_over_files_lint_does_not_read_checks_no_plan_again(
    project: Callable[[str], Path], derived: list[str], checked: list[str]
) -> None:
    root = _kept_answer(project, trusted=True)
    (root / "out/t5.txt").write_text("changed\n")
    checked.clear()
    calls = len(derived)
    answer = _status(root, "--check")
    assert len(derived) == calls + 1 and checked == []  # derived, with no lint, no plug-ins
    assert answer == _fresh(root, "--check")
    assert "lint" in checked  # the fresh one checks


def test_a_file_become_a_symlink_or_a_folder_is_checked_by_lint(
    project: Callable[[str], Path], checked: list[str]
) -> None:
    root = _kept_answer(project, trusted=True)
    target = root / "out/t5.txt"
    target.unlink()
    target.symlink_to(root / "out/t1.txt")
    checked.clear()
    answer = _status(root, "--check")
    assert "lint" in checked
    assert answer == _fresh(root, "--check")
    _aged(root)
    time.sleep(RACY_NS / 1e9 + 0.1)
    _status(root, "--check")
    target.unlink()
    target.mkdir()
    checked.clear()
    answer = _status(root, "--check")
    assert "lint" in checked
    assert answer == _fresh(root, "--check")


def test_a_plan_whose_lint_reads_files_is_checked_on_every_miss(
    project: Callable[[str], Path], checked: list[str]
) -> None:
    root = project("jwt-login")
    assert plangraph_main(root, "verify").code == 0
    _aged(root)
    time.sleep(RACY_NS / 1e9 + 0.1)
    _status(root, "--check")
    first = _status(root, "--check")
    assert "VERIFIER_CONFIG" not in first.err
    (root / "src/auth/user_schema.json").write_text('{"type": 12}\n')  # no schema now
    checked.clear()
    answer = _status(root, "--check")
    assert "lint" in checked
    assert "VERIFIER_CONFIG" in answer.err  # the warning of the check made now
    assert answer == _fresh(root, "--check")


def test_a_package_installed_after_the_look_is_a_miss_next_time(
    project: Callable[[str], Path], derived: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The answer of a miss over files is kept with the installation its look saw (the plan's
    check it took as kept was of that one)."""
    root = _kept_answer(project, trusted=True)
    (root / "out/t5.txt").write_text("changed\n")
    real_known, real_installed = kept.known_files, kept._installed
    installed_now = [*real_installed(), ["site-packages", 1, 2]]

    def then_installed(store_path: Path, name: str) -> Any:
        monkeypatch.setattr(kept, "_installed", lambda: installed_now)  # a package installed
        return real_known(store_path, name)

    monkeypatch.setattr(kept, "known_files", then_installed)
    _status(root, "--check")
    monkeypatch.setattr(kept, "known_files", real_known)
    calls = len(derived)
    _status(root, "--check")
    assert len(derived) == calls + 1  # kept with the installation the look saw: a miss
    _status(root, "--check")
    assert len(derived) == calls + 1  # and kept again with this one
