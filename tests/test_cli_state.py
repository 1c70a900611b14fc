"""verify / status / claim / approve / revoke / history / audit / export / merge on the JWT-login
sample in a real git repository: through ``main`` in-process, and the console script for a few
(the store's own cases are in test_cli_store.py)."""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

import pytest
from cli_helpers import plangraph, plangraph_main
from cli_state_helpers import (
    SCHEMA,
    STORE,
    TOKEN,
    record_token_tests,
    statuses,
)


def test_verify_records_schema_evidence_and_status_shows_it(jwt):
    data = plangraph_main(jwt, "status", "--format", "json").json()
    assert data["format"] == 1
    assert data["plan"]["id"] == "auth-login" and data["plan"]["version"] == 1
    nodes = {n["id"]: n for n in data["nodes"]}
    assert [n["id"] for n in data["nodes"]] == ["objective-auth", "step-user-schema", TOKEN]
    schema = nodes["step-user-schema"]
    assert schema["status"] == "completed"
    assert schema["criteria"][0]["state"] == "valid"
    assert nodes[TOKEN]["status"] == "ready"
    states = {c["id"]: c["state"] for c in nodes[TOKEN]["criteria"]}
    assert states == {
        "ac-http-200": "missing",
        "ac-invalid-401": "missing",
        "ac-security-review": "awaiting_approval",
    }


def test_claim_is_refused_until_evidence_and_approval_exist(jwt):
    refused = plangraph(jwt, "claim", TOKEN, "--by", "agent", "--format", "json")
    assert refused.code == 1
    decision = refused.json()
    assert decision["verdict"] == "FAILED" and decision["node"] == TOKEN
    assert {r["code"] for r in decision["reasons"]} >= {"CRITERION_MISSING", "APPROVAL_MISSING"}

    record_token_tests(jwt)
    still = plangraph_main(jwt, "claim", TOKEN, "--by", "agent", "--format", "json")
    assert still.code == 1
    assert [r["code"] for r in still.json()["reasons"]] == ["APPROVAL_MISSING"]
    assert still.json()["status"] == "awaiting_approval"

    ok = plangraph_main(
        jwt, "approve", f"{TOKEN}/ac-security-review", "--by", "sec", "--note", "ok"
    )
    assert ok.code == 0, ok.err
    accepted = plangraph_main(jwt, "claim", TOKEN, "--by", "agent", "--format", "json")
    assert accepted.code == 0
    assert accepted.json()["verdict"] == "PASSED"
    assert len(accepted.json()["evidence"]) == 3
    assert statuses(jwt)["objective-auth"] == "completed"

    assert plangraph_main(jwt, "revoke", f"{TOKEN}/ac-security-review", "--by", "sec").code == 0
    assert statuses(jwt)[TOKEN] == "awaiting_approval"


def test_an_edited_artifact_turns_the_node_and_its_downstream_stale(jwt):
    record_token_tests(jwt)
    plangraph_main(jwt, "approve", f"{TOKEN}/ac-security-review", "--by", "sec")
    assert plangraph_main(jwt, "claim", TOKEN, "--by", "agent").code == 0
    assert plangraph_main(jwt, "status", "--check").code == 0

    schema = jwt / "src/auth/user_schema.json"
    schema.write_text(schema.read_text().replace('"minLength": 3', '"minLength": 2'))
    data = plangraph_main(jwt, "status", "--format", "json").json()
    nodes = {n["id"]: n for n in data["nodes"]}
    assert nodes["step-user-schema"]["status"] == "stale"
    assert nodes[TOKEN]["status"] == "stale"
    own = nodes["step-user-schema"]["criteria"][0]["reasons"]
    assert own[0]["code"] == "ARTIFACT_CHANGED"
    assert own[0]["path"] == "src/auth/user_schema.json"
    downstream = {r["code"] for c in nodes[TOKEN]["criteria"] for r in c["reasons"]}
    assert "UPSTREAM_CHANGED" in downstream
    check = plangraph_main(jwt, "status", "--check")
    assert check.code == 1


