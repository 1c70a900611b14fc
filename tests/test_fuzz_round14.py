"""What fuzzing the fourteenth round's changes (the derivation's short ways, the states' own
``__init__``, the records made and stored together, the modules imported late) checked, each
kept as a test on a real session: a run of odd tests is derived the same by the short ways and
the general way, answered the same with its caches and with every cache deleted, and stored as
a chain that audits clean; a session interrupted at its end leaves the same answer either way.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from cache_helpers import as_tester
from cli_helpers import Result, plangraph_main
from conftest import git

from pytest_plangraph.api import PlanGraph
from pytest_plangraph.judge.derive import _Derivation
from pytest_plangraph.judge.ledger import Context

PLAN = """plangraph: 1
plan: odd
nodes:
  - id: n0
    title: "odd tests \u00e9\U0001f600"
    outputs: [out/n0.txt]
    acceptance:
      - {id: ac0, assertion: a, verifier: {type: test}}
      - {id: ac1, assertion: b, verifier: {type: test}}
      - {id: ac2, assertion: c, verifier: {type: test}}
      - {id: ac3, assertion: d, verifier: {type: approval}}
  - id: n1
    title: an output never made
    outputs: [out/n1.txt]
    acceptance:
      - {id: ac0, assertion: a, verifier: {type: artifact, path: out/n1.txt}}
  - id: n2
    title: no test of its criterion
    acceptance:
      - {id: ac0, assertion: a, verifier: {type: test}}
  - id: n3
    title: after both
    acceptance:
      - {id: ac0, assertion: a, verifier: {type: artifact, path: out/n0.txt}}
edges:
  - {from: n0, to: n3, type: requires}
  - {from: n1, to: n3, type: consumes}
"""

TESTS = r"""import pytest

IDS = ["\ud800", "\udfff\u00e9", "\u200b::[x]", "\U0001f600\\"]


@pytest.fixture
def broken():
    raise RuntimeError("set-up \udc80 failed \u2028")


@pytest.mark.criterion("n0/ac0")
@pytest.mark.parametrize("p", [0, 1, 2, 3], ids=IDS)
def test_ids(p):
    assert p != 1, "\ud800" * 3


@pytest.mark.criterion("n0/ac0")
def test_huge():
    assert False, "z" * 300_000


@pytest.mark.criterion("n0/ac1")
def test_skipped():
    pytest.skip("\udfff skipped")


@pytest.mark.criterion("n0/ac1")
@pytest.mark.xfail(reason="\u00e9 expected")
def test_xfailed():
    assert False


@pytest.mark.criterion("n0/ac2")
@pytest.mark.xfail(reason="passes anyway")
def test_xpassed():
    pass


@pytest.mark.criterion("n0/ac2")
def test_errored(broken):
    pass
