"""``plangraph export`` and ``history`` on a store edited by hand: a column holding bytes where
text belongs is named (exit 2, no traceback), and an ``--output`` file that was there before is
left exactly as it was, with no partial file beside it."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from cli_helpers import plangraph
from cli_state_helpers import STORE
from repo_helpers import edit_store


@pytest.mark.parametrize(
    ("column", "value", "says"),
    [
        ("by_", "x'ff00'", "its by holds bytes, not text"),
        ("by_", "x'6869'", "its by holds bytes, not text"),
        ("node", "x'ff'", "its node holds bytes, not text"),
        ("plan_digest", "x'61'", "its plan_digest holds bytes, not text"),
        ("signature", "x'00'", "its signature holds bytes, not text"),
        ("payload", "x'7b7d'", "its payload holds bytes, not text"),
        ("id", "x'00'", "its id holds bytes, not text"),
    ],
    ids=["by-bytes", "by-utf8-bytes", "node", "digest", "signature", "payload", "id"],
)
def test_export_names_a_column_of_the_wrong_type_and_keeps_the_old_output(
    jwt: Path, column: str, value: str, says: str
) -> None:
    edit_store(jwt / STORE, f"UPDATE events SET {column} = {value} WHERE seq = 1")
    shutil.rmtree(jwt / ".plangraph" / "cache")
    output = jwt / "events.jsonl"
    output.write_text("the export of yesterday\n", encoding="utf-8")
    result = plangraph(jwt, "export", "--output", "events.jsonl")
    assert result.code == 2, result.err
    assert "Traceback" not in result.err and result.err.startswith("plangraph: error:")
    assert f"event 1 of the store at {jwt / STORE}" in result.err
    assert says in result.err and "plangraph audit" in result.err
    assert output.read_text(encoding="utf-8") == "the export of yesterday\n"
    assert sorted(p.name for p in jwt.iterdir() if "events" in p.name) == ["events.jsonl"]


def test_export_output_replaces_the_old_file_whole(jwt: Path) -> None:
    output = jwt / "events.jsonl"
    output.write_text("the export of yesterday\n", encoding="utf-8")
    output.chmod(0o640)
    result = plangraph(jwt, "export", "--output", "events.jsonl")
    assert result.code == 0, result.err
    assert output.read_text(encoding="utf-8") == plangraph(jwt, "export").out
    assert output.stat().st_mode & 0o777 == 0o640
    assert sorted(p.name for p in jwt.iterdir() if "events" in p.name) == ["events.jsonl"]


@pytest.mark.parametrize("column", ["id", "node", "criterion", "by_", "plan_digest"])
def test_history_names_a_column_of_the_wrong_type(jwt: Path, column: str) -> None:
    edit_store(jwt / STORE, f"UPDATE events SET {column} = x'ff00' WHERE seq = 1")
    shutil.rmtree(jwt / ".plangraph" / "cache")
    result = plangraph(jwt, "history", "step-user-schema")
    assert result.code == 2 and "Traceback" not in result.err, result.err
    assert result.err.startswith(f"plangraph: error: event 1 of the store at {jwt / STORE}")
    assert f"its {column.rstrip('_')} holds bytes, not text" in result.err
