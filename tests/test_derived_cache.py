"""The derived-state cache: ``status`` answers an unchanged repository from the state kept for
the same inputs, and the cache never decides — on every fixture, the answer with the cache
(cold, warm, deleted) is the answer of a derivation without it; a changed file, a new event or a
plan edit changes the answer; a store edited by hand still stops the command on a hit."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from cache_helpers import as_tester, fixture_projects
from cli_helpers import plangraph_main
from conftest import git
from repo_helpers import edit_store

from pytest_plangraph.api import PlanGraph
from pytest_plangraph.errors import PlangraphError, StoreTamperedError
from pytest_plangraph.judge.derive import derive
from pytest_plangraph.judge.statejson import state_from_json, state_to_json
from pytest_plangraph.judge.states import PlanState
from pytest_plangraph.store.derived import NAME, keep_derived, read_derived

CACHE = Path(".plangraph/cache")


@pytest.fixture(autouse=True)
def _actor(monkeypatch: pytest.MonkeyPatch) -> None:
    as_tester(monkeypatch)


def _projects(tmp_path: Path) -> Iterator[tuple[str, Path, Path]]:
    """Every fixture project and plan: (name, root, plan file)."""
    return fixture_projects(tmp_path)


def _without_cache(root: Path, plan: Path) -> PlanState:
    """The state derived with no kept state in play."""
    with PlanGraph.open(root, plan=plan) as plangraph:
        fold = plangraph.fold()
        return derive(plangraph.graph, fold, plangraph.snapshot(fold))


def _status(root: Path, plan: Path) -> PlanState:
    with PlanGraph.open(root, plan=plan) as graph:
        return graph.status()


def test_every_fixture_gets_the_same_answer_with_the_cache_and_without(tmp_path: Path) -> None:
    checked = 0
    for name, root, plan in _projects(tmp_path):
        git(root, "init", "-q", "-b", "main")
        git(root, "add", "-A")
        git(root, "commit", "-q", "-m", "initial")
        try:
            with PlanGraph.open(root, plan=plan) as graph:
                graph.verify()
        except PlangraphError:  # a plan lint rejects: no status either way
            with pytest.raises(PlangraphError):
                _status(root, plan)
            continue
        kept = root / CACHE / NAME
        kept.unlink(missing_ok=True)
        cold = _status(root, plan)
        assert kept.is_file(), name
        warm = _status(root, plan)
        assert warm == cold == _without_cache(root, plan), name
        kept.unlink()
        assert _status(root, plan) == cold, name
        # the CLI's answer, kept state or not
        first = plangraph_main(root, "status", "--plan", str(plan), "--format", "json")
        kept.unlink()
        again = plangraph_main(root, "status", "--plan", str(plan), "--format", "json")
        assert first.out == again.out and first.code == again.code, name
        checked += 1
    assert checked >= 3  # jwt-login, seed-000 and the clean lint plan at least


def test_a_round_trip_through_json_gives_an_equal_state(project: Callable[[str], Path]) -> None:
    root = project("jwt-login")
    assert plangraph_main(root, "verify").code == 0
    state = _without_cache(root, root / "plangraph.yaml")
    back = state_from_json(json.loads(json.dumps(state_to_json(state))))
    assert back == state
    assert [n.to_json() for n in back.nodes.values()] == [n.to_json() for n in state.nodes.values()]


def test_changed_inputs_change_the_answer(project: Callable[[str], Path]) -> None:
    root = project("seed-000")
    plan = root / "plangraph.yaml"
    assert plangraph_main(root, "verify").code == 0
    before = _status(root, plan)
    assert before.nodes["T5"].status == "completed"
    # a file changed: the kept state is not the answer
    (root / "out/t5.txt").write_text("changed\n")
    after = _status(root, plan)
    assert after.nodes["T5"].status == "stale"
    assert after == _without_cache(root, plan)
    # a new event
    assert plangraph_main(root, "verify", "T5").code == 0
    assert _status(root, plan).nodes["T5"].status == "completed"
    # the plan edited
    text = plan.read_text()
    plan.write_text(text + "\n# a comment changes the bytes, not the plan\n")
    assert _status(root, plan) == _without_cache(root, plan)
    # a PLANGRAPH_* setting is part of the key
    key = json.loads((root / CACHE / NAME).read_bytes().partition(b"\n")[2])["key"]
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PLANGRAPH_SOME_SETTING", "on")
        assert _status(root, plan) == _without_cache(root, plan)
    assert json.loads((root / CACHE / NAME).read_bytes().partition(b"\n")[2])["key"] != key


def test_a_kept_state_is_used_only_when_this_user_wrote_it(project: Callable[[str], Path]) -> None:
    root = project("jwt-login")
    plan = root / "plangraph.yaml"
    assert plangraph_main(root, "verify").code == 0
    right = _status(root, plan)
    kept = root / CACHE / NAME
    raw = kept.read_bytes()
    tag, _, body = raw.partition(b"\n")
    data = json.loads(body)
    key = data["key"]
    assert read_derived(root / CACHE, key) == data["data"]
    # a state claiming every node completed, planted without this user's key: not believed
    forged = json.loads(json.dumps(data))
    for node in forged["data"]["nodes"]:
        node[2] = "completed"
    kept.write_bytes(tag + b"\n" + json.dumps(forged).encode())
    assert read_derived(root / CACHE, key) is None
    assert _status(root, plan) == right
    # what this user's plangraph kept under the key is the answer (the hit is used)
    keep_derived(root / CACHE, key, forged["data"])
    assert {n.status for n in _status(root, plan).nodes.values()} == {"completed"}
    # damaged data under the right key and tag: derived again, and kept anew
    keep_derived(root / CACHE, key, {"nodes": "not a state"})
    assert _status(root, plan) == right
    assert read_derived(root / CACHE, key) == data["data"]
    # with keys configured no kept state stands for a derivation, and none is written
    kept.unlink()
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PLANGRAPH_SIGNING_KEY", "sesame")
        _status(root, plan)
    assert not kept.exists()


def test_a_store_edited_by_hand_stops_status_on_a_hit(project: Callable[[str], Path]) -> None:
    root = project("jwt-login")
    plan = root / "plangraph.yaml"
    assert plangraph_main(root, "verify").code == 0
    _status(root, plan)
    _status(root, plan)  # kept
    edit_store(
        root / ".plangraph/store.db",
        "UPDATE events SET by_ = 'someone else' WHERE seq = (SELECT max(seq) FROM events)",
    )
    with pytest.raises(StoreTamperedError):
        _status(root, plan)
    result = plangraph_main(root, "status")
    assert result.code == 2
    assert "Traceback" not in result.err


def test_a_fifo_in_place_of_the_kept_state_is_a_miss_not_a_wait(
    project: Callable[[str], Path],
) -> None:
    root = project("jwt-login")
    plan = root / "plangraph.yaml"
    assert plangraph_main(root, "verify").code == 0
    right = _status(root, plan)
    kept = root / CACHE / NAME
    kept.unlink()
    os.mkfifo(kept)
    assert read_derived(root / CACHE, "any") is None  # returns at once
    assert _status(root, plan) == right


def test_every_fixture_answers_a_file_change_as_without_any_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The status after bound files changed (the plan-free miss where the plan allows it,
    :mod:`pytest_plangraph.derived.planfree`, else the miss that opens the plan) is the
    answer with every cache deleted, on every fixture."""
    from pytest_plangraph.derived import planfree
    from pytest_plangraph.store.derived import read_tagged

    judged: list[object] = []
    real = planfree._judge

    def judging(*args: object) -> object:
        judged.append(real(*args))  # type: ignore[arg-type]
        return judged[-1]

    monkeypatch.setattr(planfree, "_judge", judging)
    compared = 0
    for name, root, plan in _projects(tmp_path / "projects"):
        git(root, "init", "-q", "-b", "main")
        git(root, "add", "-A")
        git(root, "commit", "-q", "-m", "initial")
        options = ["--plan", str(plan)]
        if plangraph_main(root, "verify", *options).code != 0:
            continue  # a plan lint rejects
        for _ in range(3):  # the checkpoint, the derived state, the kept answer
            plangraph_main(root, "status", "--check", *options)
        kept = read_tagged(root / CACHE / NAME)
        files = [p for p, _ in kept["observed"]["files"]][:3] if isinstance(kept, dict) else []
        for path in files:
            target = root / path
            if target.is_dir():
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(f"changed {path}\n")
            answer = plangraph_main(root, "status", "--check", *options)
            fresh = tmp_path / "fresh"
            shutil.rmtree(fresh, ignore_errors=True)
            shutil.copytree(root, fresh)
            shutil.rmtree(fresh / CACHE)
            assert answer == plangraph_main(
                fresh, "status", "--check", "--plan", str(fresh / plan.name)
            ), (name, path)
            compared += 1
    assert compared >= 6
    assert any(found is not None for found in judged)  # the plan-free miss answered some
