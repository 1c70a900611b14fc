"""A ``pytest --plangraph`` run leaves nothing of the package in a reference cycle: the plan, the
snapshots, the record builder and the records are freed by their reference counts when the
session closes, not found by pytest's garbage collections at ``pytest_unconfigure``.

Counted in a real run in a subprocess, with the cyclic collector off from the first plug-in
pytest loads: every cycle the run made is still there at the end, where one full collection
finds it (``gc.DEBUG_SAVEALL`` keeps what it finds, to be named)."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import pytest
from plugin_helpers import break_login, evidence, jwt_project, make_project

WATCH = """
import gc
import json
import os

import pytest

gc.disable()  # nothing the run makes is collected before its end: every cycle is kept
gc.set_debug(gc.DEBUG_SAVEALL)  # and what the collections at the end find is kept, to be named


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config):  # after the plug-ins' own (plangraph closed its session)
    gc.collect()
    gc.set_debug(0)
    from _pytest.nodes import Node

    found = {"ours": [], "nodes": 0, "all": len(gc.garbage)}
    for value in gc.garbage:
        kind = type(value)
        if kind.__module__.startswith("pytest_plangraph"):
            if isinstance(value, Node):  # a collector or item: cyclic by pytest's design
                found["nodes"] += 1
            else:
                found["ours"].append(f"{kind.__module__}.{kind.__qualname__}")
    gc.garbage.clear()
    with open(os.environ["GARBAGE_FOUND"], "w", encoding="utf-8") as out:
        json.dump(found, out)
"""
"""A plug-in loaded with ``-p``: what a collection at the run's end finds of the package."""


@pytest.fixture
def watch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder beside the project with the watch plug-in in it."""
    return tmp_path_factory.mktemp("watch")


def _garbage(pytester: pytest.Pytester, watch: Path, *args: str) -> dict[str, Any]:
    """Run ``pytest --plangraph *args`` in a subprocess with the watch: what it found."""
    (watch / "garbage_watch.py").write_text(textwrap.dedent(WATCH), encoding="utf-8")
    found = watch / "garbage.json"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("GARBAGE_FOUND", str(found))
        patch.setenv("PYTHONPATH", str(watch))
        pytester.runpytest_subprocess("-p", "garbage_watch", "--plangraph", *args)
    result: dict[str, Any] = json.loads(found.read_text(encoding="utf-8"))
    return result


def test_a_run_frees_its_plan_and_records_without_the_collector(
    pytester: pytest.Pytester, watch: Path
) -> None:
    root = jwt_project(pytester)
    found = _garbage(pytester, watch)
    assert len(evidence(root)) == 3  # the run recorded (two tests' criteria and the schema)
    assert found["all"]  # the collection found pytest's own cycles: the watch saw them
    assert found["ours"] == []


def test_a_failing_gated_run_frees_them_too(pytester: pytest.Pytester, watch: Path) -> None:
    root = jwt_project(pytester)
    break_login(root)
    found = _garbage(
        pytester, watch, "--plangraph-gate", "--plangraph-require", "step-token-endpoint"
    )
    outcomes = {record.ref: record.outcome for record in evidence(root)}
    assert "failed" in outcomes.values()
    assert found["ours"] == []


def test_a_run_with_artifacts_and_unmapped_tests_frees_them(
    pytester: pytest.Pytester, watch: Path
) -> None:
    root = make_project(pytester)
    found = _garbage(pytester, watch)
    assert {record.ref for record in evidence(root)} >= {"step-a/ac-marked", "step-b/ac-exists"}
    assert found["nodes"]  # the plan file's collector and its verifier item, pytest's cycles
    assert found["ours"] == []


CYCLE = """
from pathlib import Path

from pytest_plangraph.plugin.ended import EndValues


class Builder:  # holds its end values, which call back a method of it: a cycle
    def __init__(self):
        self.ends = EndValues(Path("."), self.hash)

    def hash(self, path):
        return None


def pytest_configure(config):
    Builder()
"""
"""A plug-in that makes the cycle a record builder once made with its end values."""


def test_the_watch_sees_a_cycle_of_the_package(pytester: pytest.Pytester, watch: Path) -> None:
    """The watch finds what it looks for: a cycle of the package's objects made in the run,
    here by a plug-in that ties end values to their owner as the record builder once did."""
    jwt_project(pytester)
    (watch / "make_cycle.py").write_text(CYCLE, encoding="utf-8")
    found = _garbage(pytester, watch, "-p", "make_cycle")
    assert "pytest_plangraph.plugin.ended.EndValues" in found["ours"]