def test_status_check_fails_for_a_claimed_node_that_is_not_completed(jwt):
    assert plangraph_main(jwt, "status", "--check").code == 0
    plangraph_main(jwt, "claim", TOKEN, "--by", "agent")
    assert plangraph_main(jwt, "status", "--check").code == 1


def test_status_check_reads_evidence_recorded_without_node_columns(project):
    # the node and criterion of an evidence event may be only in its record, as status reads it
    from pytest_plangraph.api import PlanGraph
    from pytest_plangraph.plan.model import Event

    root = project("jwt-login")
    with PlanGraph.open(root) as graph:
        record = {
            "id": "e1",
            "node": "step-user-schema",
            "criterion": "ac-schema-valid",
            "outcome": "passed",
            "criterion_digest": "an-older-definition",
            "input_digest": "x",
            "subjects": {},
        }
        at = "2024-01-01T00:00:00+00:00"
        digest = graph.plan.digest
        graph.store.append(
            Event(kind="evidence", at=at, by="ci", plan_digest=digest, payload=record)
        )
    assert statuses(root)["step-user-schema"] == "stale"
    check = plangraph_main(root, "status", "--check")
    assert check.code == 1
    assert "step-user-schema was satisfied by evidence before and is stale now" in check.err


def test_history_replays_the_node(jwt):
    plangraph_main(jwt, "claim", "step-user-schema", "--by", "agent")
    result = plangraph_main(jwt, "history", "step-user-schema", "--format", "json")
    assert result.code == 0
    events = result.json()["events"]
    assert [e["kind"] for e in events] == ["evidence", "claim"]
    assert [e["status_after"] for e in events] == ["completed", "completed"]


def test_history_of_a_store_missing_an_event_says_so_without_a_traceback(jwt):
    plangraph_main(jwt, "claim", "step-user-schema", "--by", "agent")
    with sqlite3.connect(jwt / STORE) as con:
        con.execute("DROP TRIGGER events_no_delete")
        seq = con.execute("SELECT max(seq) FROM events WHERE kind = 'claim'").fetchone()[0]
        con.execute("DELETE FROM events WHERE seq = ?", (seq,))
    con.close()
    result = plangraph_main(jwt, "history", "step-user-schema")
    assert result.code == 2
    assert f"lists event {seq} of step-user-schema, which is not in the store" in result.err
    assert "Traceback" not in result.err


def test_audit_is_clean_then_catches_a_hand_edited_event(jwt):
    clean = plangraph_main(jwt, "audit")
    assert clean.code == 0, clean.out
    assert "chain intact" in clean.out
    with sqlite3.connect(jwt / STORE) as con:
        con.execute("DROP TRIGGER events_no_update")
        con.execute("UPDATE events SET by_ = 'mallory' WHERE seq = 1")
    con.close()
    result = plangraph_main(jwt, "audit", "--format", "json")
    assert result.code == 1
    codes = {(p["seq"], p["code"]) for p in result.json()["chain"]}
    assert (1, "CONTENT_TAMPERED") in codes


def test_audit_catches_a_log_row_edited_by_hand(jwt):
    with sqlite3.connect(jwt / STORE) as con:
        con.execute("DROP TRIGGER log_no_update")
        edited = con.execute(
            "UPDATE log SET body = replace(body, '\"passed\"', '\"failed\"') WHERE seq = 1"
        ).rowcount
    con.close()
    assert edited == 1
    result = plangraph_main(jwt, "audit")
    assert result.code == 1
    assert "LOG_MISMATCH: event 1" in result.out and "log table" in result.out


def test_audit_lists_phantom_completions(jwt):
    plangraph_main(jwt, "claim", TOKEN, "--by", "agent-7")
    data = plangraph_main(jwt, "audit", "--format", "json").json()
    assert [(p["node"], p["by"]) for p in data["phantom_completions"]] == [(TOKEN, "agent-7")]


