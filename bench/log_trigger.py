"""Benchmark: what the ``events_log`` trigger costs an append, in instructions (callgrind).

Every event appended to a store gets its ``log`` row from the trigger ``events_log``, which
makes it with :data:`~pytest_plangraph.store.schema.LOG_SOURCE`'s SQL: for an evidence record,
``json_valid`` and ``json_extract`` on the payload. This script appends the same evidence
events (the shape ``pytest --plangraph`` stores: 22 subjects, details, the run and git
information; about 1.5 KB of payload each) to an in-memory store made with the schema's own SQL,
once per variant of that trigger, each in its own process under callgrind:

* ``store``: the schema as it is;
* ``direct``: the same expressions on the trigger's ``NEW`` values instead of reading the row
  back through the view ``log_source`` (what a leaner trigger of the same meaning would cost);
* ``body-only``: the ``direct`` row with only its body made from the payload (one
  ``json_extract`` of the verdict fields, no ``json_valid``: wrong for a payload that is not
  JSON) and the record column left empty: the floor of any trigger that writes the body status
  reads;
* ``log-rows``: no trigger; the very rows ``store`` makes (read, with the events, from the
  store they are taken from) inserted by a second ``executemany``: the log rows without any
  JSON function or trigger, as a store that wrote them itself would;
* ``no-json``: a log row of about the same size copied from the event without any JSON
  function (``substr``, which walks the text's characters);
* ``valid-1`` and ``valid-4``: the ``no-json`` row, its record column given only when
  ``json_valid(NEW.payload)`` holds, tested once and four times (whether each JSON call parses
  the payload again: four parses would cost three parses more than one);
* ``none``: no log row at all;
* ``skip``: the rows read and nothing inserted.

The differences between the variants are what the trigger's parts cost: ``store − log-rows``
is the trigger's JSON work and its statement, ``log-rows − none`` the log rows' insert,
``valid-1 − no-json`` one parse of each payload, ``valid-4 − valid-1`` three more calls of a
JSON function on it, and ``none − skip`` the events' own rows (with their indexes).

The events are made once, before the counts, in a store file that every variant reads them
(and ``log-rows`` their log rows) from. With ``--run`` they are instead the evidence events a
``pytest --plangraph`` run stored on ``bench_plugin.py``'s suite of as many tests (its payloads
a run's own, about 2.3 KB each); ``--store`` takes them from a store already written. With
``--file`` the store appended to is a file in WAL mode (as a store is opened), committed once,
not an in-memory database.

Run: ``.venv/bin/python bench/log_trigger.py [--events 500] [--file] [--run]`` (valgrind
installed).
"""

from __future__ import annotations

import argparse
import re
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

from pytest_plangraph.canonical import canonical_json
from pytest_plangraph.store import schema
from pytest_plangraph.store.rows import COLUMNS, INSERT_EVENT

VARIANTS = (
    "store",
    "direct",
    "body-only",
    "log-rows",
    "no-json",
    "valid-1",
    "valid-4",
    "none",
    "skip",
)

