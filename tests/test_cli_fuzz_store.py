"""Hand-damaged stores through the real ``plangraph`` command: a schema version or a plan version
no plangraph wrote is refused with one message and exit 2, no traceback, and the file keeps every
byte it had."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest
from cli_helpers import Result, plangraph
from cli_state_helpers import STORE
from repo_helpers import edit_store


def contents(store: Path) -> list[str]:
    """Every row and object of the store file but its file-hash cache, as SQL (the bytes may
    move between the file and its write-ahead log when SQLite checkpoints it, and a reader may
    cache the hash of a file it read; the evidence may not change)."""
    con = sqlite3.connect(store)
    try:
        return [line for line in con.iterdump() if not line.startswith('INSERT INTO "file_cache"')]
    finally:
        con.close()


def _refused(result: Result, *says: str) -> None:
    """One ``plangraph: error:`` message, exit 2, no traceback, every phrase in *says* there."""
    assert result.code == 2, result.out + result.err
    assert "Traceback" not in result.err
    assert result.err.startswith("plangraph: error:"), result.err
    assert result.err.count("plangraph: error:") == 1
    for phrase in says:
        assert phrase in result.err, result.err


@pytest.mark.parametrize(
    "value",
    ["'" + "9" * 5000 + "'", "'" + "1" * 20 + "'", "'²'", "1e999", "x'0102'"],
    ids=["5000-digits", "20-digits", "superscript-two", "infinity", "blob"],
)
@pytest.mark.parametrize("command", ["status", "verify"])
def test_an_unreadable_schema_version_is_refused_untouched(
    jwt: Path, value: str, command: str
) -> None:
    store = jwt / STORE
    edit_store(store, f"UPDATE meta SET value = {value} WHERE key = 'schema_version'")
    shutil.rmtree(jwt / ".plangraph" / "cache")
    before = contents(store)
    result = plangraph(jwt, command)
    _refused(result, "unreadable schema version", "edited outside plangraph", "backup")
    assert len(result.err) < 600  # the value is quoted, not all of it
    assert contents(store) == before


@pytest.mark.parametrize("command", ["status", "verify"])
def test_a_far_newer_schema_version_is_refused_at_once(jwt: Path, command: str) -> None:
    store = jwt / STORE
    edit_store(store, "UPDATE meta SET value = '999999999' WHERE key = 'schema_version'")
    shutil.rmtree(jwt / ".plangraph" / "cache")
    before = contents(store)
    result = plangraph(jwt, command)  # once made a shape for each of 999,999,999 schemas
    _refused(result, "newer pytest-plangraph", "store schema 999999999", "Upgrade")
    assert contents(store) == before


PLAN_VERSIONS = ["'abc'", "-3", "0", "1.5", "x'0102'", "'1e999'", "'" + "7" * 5000 + "'"]
PLAN_VERSION_IDS = ["text", "negative", "zero", "fraction", "blob", "infinity", "5000-digits"]


@pytest.mark.parametrize("value", PLAN_VERSIONS, ids=PLAN_VERSION_IDS)
@pytest.mark.parametrize(
    "command",
    [
        ("status", "--format", "json"),
        ("claim", "step-user-schema", "--by", "ci", "--expected-plan-version", "1"),
        ("verify",),
    ],
    ids=["status", "claim", "verify"],
)
def test_a_bad_plan_version_is_a_damaged_store(
    jwt: Path, value: str, command: tuple[str, ...]
) -> None:
    store = jwt / STORE
    edit_store(store, f"UPDATE plans SET version = {value}")
    shutil.rmtree(jwt / ".plangraph" / "cache")
    before = contents(store)
    result = plangraph(jwt, *command)
    if command[0] == "status":  # JSON output: the error is a JSON document on stderr
        assert result.code == 2 and "Traceback" not in result.err
        assert "plans table" in result.err and "whole number" in result.err
    else:
        _refused(result, "is damaged: its plans table", "not a whole number", "backup")
    assert len(result.err) < 700
    assert contents(store) == before


def test_a_merge_from_a_store_with_a_bad_plan_version_names_it(jwt: Path, tmp_path: Path) -> None:
    source = tmp_path / "shard.db"
    shutil.copy(jwt / STORE, source)
    edit_store(source, "UPDATE plans SET version = 'abc'")
    target = tmp_path / "target.db"
    result = plangraph(jwt, "merge", str(source), "--store", str(target))
    _refused(result, f"cannot merge {source}", "plans table", "nothing was merged")
    assert "--store" not in result.err


def test_revoke_with_a_store_that_is_not_there_makes_none(jwt: Path, tmp_path: Path) -> None:
    missing = tmp_path / "misspelt.db"
    ref = "step-token-endpoint/ac-security-review"
    result = plangraph(jwt, "revoke", ref, "--by", "lead", "--store", str(missing))
    _refused(result, "no approval in force to revoke", f"no store at {missing}", "--store")
    assert not missing.exists()
    named = plangraph(jwt, "revoke", ref, "--by", "lead", env={"PLANGRAPH_STORE": str(missing)})
    _refused(named, f"no store at {missing}", "$PLANGRAPH_STORE")
    assert not missing.exists()


@pytest.mark.parametrize(
    "command",
    [
        ("approve", "step-token-endpoint/nope", "--by", "lead"),
        ("retry", "nope", "--by", "lead"),
        ("cancel", "nope", "--by", "lead"),
        ("claim", "nope", "--by", "lead"),
        ("verify", "nope"),
    ],
    ids=["approve", "retry", "cancel", "claim", "verify"],
)
def test_a_refused_write_to_a_store_that_is_not_there_makes_none(
    jwt: Path, tmp_path: Path, command: tuple[str, ...]
) -> None:
    missing = tmp_path / "misspelt.db"
    result = plangraph(jwt, *command, "--store", str(missing))
    _refused(result, "nope")
    assert not missing.exists()


def test_a_plan_version_conflict_on_a_store_that_is_not_there_makes_none(
    jwt: Path, tmp_path: Path
) -> None:
    folder = tmp_path / "misspelt"
    missing = folder / "store.db"
    claim = ("claim", "step-user-schema", "--by", "ci", "--store", str(missing))
    result = plangraph(jwt, *claim, "--expected-plan-version", "7", "--format", "json")
    assert result.code == 1, result.out + result.err
    assert "PLAN_VERSION_CONFLICT" in result.out + result.err
    assert "Traceback" not in result.err
    assert not folder.exists()  # neither the store nor a cache beside it
    first = plangraph(jwt, *claim, "--expected-plan-version", "1")  # what a new store numbers
    assert first.code == 1 and "PLAN_VERSION_CONFLICT" not in first.out + first.err
    assert missing.is_file()


def test_lint_with_a_store_that_is_not_there_makes_no_cache(jwt: Path, tmp_path: Path) -> None:
    folder = tmp_path / "misspelt"
    result = plangraph(jwt, "lint", "--store", str(folder / "store.db"))
    assert result.code == 0, result.out + result.err
    assert not folder.exists()  # the schema check keeps no marker where no store is


def test_a_file_that_is_no_store_gets_no_cache_beside_it(jwt: Path) -> None:
    plan = jwt / "plangraph.yaml"
    before = plan.read_bytes()
    result = plangraph(jwt, "status", "--store", "plangraph.yaml")
    _refused(result, "not an SQLite database", "--store")
    assert plan.read_bytes() == before
    assert not (jwt / "plangraph.yaml.cache").exists()
