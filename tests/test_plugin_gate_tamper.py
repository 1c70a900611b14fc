"""``pytest --plangraph-gate`` on a store edited outside plangraph: the gate refuses (exit 1,
not pytest's usage error 4) with a clear message, and the store is left exactly as it was."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from plugin_helpers import TESTS, make_project

STORE = ".plangraph/store.db"


def events(root: Path) -> list[tuple[object, ...]]:
    """Every row of the store's events table, read with plain sqlite3 (no check on the way)."""
    con = sqlite3.connect(root / STORE)
    try:
        return con.execute("SELECT * FROM events ORDER BY seq").fetchall()
    finally:
        con.close()


def edit_first_event(root: Path) -> None:
    con = sqlite3.connect(root / STORE, isolation_level=None)
    con.execute("DROP TRIGGER events_no_update")
    con.execute("UPDATE events SET by_ = 'mallory' WHERE seq = 1")
    con.close()


def test_a_broken_chain_fails_the_gate_with_exit_1_and_keeps_the_store(
    pytester: pytest.Pytester,
) -> None:
    root = make_project(pytester)
    assert pytester.runpytest("--plangraph", "--plangraph-gate").ret == 0
    edit_first_event(root)
    before = events(root)
    result = pytester.runpytest("--plangraph", "--plangraph-gate")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    err = result.stderr.str()
    assert "plangraph gate refused: STORE_TAMPERED: event 1" in err
    assert "no test was run, nothing was recorded" in err and "plangraph audit" in err
    assert "Traceback" not in err + result.stdout.str()
    assert "passed" not in result.stdout.str()  # stopped before any test ran
    assert events(root) == before
    # without the gate it stays what it was: the store cannot be used (a usage error)
    plain = pytester.runpytest("--plangraph")
    assert plain.ret == pytest.ExitCode.USAGE_ERROR
    assert "ERROR: --plangraph: STORE_TAMPERED: event 1" in plain.stderr.str()
    assert events(root) == before


EDITING_TEST = """
import sqlite3

def test_edits_the_store_during_the_run():
    con = sqlite3.connect(".plangraph/store.db", isolation_level=None)
    con.execute("CREATE TABLE smuggled (x)")
    con.close()
"""


def test_a_store_edited_during_the_run_fails_the_gate_and_records_nothing(
    pytester: pytest.Pytester,
) -> None:
    root = make_project(pytester, tests=TESTS + EDITING_TEST)
    result = pytester.runpytest("--plangraph", "--plangraph-gate")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.assert_outcomes(passed=5)
    out = result.stdout.str()
    assert "plangraph: gate refused: STORE_TAMPERED" in out and "table smuggled" in out
    assert "evidence was not recorded" in out
    assert "Traceback" not in out + result.stderr.str()
    assert events(root) == []  # the store refused the write: no evidence, no other event
