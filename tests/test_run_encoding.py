"""Each record of a ``pytest --plangraph`` run is encoded once: the members every record of
the run shares (plan, git, run, recorded_by) are encoded once per run, the payload kept as
made is not dumped again, and the store encodes each payload once for both its row and the
event's content address. The joined texts are byte for byte :func:`canonical_json`'s
(hypothesis), and a real session stores what the checked path stores."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from plugin_helpers import evidence, jwt_project

import pytest_plangraph.judge.payloads as payloads
import pytest_plangraph.store.rows as rows
import pytest_plangraph.store.sqlite as sqlite
from pytest_plangraph.canonical import (
    canonical_json,
    digest,
    encoded_members,
    join_members,
    joined_members,
    text_digest,
)
from pytest_plangraph.plan.evidence import Evidence
from pytest_plangraph.plan.model import Event
from pytest_plangraph.store.chain import (
    chain_hash,
    event_id,
    event_id_of,
    event_ids_of,
    seal,
    sign,
)
from pytest_plangraph.store.sqlite import Store

TEXT = st.text(max_size=12)  # any code point: escapes, quotes, non-ASCII, lone surrogates
JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | TEXT,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(TEXT, inner, max_size=4),
    max_leaves=12,
)
OBJECTS = st.dictionaries(TEXT, JSON, max_size=8)


@settings(max_examples=300, deadline=None)
@given(OBJECTS)
def test_joined_members_are_the_canonical_json(value: dict[str, Any]) -> None:
    assert join_members(encoded_members(value)) == canonical_json(value)


@settings(max_examples=200, deadline=None)
@given(
    OBJECTS,
    st.sampled_from(["evidence", "claim", "release", "note"]),
    st.none() | TEXT,
    st.none() | TEXT,
    st.none() | TEXT,
    TEXT,
)
def test_an_event_id_from_its_encoded_payload_is_its_id(
    payload: dict[str, Any],
    kind: str,
    node: str | None,
    criterion: str | None,
    key: str | None,
    by: str,
) -> None:
    event = Event(
        kind=kind,
        node=node,
        criterion=criterion,
        at="2026-01-01T00:00:00Z",
        by=by,
        plan_digest="d" * 64,
        payload=payload,
        idempotency_key=key,
    )
    assert event_id_of(event, canonical_json(payload)) == event_id(event)
    assert text_digest(canonical_json(payload)) == digest(payload)


class Counts:
    """Counts calls of the real functions it wraps."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.counts: dict[str, int] = {}
        self.monkeypatch = monkeypatch

    def wrap(self, owner: object, name: str, label: str) -> None:
        real = getattr(owner, name)

        def counted(*args: Any, **kwargs: Any) -> Any:
            self.counts[label] = self.counts.get(label, 0) + 1
            return real(*args, **kwargs)

        self.monkeypatch.setattr(owner, name, counted)


def test_a_run_encodes_each_record_once(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = jwt_project(pytester)
    counts = Counts(monkeypatch)
    counts.wrap(Evidence, "to_json", "record dumped")
    counts.wrap(Event, "content", "event content dumped")
    counts.wrap(sqlite, "canonical_json", "payload encoded")
    counts.wrap(rows, "canonical_json", "payload encoded again for its row")
    counts.wrap(payloads, "digest", "record body encoded whole")
    result = pytester.inline_run("--plangraph", "-q", "-p", "no:cacheprovider")
    passed, _, failed = result.listoutcomes()
    assert passed and not failed
    stored = evidence(root)
    assert len(stored) == 3
    found = counts.counts
    assert found.get("record dumped", 0) == 0  # the payload is the body as made, plus its id
    assert found.get("event content dumped", 0) == 0  # the id comes from the encoded payload
    assert found.get("record body encoded whole", 0) == 0  # its id from the members encoded
    with Store.open(root / ".plangraph/store.db") as store:
        events = store.events()
    # no payload encoded by the store: each record's canonical text was joined by its maker
    # from the members its id was computed from, and serves the row and the event's id
    assert len(events) == 3 and found.get("payload encoded", 0) == 0
    assert found.get("payload encoded again for its row", 0) == 0
    for event in events:
        assert event.id == event_id(event)  # each content address as the audit computes it
        if event.evidence is not None:
            payload = event.payload
            assert payload == event.evidence.to_json()
            assert payload["id"] == digest({k: v for k, v in payload.items() if k != "id"})


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.tuples(
            OBJECTS,
            st.sampled_from(["evidence", "claim"]),
            st.none() | TEXT | st.integers(),
            TEXT,
            st.none() | TEXT | st.integers(),
            st.none() | TEXT,
            st.sampled_from(["2026-01-01T00:00:00Z", "2026-01-02T00:00:00Z"]),
        ),
        min_size=1,
        max_size=6,
    )
)
def test_the_ids_of_a_batch_are_each_events_id(
    batch: list[tuple[dict[str, Any], str, Any, str, Any, str | None, str]],
) -> None:
    """The store's one pass over a batch (the values several events share encoded once
    around each event's criterion, node and payload; an event of other values joined member
    by member) gives each event the id it has alone."""
    events = [
        Event(
            kind=kind,
            node=node,
            criterion=criterion,
            at=at,
            by=by,
            plan_digest="d" * 64,
            payload=payload,
            idempotency_key=key,
        )
        for payload, kind, node, by, criterion, key, at in batch
    ]
    texts = [canonical_json(event.payload) for event in events]
    assert event_ids_of(events, texts) == [event_id(event) for event in events]


