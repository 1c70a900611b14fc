"""What the chain alone cannot show: a store rolled back to an older copy or cut short
(``plangraph head``, ``audit --expect-head``, a checkpoint that knows more than the store), and a
damaged file (SQLite's quick check)."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest
from cli_helpers import plangraph_main

from pytest_plangraph import PlanGraph, checkpoint

STORE = Path(".plangraph/store.db")
SCHEMA, TOKEN = "step-user-schema", "step-token-endpoint"
REVIEW = f"{TOKEN}/ac-security-review"


def _codes(result: object) -> list[str]:
    return [p["code"] for p in result.json()["chain"]]  # type: ignore[attr-defined]


def _head(root: Path) -> str:
    result = plangraph_main(root, "head")
    assert result.code == 0, result.err
    return result.out.strip()


def test_head_prints_the_last_event(project) -> None:
    root = project("jwt-login")
    assert _head(root) == "0:"  # no store yet, and none is made
    assert not (root / STORE).exists()
    assert plangraph_main(root, "verify").code == 0
    with sqlite3.connect(root / STORE) as con:
        seq, chain = con.execute("SELECT seq, hash FROM events ORDER BY seq DESC").fetchone()
    assert _head(root) == f"{seq}:{chain}"
    as_json = plangraph_main(root, "head", "--format", "json").json()
    assert as_json == {"format": 1, "seq": seq, "hash": chain, "signature": None}
    with PlanGraph.open(root) as graph:
        assert str(graph.head()) == f"{seq}:{chain}"
        assert graph.head().to_json() == {"seq": seq, "hash": chain, "signature": None}


def test_head_of_a_named_store_that_is_not_there_is_refused(project) -> None:
    root = project("jwt-login")
    result = plangraph_main(root, "head", "--store", "missing.db")
    assert result.code == 2 and "no store at" in result.err


def test_a_rolled_back_store_fails_the_expected_head(project, tmp_path: Path) -> None:
    root = project("jwt-login")
    assert plangraph_main(root, "verify").code == 0
    assert plangraph_main(root, "approve", REVIEW, "--by", "sec").code == 0
    shutil.copy(root / STORE, tmp_path / "before-revoke.db")  # WAL: written through
    assert plangraph_main(root, "revoke", REVIEW, "--by", "sec").code == 0
    published = _head(root)
    assert plangraph_main(root, "audit", "--expect-head", published).code == 0
    shutil.copy(tmp_path / "before-revoke.db", root / STORE)  # the revoke undone
    for leftover in ("-wal", "-shm"):
        Path(f"{root / STORE}{leftover}").unlink(missing_ok=True)
    plain = plangraph_main(root, "audit", "--format", "json")
    assert "HEAD_MISSING" not in _codes(plain)  # the chain alone is intact
    audit = plangraph_main(root, "audit", "--expect-head", published, "--format", "json")
    assert audit.code == 1
    [missing] = [p for p in audit.json()["chain"] if p["code"] == "HEAD_MISSING"]
    assert missing["seq"] == int(published.split(":")[0])
    assert "rolled back" in missing["message"]


def test_a_store_cut_short_fails_the_expected_head(project) -> None:
    root = project("jwt-login")
    assert plangraph_main(root, "verify").code == 0
    assert plangraph_main(root, "cancel", SCHEMA, "--by", "boss").code == 0
    published = _head(root)
    with sqlite3.connect(root / STORE) as con:
        names = ("events_no_delete", "log_no_delete")
        saved = [
            con.execute("SELECT sql FROM sqlite_master WHERE name = ?", (n,)).fetchone()[0]
            for n in names
        ]
        for name in names:
            con.execute(f"DROP TRIGGER {name}")
        con.execute("DELETE FROM events WHERE seq = (SELECT max(seq) FROM events)")
        con.execute("DELETE FROM log WHERE seq = (SELECT max(seq) FROM log)")
        for sql in saved:  # put back as they were, text and all
            con.execute(sql)
    assert plangraph_main(root, "audit").code == 0  # what the chain alone says
    audit = plangraph_main(root, "audit", "--expect-head", published)
    assert audit.code == 1
    assert "chain: HEAD_MISSING: the store does not hold the expected head" in audit.out


@pytest.mark.parametrize(
    "argument", ["12", "12:abc", "x:" + "a" * 64, "0:" + "a" * 64, "3:", "-1:" + "a" * 64]
)
def test_an_expected_head_of_bad_syntax_is_a_usage_error(project, argument: str) -> None:
    root = project("jwt-login")
    assert plangraph_main(root, "verify").code == 0
    result = plangraph_main(root, "audit", f"--expect-head={argument}")
    assert result.code == 2
    assert "expected SEQ:HASH" in result.err and "Traceback" not in result.err


def test_audit_reports_a_checkpoint_that_knows_more_than_the_store(
    project, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(checkpoint, "FIRST_AT", 1)
    monkeypatch.setattr(checkpoint, "EVERY", 1)
    root = project("jwt-login")
    assert plangraph_main(root, "verify").code == 0
    shutil.copy(root / STORE, tmp_path / "old.db")
    assert plangraph_main(root, "cancel", SCHEMA, "--by", "boss").code == 0
    assert plangraph_main(root, "status").code == 0  # the checkpoint covers the cancel
    shutil.copy(tmp_path / "old.db", root / STORE)
    for leftover in ("-wal", "-shm"):
        Path(f"{root / STORE}{leftover}").unlink(missing_ok=True)
    audit = plangraph_main(root, "audit", "--format", "json")
    assert audit.code == 1
    [ahead] = [p for p in audit.json()["chain"] if p["code"] == "CHECKPOINT_AHEAD"]
    assert "events were removed from its end, or an older copy" in ahead["message"]


def _zero_index_page(store: Path) -> None:
    """Write zeros over the root page of the ``events_node`` index of a real store file."""
    with sqlite3.connect(store) as con:
        con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        page_size = con.execute("PRAGMA page_size").fetchone()[0]
        [root_page] = con.execute(
            "SELECT rootpage FROM sqlite_master WHERE name = 'events_node'"
        ).fetchone()
    with store.open("r+b") as handle:
        handle.seek((root_page - 1) * page_size)
        handle.write(b"\0" * page_size)


def test_audit_reports_a_damaged_file(project) -> None:
    root = project("jwt-login")
    assert plangraph_main(root, "verify").code == 0
    assert plangraph_main(root, "claim", SCHEMA, "--by", "agent").code == 0
    _zero_index_page(root / STORE)
    audit = plangraph_main(root, "audit", "--format", "json")
    assert audit.code == 1, audit.err
    assert "STORE_CORRUPT" in _codes(audit)
    text = plangraph_main(root, "audit")
    assert text.code == 1
    assert "chain: STORE_CORRUPT: the store file is damaged" in text.out
    assert "chain intact" not in text.out