_CASE = "CASE WHEN NEW.kind = 'evidence' AND json_valid(NEW.payload)"
DIRECT = f"""
CREATE TRIGGER events_log AFTER INSERT ON events
BEGIN
    INSERT INTO log (seq, id, kind, node, criterion, at, by_, record, body)
    SELECT NEW.seq, NEW.id, NEW.kind,
           {_CASE} THEN coalesce(NEW.node, json_extract(NEW.payload, '$.node'))
                ELSE NEW.node END,
           {_CASE} THEN coalesce(NEW.criterion, json_extract(NEW.payload, '$.criterion'))
                ELSE NEW.criterion END,
           NEW.at, NEW.by_,
           {_CASE} THEN json_extract(NEW.payload, '$.id') END,
           {_CASE} THEN json_extract(NEW.payload, '$.outcome', '$.reason', '$.criterion_digest',
                                     '$.input_digest', '$.subjects')
                ELSE NEW.payload END;
END
"""
NO_JSON = """
CREATE TRIGGER events_log AFTER INSERT ON events
BEGIN
    INSERT INTO log (seq, id, kind, node, criterion, at, by_, record, body)
    VALUES (NEW.seq, NEW.id, NEW.kind, NEW.node, NEW.criterion, NEW.at, NEW.by_,
            substr(NEW.payload, 1, 64), substr(NEW.payload, 400));
END
"""
BODY_ONLY = """
CREATE TRIGGER events_log AFTER INSERT ON events
BEGIN
    INSERT INTO log (seq, id, kind, node, criterion, at, by_, record, body)
    VALUES (NEW.seq, NEW.id, NEW.kind, NEW.node, NEW.criterion, NEW.at, NEW.by_, NULL,
            json_extract(NEW.payload, '$.outcome', '$.reason', '$.criterion_digest',
                         '$.input_digest', '$.subjects'));
END
"""
_VALID = "json_valid(NEW.payload)"
VALID = {
    count: NO_JSON.replace(
        "substr(NEW.payload, 1, 64),",
        f"CASE WHEN {' AND '.join([_VALID] * count)} THEN substr(NEW.payload, 1, 64) END,",
    )
    for count in (1, 4)
}


def payload(n: int) -> dict[str, object]:
    """An evidence payload of the shape a ``pytest --plangraph`` run stores."""
    subjects = {f"tests/test_f{n % 10}/__init__.{ext}": "absent" for ext in ("py", "so", "pyc")}
    subjects |= {f"{name}.py": "absent" for name in ("conftest", "sitecustomize", "__init__")}
    subjects |= {f"src/m{n}.py": f"{n:064x}", f"tests/test_f{n % 10}.py": f"{n + 1:064x}"}
    subjects |= {f"tests/extra_{k}.py": "absent" for k in range(12)}
    subjects['tests/::collect{"python_files":["test_*.py"],"venv":false}'] = "c" * 64
    return {
        "id": f"{n:064x}",
        "node": f"step-{n}",
        "criterion": "ac-1",
        "criterion_digest": "c" * 64,
        "input_digest": "d" * 64,
        "verifier": "test",
        "outcome": "passed",
        "reason": None,
        "details": {"tests": {f"tests/test_f{n % 10}.py::test_{n}": "passed"}},
        "subjects": subjects,
        "git": {"branch": "main", "commit": "e" * 40, "dirty": False},
        "plan": {"digest": "f" * 64, "id": "bench", "version": 1},
        "recorded_by": "ci",
        "run": {"id": "0" * 32, "python": "3.11.7", "pytest": "9.2.0", "ci": {}},
    }


def run_store(folder: Path, tests: int) -> Path:
    """The store a ``pytest --plangraph`` run wrote on ``bench_plugin.py``'s suite of *tests*
    tests, made in *folder*."""
    import bench_plugin

    bench_plugin.build(folder, tests)
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--plangraph"]
    subprocess.run(command, cwd=folder, check=True, capture_output=True)
    return folder / ".plangraph" / "store.db"


def made_store(folder: Path, events: int) -> Path:
    """A store file in *folder* holding *events* made-up evidence events (:func:`payload`) and
    their log rows, as the schema makes them."""
    path = folder / "made.db"
    con = sqlite3.connect(path, isolation_level=None)
    for statement in schema.statements(schema.CREATE):
        con.execute(statement)
    con.executemany(INSERT_EVENT, [_row(n) for n in range(1, events + 1)])
    con.close()
    return path


def stored_rows(store: Path, events: int, table: str = "events") -> list[tuple[object, ...]]:
    """The values of :data:`INSERT_EVENT` for the first *events* evidence events of *store*
    (of their ``log`` rows with *table* ``log``), numbered from 1."""
    con = sqlite3.connect(f"file:{store}?mode=ro", uri=True)
    select = f"e.{COLUMNS.replace(', ', ', e.')}" if table == "events" else "l.*"
    query = (
        f"SELECT {select} FROM events e JOIN log l ON l.seq = e.seq "
        "WHERE e.kind = 'evidence' ORDER BY e.seq LIMIT ?"
    )
    rows = con.execute(query, (events,)).fetchall()
    con.close()
    return [(n, *row[1:]) for n, row in enumerate(rows, 1)]


