"""One pass at the end of a ``pytest --plangraph`` session: the records the run made are
stored as made (not dumped, validated and hashed again by ``checked_payloads``), in one
``append_many`` (one transaction), and the state after the run is derived once. Counted in
real sessions (pytester, in process) by wrappers that call the real functions; what is stored
is what the checked path would store, and a record that is not the run's own is still
checked."""

from __future__ import annotations

from typing import Any

import pytest
from cli_helpers import plangraph_main
from plugin_helpers import evidence, jwt_project, make_project

import pytest_plangraph.judge.payloads as payload_checks
import pytest_plangraph.plugin.recorded as recorded_module
import pytest_plangraph.plugin.session as session_module
from pytest_plangraph.api import PlanGraph
from pytest_plangraph.canonical import canonical_json, digest
from pytest_plangraph.errors import UsageError
from pytest_plangraph.store.sqlite import Store
from pytest_plangraph.vcs.environment import now, run_info


class Calls:
    """Counts the calls of the real functions it wraps."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.counts: dict[str, int] = {}
        self.monkeypatch = monkeypatch

    def wrap(self, owner: object, name: str) -> None:
        real = getattr(owner, name)

        def counted(*args: Any, **kwargs: Any) -> Any:
            self.counts[name] = self.counts.get(name, 0) + 1
            return real(*args, **kwargs)

        self.monkeypatch.setattr(owner, name, counted)


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> Calls:
    found = Calls(monkeypatch)
    found.wrap(payload_checks, "checked_payloads")
    found.wrap(session_module, "derive")  # the state before the run
    found.wrap(recorded_module, "derive")  # and after it
    found.wrap(Store, "append_many")
    return found


def test_a_run_stores_its_records_in_one_pass(pytester: pytest.Pytester, calls: Calls) -> None:
    root = jwt_project(pytester)
    result = pytester.inline_run("--plangraph", "-q", "-p", "no:cacheprovider")
    passed, _, failed = result.listoutcomes()
    assert passed and not failed
    stored = evidence(root)
    assert len(stored) == 3  # the three criteria its tests verify
    assert calls.counts.get("checked_payloads", 0) == 0  # made once, not checked again
    assert calls.counts["append_many"] == 1  # one batch, one transaction
    assert calls.counts["derive"] == 2  # the state before the run, and once after it


def test_what_is_stored_is_what_the_checked_path_stores(pytester: pytest.Pytester) -> None:
    root = jwt_project(pytester)
    result = pytester.inline_run("--plangraph", "-q", "-p", "no:cacheprovider")
    assert not result.listoutcomes()[2]
    stored = evidence(root)
    with PlanGraph.open(root) as plangraph:
        checked = payload_checks.checked_payloads(plangraph.graph, stored)
    with Store.open(root / ".plangraph/store.db") as store:
        payloads = [e.payload for e in store.events() if e.kind == "evidence"]
    assert payloads == checked
    for payload in payloads:  # each id is its content's address
        assert payload["id"] == digest({k: v for k, v in payload.items() if k != "id"})


def test_the_run_hands_the_store_each_payload_text_as_made(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The record maker joined each payload's canonical JSON from the members it encoded for
    the record's id: the store takes that text instead of encoding the payload again, and it
    is exactly the payload's canonical JSON (the hash chain and the ids are as before)."""
    handed: list[tuple[list[Any], Any]] = []
    real = Store.append_many

    def spying(self: Store, events: Any, **kwargs: Any) -> Any:
        handed.append((list(events), kwargs.get("texts")))
        return real(self, events, **kwargs)

    monkeypatch.setattr(Store, "append_many", spying)
    root = jwt_project(pytester)
    result = pytester.inline_run("--plangraph", "-q", "-p", "no:cacheprovider")
    assert not result.listoutcomes()[2]
    [(events, texts)] = handed
    assert texts is not None and len(texts) == len(events) == 3
    for event, text in zip(events, texts, strict=True):
        assert text == canonical_json(event.payload)
    with Store.open(root / ".plangraph/store.db") as store:
        stored = [e.payload for e in store.events() if e.kind == "evidence"]
    assert sorted(canonical_json(p) for p in stored) == sorted(texts)
    audit = plangraph_main(root, "audit")
    assert audit.code == 0 and "chain intact" in audit.out, audit.out + audit.err


