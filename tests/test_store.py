"""The evidence store on real SQLite files: events, chain, signatures, plans, export, modes and
migration (merge is in test_store_merge.py)."""

from __future__ import annotations

import hashlib
import hmac
import io
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from store_helpers import PLAN_A, PLAN_B, PLAN_C, fill, make_event, tamper

from pytest_plangraph.canonical import digest
from pytest_plangraph.errors import ConflictError, StoreError
from pytest_plangraph.store import schema
from pytest_plangraph.store.chain import (
    APPEND_ONLY_DISABLED,
    BAD_SIGNATURE,
    CHAIN_BROKEN,
    CONTENT_TAMPERED,
    LOG_MISMATCH,
    UNSIGNED,
    verify_events,
)
from pytest_plangraph.store.exchange import read_jsonl
from pytest_plangraph.store.filecache import CacheEntry
from pytest_plangraph.store.schema import SCHEMA_VERSION
from pytest_plangraph.store.sqlite import Store
from pytest_plangraph.vcs.environment import DEFAULT_STORE


@pytest.fixture
def store_path(tmp_path: Path) -> Path:
    return tmp_path / "repo" / DEFAULT_STORE


@pytest.fixture(autouse=True)
def _no_env_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PLANGRAPH_SIGNING_KEY", raising=False)


# --- events --------------------------------------------------------------------------------


def test_append_and_read_back_round_trip(store_path: Path) -> None:
    originals = [make_event(n) for n in range(5)]
    with Store.open(store_path) as store:
        stored = [store.append(event) for event in originals]
    assert store_path.is_file()
    with Store.open(store_path, create=False) as store:
        events = store.events()
        assert store.count() == 5
    assert events == stored
    assert [e.seq for e in events] == [1, 2, 3, 4, 5]
    assert [e.content() for e in events] == [e.content() for e in originals]
    assert events[0].payload == {"n": 0, "text": "ünïcode ✓"}


def test_chain_fields_follow_the_documented_formula(store_path: Path) -> None:
    events = fill(store_path, 3)
    assert events[0].prev == ""
    for before, event in zip([None, *events[:-1]], events, strict=True):
        assert event.id == digest(event.content())
        assert event.prev == (before.hash if before else "")
        assert event.hash == hashlib.sha256((event.prev + event.id).encode()).hexdigest()
        assert event.signature is None
    with Store.open(store_path) as store:
        assert store.verify() == []


def test_events_filter_by_node_kind_and_seq(store_path: Path) -> None:
    with Store.open(store_path) as store:
        for n in range(6):
            store.append(make_event(n, kind="claim" if n % 2 else "cancel"))
        assert [e.payload["n"] for e in store.events(node="step-1")] == [1, 4]
        assert [e.payload["n"] for e in store.events(kinds={"cancel"})] == [0, 2, 4]
        assert [e.seq for e in store.events(after_seq=4)] == [5, 6]
        assert store.events(kinds=[]) == []
        assert [e.payload["n"] for e in store.events(node="step-0", kinds=["claim"])] == [3]
        store.append(make_event(9, kind="cancel").replace(**{"payload": {"why": "x"}}))
        assert [e.seq for e in store.events(mentioning='"why"')] == [7]
        assert [e.seq for e in store.events(kinds=["claim"], mentioning='"why"')] == []
        assert len(store.events(mentioning="ünïcode")) == 6
        assert [e.seq for e in store.events(seqs={6, 2, 99})] == [2, 6]
        assert store.events(seqs=[]) == []


def test_same_content_twice_is_one_event(store_path: Path) -> None:
    with Store.open(store_path) as store:
        first = store.append(make_event(1))
        again = store.append(make_event(1))
        assert again == first
        assert store.count() == 1


def test_idempotency_key_makes_one_event(store_path: Path) -> None:
    with Store.open(store_path) as store:
        first = store.append(make_event(1, idempotency_key="claim-42"))
        # the same request retried later (another time, payload, even actor): the first event
        retried = store.append(make_event(4, idempotency_key="claim-42", by="other"))
        store.append(make_event(3, idempotency_key="claim-43"))
        batch = store.append_many([make_event(7, idempotency_key="claim-42"), make_event(5)])
        assert retried == first
        assert batch[0] == first
        assert store.count() == 3
        assert [e.payload["n"] for e in store.events()] == [1, 3, 5]


@pytest.mark.parametrize(
    "other",
    [{"node": "step-2"}, {"kind": "cancel"}, {"kind": "approval", "criterion": "ac-1"}],
    ids=["another-node", "another-kind", "another-criterion"],
)
def test_a_key_recorded_for_another_request_is_refused(
    store_path: Path, other: dict[str, Any]
) -> None:
    with Store.open(store_path) as store:
        store.append(make_event(1, idempotency_key="claim-42"))  # a claim of step-1
        with pytest.raises(ConflictError, match="IDEMPOTENCY_CONFLICT") as refused:
            store.append(make_event(4, idempotency_key="claim-42", **other))
        assert refused.value.reason == "IDEMPOTENCY_CONFLICT"
        # within one batch too, and then nothing of the batch is written
        with pytest.raises(ConflictError, match="IDEMPOTENCY_CONFLICT"):
            store.append_many(
                [make_event(7, idempotency_key="k"), make_event(8, idempotency_key="k", **other)]
            )
        assert [e.payload["n"] for e in store.events()] == [1]


