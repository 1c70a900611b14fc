"""Benchmark: what the ``events_log`` trigger costs an append, in instructions (callgrind).

Every event appended to a store gets its ``log`` row from the trigger ``events_log``, which
makes it with :data:`~pytest_plangraph.store.schema.LOG_SOURCE`'s SQL: for an evidence record,
``json_valid`` and ``json_extract`` on the payload. This script appends the same evidence
events (the shape ``pytest --plangraph`` stores: 22 subjects, details, the run and git
information; about 3 KB of payload each) to an in-memory store made with the schema's own SQL,
once per variant of that trigger, each in its own process under callgrind:

* ``store``: the schema as it is;
* ``direct``: the same expressions on the trigger's ``NEW`` values instead of reading the row
  back through the view ``log_source`` (what a leaner trigger of the same meaning would cost);
* ``no-json``: a log row of the same size copied from the event without any JSON function
  (the floor of any trigger: the row's insert alone);
* ``none``: no log row at all.

The differences between the variants are what the trigger's parts cost: ``store − no-json``
is the JSON work, ``no-json − none`` the log row's insert.

Run: ``.venv/bin/python bench/log_trigger.py [--events 500]`` (valgrind installed).
"""

from __future__ import annotations

import argparse
import re
import sqlite3
import subprocess
import sys

from pytest_plangraph.canonical import canonical_json
from pytest_plangraph.store import schema
from pytest_plangraph.store.rows import INSERT_EVENT

VARIANTS = ("store", "direct", "no-json", "none")

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


def append(variant: str, events: int) -> None:
    """Append *events* evidence events to an in-memory store with the *variant* trigger."""
    con = sqlite3.connect(":memory:", isolation_level=None)
    for statement in schema.statements(schema.CREATE):
        con.execute(statement)
    if variant != "store":
        con.execute("DROP TRIGGER events_log")
    if variant in ("direct", "no-json"):
        con.execute(DIRECT if variant == "direct" else NO_JSON)
    rows = [_row(n) for n in range(1, events + 1)]
    con.execute("BEGIN")
    con.executemany(INSERT_EVENT, rows)
    con.execute("COMMIT")


def _row(n: int) -> tuple[object, ...]:
    """The values of :data:`INSERT_EVENT` for the *n*-th event (its chain fields made up)."""
    text = canonical_json(payload(n))
    at = "2025-01-01T00:00:00+00:00"
    head = (n, f"{n:064x}", "evidence", f"step-{n}", "ac-1", at, "ci", "f" * 64)
    return (*head, text, None, "", "h" * 64, None)


def count(variant: str, events: int) -> int:
    """The instructions of one process appending *events* with *variant*."""
    done = subprocess.run(
        [
            *("valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null"),
            *(sys.executable, __file__, "--events", str(events), "--variant", variant),
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
    args = parser.parse_args()
    if args.variant:
        append(args.variant, args.events)
        return
    counts = {variant: count(variant, args.events) for variant in VARIANTS}
    none = counts["none"]
    print(f"| trigger ({args.events} evidence events) | whole process | over no log row | a row |")
    print("| --- | ---: | ---: | ---: |")
    for variant, found in counts.items():
        over = found - none
        row = f"{found / 1e6:,.1f} M | {over / 1e6:,.1f} M | {over / args.events / 1e3:,.1f} K"
        print(f"| {variant} | {row} |")


if __name__ == "__main__":
    main()
