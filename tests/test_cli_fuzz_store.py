"""Hand-damaged stores through the real ``plangraph`` command: a schema version or a plan version
no plangraph wrote is refused with one message and exit 2, no traceback, and the file keeps every
byte it had."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from cli_helpers import Result, plangraph
from cli_state_helpers import STORE
from repo_helpers import edit_store


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
    before = store.read_bytes()
    result = plangraph(jwt, command)
    _refused(result, "unreadable schema version", "edited outside plangraph", "backup")
    assert len(result.err) < 600  # the value is quoted, not all of it
    assert store.read_bytes() == before


@pytest.mark.parametrize("command", ["status", "verify"])
def test_a_far_newer_schema_version_is_refused_at_once(jwt: Path, command: str) -> None:
    store = jwt / STORE
    edit_store(store, "UPDATE meta SET value = '999999999' WHERE key = 'schema_version'")
    shutil.rmtree(jwt / ".plangraph" / "cache")
    before = store.read_bytes()
    result = plangraph(jwt, command)  # once made a shape for each of 999,999,999 schemas
    _refused(result, "newer pytest-plangraph", "store schema 999999999", "Upgrade")
    assert store.read_bytes() == before