def test_append_many_is_one_chain_in_order(store_path: Path) -> None:
    with Store.open(store_path) as store:
        stored = store.append_many([make_event(n) for n in range(4)])
        assert [e.seq for e in stored] == [1, 2, 3, 4]
        assert stored == store.events()
        assert store.verify() == []


# --- plan versions -------------------------------------------------------------------------


def test_plan_versions_are_numbered_per_store(store_path: Path) -> None:
    with Store.open(store_path) as store:
        assert store.latest_plan_version() is None
        assert store.register_plan(PLAN_A, "login") == 1
        assert store.register_plan(PLAN_B, "login") == 2
        assert store.register_plan(PLAN_A, "login") == 1
        assert store.register_plan(PLAN_C, "login") == 3
        assert store.plan_version(PLAN_B) == 2
        assert store.plan_version("f" * 64) is None
    with Store.open(store_path) as store:
        assert store.latest_plan_version() == 3
        assert [(p.digest, p.version) for p in store.plans()] == [
            (PLAN_A, 1),
            (PLAN_B, 2),
            (PLAN_C, 3),
        ]


def test_expected_plan_version_conflict_is_refused(store_path: Path) -> None:
    with Store.open(store_path) as store:
        store.register_plan(PLAN_A, "login")
        store.append(make_event(1), expected_plan_version=1)
        store.register_plan(PLAN_B, "login")
        with pytest.raises(ConflictError) as caught:
            store.append(make_event(2), expected_plan_version=1)
        assert caught.value.reason == "PLAN_VERSION_CONFLICT"
        assert caught.value.exit_code == 1
        assert "plan version 1" in str(caught.value) and "version 2" in str(caught.value)
        with pytest.raises(ConflictError):
            store.append_many([make_event(3), make_event(4)], expected_plan_version=3)
        assert store.count() == 1
        assert store.append(make_event(2), expected_plan_version=2).seq == 2


def test_expected_plan_version_on_a_store_without_plans(store_path: Path) -> None:
    with Store.open(store_path) as store, pytest.raises(ConflictError, match="no plan version"):
        store.append(make_event(1), expected_plan_version=1)


# --- verification --------------------------------------------------------------------------


def test_signatures_are_hmac_of_the_hash(store_path: Path) -> None:
    events = fill(store_path, 3, key=b"secret")
    for event in events:
        expected = hmac.new(b"secret", event.hash.encode(), hashlib.sha256).hexdigest()
        assert event.signature == expected
    with Store.open(store_path, signing_key=b"secret") as store:
        assert store.verify() == []
    with Store.open(store_path, signing_key=b"wrong") as store:
        problems = store.verify()
    assert [(p.seq, p.code) for p in problems] == [(n, BAD_SIGNATURE) for n in (1, 2, 3)]


