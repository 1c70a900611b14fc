"""Attacks on this round's short ways (round fourteen), by an agent that wants a node
completed while a test of its criterion fails: the derivation's short ways and the state it
carries from before, the records made and stored in one batch, the state after a run.

Each scenario is a real git repository, real ``pytest --plangraph`` processes and the real
``plangraph`` command; after each step, what ``status`` and ``claim`` answer with the caches
kept is compared with what they answer with every cache deleted (the repository's
``.plangraph/cache`` and the user's cache folder)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from calc_helpers import BROKEN, GOOD, cache_env, calc_project, claim_as_without_caches, fresh_copy
from cli_helpers import plangraph
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from state_helpers import World
from test_rederive import ACTIONS, _apply, _snapshot, plans

from pytest_plangraph.judge.derive import _cone, _Derivation
from pytest_plangraph.judge.ledger import Context
from pytest_plangraph.judge.logfold import LogFold
from pytest_plangraph.plan.model import Event
from pytest_plangraph.store.sqlite import Store

pytest_plugins = ["pytester"]

PLAN = """
plangraph: 1
plan: demo
nodes:
  - id: step-calc
    outputs: [calc.py]
    acceptance:
      - id: ac-add
        verifier: {type: test, tests: ["tests/test_calc.py"]}
      - id: ac-review
        verifier: {type: approval}
  - id: step-use
    outputs: [use.py]
    acceptance:
      - id: ac-use
        verifier: {type: test, tests: ["tests/test_use.py"]}
edges:
  - {from: step-calc, to: step-use, type: requires}
"""

USE_TESTS = """
from use import twice


def test_twice():
    assert twice(3) == 6
"""

USE = "from calc import add\n\n\ndef twice(a):\n    return add(a, a)\n"


def _project(pytester: pytest.Pytester) -> Path:
    return calc_project(pytester, PLAN, **{"use.py": USE, "tests/test_use.py": USE_TESTS})


def _run(pytester: pytest.Pytester, root: Path, *args: str) -> int:
    os.environ["XDG_CACHE_HOME"] = str(root.parent / "user-cache")
    try:
        result = pytester.runpytest_subprocess("--plangraph", "-p", "no:cacheprovider", *args)
    finally:
        del os.environ["XDG_CACHE_HOME"]
    return int(result.ret)


def _states(out: str) -> dict[str, Any]:
    data = json.loads(out)
    return {
        node["id"]: (node["status"], [(c["id"], c["state"]) for c in node["criteria"]])
        for node in data["nodes"]
    }


def _compare(root: Path) -> dict[str, Any]:
    """status with the caches kept (twice: the second reads what the first kept) and with
    every cache deleted: the same states."""
    kept = [plangraph(root, "status", "--format", "json", env=cache_env(root, "user-cache"))]
    kept.append(plangraph(root, "status", "--format", "json", env=cache_env(root, "user-cache")))
    other = fresh_copy(root)
    fresh = plangraph(other, "status", "--format", "json", env=cache_env(root, "fresh-cache"))
    for done in (*kept, fresh):
        assert "Traceback" not in done.err, done.err
    assert _states(kept[0].out) == _states(fresh.out)
    assert _states(kept[1].out) == _states(fresh.out)
    return _states(fresh.out)


def test_a_pass_broken_by_the_code_and_a_failing_run_stand_as_without_caches(
    pytester: pytest.Pytester,
) -> None:
    """Pass, approve, break the code, run part of the suite, run it whole, revoke: after each
    step status and claim answer as they do with no cache, and never complete a node whose
    test fails on the code as it is."""
    root = _project(pytester)
    assert _run(pytester, root) == 0
    env = cache_env(root, "user-cache")
    assert plangraph(root, "approve", "step-calc/ac-review", "--by", "alice", env=env).code == 0
    states = _compare(root)
    assert states["step-calc"][0] == "completed"
    assert states["step-use"][0] == "completed"
    (root / "calc.py").write_text(BROKEN)
    states = _compare(root)
    assert states["step-calc"][0] != "completed"
    assert states["step-use"][0] != "completed"
    assert claim_as_without_caches(root, "step-calc") == 1
    # a run of the other node's tests alone: step-calc's record is not made again
    assert _run(pytester, root, "tests/test_use.py") != 0
    states = _compare(root)
    assert states["step-calc"][0] != "completed"
    assert states["step-use"][0] != "completed"
    assert _run(pytester, root) != 0
    states = _compare(root)
    assert dict(states["step-calc"][1])["ac-add"] == "failed"
    assert claim_as_without_caches(root, "step-calc") == 1
    (root / "calc.py").write_text(GOOD)
    assert _run(pytester, root) == 0
    states = _compare(root)
    assert states["step-calc"][0] == "completed"
    assert plangraph(root, "revoke", "step-calc/ac-review", "--by", "alice", env=env).code == 0
    states = _compare(root)
    assert states["step-calc"][0] != "completed"
    assert claim_as_without_caches(root, "step-calc") == 1


KEY = {"PLANGRAPH_SIGNING_KEY": "a shared secret of CI and the judge"}

SHIFTY = """
import pathlib

from calc import add


def test_add():
    assert add(2, 2) == 4
    # the module ran is the good one; the file left behind is broken
    pathlib.Path("calc.py").write_text("def add(a, b):\\n    return a - b\\n")
