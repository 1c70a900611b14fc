"""The start of a ``pytest --plangraph`` run does its work once: a new store is not checked
against its schema made again in memory (it holds what was just made in it, under the write
lock), and the files of the start's snapshot are not stat'ed again to tell which the run
wrote before it started (the snapshot's own stats say it). Each is read from a real store or
a real run in a new process."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from plugin_helpers import make_project

from pytest_plangraph.errors import StoreTamperedError
from pytest_plangraph.judge.records import CHANGED_DURING_RUN
from pytest_plangraph.store import schemacheck
from pytest_plangraph.store.schema import CREATE, SCHEMA_VERSION
from pytest_plangraph.store.sqlite import Store


def test_a_new_store_is_made_without_its_schema_made_again_to_compare(tmp_path: Path) -> None:
    path = tmp_path / "store.db"
    schemacheck._objects.cache_clear()
    with Store.open(path):
        pass
    assert schemacheck._objects.cache_info().misses == 0  # no schema made in memory
    # what it holds is the shape the check wants: opened again, it is checked, and holds
    with Store.open(path):
        pass
    assert schemacheck._objects.cache_info().misses >= 1
    con = sqlite3.connect(path)
    try:
        found = frozenset(con.execute("SELECT type, name, tbl_name, sql FROM sqlite_master"))
    finally:
        con.close()
    assert found == schemacheck._objects((CREATE,))


def test_a_store_changed_after_it_was_made_is_still_refused(tmp_path: Path) -> None:
    """The check skipped at creation is the one of that moment only: a table added to the
    file afterwards is found by the next open."""
    path = tmp_path / "store.db"
    with Store.open(path):
        pass
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE planted (x)")
    con.commit()
    con.close()
    with pytest.raises(StoreTamperedError, match="planted"):
        Store.open(path)


def test_an_empty_file_becomes_a_store_of_the_current_schema(tmp_path: Path) -> None:
    """An empty file (a store never written) is made a store as a missing one is."""
    path = tmp_path / "store.db"
    path.write_bytes(b"")
    with Store.open(path) as store:
        assert store._schema == SCHEMA_VERSION
    with Store.open(path, readonly=True):  # and reads back, checked
        pass


STAT_PROBE = """
import json, os, pytest
@pytest.hookimpl(hookwrapper=True)
def pytest_cmdline_main(config):
    from pytest_plangraph.plugin import binding
    note = binding.FileBinder.note_written
    def counted(self, snapshot, *args):
        calls, stat = [], os.stat
        def counting(path, *a, **k):
            calls.append(os.fspath(path))
            return stat(path, *a, **k)
        os.stat = counting
        try:
            return note(self, snapshot, *args)
        finally:
            os.stat = stat
            hashed = sorted(p for p, sha in snapshot.files.items() if sha is not None)
            with open(os.environ["STATS_SEEN"], "w") as out:
                json.dump({"hashed": hashed, "stat": calls}, out)
    binding.FileBinder.note_written = counted
    yield
"""

WRITING_CONFTEST = """
from pathlib import Path
Path(__file__).with_name("src").joinpath("a.py").write_text("A = 2\\n")
"""


def test_the_files_written_before_the_start_are_told_by_the_snapshot_s_own_stats(
    pytester: pytest.Pytester, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The snapshot's files are not stat'ed again to tell which the run wrote before it
    started: the stats its hashes stand on say so. A file a conftest wrote is still told."""
    root = make_project(pytester)
    probe = tmp_path / "probe"
    probe.mkdir()
    (probe / "stat_probe.py").write_text(STAT_PROBE, encoding="utf-8")
    monkeypatch.setenv("PYTHONPATH", str(probe))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "user-cache"))
    seen_file = tmp_path / "seen.json"
    monkeypatch.setenv("STATS_SEEN", str(seen_file))
    run = [sys.executable, "-m", "pytest", "--plangraph", "-q", "-p", "stat_probe"]
    for _ in range(2):  # a new store (every file read), then one whose hash cache holds them
        done = subprocess.run(run, cwd=root, capture_output=True, text=True, check=False)
        assert done.returncode == 0, done.stdout + done.stderr
        seen = json.loads(seen_file.read_text())
        assert "src/a.py" in seen["hashed"]
        # only what is no file is looked for (the keys of the quotes' walks): no file twice
        assert [p for p in seen["stat"] if Path(p).exists()] == []
    # a conftest that writes a file the plan binds: the evidence does not take its bytes
    (root / "conftest.py").write_text(WRITING_CONFTEST, encoding="utf-8")
    done = subprocess.run(run, cwd=root, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    history = subprocess.run(
        [Path(sys.executable).parent / "plangraph", "history", "step-a", "--format", "json"],
        cwd=root,
        capture_output=True,
        text=True,
        check=True,
    )
    events = [e for e in json.loads(history.stdout)["events"] if e["kind"] == "evidence"]
    latest = [e["payload"] for e in events if e["payload"]["criterion"] == "ac-marked"][-1]
    assert (latest["outcome"], latest["reason"]) == ("error", CHANGED_DURING_RUN)


def test_the_schema_s_shape_is_kept_between_processes_and_decides_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The shape a store is checked against is made once and kept (tagged with this user's
    key); the next process reads it instead of making the schema in memory. A kept file
    edited by hand is not taken, and without the file the answers are the same."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "user-cache"))
    made: list[tuple[str, ...]] = []
    make = schemacheck._made

    def counted(scripts: tuple[str, ...]) -> frozenset[schemacheck.SchemaObject] | None:
        made.append(scripts)
        return make(scripts)

    monkeypatch.setattr(schemacheck, "_made", counted)
    path = tmp_path / "store.db"
    schemacheck._objects.cache_clear()
    with Store.open(path):
        pass
    with Store.open(path):  # checked: the shape made, and kept
        pass
    assert made == [(CREATE,)]
    kept = tmp_path / "user-cache/plangraph" / schemacheck.KEPT
    assert kept.is_file()
    schemacheck._objects.cache_clear()  # as a new process
    with Store.open(path):
        pass
    assert made == [(CREATE,)]  # read from the kept file, not made again

    planted = tmp_path / "planted.db"
    with Store.open(planted):
        pass
    con = sqlite3.connect(planted)
    con.execute("CREATE TABLE planted (x)")
    con.commit()
    con.close()
    for state in ("kept", "edited", "deleted"):
        if state == "edited":  # the planted table written into the kept shape: not taken
            text = kept.read_text(encoding="utf-8")
            row = '["table","planted","planted","CREATE TABLE planted (x)"],'
            kept.write_text(text.replace('[["', f'[{row}["', 1), encoding="utf-8")
        elif state == "deleted":
            kept.unlink()
        schemacheck._objects.cache_clear()
        with pytest.raises(StoreTamperedError, match="planted"):
            Store.open(planted)
        with Store.open(path):  # and the store plangraph made is still its own
            pass
    # made again when the kept file was edited, and when it was deleted (a refusal also
    # makes the shapes of the other ways to its version, to name the closest)
    assert made.count((CREATE,)) == 3