"""


@pytest.fixture(autouse=True)
def _environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    as_tester(monkeypatch)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "user-cache"))


def _project(pytester: pytest.Pytester, conftest: str = "") -> Path:
    root = pytester.path
    (root / "plangraph.yaml").write_text(PLAN, encoding="utf-8")
    (root / "tests").mkdir()
    (root / "tests" / "test_odd.py").write_text(TESTS, encoding="utf-8")
    (root / "out").mkdir()
    (root / "out" / "n0.txt").write_text("made\n")
    (root / "pytest.ini").write_text("[pytest]\ntestpaths = tests\n")
    if conftest:
        (root / "conftest.py").write_text(conftest)
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "odd tests")
    return root


def _answers(root: Path) -> list[Result]:
    return [
        plangraph_main(root, "status", "--format", "json"),
        plangraph_main(root, "status"),
        plangraph_main(root, "impact"),
    ]


def _without_caches(root: Path, cache_home: Path) -> list[Result]:
    shutil.rmtree(root / ".plangraph" / "cache", ignore_errors=True)
    shutil.rmtree(cache_home, ignore_errors=True)
    return _answers(root)


def _chain_sound(root: Path) -> None:
    """``plangraph audit`` finds the chain whole: what it reports is about claims and
    evidence (a refused claim, a stale record), never a link or a content address."""
    audit = plangraph_main(root, "audit")
    assert audit.code in (0, 1) and not audit.err, audit
    lines = audit.out.splitlines()
    assert lines and lines[-1].startswith("audit:"), audit
    assert all(line.startswith(("phantom completion:", "stale:")) for line in lines[:-1]), audit


def _short_and_general(root: Path) -> None:
    """The state of the store's log derived the short ways is the general way's, byte for
    byte in its JSON."""
    plangraph = PlanGraph.open(root)
    graph, snapshot, fold = plangraph.graph, plangraph.snapshot(), plangraph.fold()
    short = _Derivation(Context.of(graph, snapshot), fold).result()
    general = _Derivation(Context.of(graph, snapshot), fold, general=True).result()
    assert short == general
    assert repr(short) == repr(general)
    as_json = [json.dumps([n.to_json() for n in s.nodes.values()]) for s in (short, general)]
    assert as_json[0] == as_json[1]


def test_a_run_of_odd_tests_is_answered_alike_by_every_way(
    pytester: pytest.Pytester, tmp_path: Path
) -> None:
    """Lone surrogates in test ids and messages, a huge message, failed, skipped, xfailed,
    xpassed and errored tests, a criterion no test marks, an approval given then revoked and a
    claim refused: the short ways derive what the general way does, the kept answers are the
    answers with every cache deleted, and the chain audits clean."""
    root = _project(pytester)
    result = pytester.runpytest("--plangraph", "-p", "no:cacheprovider")
    assert result.ret == 1
    text = result.stdout.str()
    assert "Traceback" not in text and "plangraph" in text
    cache_home = tmp_path / "user-cache"
    for step in (
        ("approve", "n0/ac3", "--by", "tester"),
        ("claim", "n0", "--by", "tester"),
        ("revoke", "n0/ac3", "--by", "tester"),
        ("claim", "n3", "--by", "tester"),
    ):
        done = plangraph_main(root, *step)
        assert done.code in (0, 1) and "Traceback" not in done.err, done
        _short_and_general(root)
        kept = _answers(root)
        kept = _answers(root)  # kept by now
        assert all(answer.code in (0, 1) for answer in kept), kept
        assert kept == _without_caches(root, cache_home)
    (root / "out" / "n0.txt").write_text("changed\n")  # n0's record and n3's stale now
    _short_and_general(root)
    assert _answers(root) == _without_caches(root, cache_home)
    _chain_sound(root)
    states = {
        n["id"]: n for n in plangraph_main(root, "status", "--format", "json").json()["nodes"]
    }
    assert states["n2"]["status"] != "completed"
    assert states["n0"]["status"] != "completed"


@pytest.mark.parametrize(
    "hook",
    ["pytest_sessionfinish(session)", "pytest_terminal_summary(terminalreporter)"],
)
def test_a_session_interrupted_at_its_end_is_answered_alike_with_and_without_caches(
    pytester: pytest.Pytester, tmp_path: Path, hook: str
) -> None:
    """A KeyboardInterrupt raised by a conftest hook before the plugin's own at the session
    end: whatever was stored audits clean, and is answered alike with and without caches."""
    conftest = f"import pytest\n\n@pytest.hookimpl(tryfirst=True)\ndef {hook}:\n"
    conftest += "    raise KeyboardInterrupt\n"
    root = _project(pytester, conftest)
    command = [sys.executable, "-m", "pytest", "--plangraph", "-p", "no:cacheprovider"]
    ended = subprocess.run(command, cwd=root, capture_output=True, check=False)  # bytes: the
    assert ended.returncode != 0  # lone surrogates of the messages are written as they come
    if (root / ".plangraph" / "store.db").exists():
        _chain_sound(root)
    _short_and_general(root)
    cache_home = tmp_path / "user-cache"
    kept = _answers(root)
    kept = _answers(root)
    assert kept == _without_caches(root, cache_home)
