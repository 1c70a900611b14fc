"""The id check status makes of each event it reads (pure): the same id as the event's content
address for every row plangraph writes, another for any other payload text."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_plangraph.canonical import canonical_json
from pytest_plangraph.plan.model import Event
from pytest_plangraph.store.chain import event_id, seal
from pytest_plangraph.store.rows import event_row
from pytest_plangraph.store.tail import (
    CONTENT_FIELDS,
    STORE_TAMPERED,
    first_bad_link,
    stored_id,
)

AT = "2026-12-01T00:00:00.000001+00:00"


def _event(**fields: Any) -> Event:
    base: dict[str, Any] = {"kind": "claim", "node": "n", "at": AT, "by": "agent"}
    return Event(plan_digest="a" * 64, **{**base, **fields})


EVENTS = [
    _event(payload={"verdict": "FAILED"}),
    _event(kind="evidence", criterion="ac-1", payload={"outcome": "passed", "subjects": {}}),
    _event(node=None, kind="retry", payload={}),
    _event(by='Zoë \u2603 "quoted" \\', payload={"note": "line\nbreak", "n": 1.5, "z": None}),
    _event(idempotency_key="key-1", payload={"nested": [{"b": 1, "a": [True, False]}]}),
]


@pytest.mark.parametrize("event", EVENTS)
def test_the_stored_id_is_the_content_address(event: Event) -> None:
    row = event_row(seal(event, 1, "", None))
    assert stored_id(row) == event_id(event)


def test_the_content_fields_are_those_of_an_event() -> None:
    """A field added to events must be hashed here too (and stored in a column)."""
    content = set(EVENTS[0].content())
    assert content == {*CONTENT_FIELDS, "payload", "plan_digest"}
    assert list(CONTENT_FIELDS) == sorted(CONTENT_FIELDS)


@pytest.mark.parametrize(
    "payload",
    [
        '{"verdict":"PASSED"}',  # another value
        '{"verdict": "FAILED"}',  # the same value, not canonical
        '{"verdict":"PASSED","verdict":"FAILED"}',  # a key twice: SQLite reads the first
        "not json",
        None,
    ],
)
def test_any_other_payload_text_gives_another_id(payload: str | None) -> None:
    event = EVENTS[0]
    row = list(event_row(seal(event, 1, "", None)))
    assert row[8] == canonical_json(event.payload)
    row[8] = payload
    assert stored_id(row) != event_id(event)
    problem = first_bad_link([row], "")
    assert problem is not None and problem.code == STORE_TAMPERED and problem.seq == 1


def test_a_chain_that_does_not_start_at_the_trusted_hash_is_named() -> None:
    first = seal(EVENTS[0], 5, "f" * 64, None)
    second = seal(EVENTS[1], 6, first.hash, None)
    rows = [event_row(first), event_row(second)]
    assert first_bad_link(rows, "f" * 64) is None
    problem = first_bad_link(rows, "e" * 64)  # the checkpoint trusts another hash at 4
    assert problem is not None and (problem.seq, problem.event_id) == (5, first.id)
    assert "does not link" in problem.message