def test_audit_max_age(jwt):
    assert plangraph_main(jwt, "audit", "--max-age", "1h").code == 0
    stale = plangraph_main(jwt, "audit", "--max-age", "0s", "--format", "json")
    assert stale.code == 1
    assert stale.json()["too_old"][0]["criterion"] == "ac-schema-valid"
    bad = plangraph_main(jwt, "audit", "--max-age", "soon")
    assert bad.code == 2 and "--max-age 'soon'" in bad.err
    for huge in ("99999999999999999999d", "1000000000d", "200000000w", "9" * 5000 + "d"):
        refused = plangraph_main(jwt, "audit", "--max-age", huge)
        assert refused.code == 2 and "too long" in refused.err, huge
    for long_ago in ("800000d", "99999999999s"):  # before the year 1: nothing is that old
        assert plangraph_main(jwt, "audit", "--max-age", long_ago).code == 0, long_ago


def test_export_and_merge_round_trip(jwt, tmp_path):
    out = tmp_path / "events.jsonl"
    assert plangraph_main(jwt, "export", "--output", str(out)).code == 0
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert [e["kind"] for e in lines] == ["evidence"]
    assert {"prev", "hash", "id"} <= set(lines[0])
    for fmt in ("json", "jsonl"):  # the documented --format of every command: the same lines
        again = tmp_path / f"events.{fmt}"
        assert plangraph_main(jwt, "export", "--format", fmt, "-o", str(again)).code == 0
        assert again.read_text() == out.read_text()

    other = tmp_path / "shard.db"
    plangraph_main(jwt, "claim", TOKEN, "--by", "shard", "--store", str(other))
    merged = plangraph_main(jwt, "merge", str(other), "--format", "json")
    assert merged.code == 0, merged.err
    assert merged.json()["merge"]["added"] == 1
    again = plangraph_main(jwt, "merge", str(other), "--format", "json")
    assert again.json()["merge"]["added"] == 0
    assert plangraph_main(jwt, "audit", "--format", "json").json()["chain"] == []


def test_export_refuses_to_write_over_the_store(jwt, tmp_path):
    store = jwt / ".plangraph" / "store.db"
    before = store.read_bytes()
    link = tmp_path / "link.jsonl"
    link.symlink_to(store)
    hard = tmp_path / "hard.db"
    os.link(store, hard)
    for target in (
        store,
        Path(f"{store}-wal"),
        link,
        hard,
        jwt / ".plangraph/../.plangraph/store.db",
    ):
        result = plangraph_main(jwt, "export", "--output", str(target))
        assert result.code == 2, target
        assert "it is the store itself (or one of its journal files)" in result.err
    assert store.read_bytes() == before  # nothing truncated
    assert plangraph_main(jwt, "audit").code == 0
    assert statuses(jwt)["step-user-schema"] == "completed"


def test_merge_warns_when_it_cannot_check_a_shards_signatures(jwt, tmp_path):
    shard = tmp_path / "shard.db"
    signed = {"PLANGRAPH_SIGNING_KEY": "ci-secret"}
    claimed = plangraph_main(jwt, "claim", TOKEN, "--by", "ci", "--store", str(shard), env=signed)
    assert claimed.code == 1, claimed.err  # refused, and recorded with its signature
    merged = plangraph_main(jwt, "merge", str(shard), "--format", "json")
    assert merged.code == 0, merged.err
    assert merged.json()["merge"]["unchecked_signatures"] == 1
    assert "1 merged event(s) were signed, but PLANGRAPH_SIGNING_KEY is not set" in merged.err
    other = tmp_path / "plain.db"  # an unsigned shard merges without a word
    plangraph_main(jwt, "claim", TOKEN, "--by", "dev", "--store", str(other))
    quiet = plangraph_main(jwt, "merge", str(other))
    assert quiet.code == 0 and quiet.err == "", quiet.err
    assert "unchecked_signatures 0" in quiet.out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("claim", "no-such-node", "--by", "x"), "unknown node 'no-such-node'; known: "),
        (("approve", f"{TOKEN}/nope", "--by", "x"), "has no criterion 'nope'; known: ac-http-200"),
        (("approve", f"{TOKEN}/ac-http-200", "--by", "x"), "only approval criteria"),
        (("approve", "just-a-node", "--by", "x"), "expected NODE/CRITERION"),
        (("history", "ghost"), "unknown node 'ghost'"),
    ],
)
def test_bad_names_exit_2_and_keep_the_store(jwt, args, message):
    before = (jwt / STORE).read_bytes()
    result = plangraph(jwt, *args)
    assert result.code == 2
    assert message in result.err
    assert "Traceback" not in result.err
    assert (jwt / STORE).read_bytes() == before


