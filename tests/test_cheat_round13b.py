"""Cheats tried against the session end of ``pytest --plangraph``: input digests carried over
from the state before the run, subjects a node's records share, quoting files hashed once."""

from __future__ import annotations

from typing import Any

import pytest
from plugin_helpers import evidence, make_project

from pytest_plangraph.api import PlanGraph
from pytest_plangraph.judge.inputs import input_digests
from pytest_plangraph.plugin import session as session_module
from pytest_plangraph.plugin.recorded import state_after

PLAN = """\
plangraph: 1
plan: carried
nodes:
  - id: up
    outputs: [data/up.txt]
    acceptance:
      - {id: ac, verifier: {type: test}}
      - {id: bc, verifier: {type: test}}
  - id: eat
    outputs: [data/eat.txt]
    acceptance:
      - {id: ac, verifier: {type: test}}
  - id: art
    acceptance:
      - {id: there, verifier: {type: artifact, path: data/art.txt}}
      - {id: ac, verifier: {type: test}}
  - id: down
    outputs: [data/down.txt]
    acceptance:
      - {id: ac, verifier: {type: test}}
  - id: aside
    outputs: [data/aside.txt]
    acceptance:
      - {id: ac, verifier: {type: test}}
edges:
  - {from: up, to: eat, type: consumes}
  - {from: art, to: down, type: requires}
"""

TESTS = """\
import pathlib
import pytest

@pytest.mark.criterion("up/ac")
def test_up():
    assert True

@pytest.mark.criterion("up/bc")
def test_up_b():
    assert True

@pytest.mark.criterion("eat/ac")
def test_eat():
    pathlib.Path("data/up.txt").write_text("changed by a test\\n")  # upstream's, consumed

@pytest.mark.criterion("art/ac")
def test_art():
    assert True

@pytest.mark.criterion("down/ac")
def test_down():
    assert True

@pytest.mark.criterion("aside/ac")
def test_aside():
    assert True
"""

CONFTEST = """\
import pathlib
import pytest

@pytest.hookimpl(hookwrapper=True)
def pytest_sessionfinish(session):
    pathlib.Path("data/art.txt").write_text("changed at session finish\\n")
    yield
"""

FILES = {
    "data/up.txt": "up\n",
    "data/eat.txt": "eat\n",
    "data/art.txt": "art\n",
    "data/down.txt": "down\n",
    "data/aside.txt": "aside\n",
    "tests/conftest.py": CONFTEST,
}


class Probe:
    """Keeps what the state after the run was derived from."""

    def __init__(self) -> None:
        self.calls: list[tuple[tuple[Any, ...], Any]] = []

    def state_after(self, *args: Any) -> Any:
        state = state_after(*args)
        self.calls.append((args, state))
        return state


def test_carried_digests_are_the_files_at_the_end_of_the_run(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A test rewrites an upstream node's output that another node consumes, and a conftest
    rewrites an artifact a verifier checks when the session finishes, before the plug-in's
    session end: every record binds the input digest the files give at the end of the run
    (as computed from nothing), and the state after the run is the one ``status`` derives
    from the store with no cache (no carried digest hides a change)."""
    root = make_project(pytester, plan=PLAN, tests=TESTS, files=FILES)
    probe = Probe()
    monkeypatch.setattr(session_module, "state_after", probe.state_after)
    pytester.inline_run("--plangraph", "-q", "-p", "no:cacheprovider")
    [(args, after)] = probe.calls
    plangraph, before_fold, end, records, stored, _ = args
    assert after == state_after(plangraph, before_fold, end, records, stored)
    with PlanGraph.open(root) as fresh:
        now = input_digests(fresh.graph, fresh.snapshot(cached=False))
        state = fresh.status()
    found = {record.ref: record for record in evidence(root)}
    assert {ref: r.input_digest == now[r.node] for ref, r in found.items()} == dict.fromkeys(
        found, True
    )
    assert found["art/there"].reason == "ARTIFACT_CHANGED_DURING_RUN"
    assert found["up/ac"].reason == "ARTIFACT_CHANGED_DURING_RUN"
    assert after.input_digests == state.input_digests == now
    assert {n: s.status for n, s in after.nodes.items()} == {
        n: s.status for n, s in state.nodes.items()
    }
    assert state.nodes["aside"].status == "completed"


PLAN2 = """\
plangraph: 1
plan: shared
nodes:
  - id: one
    outputs: [tests/test_one.py, src/pkg/mod.py]
    acceptance:
      - {id: a, verifier: {type: test}}
      - {id: b, verifier: {type: test}}
      - {id: c, verifier: {type: test, tests: ["tests/test_one.py::test_c*"]}}
  - id: two
    outputs: [src/two.py]
    acceptance:
      - {id: a, verifier: {type: test}}
      - {id: b, verifier: {type: test, tests: ["tests/test_two.py"]}}
edges:
  - {from: one, to: two, type: consumes}
"""

TESTS2 = {
    "tests/test_one.py": """\
import pathlib
import pytest
from marks import ONE_B

@pytest.mark.criterion("one/a")
def test_a():
    assert True

@pytest.mark.criterion(ONE_B)
def test_b():
    assert True

def test_c1():
    assert True

@pytest.mark.criterion("two/a")
def test_two_from_one():
    pathlib.Path("src/two.py").write_text("TWO = 2\\n")
""",
    "tests/test_two.py": """\
import pytest

@pytest.mark.criterion("two/a")
def test_two():
    assert True

def test_two_b():
    assert True
""",
    "tests/marks.py": 'ONE_B = "one/b"\n',
    "src/pkg/mod.py": "X = 1\n",
    "src/two.py": "TWO = 1\n",
}


def test_records_on_a_shared_base_are_the_plain_records(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Criteria of one node share their test module (one quoted through an imported name,
    one found by a pattern), another node's criteria share two modules, and a test rewrites
    a consumed output: every record made on the subjects its node's records share is the
    record built plain for the same verdict (the same subjects, text and id)."""
    from pytest_plangraph.plugin.building import EvidenceBuilder

    made: list[tuple[str, str, str]] = []
    build = EvidenceBuilder.build

    def both(self: Any, item: Any) -> Any:
        record = build(self, item)
        plain = self.build_plain(item)
        made.append((record.ref, record.id, plain.id))
        assert record.subjects == plain.subjects, record.ref
        texts = [self.maker.made[id(r)][2:] for r in (record, plain)]
        assert texts[0] == texts[1], record.ref
        return record

    monkeypatch.setattr(EvidenceBuilder, "build", both)
    files = dict(TESTS2)
    tests = files.pop("tests/test_one.py")
    make_project(pytester, plan=PLAN2, tests="", files={**files, "tests/test_one.py": tests})
    (pytester.path / "tests" / "test_a.py").unlink()
    pytester.inline_run("--plangraph", "-q", "-p", "no:cacheprovider")
    assert sorted(ref for ref, _, _ in made) == ["one/a", "one/b", "one/c", "two/a", "two/b"]
    assert all(record == plain for _, record, plain in made)