def test_signing_key_comes_from_the_environment(
    store_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PLANGRAPH_SIGNING_KEY", "from-env")
    with Store.open(store_path) as store:
        assert store.signing
        event = store.append(make_event(1))
    assert event.signature == hmac.new(b"from-env", event.hash.encode(), "sha256").hexdigest()


def test_unsigned_events_are_reported_when_a_key_is_set(store_path: Path) -> None:
    fill(store_path, 2)
    with Store.open(store_path, signing_key=b"secret") as store:
        problems = store.verify()
    assert [(p.seq, p.code) for p in problems] == [(1, UNSIGNED), (2, UNSIGNED)]


def test_hand_edited_content_is_named_by_seq(store_path: Path) -> None:
    fill(store_path, 5)
    tamper(store_path, "UPDATE events SET payload = ? WHERE seq = 3", '{"n":99}')
    with Store.open(store_path) as store:
        problems = store.verify()
    assert [(p.seq, p.code) for p in problems] == [(3, CONTENT_TAMPERED), (0, APPEND_ONLY_DISABLED)]
    assert "event 3" in problems[0].message


def test_edit_with_a_fixed_up_id_breaks_the_chain(store_path: Path) -> None:
    events = fill(store_path, 4)
    forged = events[1].replace(by="mallory")
    new_id = digest(forged.content())
    tamper(store_path, "UPDATE events SET by_ = 'mallory', id = ? WHERE seq = 2", new_id)
    with Store.open(store_path) as store:
        problems = [p for p in store.verify() if p.seq]
    assert [(p.seq, p.code) for p in problems] == [(2, CHAIN_BROKEN)]


def test_deleted_event_breaks_the_chain_at_the_next(store_path: Path) -> None:
    fill(store_path, 4)
    tamper(store_path, "DELETE FROM events WHERE seq = 2")
    with Store.open(store_path) as store:
        problems = [p for p in store.verify() if p.seq]
    # the row status read for the deleted event stays behind in the log table
    assert [(p.seq, p.code) for p in problems] == [(2, LOG_MISMATCH), (3, CHAIN_BROKEN)]
    assert "the event is gone" in problems[0].message


def test_unreadable_row_is_reported_not_crashed_on(store_path: Path) -> None:
    fill(store_path, 2)
    tamper(store_path, "UPDATE events SET payload = 'not json', kind = 7 WHERE seq = 1")
    with Store.open(store_path) as store:
        assert [(p.seq, p.code) for p in store.verify() if p.seq] == [(1, CONTENT_TAMPERED)]
        with pytest.raises(StoreError, match=r"event 1 .* cannot be read"):
            store.events()


def test_triggers_refuse_update_and_delete(store_path: Path) -> None:
    fill(store_path, 2)
    con = sqlite3.connect(store_path, isolation_level=None)
    for sql in ("UPDATE events SET by_ = 'x'", "DELETE FROM events"):
        with pytest.raises(sqlite3.IntegrityError, match="append-only"):
            con.execute(sql)
    con.close()
    with Store.open(store_path) as store:
        assert store.count() == 2
        assert store.verify() == []


# --- export --------------------------------------------------------------------------------


def test_export_jsonl_round_trip(store_path: Path) -> None:
    fill(store_path, 4, key=b"k")
    out = io.StringIO()
    with Store.open(store_path, signing_key=b"k") as store:
        assert store.export_jsonl(out) == 4
        stored = store.events()
    lines = out.getvalue().splitlines()
    assert len(lines) == 4
    assert all(json.loads(line)["format"] == 1 for line in lines)
    assert json.loads(lines[2])["hash"] == stored[2].hash
    events = read_jsonl(lines)
    assert events == stored
    assert verify_events(events, b"k") == []
    broken = [*events[:2], events[3]]
    assert [(p.seq, p.code) for p in verify_events(broken, b"k")] == [(4, CHAIN_BROKEN)]


# --- cache, modes, migration ---------------------------------------------------------------


def test_file_hash_cache(store_path: Path) -> None:
    entry = CacheEntry("src/a.py", 11, 1_000, 1_001, 42, "d" * 64, 2_000)
    with Store.open(store_path) as store:
        assert store.cache_get("src/a.py") is None
        store.cache_put(entry, CacheEntry("src/b.py", 12, 1, 1, 0, "e" * 64, 3))
        store.cache_put(entry._replace(size=43, sha256="f" * 64, recorded_ns=2_001))
    with Store.open(store_path) as store:
        cached = store.cache_get("src/a.py")
        assert cached is not None and (cached.size, cached.sha256) == (43, "f" * 64)
        assert store.cache_get("src/b.py") == CacheEntry("src/b.py", 12, 1, 1, 0, "e" * 64, 3)


def test_readonly_store_refuses_writes(store_path: Path) -> None:
    fill(store_path, 1)
    with Store.open(store_path, readonly=True) as store:
        assert store.count() == 1
        with pytest.raises(StoreError, match="read-only"):
            store.append(make_event(5))


def test_missing_store_without_create(store_path: Path) -> None:
    with pytest.raises(StoreError, match="there is no store at"):
        Store.open(store_path, create=False)
    assert not store_path.exists()


def test_closed_store_says_so(store_path: Path) -> None:
    store = Store.open(store_path)
    store.close()
    store.close()
    with pytest.raises(StoreError, match="closed"):
        store.count()


def test_older_store_is_migrated_in_place(
    store_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    events = fill(store_path, 3)
    monkeypatch.setattr(schema, "SCHEMA_VERSION", SCHEMA_VERSION + 1)
    monkeypatch.setitem(
        schema.MIGRATIONS, SCHEMA_VERSION + 1, "ALTER TABLE plans ADD COLUMN note TEXT;"
    )
    with Store.open(store_path) as store:
        assert store.events() == events
        assert store.verify() == []
    con = sqlite3.connect(store_path)
    version = con.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0]
    columns = [row[1] for row in con.execute("PRAGMA table_info(plans)")]
    con.close()
    assert version == str(SCHEMA_VERSION + 1)
    assert "note" in columns


def test_missing_migration_is_an_error(store_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fill(store_path, 1)
    monkeypatch.setattr(schema, "SCHEMA_VERSION", SCHEMA_VERSION + 1)
    with pytest.raises(StoreError, match="no migration"):
        Store.open(store_path)
    monkeypatch.undo()
    with Store.open(store_path) as store:
        assert store.count() == 1