def test_plan_version_conflict_is_refused_with_exit_1(jwt):
    result = plangraph_main(
        jwt, "claim", TOKEN, "--by", "a", "--expected-plan-version", "7", "--format", "json"
    )
    assert result.code == 1
    assert result.json()["reason"] == "PLAN_VERSION_CONFLICT"
    assert (
        plangraph_main(jwt, "claim", TOKEN, "--by", "a", "--expected-plan-version", "1").code == 1
    )


def test_idempotency_key_records_one_claim(jwt):
    for _ in range(2):
        plangraph_main(jwt, "claim", TOKEN, "--by", "a", "--idempotency-key", "k1")
    events = plangraph_main(jwt, "history", TOKEN, "--format", "json").json()["events"]
    assert [e["kind"] for e in events] == ["claim"]


def test_a_key_reused_for_another_node_is_refused_not_swallowed(jwt):
    assert plangraph_main(jwt, "claim", SCHEMA, "--by", "a", "--idempotency-key", "k1").code == 0
    reused = plangraph_main(
        jwt, "claim", TOKEN, "--by", "b", "--idempotency-key", "k1", "--format", "json"
    )
    assert reused.code == 1
    assert reused.json()["reason"] == "IDEMPOTENCY_CONFLICT"
    assert "use a fresh key" in reused.err
    events = plangraph_main(jwt, "history", TOKEN, "--format", "json").json()["events"]
    assert events == []


@pytest.mark.parametrize(
    ("value", "says"),
    [
        ("  ", "expected a name, got an empty text"),
        ("a\nb", "holds control characters"),
        ("a\x1b[31mb", "holds control characters"),
        ("evil\u202egnp.exe", "(U+202E: bidirectional controls"),
        ("\u2066admin\u2069", "(U+2066, U+2069: bidirectional controls"),
        ("a\u200fb", "(U+200F: bidirectional controls"),
        ("a\u2028b", "(U+2028: bidirectional controls, line separators)"),
    ],
    ids=["blank", "line-break", "escape", "override", "isolate", "mark", "line-separator"],
)
@pytest.mark.parametrize("option", ["--by", "--idempotency-key"])
def test_an_empty_or_garbling_name_is_refused(jwt, option, value, says):
    argv = ["claim", TOKEN, "--by", "agent", "--idempotency-key", "k1"]
    argv[argv.index(option) + 1] = value
    result = plangraph(jwt, *argv)
    assert result.code == 2
    assert says in result.err
    assert f"plangraph claim: error: argument {option}: " in result.err
    assert "Traceback" not in result.err
    history = plangraph_main(jwt, "history", TOKEN, "--format", "json").json()["events"]
    assert history == []


@pytest.mark.parametrize(
    "argv",
    [
        ("approve", f"{TOKEN}/ac-security-review", "--by"),
        ("verify", SCHEMA, "--by"),
        ("patch", "add.yaml", "--expected-plan-version", "1", "--by"),
    ],
    ids=["approve", "verify", "patch"],
)
def test_every_by_refuses_a_bidirectional_control(jwt, argv):
    (jwt / "add.yaml").write_text("plangraph_patch: 1\nedges: {remove: []}\n", encoding="utf-8")
    plan = (jwt / "plangraph.yaml").read_bytes()
    before = plangraph_main(jwt, "export").out
    result = plangraph_main(jwt, *argv, "sec\u202eytiruces")
    assert result.code == 2 and "Traceback" not in result.err
    assert f"plangraph {argv[0]}: error: argument --by: " in result.err
    assert "U+202E" in result.err and "\u202e" not in result.err  # shown escaped, not applied
    assert plangraph_main(jwt, "export").out == before
    assert (jwt / "plangraph.yaml").read_bytes() == plan
