"""Hands in the store file and the log's checkpoint: an edit that reads one way to Python and
another to SQLite, an event that cannot be read, a checkpoint moved or rewritten; and the
order of merged and exported events."""

from __future__ import annotations

import hashlib
import json
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import plangraph_main
from repo_helpers import edit_store

from pytest_plangraph import checkpoint
from pytest_plangraph.plan.model import Event
from pytest_plangraph.store.chain import sign, verify_events
from pytest_plangraph.store.exchange import read_jsonl, union
from pytest_plangraph.store.localkey import local_key

STORE = Path(".plangraph/store.db")
SCHEMA, TOKEN = "step-user-schema", "step-token-endpoint"
KEY = {"PLANGRAPH_SIGNING_KEY": "sesame"}


def _edit(store: Path, *statements: str) -> None:
    """Run *statements* with the append-only triggers lifted, then put them back as they were."""
    edit_store(store, *statements)


def _codes(result: Any) -> list[tuple[int, str]]:
    return [(p["seq"], p["code"]) for p in result.json()["chain"]]


@pytest.fixture
def failing(project) -> Path:
    """The JWT sample whose schema criterion fails: event 1 is a failed record."""
    root = project("jwt-login")
    sample = root / "fixtures" / "user.json"
    sample.write_text(sample.read_text(encoding="utf-8").replace('"alice"', '"al"'))
    assert plangraph_main(root, "verify", env=KEY).code == 1
    return root


def test_a_second_outcome_key_written_by_hand_is_caught(failing: Path) -> None:
    _edit(
        failing / STORE,
        'UPDATE events SET payload = \'{"outcome":"passed",\' || substr(payload, 2) WHERE seq = 1',
        "UPDATE log SET body = (SELECT body FROM log_source WHERE seq = 1) WHERE seq = 1",
    )
    audit = plangraph_main(failing, "audit", "--format", "json", env=KEY)
    assert audit.code == 1
    assert _codes(audit) == [(1, "CONTENT_TAMPERED")]
    assert "does not match its id" in audit.json()["chain"][0]["message"]


def test_audit_reports_an_event_that_cannot_be_read(failing: Path) -> None:
    assert plangraph_main(failing, "claim", SCHEMA, "--by", "agent", env=KEY).code == 1
    _edit(failing / STORE, "UPDATE events SET payload = 'not json' WHERE seq = 2")
    audit = plangraph_main(failing, "audit", "--format", "json", env=KEY)
    assert audit.code == 1, audit.err
    assert (2, "CONTENT_TAMPERED") in _codes(audit)
    assert audit.json()["notes"][0].startswith("status could not be derived")
    text = plangraph_main(failing, "audit", env=KEY)
    assert text.code == 1 and "chain: CONTENT_TAMPERED: event 2" in text.out


def _checkpointed(root: Path, monkeypatch: pytest.MonkeyPatch, env: dict[str, str]) -> Path:
    monkeypatch.setattr(checkpoint, "FIRST_AT", 1)
    monkeypatch.setattr(checkpoint, "EVERY", 1)
    assert plangraph_main(root, "verify", env=env).code == 0
    assert plangraph_main(root, "status", env=env).code == 0
    monkeypatch.setattr(checkpoint, "EVERY", 1_000)  # the events after it are read, not kept
    path = root / ".plangraph" / "cache" / "log-store.db.json"
    assert path.is_file()
    return path


def _rewrite(
    path: Path, head: dict[str, Any] | None = None, body: Any = None, *, key: bytes | None = None
) -> None:
    """Edit the checkpoint at *path*; with *key*, sign it again as plangraph would (a process
    that can read the key)."""
    head_text, body_text = path.read_text(encoding="utf-8").split("\n", 1)
    new_head = {**json.loads(head_text), **(head or {})}
    if body is not None:
        body_text = json.dumps(body(json.loads(body_text)), ensure_ascii=False)
        new_head["sha256"] = hashlib.sha256(body_text.encode("utf-8")).hexdigest()
    if key is not None:
        signed = checkpoint._signed(
            new_head["seq"], new_head["hash"], new_head["at"], new_head["sha256"], new_head["trust"]
        )
        new_head["signature"] = sign(key, signed)
    path.write_text(json.dumps(new_head) + "\n" + body_text, encoding="utf-8")


