"""The gate checks the events it reads: a payload edited in SQLite by hand stops status and
claim with ``STORE_TAMPERED`` (after the checkpoint as without one), and an edit below the
checkpoint changes no verdict. Real pytest runs, a real store file, the real command."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from cli_helpers import plangraph_main

from pytest_plangraph import checkpoint

STORE = Path(".plangraph/store.db")
TOKEN = "step-token-endpoint"
BREAK = ("if _users().get(username) != digest:", "if False:")


def _pytest(root: Path) -> int:
    """Run the project's suite with ``--plangraph`` in a fresh process, as a person would."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PLANGRAPH_")}
    return subprocess.run(
        [sys.executable, "-m", "pytest", "--plangraph", "-q", "-p", "no:cacheprovider"],
        cwd=root,
        env=env,
        capture_output=True,
        check=False,
    ).returncode


def _break_login(root: Path) -> None:
    login = root / "src" / "auth" / "login.py"
    text = login.read_text(encoding="utf-8")
    assert BREAK[0] in text
    login.write_text(text.replace(*BREAK), encoding="utf-8")


def _forge_pass(store: Path, seq: int) -> None:
    """Make event *seq*'s failed verdict a pass, in the event and in the log row status
    reads, with the append-only triggers dropped (left dropped, as a hand would)."""
    with sqlite3.connect(store) as con:
        con.execute("DROP TRIGGER events_no_update")
        con.execute("DROP TRIGGER log_no_update")
        con.execute(
            'UPDATE events SET payload = replace(payload, \'"outcome":"failed"\', '
            '\'"outcome":"passed"\') WHERE seq = ?',
            (seq,),
        )
        con.execute(
            "UPDATE log SET body = (SELECT body FROM log_source WHERE seq = ?1) WHERE seq = ?1",
            (seq,),
        )


def _failed_seq(store: Path) -> tuple[int, str]:
    with sqlite3.connect(store) as con:
        row = con.execute(
            "SELECT seq, id FROM events WHERE kind = 'evidence' "
            "AND json_extract(payload, '$.outcome') = 'failed' ORDER BY seq DESC"
        ).fetchone()
    assert row is not None
    return int(row[0]), str(row[1])


def _count(store: Path) -> int:
    with sqlite3.connect(store) as con:
        return int(con.execute("SELECT count(*) FROM events").fetchone()[0])


@pytest.fixture
def broken(project) -> Path:
    """The JWT sample after a passing run, then a run with the login check broken."""
    root = project("jwt-login")
    assert _pytest(root) == 0
    _break_login(root)
    assert _pytest(root) == 1
    return root


def _assert_refused(root: Path, seq: int, event_id: str) -> None:
    status = plangraph_main(root, "status")
    assert status.code == 2
    assert "STORE_TAMPERED" in status.err and f"event {seq} ({event_id[:12]})" in status.err
    assert "Traceback" not in status.err
    check = plangraph_main(root, "status", "--check")
    assert check.code == 2 and "STORE_TAMPERED" in check.err
    before = _count(root / STORE)
    claim = plangraph_main(root, "claim", TOKEN, "--by", "agent", "--format", "json")
    assert claim.code == 1, claim.err
    answer = claim.json()
    assert answer["verdict"] == "FAILED"
    [reason] = answer["reasons"]
    assert reason["code"] == "STORE_TAMPERED"
    assert (reason["seq"], reason["event"]) == (seq, event_id)
    assert _count(root / STORE) == before  # nothing is written to such a store


def test_a_failed_verdict_edited_to_a_pass_stops_status_and_claim(broken: Path) -> None:
    seq, event_id = _failed_seq(broken / STORE)
    before = plangraph_main(broken, "status", "--format", "json")
    assert {n["id"]: n["status"] for n in before.json()["nodes"]}[TOKEN] == "failed"
    _forge_pass(broken / STORE, seq)
    _assert_refused(broken, seq, event_id)
    audit = plangraph_main(broken, "audit", "--format", "json")
    assert audit.code == 1
    assert (seq, "CONTENT_TAMPERED") in {(p["seq"], p["code"]) for p in audit.json()["chain"]}


@pytest.fixture
def often(monkeypatch: pytest.MonkeyPatch) -> None:
    """Checkpoints after every event, so that a small log has one."""
    monkeypatch.setattr(checkpoint, "FIRST_AT", 1)
    monkeypatch.setattr(checkpoint, "EVERY", 1)


def _checkpoint_seq(root: Path) -> int:
    path = root / ".plangraph" / "cache" / "log-store.db.json"
    import json

    return int(json.loads(path.read_text(encoding="utf-8").split("\n", 1)[0])["seq"])


def test_an_edit_after_the_checkpoint_is_refused(
    project, often: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = project("jwt-login")
    assert _pytest(root) == 0
    assert plangraph_main(root, "status").code == 0  # the checkpoint covers the passes
    kept = _checkpoint_seq(root)
    monkeypatch.setattr(checkpoint, "EVERY", 1_000)  # the failure is read after it, not kept
    _break_login(root)
    assert _pytest(root) == 1
    seq, event_id = _failed_seq(root / STORE)
    assert seq > kept
    _forge_pass(root / STORE, seq)
    _assert_refused(root, seq, event_id)


def test_an_edit_below_the_checkpoint_changes_no_verdict(broken: Path, often: None) -> None:
    failed = plangraph_main(broken, "status", "--format", "json")  # writes the checkpoint
    assert {n["id"]: n["status"] for n in failed.json()["nodes"]}[TOKEN] == "failed"
    seq, _ = _failed_seq(broken / STORE)
    assert _checkpoint_seq(broken) >= seq
    _forge_pass(broken / STORE, seq)
    status = plangraph_main(broken, "status", "--format", "json")
    assert status.code == 0  # the checkpoint keeps what the event said when it was checked
    assert {n["id"]: n["status"] for n in status.json()["nodes"]}[TOKEN] == "failed"
    assert plangraph_main(broken, "audit").code == 1


def test_a_log_row_edited_alone_is_refused(broken: Path) -> None:
    seq, event_id = _failed_seq(broken / STORE)
    with sqlite3.connect(broken / STORE) as con:
        con.execute("DROP TRIGGER log_no_update")
        con.execute(
            "UPDATE log SET body = replace(body, '\"failed\"', '\"passed\"') WHERE seq = ?",
            (seq,),
        )
    _assert_refused(broken, seq, event_id)


def test_an_event_removed_from_the_middle_is_refused(broken: Path) -> None:
    seq, _ = _failed_seq(broken / STORE)
    with sqlite3.connect(broken / STORE) as con:
        con.execute("DROP TRIGGER events_no_delete")
        con.execute("DROP TRIGGER log_no_delete")
        after = con.execute("SELECT seq, id FROM events WHERE seq > ? ORDER BY seq", (seq - 1,))
        victim, (next_seq, next_id) = seq - 1, after.fetchone()
        con.execute("DELETE FROM events WHERE seq = ?", (victim,))
        con.execute("DELETE FROM log WHERE seq = ?", (victim,))
    status = plangraph_main(broken, "status")
    assert status.code == 2
    assert f"STORE_TAMPERED: event {next_seq} ({next_id[:12]})" in status.err
    assert "does not link to the event before it" in status.err