@settings(max_examples=200, deadline=None)
@given(OBJECTS, TEXT)
def test_members_joined_in_two_parts_are_the_canonical_json(
    value: dict[str, Any], split: str
) -> None:
    """A text joined from the members sorted before *split* and those after it (the record
    maker's two parts around ``id``) is the object's canonical JSON."""
    members = encoded_members(value)
    keys = sorted(members)
    head = joined_members(members, [k for k in keys if k < split])
    tail = joined_members(members, [k for k in keys if k >= split])
    joined = "{" + ",".join(part for part in (head, tail) if part) + "}"
    assert joined == canonical_json(value)


def test_a_replaced_event_is_the_event_made_with_those_values() -> None:
    """``replace`` stores every field straight into its slot: the copy equals one made by
    the constructor, its given fields grow by the changed ones, and an unknown field is
    refused as the constructor refuses it."""
    event = Event(kind="note", at="2026-01-01T00:00:00Z", by="me", plan_digest="d" * 64)
    sealed = event.replace(id="i" * 64, seq=3, prev="", hash="h" * 64, signature=None)
    made = Event(
        kind="note",
        at="2026-01-01T00:00:00Z",
        by="me",
        plan_digest="d" * 64,
        id="i" * 64,
        seq=3,
        hash="h" * 64,
    )
    assert sealed == made
    assert sealed.fields_set == event.fields_set | {"id", "seq", "prev", "hash", "signature"}
    assert sealed.to_json(exclude_unset=True)["seq"] == 3
    assert event.seq == 0  # the original is unchanged
    with pytest.raises(TypeError, match="no field 'sequence'"):
        event.replace(sequence=4)


@settings(max_examples=100, deadline=None)
@given(
    OBJECTS,
    st.none() | TEXT,
    st.none() | TEXT,
    st.none() | TEXT,
    st.integers(1, 10**6),
    st.booleans(),
)
def test_an_event_sealed_from_its_values_is_the_copy_replace_makes(
    payload: dict[str, Any],
    node: str | None,
    criterion: str | None,
    key: str | None,
    seq: int,
    signed: bool,
) -> None:
    """An event sealed by building it from the values it gives and the chain's is, field by
    field and in the fields it says were given, the copy ``Frozen.replace`` makes."""
    event = Event(
        kind="claim",
        node=node,
        criterion=criterion,
        at="2026-01-01T00:00:00Z",
        by="ci",
        plan_digest="d" * 64,
        payload=payload,
        idempotency_key=key,
    )
    content_id = event_id(event)
    prev = "p" * 64
    sealed = seal(event, seq, prev, b"key" if signed else None, content_id)
    link = chain_hash(prev, content_id)
    expected = event.replace(
        id=content_id,
        seq=seq,
        prev=prev,
        hash=link,
        signature=sign(b"key", link) if signed else None,
    )
    assert sealed == expected and type(sealed) is Event
    assert sealed.fields_set == expected.fields_set
    assert all(getattr(sealed, name) == getattr(expected, name) for name in Event.FIELDS)