def test_a_signed_checkpoint_moved_to_a_later_event_is_not_used(
    project, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = project("jwt-login")
    path = _checkpointed(root, monkeypatch, KEY)
    assert plangraph_main(root, "cancel", SCHEMA, "--by", "boss", env=KEY).code == 0
    with sqlite3.connect(root / STORE) as con:
        seq, chain = con.execute("SELECT seq, hash FROM events ORDER BY seq DESC").fetchone()
    _rewrite(path, {"seq": seq, "hash": chain})  # as if it covered the cancel too
    status = plangraph_main(root, "status", "--format", "json", env=KEY)
    assert {n["id"]: n["status"] for n in status.json()["nodes"]}[SCHEMA] == "cancelled"


def test_a_rewritten_checkpoint_that_hides_a_pass_is_caught_by_audit(
    project, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = project("jwt-login")
    path = _checkpointed(root, monkeypatch, {})
    _rewrite(path, body=lambda data: {**data, "passed": []}, key=local_key())
    audit = plangraph_main(root, "audit", "--format", "json")
    assert audit.code == 1
    assert [p["code"] for p in audit.json()["chain"]] == ["CHECKPOINT_MISMATCH"]
    assert not path.exists()


def test_a_checkpoint_with_subjects_of_the_wrong_type_is_not_used(
    project, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = project("jwt-login")
    path = _checkpointed(root, monkeypatch, {})

    def broken(data: dict[str, Any]) -> dict[str, Any]:
        data["evidence"][0][9]["subjects"] = "x"
        return data

    _rewrite(path, body=broken, key=local_key())
    status = plangraph_main(root, "status", "--format", "json")
    assert status.code == 0, status.err
    assert {n["id"]: n["status"] for n in status.json()["nodes"]}[SCHEMA] == "completed"
    assert plangraph_main(root, "audit").code == 0


def test_an_export_after_a_merge_is_in_chain_order(project, tmp_path: Path) -> None:
    root = project("jwt-login")
    shard = tmp_path / "shard"
    shutil.copytree(root, shard)
    assert plangraph_main(root, "verify").code == 0
    assert plangraph_main(shard, "approve", f"{TOKEN}/ac-security-review", "--by", "sec").code == 0
    assert plangraph_main(root, "claim", SCHEMA, "--by", "agent").code == 0
    assert plangraph_main(root, "merge", str(shard / STORE)).code == 0
    out = tmp_path / "events.jsonl"
    assert plangraph_main(root, "export", "--output", str(out)).code == 0
    with out.open(encoding="utf-8") as handle:
        events = read_jsonl(handle)
    assert [e.seq for e in events] == [1, 2, 3]
    assert [e.kind for e in events] == ["evidence", "claim", "approval"]  # merged last
    assert verify_events(events, None) == []


def _event(at: str, note: str) -> Event:
    event = Event(kind="retry", node="n", at=at, by="x", plan_digest="d", payload={"note": note})
    from pytest_plangraph.store.chain import event_id

    return event.replace(id=event_id(event))


def test_a_merge_keeps_each_sources_order_for_events_of_one_time() -> None:
    same = "2026-12-01T00:00:00+00:00"
    batch = [_event(same, str(n)) for n in range(6)]  # ids in no particular order
    assert sorted(e.id for e in batch) != [e.id for e in batch]
    later = _event("2026-12-01T00:00:01+00:00", "later")
    merged = union([[later], batch], set(), {})
    assert merged == [*batch, later]


def _poison(root: Path, rel: str, old_sha: str, tag: str | None) -> None:
    """A hash-cache row written by hand: the old sha256 of *rel* at its current stat."""
    info = (root / rel).stat()
    with sqlite3.connect(root / STORE) as con:
        con.execute(
            "INSERT OR REPLACE INTO file_cache "
            "(path, inode, mtime_ns, ctime_ns, size, sha256, recorded_ns, tag) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (
                rel,
                info.st_ino,
                info.st_mtime_ns,
                info.st_ctime_ns,
                info.st_size,
                old_sha,
                2**62,
                tag,
            ),
        )


@pytest.mark.parametrize("forged_tag", [None, "0" * 32, "tag made with another key"])
def test_a_poisoned_hash_cache_row_hides_no_change(project, forged_tag: str | None) -> None:
    root = project("jwt-login")
    assert plangraph_main(root, "verify").code == 0
    rel = "src/auth/user_schema.json"
    schema = root / rel
    before = hashlib.sha256(schema.read_bytes()).hexdigest()
    schema.write_text(schema.read_text(encoding="utf-8") + "\n", encoding="utf-8")
    tag = forged_tag
    if forged_tag == "tag made with another key":
        from pytest_plangraph.store.filecache import row_tag

        info = schema.stat()
        row = (rel, info.st_ino, info.st_mtime_ns, info.st_ctime_ns, info.st_size, before, 2**62)
        tag = row_tag(b"k" * 32, row)
    _poison(root, rel, before, tag)
    status = plangraph_main(root, "status", "--format", "json")
    node = {n["id"]: n for n in status.json()["nodes"]}[SCHEMA]
    assert node["status"] == "stale"
    codes = {r["code"] for c in node["criteria"] for r in c["reasons"]}
    assert "ARTIFACT_CHANGED" in codes
    claim = plangraph_main(root, "claim", SCHEMA, "--by", "agent", "--format", "json")
    assert claim.code == 1
    assert "ARTIFACT_CHANGED" in {r["code"] for r in claim.json()["reasons"]}
    audit = plangraph_main(root, "audit", "--format", "json")
    assert audit.code == 1
    assert (SCHEMA, "ac-schema-valid") in {
        (s["node"], s["criterion"]) for s in audit.json()["stale"]
    }


def test_a_hash_cache_row_written_by_plangraph_is_used(project) -> None:
    """The tag does not make every row a miss: a file hashed once is not read again."""
    from pytest_plangraph import PlanGraph

    root = project("jwt-login")
    assert plangraph_main(root, "verify").code == 0
    with PlanGraph.open(root) as graph:
        graph.status()
        rel = "src/auth/user_schema.json"
        kept = graph.store.cache_get(rel)
        assert kept is not None
        assert kept.sha256 == hashlib.sha256((root / rel).read_bytes()).hexdigest()
        with sqlite3.connect(root / STORE) as con:  # the same row with another sha256
            con.execute("UPDATE file_cache SET sha256 = ? WHERE path = ?", ("0" * 64, rel))
        assert graph.store.cache_get(rel) is None


def test_a_stored_record_that_is_not_valid_evidence_does_not_break_lint(project) -> None:
    from pytest_plangraph import PlanGraph

    root = project("jwt-login")
    with PlanGraph.open(root) as graph:
        graph.verify()
        [event] = graph.events()
        # written past the API, which refuses it: an outcome no verifier gives, no id
        payload = {**event.payload, "outcome": "maybe", "details": {"coverage": ["a.py"]}}
        del payload["id"]
        graph.store.append(event.replace(id="", seq=0, payload=payload))
    lint = plangraph_main(root, "lint")
    assert lint.code == 0 and "Traceback" not in lint.err
    status = plangraph_main(root, "status", "--format", "json")
    [node] = [n for n in status.json()["nodes"] if n["id"] == SCHEMA]
    assert node["criteria"][0]["evidence"] is None  # not the text "None"
