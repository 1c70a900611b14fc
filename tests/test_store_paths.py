"""A store path that names no file a store can be, and a schema version edited by hand: one
clear message each, exit 2, and no event lost."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest
from cli_helpers import plangraph_main

STORE = Path(".plangraph/store.db")
SCHEMA = "step-user-schema"


@pytest.mark.parametrize("named", ["/", ".", "dir", "fifo"])
def test_a_store_path_that_is_no_file_is_one_clear_message(project, named: str) -> None:
    root = project("jwt-login")
    (root / "dir").mkdir()
    os.mkfifo(root / "fifo")
    for command in ("status", "claim", "head", "audit"):
        args = [command, "--store", named] + ([SCHEMA, "--by", "a"] if command == "claim" else [])
        result = plangraph_main(root, *args)
        assert result.code == 2, (command, result.err)
        assert result.err.startswith("plangraph: error: the store path"), (command, result.err)
        assert "Traceback" not in result.err


def test_an_older_schema_version_written_by_hand_is_named_and_loses_nothing(project) -> None:
    root = project("jwt-login")
    assert plangraph_main(root, "verify").code == 0
    with sqlite3.connect(root / STORE) as con:
        count = con.execute("SELECT count(*) FROM events").fetchone()[0]
        con.execute("UPDATE meta SET value = '2' WHERE key = 'schema_version'")
    claim = plangraph_main(root, "claim", SCHEMA, "--by", "agent")
    assert claim.code == 2
    assert "says schema 2 in its meta table, but its tables are those of schema 3" in claim.err
    assert "permission" not in claim.err
    assert "UPDATE meta SET value = '3'" in claim.err
    status = plangraph_main(root, "status")
    assert status.code == 0, status.err  # read as it is
    with sqlite3.connect(root / STORE) as con:
        assert con.execute("SELECT count(*) FROM events").fetchone()[0] == count
        version = con.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    assert version == ("2",)  # left as it was: the person decides
