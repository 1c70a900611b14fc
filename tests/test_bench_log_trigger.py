"""The variants ``bench/log_trigger.py`` counts, and the parts ``bench/store_insert.py`` cuts
``Store._insert`` into: the differences the benches print mean what their docs say only if the
variants that claim the schema's ``log`` rows make exactly those rows, and if every marker of
the insert is one the split names."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

from conftest import ROOT

sys.path.insert(0, str(ROOT / "bench"))

import log_trigger
import store_insert


def _log(
    variant: str, rows: list[tuple[object, ...]], logs: list[tuple[object, ...]]
) -> list[tuple[object, ...]]:
    con = sqlite3.connect(":memory:", isolation_level=None)
    log_trigger._append(con, variant, rows, logs if variant == "log-rows" else [])
    found = con.execute("SELECT * FROM log ORDER BY seq").fetchall()
    con.close()
    return found


def test_the_variants_of_the_same_meaning_make_the_schemas_rows(tmp_path: Path) -> None:
    store = log_trigger.made_store(tmp_path, 12)
    rows = log_trigger.stored_rows(store, 12)
    logs = log_trigger.stored_rows(store, 12, "log")
    assert [row[0] for row in rows] == list(range(1, 13))
    made = _log("store", rows, logs)
    assert len(made) == 12
    assert all(row[7] is not None and str(row[8]).startswith('["passed",') for row in made)
    assert _log("direct", rows, logs) == made
    assert _log("log-rows", rows, logs) == made  # the floor inserts the very same rows
    assert _log("valid-1", rows, logs) == _log("valid-4", rows, logs)  # only the calls differ
    assert _log("none", rows, logs) == []
    assert _log("skip", rows, logs) == []


def test_the_stored_rows_are_renumbered_from_one(tmp_path: Path) -> None:
    store = log_trigger.made_store(tmp_path, 5)
    con = sqlite3.connect(store)
    con.execute("DROP TRIGGER log_no_delete")
    con.execute("DELETE FROM log WHERE seq < 3")  # the event rows stay; a join keeps 3..5
    con.commit()
    con.close()
    rows = log_trigger.stored_rows(store, 5)
    logs = log_trigger.stored_rows(store, 5, "log")
    assert [row[0] for row in rows] == [1, 2, 3] == [row[0] for row in logs]
    assert [row[1] for row in rows] == [f"{n:064x}" for n in (3, 4, 5)]
    assert [row[1] for row in logs] == [row[1] for row in rows]


def test_every_marker_of_the_insert_is_a_named_part(tmp_path: Path) -> None:
    labels = tmp_path / "labels"
    env = dict(os.environ, STORE_INSERT_LABELS=str(labels))
    command = [sys.executable, str(ROOT / "bench" / "store_insert.py"), "--events", "4"]
    subprocess.run([*command, "--append"], env=env, check=True, cwd=tmp_path)
    found = labels.read_text().split("\n")
    assert found[0] == "+insert" and found[-1] == "-insert"
    assert found == [
        "+insert",
        "+check_schema",
        "-check_schema",
        "+seal_many",
        "-seal_many",
        "+confirm_stored",
        "-confirm_stored",
        "-insert",
    ]
    assert set(found[:-1]) <= set(store_insert.PARTS)  # the last one ends the split
