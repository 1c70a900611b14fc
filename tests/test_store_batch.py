"""Appending a batch: one chain in order, repeats within the batch and events already stored
answered by the stored event, nothing written when the plan version is refused."""

from __future__ import annotations

from pathlib import Path

import pytest
from store_helpers import make_event

from pytest_plangraph.errors import ConflictError
from pytest_plangraph.plan.model import Event
from pytest_plangraph.store.chain import verify_events
from pytest_plangraph.store.sqlite import Store


def test_repeats_in_a_batch_are_one_event(tmp_path: Path) -> None:
    with Store.open(tmp_path / "store.db") as store:
        before = store.append(make_event(9))
        batch = [
            make_event(0, idempotency_key="k"),  # the first new event: position 0 in the batch
            make_event(6, idempotency_key="k"),  # same key and request: answered by the first
            make_event(2),
            make_event(2),  # same content
            make_event(9),  # stored before the batch
            make_event(3, idempotency_key="k"),
        ]
        stored = store.append_many(batch)
        assert [e.seq for e in stored] == [2, 2, 3, 3, 1, 2]
        assert stored[4] == before
        assert store.count() == 3
        assert store.verify() == []  # one chain: 9, then 0 and 2 from the batch
        chain = sorted(store.events(), key=lambda e: e.seq)
        assert [e.payload["n"] for e in chain] == [9, 0, 2]
        assert verify_events(chain, None) == []


def test_a_refused_batch_writes_nothing(tmp_path: Path) -> None:
    with Store.open(tmp_path / "store.db") as store:
        store.register_plan("a" * 64, "p")
        with pytest.raises(ConflictError, match="PLAN_VERSION_CONFLICT"):
            store.append_many([make_event(0), make_event(1)], expected_plan_version=7)
        assert store.count() == 0
        # a batch of events already stored needs no version check: nothing is written
        store.append(make_event(0))
        assert store.append_many([make_event(0)], expected_plan_version=7)[0].seq == 1


def test_any_text_is_an_idempotency_key(tmp_path: Path) -> None:
    with Store.open(tmp_path / "store.db") as store:
        key = "run\x00 7 ✓"
        first = store.append(make_event(0, idempotency_key=key))
        again = store.append_many([make_event(3, idempotency_key=key), make_event(2)])
        assert again[0] == first
        assert store.count() == 2


@pytest.mark.parametrize("value", [float("nan"), float("inf"), -float("inf")])
def test_a_batch_with_nan_or_an_infinity_anywhere_writes_nothing(
    tmp_path: Path, value: float
) -> None:
    # the event refused is the last of the batch, behind events whose texts hold neither
    # letter (N, I) the quick look searches for and events that only say the words as text
    from pytest_plangraph.canonical import canonical_json
    from pytest_plangraph.errors import UsageError

    batch = [
        make_event(1, payload={"n": 1}),
        make_event(2, payload={"n": 2, "text": "NaN and -Infinity, said as text"}),
        make_event(3, payload={"n": 3, "deep": [{"x": [0.5, value]}]}),
    ]
    texts = [canonical_json(event.payload) for event in batch]
    with Store.open(tmp_path / "store.db") as store:
        for given in (None, texts):  # encoded here, or as the maker encoded them
            with pytest.raises(UsageError, match="NaN or an infinity"):
                store.append_many(batch, texts=given)
            assert store.count() == 0
        kept = store.append_many(batch[:2], texts=texts[:2])
        assert [event.payload for event in store.events()] == [e.payload for e in kept]


def _rows(path: Path) -> list[tuple[object, ...]]:
    """Every row of the events and log tables, as the file holds them."""
    import sqlite3

    con = sqlite3.connect(path)
    try:
        events = con.execute("SELECT * FROM events ORDER BY seq").fetchall()
        log = con.execute("SELECT * FROM log ORDER BY seq").fetchall()
    finally:
        con.close()
    return [*events, ("log",), *log]


@pytest.mark.parametrize("key", [None, b"secret"])
def test_a_batch_into_an_empty_store_is_stored_as_one_by_one(
    tmp_path: Path, key: bytes | None
) -> None:
    """The batch into a store with no event yet (no stored id or key looked up, sealed
    together) stores the rows, ids and chain that appending the same events one by one
    stores (each looked up and sealed on its own), repeats in the batch answered alike."""
    batch = [
        make_event(0, idempotency_key="k"),
        make_event(1),
        make_event(1),  # same content
        make_event(6, idempotency_key="k"),  # same key and request
        make_event(2, payload={"n": 2, "text": "NaN said as text"}),
        make_event(3, criterion="ac-1"),
    ]
    with Store.open(tmp_path / "batch.db", signing_key=key) as store:
        together = store.append_many(batch)
        assert store.verify() == []
    with Store.open(tmp_path / "single.db", signing_key=key) as store:
        single = [store.append(event) for event in batch]
        assert store.verify() == []
    assert together == single
    new = [0, 1, 4, 5]  # the repeats, one by one, are read back from the store
    assert [together[i].fields_set for i in new] == [single[i].fields_set for i in new]
    assert _rows(tmp_path / "batch.db") == _rows(tmp_path / "single.db")


@pytest.mark.parametrize("key", [None, b"secret"])
def test_events_sealed_together_are_those_sealed_one_by_one(key: bytes | None) -> None:
    from pytest_plangraph.store.chain import event_id, seal, seal_many

    events = [make_event(n) for n in range(5)]
    events.append(make_event(7, idempotency_key="x", criterion="ac-2"))
    bare = Event(kind="claim", node="n", at="2026-01-01T00:00:00Z", by="me", plan_digest="d")
    odd = Event(  # a given set naming something that is no field: seal() leaves it out
        kind="claim",
        node="m",
        at="2026-01-01T00:00:00Z",
        by="me",
        plan_digest="d",
        fields_set=bare.fields_set | {"no_such_field"},
    )
    events += [bare, bare.replace(criterion="ac-1"), bare.replace(id="given", seq=9, hash="h")]
    events.append(odd)
    fresh = [(event, event_id(event)) for event in events]
    together = seal_many(fresh, 3, "f" * 64, key)
    # a default made by a factory is a new value for each event sealed, as built
    assert together[6].payload == {} and together[6].payload is not bare.payload
    single, prev = [], "f" * 64
    for seq, (event, content_id) in enumerate(fresh, start=4):
        single.append(seal(event, seq, prev, key, content_id))
        prev = single[-1].hash
    assert together == single
    assert [(e.seq, e.prev, e.hash, e.signature, e.fields_set) for e in together] == [
        (e.seq, e.prev, e.hash, e.signature, e.fields_set) for e in single
    ]
