"""The derivation's short ways (judge/derive.py, judge/states.py, values.py) decide nothing of
their own: on generated plans and logs, a derivation taking them gives every state, reason and
JSON byte the general way gives; the states' own ``__init__`` stores what the shared one of
:mod:`pytest_plangraph.values` would, and such a value compares, hashes, shows and pickles the
same."""

from __future__ import annotations

import gc
import json
import pickle
import weakref
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from state_helpers import World, edge, make_graph, node
from test_rederive import ACTIONS, _apply, _snapshot, plans

from pytest_plangraph import values
from pytest_plangraph.judge.derive import _Derivation, derive
from pytest_plangraph.judge.inputs import ReadLog, Snapshot
from pytest_plangraph.judge.ledger import Context
from pytest_plangraph.judge.logfold import LogFold
from pytest_plangraph.judge.states import CriterionState, NodeState, PlanState, Reason
from pytest_plangraph.plan.policy import TestPolicy
from pytest_plangraph.plan.untrusted import BAD_SIGNATURE, UNSIGNED_EVENT
from pytest_plangraph.plugin.evidence import Decided
from pytest_plangraph.plugin.mapping import CriterionTests
from pytest_plangraph.plugin.summary import Outcome
from pytest_plangraph.values import _MISSING

OWN_INIT: tuple[type[Any], ...] = (
    Reason,
    CriterionState,
    NodeState,
    Decided,
    TestPolicy,
    CriterionTests,
    Outcome,
)
"""The value classes made by the hundred or the ten thousand, with their own ``__init__``."""


def _bytes(state: PlanState) -> bytes:
    nodes = [node.to_json() for node in state.nodes.values()]
    return json.dumps([nodes, state.input_digests], sort_keys=False).encode()


def _both(world: World, snapshot: Snapshot, fold: LogFold) -> tuple[PlanState, PlanState]:
    context = Context.of(world.graph, snapshot)
    short = _Derivation(context, fold).result()
    general = _Derivation(Context.of(world.graph, snapshot), fold, general=True).result()
    return short, general


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    plans(),
    st.lists(ACTIONS, max_size=12),
    st.lists(ACTIONS, max_size=6),
    st.lists(st.integers(0, 12), max_size=2),
)
def test_the_short_ways_derive_what_the_general_way_derives(
    world: World, before: list[tuple[str, int]], after: list[tuple[str, int]], bare: list[int]
) -> None:
    for number, (action, index) in enumerate(before):
        if number in bare:  # a claim without its verdict: the gate is replayed
            world.add("claim", list(world.graph.nodes)[index % len(world.graph.nodes)])
        _apply(world, action, index)
    was = _snapshot(world)  # the files the records were made for, then changed after them
    for action, index in after:
        _apply(world, action, index)
    for snapshot in (was, _snapshot(world)):
        fold = LogFold.of(world.events)
        short, general = _both(world, snapshot, fold)
        assert short == general
        assert list(short.nodes) == list(general.nodes)
        assert repr(short) == repr(general)
        assert _bytes(short) == _bytes(general)
        assert short == derive(world.graph, world.events, snapshot)


def test_a_criterion_a_replay_of_claims_counted_valid_is_judged_as_it_is_now() -> None:
    world = World(make_graph([node("a"), node("b")], [edge("a", "b")]))
    world.add("evidence", "a", "ac", world.evidence("a").to_json())
    world.add("claim", "a")  # no verdict with it: the gate is replayed up to it
    failed = world.evidence("a").to_json() | {"outcome": "failed"}
    world.add("evidence", "a", "ac", failed)  # after the claim: no part of the replay
    short, general = _both(world, world.snapshot(), LogFold.of(world.events))
    assert short == general and _bytes(short) == _bytes(general)
    assert short.nodes["a"].status == "failed" and short.nodes["b"].status == "pending"


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(plans(), st.lists(ACTIONS, max_size=10), st.sampled_from([BAD_SIGNATURE, UNSIGNED_EVENT]))
def test_an_event_left_uncounted_is_told_the_same_both_ways(
    world: World, actions: list[tuple[str, int]], code: str
) -> None:
    for action, index in actions:
        _apply(world, action, index)
    fold = LogFold()
    for number, event in enumerate(world.events):  # every third event's signature refused
        fold.extend([event], {event.seq: code} if number % 3 == 2 else None)
    short, general = _both(world, _snapshot(world), fold)
    assert short == general and _bytes(short) == _bytes(general)


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(plans(), st.lists(ACTIONS, max_size=8))
def test_what_each_node_reads_is_observed_the_same_both_ways(
    world: World, actions: list[tuple[str, int]]
) -> None:
    for action, index in [*actions, ("verify", 0)]:  # n0's record read last
        _apply(world, action, index)
    fold = LogFold.of(world.events)
    seen = []
    for general in (False, True):
        reads: dict[str, set[str]] = {}
        files = ReadLog(dict(world.files), reads)
        snapshot = Snapshot(files, dict(world.outputs))  # type: ignore[attr-defined]
        state = _Derivation(Context.of(world.graph, snapshot), fold, general=general).result()
        seen.append((state, reads))
    assert seen[0] == seen[1]
    assert "out/n0.txt" in seen[0][1]["n0"]  # a record's subjects were read


