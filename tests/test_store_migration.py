"""Stores of schema 1 (no ``log`` table): migrated in place when writable, read as they are
when read-only; either way status reads the same rows as from a store made today."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from pytest_plangraph.errors import StoreError, StoreTamperedError
from pytest_plangraph.plan.model import Event
from pytest_plangraph.store import schema
from pytest_plangraph.store.schema import SCHEMA_VERSION
from pytest_plangraph.store.sqlite import Store

PLAN = "a" * 64


def _evidence(n: int) -> Event:
    payload: dict[str, Any] = {
        "id": f"{n:064x}",
        "node": f"step-{n % 2}",
        "criterion": "ac-1",
        "outcome": "passed" if n % 3 else "failed",
        "reason": None if n % 3 else "TEST_FAILED",
        "criterion_digest": "c" * 64,
        "input_digest": f"{n % 4:064x}",
        "subjects": {"src/ünï côde.py": "d" * 64, f"out/{n}.txt": "e" * 64},
        "details": {"tests": [f"tests/test_x.py::test_{n}"]},
    }
    # older records may carry node and criterion only in the payload
    node = None if n == 3 else payload["node"]
    return Event(
        kind="evidence",
        node=node,
        criterion=None if node is None else "ac-1",
        at=f"2025-01-01T00:00:{n:02d}.000000+00:00",
        by="ci",
        plan_digest=PLAN,
        payload=payload,
    )


def _claim(n: int) -> Event:
    return Event(
        kind="claim",
        node=f"step-{n % 2}",
        at=f"2025-01-01T00:01:{n:02d}.000000+00:00",
        by="agent",
        plan_digest=PLAN,
        payload={"verdict": "FAILED"},
    )


def _schema_1_store(path: Path) -> list[Any]:
    """A store as schema 1 wrote it: the events, no log table. Returns today's log rows."""
    with Store.open(path) as store:
        store.append_many([_evidence(n) for n in range(8)] + [_claim(n) for n in range(3)])
        expected = list(store.log())
    _to_schema_1(path)
    return expected


def _to_schema_1(path: Path) -> None:
    """Take away what schemas 2 and 3 added: the log table (its triggers go with it), its view
    and the trigger on events that fills it; the hash cache's tag column."""
    con = sqlite3.connect(path, isolation_level=None)
    con.execute("DROP TABLE file_cache")  # made again as schema 1 wrote it, text included
    [table] = [s for s in schema.statements(schema.SCHEMA_1) if "TABLE file_cache" in s]
    con.execute(table)
    con.execute("DROP TRIGGER events_log")
    con.execute("DROP VIEW log_source")
    con.execute("DROP TABLE log")
    con.execute("UPDATE meta SET value = '1' WHERE key = 'schema_version'")
    con.close()


def _tables(path: Path) -> set[str]:
    con = sqlite3.connect(path)
    names = {row[0] for row in con.execute("SELECT name FROM sqlite_master")}
    con.close()
    return names


def test_a_schema_1_store_is_migrated_and_reads_the_same(tmp_path: Path) -> None:
    path = tmp_path / "store.db"
    expected = _schema_1_store(path)
    assert "log" not in _tables(path)
    with Store.open(path) as store:
        assert list(store.log()) == expected
        assert store.verify() == []
        store.append(_claim(9))
        assert len(store.log()) == len(expected) + 1
    assert {"log", "log_no_update", "log_no_delete", "log_source", "events_log"} <= _tables(path)
    con = sqlite3.connect(path)
    version = con.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0]
    con.close()
    assert version == str(SCHEMA_VERSION) == "3"


def test_a_read_only_schema_1_store_is_read_without_migrating(tmp_path: Path) -> None:
    path = tmp_path / "store.db"
    expected = _schema_1_store(path)
    with Store.open(path, readonly=True) as store:
        assert list(store.log()) == expected
        assert store.verify() == []
        assert len(store.events()) == len(expected)
    assert "log" not in _tables(path)


def test_the_migrated_log_is_append_only(tmp_path: Path) -> None:
    path = tmp_path / "store.db"
    _schema_1_store(path)
    Store.open(path).close()
    con = sqlite3.connect(path)
    with pytest.raises(sqlite3.IntegrityError, match="append-only"):
        con.execute("DELETE FROM log WHERE seq = 1")
    con.close()


@pytest.mark.parametrize("schema_1", [False, True])
def test_the_log_is_in_recording_order_after_a_merge(tmp_path: Path, schema_1: bool) -> None:
    newer, older = tmp_path / "newer.db", tmp_path / "older.db"
    with Store.open(older) as store:
        store.append_many([_evidence(n) for n in range(0, 8, 2)])  # 00, 02, 04, 06 seconds
    with Store.open(newer) as store:
        store.append_many([_evidence(n) for n in range(1, 8, 2)])  # 01, 03, 05, 07 seconds
        store.merge([older])
        chain = [e.payload["id"] for e in store.events()]
    if schema_1:
        _to_schema_1(newer)
    with Store.open(newer, readonly=schema_1) as store:
        logged = [e.payload["id"] for e in store.log()]
        seqs = [e.seq for e in store.log()]
    assert logged == [f"{n:064x}" for n in range(8)] == chain
    assert seqs == [5, 1, 6, 2, 7, 3, 8, 4]


def test_a_dropped_log_table_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "store.db"
    with Store.open(path) as store:
        store.append(_claim(0))
    con = sqlite3.connect(path, isolation_level=None)
    con.execute("DROP TABLE log")
    con.close()
    for readonly in (False, True):
        with pytest.raises(StoreTamperedError, match="its table log was removed"):
            Store.open(path, readonly=readonly)


def test_an_empty_node_column_is_kept_as_the_migration_keeps_it(tmp_path: Path) -> None:
    path = tmp_path / "store.db"
    event = _evidence(1).replace(node="")
    with Store.open(path) as store:
        store.append(event)
        today = list(store.log())
    _to_schema_1(path)
    with Store.open(path) as store:
        assert list(store.log()) == today
        assert store.verify() == []


def test_a_hand_edited_payload_does_not_stop_the_migration(tmp_path: Path) -> None:
    path = tmp_path / "store.db"
    _schema_1_store(path)
    con = sqlite3.connect(path, isolation_level=None)
    con.execute("DROP TRIGGER events_no_update")
    con.execute("UPDATE events SET payload = '{\"broken' WHERE seq = 2")
    con.close()
    with Store.open(path) as store:  # migrated, and still writable
        assert (2, "CONTENT_TAMPERED") in [(p.seq, p.code) for p in store.verify()]
        with pytest.raises(StoreError, match="event 2"):
            store.log()
        store.append(_claim(8))
        assert store.count() == 12


def test_a_writer_that_knows_nothing_of_the_log_still_fills_it(tmp_path: Path) -> None:
    from pytest_plangraph.store.chain import event_id, seal
    from pytest_plangraph.store.rows import INSERT_EVENT, event_row

    path = tmp_path / "store.db"
    with Store.open(path) as store:
        first = store.append(_claim(0))
    # as a process of the previous release would append: the events table only
    late = _evidence(5)
    row = event_row(seal(late, 2, first.hash, None, event_id(late)))
    con = sqlite3.connect(path, isolation_level=None)
    con.execute(INSERT_EVENT, row)
    con.close()
    with Store.open(path) as store:
        logged = {e.seq: e for e in store.log()}
        assert sorted(logged) == [1, 2]
        assert logged[2].payload["outcome"] == late.payload["outcome"]
        assert logged[2].node == late.node
        assert store.verify() == []
