"""``impact`` takes the state ``status`` keeps for the same inputs instead of deriving it
again (counted: no derivation on a hit), and the kept state never decides: with it, without it
and after it is deleted, every fixture gets the same report, in both modes."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from cache_helpers import as_tester
from conftest import FIXTURES, git

import pytest_plangraph.judge.derive
import pytest_plangraph.judge.rederive
from pytest_plangraph.api import PlanGraph
from pytest_plangraph.judge.derive import derive, derive_nodes
from pytest_plangraph.survey import impact_now, impact_since

KEPT = Path(".plangraph/cache/derived.json")


@pytest.fixture(autouse=True)
def _actor(monkeypatch: pytest.MonkeyPatch) -> None:
    as_tester(monkeypatch)


def _counting(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Count the derivations the kept state's module makes (one on each miss: in full, or of
    the nodes whose reads changed); it imports ``derive`` when it needs one, so the function
    is counted where it is defined."""
    calls: list[int] = []

    def counted(*args: object, **kwargs: object) -> object:
        calls.append(1)
        return derive(*args, **kwargs)  # type: ignore[arg-type]

    def counted_nodes(*args: object, **kwargs: object) -> object:  # a miss that judges again
        calls.append(1)
        return derive_nodes(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(pytest_plangraph.judge.derive, "derive", counted)
    monkeypatch.setattr(pytest_plangraph.judge.rederive, "derive_nodes", counted_nodes)
    return calls


def _changed_project(tmp_path: Path, name: str) -> Path:
    """*name* verified in a git repository, then a file its evidence names changed."""
    root = tmp_path / name
    shutil.copytree(FIXTURES / name, root)
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "initial")
    with PlanGraph.open(root) as plangraph:
        plangraph.verify(by="tester")
        plangraph.status()  # the log's checkpoint is written: the next reads start from it
    output = root / ("out/t1.txt" if name == "seed-000" else "src/auth/user_schema.json")
    output.write_text(output.read_text() + "\n")  # still JSON: a new sha256
    return root


@pytest.mark.parametrize("name", ["seed-000", "jwt-login"])
def test_impact_answers_from_the_kept_state_and_the_same_without_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    root = _changed_project(tmp_path, name)
    calls = _counting(monkeypatch)
    with PlanGraph.open(root) as plangraph:
        first = plangraph.impact()
        assert len(calls) == 1  # a miss (the changed file): derived, and kept
        assert (root / KEPT).is_file()
        again = plangraph.impact()
        assert len(calls) == 1  # a hit: nothing derived
        assert again == first
        since = plangraph.impact("HEAD")
        assert len(calls) == 1  # the same state serves --since
        assert plangraph.status() is not None
        assert len(calls) == 1  # and status
        plain_now = impact_now(plangraph)  # deriving, no kept state in play
        plain_since = impact_since(plangraph, "HEAD")
        assert plain_now == first
        assert plain_since == since
        (root / KEPT).unlink()
        assert plangraph.impact() == first
        assert len(calls) == 2
    assert first.invalidated  # the change is seen: the reports compared hold something