_TEXT = st.text(max_size=5)
_REASONS = st.builds(Reason, _TEXT, _TEXT, st.dictionaries(_TEXT, _TEXT, max_size=2))
_CRITERIA = st.builds(
    CriterionState,
    _TEXT,
    st.booleans(),
    st.sampled_from(["valid", "stale", "failed", "missing", "awaiting_approval"]),
    st.none() | _TEXT,
    st.lists(_REASONS, max_size=2).map(tuple),
)


def _shared(cls: type[Any], *args: Any, **kwargs: Any) -> Any:
    """A value of *cls* made by the shared ``__init__`` of :mod:`pytest_plangraph.values`."""
    made = object.__new__(cls)
    values._init(made, *args, **kwargs)
    return made


@settings(max_examples=200, deadline=None)
@given(
    reason=_REASONS,
    criterion=_CRITERIA,
    claimed=st.booleans(),
    failed=st.integers(0, 3),
    by_name=st.booleans(),
)
def test_a_state_made_by_its_own_init_is_the_value_the_shared_one_makes(
    reason: Reason, criterion: CriterionState, claimed: bool, failed: int, by_name: bool
) -> None:
    calls: list[tuple[type[Any], dict[str, Any]]] = [
        (Reason, {"code": reason.code, "message": reason.message, "data": reason.data}),
        (Reason, {"code": reason.code, "message": reason.message}),
        (CriterionState, values.asdict(criterion) | {"reasons": criterion.reasons}),
        (CriterionState, {"id": "c", "required": True, "state": "missing", "evidence": None}),
        (
            NodeState,
            {
                "id": "n",
                "kind": "step",
                "status": "ready",
                "reasons": (reason,),
                "criteria": (criterion,),
                "claimed": claimed,
                "failed_claims": failed,
            },
        ),
        (
            NodeState,
            {"id": "n", "kind": "goal", "status": "pending", "reasons": (), "criteria": ()},
        ),
    ]
    for cls, fields in calls:
        own = cls(**fields) if by_name else cls(*fields.values())
        shared = _shared(cls, **fields)
        assert vars(own) == vars(shared)
        assert tuple(vars(own)) == getattr(cls, "_value_names")  # noqa: B009
        assert own == shared and repr(own) == repr(shared)
        assert pickle.loads(pickle.dumps(own)) == own
        assert vars(pickle.loads(pickle.dumps(own))) == vars(shared)
    assert Reason("c", "m").data == {} and Reason("c", "m").data is not Reason("c", "m").data
    plain = CriterionState(criterion.id, criterion.required, criterion.state, criterion.evidence)
    shared = _shared(CriterionState, criterion.id, criterion.required, criterion.state, None)
    assert hash(plain) == hash(values.replace(shared, evidence=criterion.evidence))


@pytest.mark.parametrize("cls", OWN_INIT, ids=lambda cls: cls.__name__)
def test_a_value_made_by_its_own_init_is_the_one_the_shared_init_makes(cls: type[Any]) -> None:
    names: tuple[str, ...] = getattr(cls, "_value_names")  # noqa: B009 (made by the decorator)
    specs = getattr(cls, "_value_fields")  # noqa: B009
    required = [
        n for n in names if specs[n].default is _MISSING and specs[n].default_factory is _MISSING
    ]
    given = {name: [name] for name in names}  # a distinct object a field
    for count in range(len(required), len(names) + 1):  # the fields after them left out
        args = [given[name] for name in names[:count]]
        by_name = dict(zip(names, args, strict=False))
        for own, shared in [
            (cls(*args), _shared(cls, *args)),
            (cls(**by_name), _shared(cls, **by_name)),
        ]:
            assert vars(own) == vars(shared) and tuple(vars(own)) == names
            assert own == shared and repr(own) == repr(shared)
            assert all(vars(own)[n] is given[n] for n in names[:count])  # stored as given
            again = cls(*args)
            for name in names[count:]:  # a factory's default: a new object each time
                if specs[name].default_factory is not _MISSING:
                    assert vars(own)[name] is not vars(again)[name]
                else:
                    assert vars(own)[name] is specs[name].default
            assert vars(pickle.loads(pickle.dumps(own))) == vars(shared)
    with pytest.raises(TypeError):
        cls(*[given[name] for name in names], "one too many")
    with pytest.raises(TypeError):
        cls(**{"not_a_field": 1})


def test_the_states_keep_their_own_init_and_other_values_the_shared_one() -> None:
    for cls in OWN_INIT:
        names = getattr(cls, "_value_names")  # noqa: B009 (made by the decorator)
        assert cls.__init__ is not values._init
        assert cls.__init__.__code__.co_varnames[1 : len(names) + 1] == names
    assert PlanState.__init__ is values._init


def test_a_derivation_is_freed_when_it_is_let_go_without_a_collection() -> None:
    world = World(make_graph([node("a"), node("b")], [edge("a", "b")]))
    world.add("evidence", "a", "ac", world.evidence("a").to_json())
    world.files["out/a.txt"] = "edited"  # b's record, if any, would name a as changed
    world.add("evidence", "b", "ac", world.evidence("b").to_json())
    world.files["out/a.txt"] = "edited again"
    gc.disable()
    try:
        derivation = _Derivation(Context.of(world.graph, world.snapshot()), world.events)
        state = derivation.result()
        assert state.nodes["b"].criteria[0].state == "stale"  # its reasons were made
        let_go = weakref.ref(derivation)
        del derivation
        assert let_go() is None  # no cycle through it: what it made is freed at once
    finally:
        gc.enable()