def append(variant: str, events: int, store: Path, file: bool = False) -> None:
    """Append the first *events* evidence events of *store* to an in-memory store (a file in
    WAL mode with *file*) with the *variant* trigger (``skip``: none appended)."""
    rows = stored_rows(store, events)
    logs = stored_rows(store, events, "log") if variant == "log-rows" else []
    with tempfile.TemporaryDirectory() as folder:
        con = sqlite3.connect(Path(folder) / "store.db" if file else ":memory:")
        con.isolation_level = None
        if file:
            con.execute("PRAGMA journal_mode=WAL").fetchone()
        _append(con, variant, rows, logs)
        con.close()


def _append(
    con: sqlite3.Connection,
    variant: str,
    rows: list[tuple[object, ...]],
    logs: list[tuple[object, ...]],
) -> None:
    for statement in schema.statements(schema.CREATE):
        con.execute(statement)
    if variant != "store":
        con.execute("DROP TRIGGER events_log")
    if variant in ("direct", "no-json"):
        con.execute(DIRECT if variant == "direct" else NO_JSON)
    if variant == "body-only":
        con.execute(BODY_ONLY)
    if variant.startswith("valid-"):
        con.execute(VALID[int(variant[-1])])
    con.execute("BEGIN")
    if variant != "skip":
        con.executemany(INSERT_EVENT, rows)
    if logs:
        con.executemany("INSERT INTO log VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", logs)
    con.execute("COMMIT")


def _row(n: int) -> tuple[object, ...]:
    """The values of :data:`INSERT_EVENT` for the *n*-th event (its chain fields made up)."""
    text = canonical_json(payload(n))
    at = "2025-01-01T00:00:00+00:00"
    head = (n, f"{n:064x}", "evidence", f"step-{n}", "ac-1", at, "ci", "f" * 64)
    return (*head, text, None, "", "h" * 64, None)


def count(variant: str, events: int, file: bool, store: Path) -> int:
    """The instructions of one process appending *events* of *store* with *variant* (to a
    file: *file*)."""
    done = subprocess.run(
        [
            *("valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null"),
            *(sys.executable, __file__, "--events", str(events), "--variant", variant),
            *(("--file",) if file else ()),
            *("--store", str(store)),
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    found = re.search(r"Collected : (\d+)", done.stderr)
    if found is None:
        raise SystemExit(f"no count from valgrind:\n{done.stderr[-2000:]}")
    return int(found.group(1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=500)
    parser.add_argument("--variant", choices=VARIANTS, help="append once, uncounted")
    parser.add_argument("--file", action="store_true", help="a store file in WAL mode")
    parser.add_argument("--run", action="store_true", help="the events of a pytest run")
    parser.add_argument("--store", type=Path, help="take the events of this store")
    args = parser.parse_args()
    if args.variant:
        append(args.variant, args.events, args.store, args.file)
        return
    with tempfile.TemporaryDirectory() as folder:
        store = args.store
        if store is None:
            store = (run_store if args.run else made_store)(Path(folder), args.events)
        counts = {variant: count(variant, args.events, args.file, store) for variant in VARIANTS}
    none = counts["none"]
    print(f"| trigger ({args.events} evidence events) | whole process | over no log row | a row |")
    print("| --- | ---: | ---: | ---: |")
    for variant, found in counts.items():
        over = found - none
        row = f"{found / 1e6:,.1f} M | {over / 1e6:,.1f} M | {over / args.events / 1e3:,.1f} K"
        print(f"| {variant} | {row} |")


if __name__ == "__main__":
    main()
