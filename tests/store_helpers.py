"""Events, shards and hand edits for the store tests."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from pytest_plangraph.plan.model import Event
from pytest_plangraph.store.sqlite import Store

PLAN_A = "a" * 64
PLAN_B = "b" * 64
PLAN_C = "c" * 64


def make_event(n: int, **fields: Any) -> Event:
    """A claim event numbered *n* (distinct content for distinct n)."""
    values: dict[str, Any] = {
        "kind": "claim",
        "node": f"step-{n % 3}",
        "at": f"2025-01-01T00:00:{n:02d}.000000+00:00",
        "by": "tester",
        "plan_digest": PLAN_A,
        "payload": {"n": n, "text": "ünïcode ✓"},
    }
    values.update(fields)
    return Event(**values)


def fill(path: Path, count: int, key: bytes | None = None) -> list[Event]:
    with Store.open(path, signing_key=key) as store:
        return [store.append(make_event(n)) for n in range(count)]


def tamper(path: Path, sql: str, *params: Any) -> None:
    """Edit the store by hand, as someone with the sqlite3 shell would."""
    con = sqlite3.connect(path, isolation_level=None)
    con.execute("DROP TRIGGER IF EXISTS events_no_update")
    con.execute("DROP TRIGGER IF EXISTS events_no_delete")
    con.execute(sql, params)
    con.close()