def test_a_record_not_made_by_the_run_is_checked(pytester: pytest.Pytester) -> None:
    """``record_run(made=…)`` takes a payload as made only for the very record object it was
    made for: a changed copy of a record (which skips the model's checks) is refused."""
    make_project(pytester)
    root = pytester.path
    with PlanGraph.open(root) as plangraph:
        run = run_info(now(), now(), None)
        record = plangraph.make_evidence(
            "step-a",
            "ac-marked",
            outcome="passed",
            reason=None,
            details={},
            subjects={},
            run=run,
            recorded_by="runner",
        )
        payload = record.to_json()
        forged = record.replace(outcome="banana")
        with pytest.raises(UsageError, match="not a valid evidence record"):
            plangraph.record_run([forged], made={id(record): (record, payload)})
        with pytest.raises(UsageError, match="not a valid evidence record"):
            plangraph.record_run([forged], made={id(forged): (record, payload)})
        with pytest.raises(UsageError, match="made must be a mapping"):
            plangraph.record_run([record], made=5)  # type: ignore[arg-type]
        # odd entries are not taken as made: the record is checked
        with pytest.raises(UsageError, match="not a valid evidence record"):
            plangraph.record_run([forged], made={id(forged): (forged, "x")})  # type: ignore[dict-item]
        # a payload paired with another object's id is not taken either
        stored = plangraph.record_run([record], made={id(forged): (forged, {"bogus": 1})})
    assert [e.payload for e in stored] == [payload]
    assert [e.id for e in evidence(root)] == [record.id]  # the forged ones stored nothing


def test_the_session_end_and_the_mapping_run_without_collections(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The session end and the mapping at collection build many small acyclic values: the
    cyclic collector is paused while they run (no full collection rescans the items), and
    enabled again, with nothing left frozen, after them."""
    import gc

    seen: dict[str, bool] = {}
    for name in ("_finish", "_map"):
        real = getattr(session_module.PlangraphSession, name)

        def watched(*args: Any, _real: Any = real, _name: str = name, **kwargs: Any) -> Any:
            seen[_name] = seen.get(_name, False) or gc.isenabled()
            return _real(*args, **kwargs)

        monkeypatch.setattr(session_module.PlangraphSession, name, watched)
    jwt_project(pytester)
    assert gc.isenabled()
    result = pytester.inline_run("--plangraph", "-q", "-p", "no:cacheprovider")
    passed, _, failed = result.listoutcomes()
    assert passed and not failed
    assert seen == {"_finish": False, "_map": False}  # called, and never with collections on
    assert gc.isenabled() and gc.get_freeze_count() == 0


def test_each_stored_event_says_the_fields_it_was_given(pytester: pytest.Pytester) -> None:
    """The run's evidence events are built once, told which fields they were given instead of
    comparing each with its default: what they say is what the constructor would find."""
    from pytest_plangraph.plan.model import Event

    jwt_project(pytester)
    stored: list[Event] = []
    real = PlanGraph.record_run

    def kept(self: PlanGraph, *args: Any, **kwargs: Any) -> list[Event]:
        stored.extend(real(self, *args, **kwargs))
        return stored

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(PlanGraph, "record_run", kept)
        result = pytester.inline_run("--plangraph", "-q", "-p", "no:cacheprovider")
    assert not result.listoutcomes()[2]
    assert len(stored) == 3
    chain = {"id", "seq", "prev", "hash", "signature"}  # what the store fills in
    for event in stored:
        given = {name: getattr(event, name) for name in Event.FIELDS if name not in chain}
        assert event.fields_set == Event(**given).fields_set | chain


class Held:
    """Takes the run's session object at the session's end, and what it holds then."""

    def __init__(self) -> None:
        self.session: Any = None
        self.plangraph: Any = None

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        import weakref

        from pytest_plangraph.plugin import SESSION_KEY

        self.session = session.config.stash[SESSION_KEY]
        self.plangraph = weakref.ref(self.session.plangraph)


def test_the_closed_session_lets_go_of_the_run_before_pytests_collections(
    pytester: pytest.Pytester,
) -> None:
    # pytest keeps each plug-in it registered alive to the process's end, and collects the
    # garbage twice after pytest_unconfigure's first hooks: the run's plan, mapping, results and
    # records are dropped when the session closes, so those collections do not walk them
    import gc

    root = jwt_project(pytester)
    held = Held()
    gc.disable()  # what the run let go of is freed by reference counting, not by a collection
    try:
        result = pytester.inline_run("--plangraph", "-q", "-p", "no:cacheprovider", plugins=[held])
        # nothing else kept the run's plan and store alive, not even a reference cycle
        assert held.plangraph() is None
    finally:
        gc.enable()
    passed, _, failed = result.listoutcomes()
    assert passed and not failed
    assert len(evidence(root)) == 3  # stored before the session closed
    assert set(vars(held.session)) == {"config"}
    held.session.close()  # closing again does nothing
