"""The session end carries the input digests over (the state before the run's to the records'
snapshot, the records' to the state after the run) for the nodes whose files did not change:
in a real ``pytest --plangraph`` session whose test rewrites a node's output while the run goes
on, the records' digests are those computed from nothing for the end of the run, and the state
after the run is the one derived from nothing (every digest computed again)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from plugin_helpers import latest, make_project

from pytest_plangraph.judge.inputs import input_digests
from pytest_plangraph.plugin import SESSION_KEY
from pytest_plangraph.plugin import session as session_module
from pytest_plangraph.plugin.recorded import state_after

PLAN = """\
plangraph: 1
plan: carried
nodes:
  - id: up
    outputs: [src/a.py]
    acceptance:
      - {id: ac, verifier: {type: test}}
  - id: down
    outputs: [src/b.py]
    acceptance:
      - {id: ac, verifier: {type: test}}
  - id: aside
    outputs: [src/c.py]
    acceptance:
      - {id: ac, verifier: {type: test}}
edges:
  - {from: up, to: down, type: requires}
"""

TESTS = """\
import pathlib
import pytest

@pytest.mark.criterion("up/ac")
def test_up():
    pathlib.Path("src/a.py").write_text("A = 2\\n")  # the node's output, while the run goes on

@pytest.mark.criterion("down/ac")
def test_down():
    assert True

@pytest.mark.criterion("aside/ac")
def test_aside():
    assert True
"""


class Probe:
    """Keeps what the session built (taken at the session's end: the session lets go of it
    when it closes) and what the state after the run was derived from."""

    def __init__(self) -> None:
        self.builder: Any = None
        self.before: Any = None
        self.calls: list[tuple[tuple[Any, ...], Any]] = []

    def state_after(self, *args: Any) -> Any:
        state = state_after(*args)
        self.calls.append((args, state))
        return state

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        run = session.config.stash[SESSION_KEY]
        self.builder, self.before = run.builder, run.before


def test_digests_carried_over_are_those_computed_from_nothing(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = {"src/b.py": "B = 1\n", "src/c.py": "C = 1\n"}
    root: Path = make_project(pytester, plan=PLAN, tests=TESTS, files=files)
    probe = Probe()
    monkeypatch.setattr(session_module, "state_after", probe.state_after)
    result = pytester.inline_run("--plangraph", "-q", "-p", "no:cacheprovider", plugins=[probe])
    passed, _, failed = result.listoutcomes()
    assert not failed and len(passed) == 3
    [(args, after)] = probe.calls
    plangraph, before_fold, end, evidence, stored, digests = args
    graph = plangraph.graph
    made = probe.builder.maker.digests
    assert digests is made
    assert made == input_digests(graph, end)
    before = probe.before.input_digests  # the output written moved its node and what is below
    assert [n for n in graph.nodes if made[n] != before[n]] == ["up", "down"]
    # the state after, every digest computed again, is the one the run derived
    again = state_after(plangraph, before_fold, end, evidence, stored)
    assert again == after
    assert after.input_digests == again.input_digests == made
    assert {n: s.status for n, s in after.nodes.items()} == {
        "up": "failed",
        "down": "blocked",
        "aside": "completed",
    }
    assert latest(root)["up/ac"].details["changed_during_run"] == ["src/a.py"]