"""


def test_a_file_broken_during_the_run_is_refused_by_the_runs_gate_and_by_claim(
    pytester: pytest.Pytester,
) -> None:
    """A test passes on the module it imported and leaves it broken on disk: the run's own
    gate (its state after the run, from the log read at the start and the records it
    stored) refuses the node, as ``claim`` does with the caches kept and with none."""
    root = _project(pytester)
    (root / "tests/test_calc.py").write_text(SHIFTY)
    env = cache_env(root, "user-cache")
    assert plangraph(root, "approve", "step-calc/ac-review", "--by", "alice", env=env).code == 0
    gated = ("--plangraph-gate", "--plangraph-require", "step-calc")
    assert _run(pytester, root, *gated) != 0
    assert (root / "calc.py").read_text() == BROKEN
    states = _compare(root)
    assert states["step-calc"][0] != "completed"
    assert claim_as_without_caches(root, "step-calc") == 1


def _signed_run(pytester: pytest.Pytester, root: Path) -> int:
    os.environ.update(KEY)
    try:
        return _run(pytester, root)
    finally:
        del os.environ["PLANGRAPH_SIGNING_KEY"]


def _unjudged_claim(root: Path, node: str) -> None:
    """A claim appended as an agent can (a claim needs no signature) with no verdict: every
    derivation then replays the claims."""
    with Store.open(root / ".plangraph/store.db") as store:
        last = store.events()[-1]
        store.append(
            Event(
                kind="claim",
                node=node,
                at=last.at,
                by="agent",
                plan_digest=last.plan_digest,
                payload={},
            )
        )


def test_an_unjudged_claim_before_a_failing_run_does_not_bring_back_the_pass_before_it(
    pytester: pytest.Pytester,
) -> None:
    """With a signing key: CI's signed pass and approval; the agent appends a claim with no
    verdict (every derivation now replays the claims, and the replay, up to that claim, counts
    the pass, which holds on the code as it is); the code is broken and CI's signed run
    records the failure; the code is put back as it was at the pass. The latest record is a
    failure: status and claim refuse the node, with the caches kept and with none, with the
    key and without (the replay's verdicts are not left standing in the gate); an unsigned
    run of the agent's changes nothing; CI's next signed pass completes it again."""
    root = _project(pytester)
    assert _signed_run(pytester, root) == 0
    env = {**cache_env(root, "user-cache"), **KEY}
    assert plangraph(root, "approve", "step-calc/ac-review", "--by", "alice", env=env).code == 0
    _unjudged_claim(root, "step-calc")
    (root / "calc.py").write_text(BROKEN)
    assert _signed_run(pytester, root) != 0
    (root / "calc.py").write_text(GOOD)
    for key_env in (KEY, {}):
        mine = {**cache_env(root, "user-cache"), **key_env}
        kept = plangraph(root, "status", "--format", "json", env=mine)
        other = fresh_copy(root)
        fresh_env = {**cache_env(root, "fresh-cache"), **key_env}
        fresh = plangraph(other, "status", "--format", "json", env=fresh_env)
        assert "Traceback" not in kept.err + fresh.err, kept.err + fresh.err
        assert _states(kept.out) == _states(fresh.out)
        assert _states(kept.out)["step-calc"][0] != "completed"
        assert dict(_states(kept.out)["step-calc"][1])["ac-add"] == "failed"
        claim = plangraph(root, "claim", "step-calc", "--by", "agent", env=mine)
        assert claim.code == 1, claim.out
    assert _signed_run(pytester, root) == 0
    kept = plangraph(root, "status", "--format", "json", env=env)
    assert _states(kept.out)["step-calc"][0] == "completed"


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    plans(),
    st.lists(ACTIONS, max_size=12),
    st.lists(ACTIONS, max_size=6),
    st.integers(0, 50),
    st.lists(st.integers(0, 12), max_size=2),
)
def test_a_node_judged_alone_with_known_states_is_as_the_general_way_judges_it(
    world: World,
    before: list[tuple[str, int]],
    after: list[tuple[str, int]],
    pick: int,
    bare: list[int],
) -> None:
    """The short ways over a node's cone alone (status of one node, a kept state carried
    into a new derivation: the criteria states of the rest known), after claims without
    their verdicts too (a replay): the node's state is the one the general way gives over
    the whole plan."""
    for number, (action, index) in enumerate(before):
        if number in bare:  # a claim without its verdict: the gate is replayed
            world.add("claim", list(world.graph.nodes)[index % len(world.graph.nodes)])
        _apply(world, action, index)
    for action, index in after:  # the files changed after the records
        _apply(world, action, index)
    snapshot = _snapshot(world)
    fold = LogFold.of(world.events)
    full = _Derivation(Context.of(world.graph, snapshot), fold, general=True).result()
    nodes = list(world.graph.nodes)
    target = nodes[pick % len(nodes)]
    context = Context.of(world.graph, snapshot)
    cone = _cone(context, target)
    assert _Derivation(context, fold, only=cone)._node(target) == full.nodes[target]
    known = {n: full.nodes[n].criteria for n in cone if n != target}
    again = _Derivation(Context.of(world.graph, snapshot), fold, only=cone, known=known)
    assert again._node(target) == full.nodes[target]
