"""Benchmark: where the store's insert of a run's records goes, part by part (callgrind).

``Store._insert`` is the ``store insert`` step of ``phases_pytest.py``: the schema's check,
the events sealed into the chain (``seal_many``), their rows made and inserted with
``executemany`` (the ``events_log`` trigger writes each one's ``log`` row in the same
statement), and the check that the store kept them (``confirm_stored``). This script appends
*events* evidence events of the shape a ``pytest --plangraph`` run stores
(:func:`log_trigger.payload`) to a fresh store file in one ``append_many``, with the payload
texts given and the collector paused as the session's end does, under callgrind; each part is
cut out by a marker, as ``phases_pytest.py`` does (a call of ``binascii.crc_hqx`` before and
after it, ``--dump-before=binascii_crc_hqx``). What ``log_trigger.py`` counts (the trigger's
own parts) is inside the ``rows and executemany`` line. With ``--run`` (or ``--store``), the
events are those a ``pytest --plangraph`` run stored (``log_trigger.py``'s ``--run``).

Run: ``.venv/bin/python bench/store_insert.py [--events 500] [--run]`` (valgrind installed).
"""

from __future__ import annotations

import argparse
import binascii
import json
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from log_trigger import payload, run_store, stored_rows

PARTS = {
    "+insert": "before the seal",
    "+check_schema": "the schema's check",
    "-check_schema": "before the seal",
    "+seal_many": "the events sealed (seal_many)",
    "-seal_many": "rows and executemany (the log trigger inside)",
    "+confirm_stored": "the check that they were kept (confirm_stored)",
    "-confirm_stored": "after the check",
}
"""What the instructions from each marker to the next are (the parts of ``_insert``)."""

LABELS: list[str] = []


def mark(label: str) -> None:
    """Name the next part; valgrind dumps the count so far before the call below."""
    LABELS.append(label)
    binascii.crc_hqx(b"x", 0)


def marked(owner: Any, name: str, label: str) -> None:
    """Replace *owner*'s attribute *name* by the same function between two markers."""
    function: Callable[..., Any] = getattr(owner, name)

    def between(*args: Any, **kwargs: Any) -> Any:
        mark("+" + label)
        try:
            return function(*args, **kwargs)
        finally:
            mark("-" + label)

    setattr(owner, name, between)


def append(events: int, store: Path | None) -> None:
    """Append *events* evidence events (made up, or those of *store*) to a fresh store file,
    the parts marked."""
    from pytest_plangraph.canonical import canonical_json
    from pytest_plangraph.memory import collector_paused
    from pytest_plangraph.plan.model import Event
    from pytest_plangraph.store import sqlite

    for name in ("check_schema", "seal_many", "confirm_stored"):
        marked(sqlite, name, name)
    marked(sqlite.Store, "_insert", "insert")
    made = [
        Event(
            kind=row[2],
            node=row[3],
            criterion=row[4],
            at=row[5],
            by=row[6],
            plan_digest=row[7],
            payload=json.loads(str(row[8])),
        )
        for row in (stored_rows(store, events) if store is not None else ())
    ]
    made = made or [
        Event(
            kind="evidence",
            node=f"step-{n}",
            criterion="ac-1",
            at="2025-01-01T00:00:00+00:00",
            by="ci",
            plan_digest="f" * 64,
            payload=payload(n),
        )
        for n in range(1, events + 1)
    ]
    texts = [canonical_json(event.payload) for event in made]
    with (
        tempfile.TemporaryDirectory() as folder,
        sqlite.Store.open(Path(folder) / "store.db") as fresh,
        collector_paused(),
    ):
        fresh.append_many(made, texts=texts)
    Path(os.environ["STORE_INSERT_LABELS"]).write_text("\n".join(LABELS))


def count(events: int, store: Path | None) -> dict[str, int]:
    """The instructions of each part of one process's insert of *events* (those of *store*),
    by part name."""
    with tempfile.TemporaryDirectory() as out:
        env = dict(os.environ, STORE_INSERT_LABELS=f"{out}/labels")
        command = [
            *("valgrind", "--tool=callgrind", "--dump-before=binascii_crc_hqx"),
            f"--callgrind-out-file={out}/callgrind.%p",
            *(sys.executable, __file__, "--events", str(events), "--append"),
            *(("--store", str(store)) if store is not None else ()),
        ]
        subprocess.run(command, env=env, capture_output=True, check=True)
        dumps = sorted(
            (int(found.group(2)), path)
            for path in Path(out).glob("callgrind.*")
            if (found := re.search(r"\.(\d+)\.(\d+)$", path.name)) is not None
        )
        labels = Path(f"{out}/labels").read_text().split("\n")
        parts: dict[str, int] = {}
        # dump k counts from marker k - 1 to marker k: the part that marker k - 1 began
        for (_, path), label in zip(dumps[1:], labels, strict=False):
            total = re.search(r"^totals: (\d+)", path.read_text(), re.M)
            if total is None:
                raise SystemExit(f"no count in {path.name}")
            part = PARTS.get(label)
            if part is not None:
                parts[part] = parts.get(part, 0) + int(total.group(1))
        return parts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=500)
    parser.add_argument("--append", action="store_true", help="append once, uncounted")
    parser.add_argument("--run", action="store_true", help="the events of a pytest run")
    parser.add_argument("--store", type=Path, help="take the events of this store")
    args = parser.parse_args()
    if args.append:
        append(args.events, args.store)
        return
    with tempfile.TemporaryDirectory() as folder:
        store = run_store(Path(folder), args.events) if args.run else args.store
        parts = count(args.events, store)
    print(f"| `Store._insert`, {args.events} evidence events | instructions | an event |")
    print("| --- | ---: | ---: |")
    for part, found in [*parts.items(), ("the whole insert", sum(parts.values()))]:
        print(f"| {part} | {found / 1e6:,.1f} M | {found / args.events / 1e3:,.1f} K |")


if __name__ == "__main__":
    main()
