"""The store under faults: foreign, damaged, newer and unwritable files, a full disk, a held lock,
concurrent writers and writers killed with SIGKILL. Each fault gives a clear StoreError and the
store keeps every event it had.

Some scenarios need a process of their own (several writers, a writer killed at random moments, a
writer without root's privileges); this file doubles as that process's script: ``python
test_store_faults.py COMMAND ARGS``.
"""

from __future__ import annotations

import itertools
import json
import os
import random
import select
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any, NoReturn

import pytest

from pytest_plangraph.errors import StoreError
from pytest_plangraph.plan.model import Event
from pytest_plangraph.store import opening
from pytest_plangraph.store.sqlite import Store

posix_only = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork and signals")
NOBODY = 65534


def make_event(n: int, tag: str = "t", blob: int = 0) -> Event:
    return Event(
        kind="evidence",
        node=f"step-{n % 5}",
        criterion="c",
        at=f"2025-01-01T00:00:00.{n:06d}+00:00",
        by=tag,
        plan_digest="a" * 64,
        payload={"n": n, "tag": tag, "blob": "x" * blob},
    )


def fill(path: Path, count: int, blob: int = 0) -> None:
    with Store.open(path) as store:
        store.append_many([make_event(n, blob=blob) for n in range(count)])


def run_script(*args: str) -> subprocess.Popen[str]:
    command = [sys.executable, __file__, *args]
    return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def finish(process: subprocess.Popen[str]) -> str:
    out, err = process.communicate(timeout=60)
    assert process.returncode == 0, err
    return out


@pytest.fixture(autouse=True)
def _no_env_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PLANGRAPH_SIGNING_KEY", raising=False)


# --- files that are not (our) stores -------------------------------------------------------


def test_newer_schema_is_refused_and_left_untouched(tmp_path: Path) -> None:
    path = tmp_path / "store.db"
    fill(path, 2)
    con = sqlite3.connect(path)
    with con:
        con.execute("UPDATE meta SET value = '99' WHERE key = 'schema_version'")
    con.close()
    before = path.read_bytes()
    with pytest.raises(StoreError) as caught:
        Store.open(path)
    message = str(caught.value)
    assert str(path) in message and "newer" in message and "schema 99" in message
    assert "--store" in message
    assert path.read_bytes() == before


@pytest.mark.parametrize(
    ("edit", "says"),
    [
        ("DROP TABLE meta", "has lost its meta table (edited outside plangraph)"),
        ("DELETE FROM meta WHERE key = 'schema_version'", "has no schema version"),
        ("UPDATE meta SET value = 'abc' WHERE key = 'schema_version'", "schema version 'abc'"),
    ],
    ids=["no-meta", "no-version", "bad-version"],
)
def test_a_store_whose_meta_table_was_edited_is_named_damaged(
    tmp_path: Path, edit: str, says: str
) -> None:
    path = tmp_path / "store.db"
    Store.open(path).close()
    con = sqlite3.connect(path)
    with con:
        con.execute(edit)
    con.close()
    before = path.read_bytes()
    with pytest.raises(StoreError) as refused:
        Store.open(path)
    message = str(refused.value)
    assert says in message and "The file was left untouched" in message
    assert "Restore it from a backup copy" in message
    assert path.read_bytes() == before


def test_foreign_sqlite_database_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "other.db"
    con = sqlite3.connect(path)
    with con:
        con.execute("CREATE TABLE users (name TEXT)")
        con.execute("INSERT INTO users VALUES ('ada')")
    con.close()
    before = path.read_bytes()
    with pytest.raises(StoreError, match="not a plangraph store"):
        Store.open(path)
    assert path.read_bytes() == before


@pytest.mark.parametrize(
    "content",
    [b"hello, I am a text file\n" * 50, b"SQLite format 3\x00" + b"\x00" * 20],
    ids=["garbage", "header-only"],
)
def test_non_database_file_is_refused_and_left_untouched(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "store.db"
    path.write_bytes(content)
    with pytest.raises(StoreError) as caught:
        Store.open(path)
    assert str(path) in str(caught.value) and "untouched" in str(caught.value)
    assert path.read_bytes() == content


@pytest.mark.parametrize("keep", ["half", "two-pages"])
def test_truncated_store_is_refused_and_left_untouched(tmp_path: Path, keep: str) -> None:
    path = tmp_path / "store.db"
    fill(path, 40, blob=500)
    data = path.read_bytes()
    page_size = int.from_bytes(data[16:18], "big")
    cut = data[: len(data) // 2 + 7] if keep == "half" else data[: 2 * page_size]
    path.write_bytes(cut)
    with pytest.raises(StoreError, match="truncated"):
        Store.open(path)
    assert path.read_bytes() == cut


def test_corrupted_pages_are_refused_and_left_untouched(tmp_path: Path) -> None:
    path = tmp_path / "store.db"
    fill(path, 40, blob=500)
    data = bytearray(path.read_bytes())
    page_size = int.from_bytes(data[16:18], "big")
    for offset in range(page_size, len(data)):  # every page after the header page
        data[offset] = (offset * 7) & 0xFF
    path.write_bytes(bytes(data))
    with pytest.raises(StoreError, match="damaged or not a plangraph store"):
        Store.open(path)
    assert path.read_bytes() == bytes(data)


def test_store_path_that_is_a_directory(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="is a directory"):
        Store.open(tmp_path)


def test_store_directory_that_cannot_be_created(tmp_path: Path) -> None:
    blocker = tmp_path / "plain-file"
    blocker.write_text("not a directory")
    with pytest.raises(StoreError, match="cannot create the directory"):
        Store.open(blocker / ".plangraph" / "store.db")
    assert blocker.read_text() == "not a directory"


# --- write failures ------------------------------------------------------------------------


@posix_only
def test_read_only_directory_refuses_with_permission_denied(tmp_path: Path) -> None:
    directory = tmp_path / "shared"
    path = directory / "store.db"
    fill(path, 3)
    before = path.read_bytes()
    path.chmod(0o444)
    directory.chmod(0o555)
    try:
        # a real EACCES: the child gives up root (or is not root) before touching the store
        out = finish(run_script("unprivileged-append", str(directory)))
    finally:
        directory.chmod(0o755)
        path.chmod(0o644)
    assert out.startswith("StoreError:"), out
    assert "cannot write to the store at store.db: permission denied" in out
    assert "--store" in out
    assert path.read_bytes() == before
    with Store.open(path) as store:
        assert store.count() == 3
        assert store.verify() == []


def test_disk_full_keeps_every_event(tmp_path: Path) -> None:
    path = tmp_path / "store.db"
    fill(path, 3)
    with Store.open(path) as store:
        # SQLite's page cap fails a growing write with SQLITE_FULL, the same error a full disk
        # gives; the connection is the store's own, so the append path under test is the real one
        con = store._con
        assert con is not None
        pages = con.execute("PRAGMA page_count").fetchone()[0]
        con.execute(f"PRAGMA max_page_count = {pages}")
        big = [make_event(100 + n, blob=20_000) for n in range(3)]
        with pytest.raises(StoreError, match="disk is full") as caught:
            store.append_many(big)
        assert "kept every event" in str(caught.value)
        assert store.count() == 3
        assert store.verify() == []
        con.execute("PRAGMA max_page_count = 1073741823")
        assert [e.seq for e in store.append_many(big)] == [4, 5, 6]
    with Store.open(path) as store:
        assert store.count() == 6
        assert store.verify() == []


def test_lock_held_past_the_busy_timeout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "store.db"
    fill(path, 1)
    monkeypatch.setattr(opening, "BUSY_TIMEOUT_S", 0.2)
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        with Store.open(path) as store:
            started = time.monotonic()
            with pytest.raises(StoreError, match="locked by another process"):
                store.append(make_event(7))
            assert time.monotonic() - started >= 0.15
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    with Store.open(path) as store:
        assert store.append(make_event(7)).seq == 2


# --- several processes ---------------------------------------------------------------------


def test_concurrent_writers_lose_nothing(tmp_path: Path) -> None:
    path = tmp_path / ".plangraph" / "store.db"
    writers, each = 4, 30
    processes = [run_script("append", str(path), str(each), f"w{n}") for n in range(writers)]
    for process in processes:
        finish(process)
    with Store.open(path) as store:
        events = store.events()
        assert store.count() == writers * each
        assert store.verify() == []
    assert sorted(e.seq for e in events) == list(range(1, writers * each + 1))  # no gap
    assert Counter(e.by for e in events) == {f"w{n}": each for n in range(writers)}


@posix_only
def test_writer_killed_at_random_moments_leaves_a_sound_store(tmp_path: Path) -> None:
    path = tmp_path / "store.db"
    summary = json.loads(finish(run_script("kill-loop", str(path), "24", "20250101")))
    assert summary["kills"] == 24
    with Store.open(path) as store:
        assert store.verify() == []
        events = store.events()
    assert len(events) >= 12  # each odd round waited for its first batch
    batches = Counter((e.payload["round"], e.payload["batch"]) for e in events)
    sizes = {(e.payload["round"], e.payload["batch"]): e.payload["size"] for e in events}
    assert batches == sizes, "a batch was half-written"
    assert all(e.payload["blob"] == "x" * 3000 for e in events)
    assert len({e.payload["round"] for e in events}) > 6


def test_opening_a_new_store_waits_while_another_process_writes(tmp_path: Path) -> None:
    """Switching a new file to WAL needs it alone for a moment; SQLite answers "locked" at once,
    without waiting, while another connection is inside a write: the open waits and retries."""
    path = tmp_path / "store.db"
    other = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    other.execute("BEGIN IMMEDIATE")  # another process, creating or writing, holds the file
    release = threading.Timer(0.3, lambda: other.execute("COMMIT"))
    release.start()
    try:
        with Store.open(path) as store:
            assert store.count() == 0
    finally:
        release.join()
        other.close()
    assert sqlite3.connect(path).execute("PRAGMA journal_mode").fetchone()[0] == "wal"


# --- the script side -----------------------------------------------------------------------


def _append(path: Path, count: int, tag: str) -> None:
    with Store.open(path) as store:
        for n in range(count):
            store.append(make_event(n, tag))


def _kill_loop(path: Path, rounds: int, seed: int) -> None:
    rng = random.Random(seed)
    for round_ in range(rounds):
        ready, signal_ready = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(ready)
            _append_until_killed(path, round_, signal_ready)
        os.close(signal_ready)
        if round_ % 2:  # odd rounds wait for a first batch; even ones may kill it mid-open
            select.select([ready], [], [], 120)
        time.sleep(rng.uniform(0.0, 0.04))
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        os.close(ready)
    print(json.dumps({"kills": rounds}))


def _append_until_killed(path: Path, round_: int, ready: int) -> NoReturn:
    try:
        with Store.open(path) as store:
            for batch in itertools.count():
                size = 1 + batch % 3
                store.append_many([_blob_event(round_, batch, i, size) for i in range(size)])
                if batch == 0:  # stored: the odd rounds count on it, however slow the machine
                    os.write(ready, b"+")
    finally:
        os._exit(1)


def _blob_event(round_: int, batch: int, index: int, size: int) -> Event:
    payload: dict[str, Any] = {"round": round_, "batch": batch, "i": index, "size": size}
    return make_event(batch, f"r{round_}").replace(**{"payload": {**payload, "blob": "x" * 3000}})


def _unprivileged_append(directory: Path, scratch: Path) -> None:
    _append(scratch, 1, "warm-up")  # every lazy import happens while files are still readable
    os.chdir(directory)  # relative paths: the child need not traverse the test's private dirs
    if os.geteuid() == 0:
        os.setgroups([])
        os.setgid(NOBODY)
        os.setuid(NOBODY)
    try:
        _append(Path("store.db"), 1, "intruder")
        print("appended")
    except StoreError as exc:
        print(f"StoreError: {exc}")


if __name__ == "__main__":
    command, *args = sys.argv[1:]
    if command == "append":
        _append(Path(args[0]), int(args[1]), args[2])
    elif command == "kill-loop":
        _kill_loop(Path(args[0]), int(args[1]), int(args[2]))
    elif command == "unprivileged-append":
        _unprivileged_append(Path(args[0]), Path(args[0]).parent / "scratch.db")
