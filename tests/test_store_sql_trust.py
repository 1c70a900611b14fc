"""SQL kept in the store file is not trusted: a view, trigger or index planted or changed by hand
(the file is writable by whoever can write the repository, an agent included) neither lets
forged rows count nor drops CI's records. One test per attack, each on a real git copy of the
JWT-login sample with a real store, through the real ``plangraph`` command and real pytest runs,
with Ed25519 keys (``plangraph keygen``, a trusted-keys file) or the HMAC key."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from cli_helpers import plangraph_main
from test_trust import keygen, trusted_file

STORE = Path(".plangraph/store.db")
SCHEMA = "step-user-schema"
TOKEN = "step-token-endpoint"
REVIEW = f"{TOKEN}/ac-security-review"
BREAK = ("if _users().get(username) != digest:", "if False:")


def _keys(root: Path, kind: str) -> tuple[dict[str, str], dict[str, str]]:
    """The environments of CI (which records and signs) and of the judge, for *kind* ``K``
    (Ed25519: CI's private key, a trusted-keys file with its public key as ``ci``) or ``H``
    (the HMAC key on both)."""
    if kind == "H":
        shared = {"PLANGRAPH_SIGNING_KEY": "ci-secret"}
        return shared, shared
    private, public, _ = keygen(root, "ci")
    trusted = trusted_file(root, [(public, ["ci"])])
    return {"PLANGRAPH_SIGNING_KEY_FILE": str(private)}, {"PLANGRAPH_TRUSTED_KEYS": str(trusted)}


def _pytest(root: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """CI's run of the project's suite with ``--plangraph``, in a fresh process."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith("PLANGRAPH_")}
    return subprocess.run(
        [sys.executable, "-m", "pytest", "--plangraph", "-q", "-p", "no:cacheprovider"],
        cwd=root,
        env={**clean, **env},
        capture_output=True,
        text=True,
        check=False,
    )


def _break_login(root: Path) -> None:
    login = root / "src" / "auth" / "login.py"
    text = login.read_text(encoding="utf-8")
    assert BREAK[0] in text
    login.write_text(text.replace(*BREAK), encoding="utf-8")


def _sql(root: Path, *statements: str) -> None:
    con = sqlite3.connect(root / STORE, isolation_level=None)
    for statement in statements:
        con.execute(statement)
    con.close()


def _count(root: Path) -> int:
    with sqlite3.connect(root / STORE) as con:
        return int(con.execute("SELECT count(*) FROM events").fetchone()[0])


def _claim(root: Path, node: str, env: dict[str, str]) -> dict:
    result = plangraph_main(root, "claim", node, "--by", "agent", "--format", "json", env=env)
    assert result.code in (0, 1), result.err
    return result.json()


def _assert_refused(root: Path, env: dict[str, str], node: str, names: str) -> None:
    """Status, audit and a claim refuse the store with ``STORE_TAMPERED`` naming *names*,
    and nothing is written to it."""
    before = _count(root)
    for command in (["status"], ["audit"]):
        result = plangraph_main(root, *command, env=env)
        assert result.code == 2, (command, result.out)
        assert "STORE_TAMPERED" in result.err and names in result.err
        assert "Traceback" not in result.err
    answer = _claim(root, node, env)
    assert answer["verdict"] == "FAILED"
    [reason] = answer["reasons"]
    assert reason["code"] == "STORE_TAMPERED" and names in reason["message"]
    assert _count(root) == before


@pytest.mark.parametrize("kind", ["K", "H"])
def test_forged_log_rows_behind_a_replaced_view_are_refused(project, kind: str) -> None:
    """Claims of another node rewritten in the log as passing evidence and a security approval
    of the token endpoint, with the view ``log_source`` replaced to return the forged rows."""
    root = project("jwt-login")
    ci, judge = _keys(root, kind)
    assert _pytest(root, ci).returncode == 0
    _break_login(root)
    assert _pytest(root, ci).returncode == 1  # CI's signed failures
    for _ in range(3):
        _claim(root, SCHEMA, {})  # ordinary claims: they count unsigned
    from pytest_plangraph import PlanGraph

    with PlanGraph.open(root) as graph:
        digest = graph.status().input_digests[TOKEN]
    con = sqlite3.connect(root / STORE, isolation_level=None)
    failed = con.execute(
        "SELECT criterion, record, body FROM log WHERE kind = 'evidence' AND node = ? "
        "AND json_extract(body, '$[0]') = 'failed'",
        (TOKEN,),
    ).fetchall()
    claims = [row[0] for row in con.execute("SELECT seq FROM log WHERE kind = 'claim'")]
    assert failed and len(claims) > len(failed)
    trigger = con.execute("SELECT sql FROM sqlite_master WHERE name = 'log_no_update'").fetchone()
    con.execute("DROP TRIGGER log_no_update")
    for seq, (criterion, record, body) in zip(claims, failed, strict=False):
        passing = json.dumps(["passed", None, *json.loads(body)[2:]])
        con.execute(
            "UPDATE log SET kind = 'evidence', node = ?, criterion = ?, record = ?, body = ? "
            "WHERE seq = ?",
            (TOKEN, criterion, record, passing, seq),
        )
    approval = json.dumps({"input_digest": digest, "note": "", "role": "security"})
    con.execute(
        "UPDATE log SET kind = 'approval', node = ?, criterion = 'ac-security-review', "
        "body = ? WHERE seq = ?",
        (TOKEN, approval, claims[len(failed)]),
    )
    con.execute(trigger[0])
    con.execute("DROP VIEW log_source")
    con.execute("CREATE VIEW log_source AS SELECT * FROM log")  # the forged rows, as they are
    con.close()
    _assert_refused(root, judge, TOKEN, "view log_source")


@pytest.mark.parametrize("kind", ["K", "H"])
def test_a_trigger_that_drops_ci_failures_is_refused_before_ci_writes(project, kind: str) -> None:
    root = project("jwt-login")
    ci, judge = _keys(root, kind)
    assert _pytest(root, ci).returncode == 0
    _sql(
        root,
        "CREATE TRIGGER zz BEFORE INSERT ON events WHEN NEW.kind = 'evidence' AND "
        "json_extract(NEW.payload, '$.outcome') <> 'passed' BEGIN SELECT RAISE(IGNORE); END",
    )
    before = _count(root)
    _break_login(root)
    run = _pytest(root, ci)  # CI is told, and writes nothing into such a store
    assert run.returncode != 0
    assert "STORE_TAMPERED" in run.stdout + run.stderr and "trigger zz" in run.stdout + run.stderr
    assert _count(root) == before
    _assert_refused(root, judge, TOKEN, "trigger zz")


def test_an_index_rebuilt_under_its_old_text_does_not_hide_unsigned_evidence(project) -> None:
    """``events_kind`` rebuilt on another column, its SQL text put back through
    ``writable_schema``: a lookup by kind through it finds no evidence at all."""
    root = project("jwt-login")
    _, judge = _keys(root, "K")
    assert plangraph_main(root, "verify", SCHEMA, "--by", "agent").code == 0  # no key
    assert _claim(root, SCHEMA, judge)["reasons"][0]["code"] == "UNSIGNED_EVENT"
    _sql(
        root,
        "DROP INDEX events_kind",
        "CREATE INDEX events_kind ON events (by_)",
        "PRAGMA writable_schema = ON",
        "UPDATE sqlite_master SET sql = 'CREATE INDEX events_kind ON events (kind)' "
        "WHERE name = 'events_kind'",
    )
    answer = _claim(root, SCHEMA, judge)
    assert answer["verdict"] == "FAILED"
    assert answer["reasons"][0]["code"] == "UNSIGNED_EVENT"
    audit = plangraph_main(root, "audit", "--format", "json", env=judge)
    assert audit.code == 1
    corrupt = [p for p in audit.json()["chain"] if p["code"] == "STORE_CORRUPT"]
    assert corrupt and "events_kind" in corrupt[0]["message"]


def test_a_role_less_approval_needs_the_approver_role(project) -> None:
    """CI's key (role ``ci``) signing an approval given as ``ci`` of a criterion that names no
    role: it needs a key trusted as ``approver``."""
    root = project("jwt-login")
    plan = root / "plangraph.yaml"
    text = plan.read_text(encoding="utf-8")
    plan.write_text(text.replace("{type: approval, role: security}", "{type: approval}"))
    ci, judge = _keys(root, "K")
    refused = plangraph_main(root, "approve", REVIEW, "--by", "ci", "--role", "ci", env=ci)
    assert refused.code == 2 and "--role approver" in refused.err
    from pytest_plangraph import PlanGraph

    with pytest.MonkeyPatch.context() as env:  # written as CI's process would, signed
        env.setenv("PLANGRAPH_SIGNING_KEY_FILE", ci["PLANGRAPH_SIGNING_KEY_FILE"])
        with PlanGraph.open(root) as graph:
            digest = graph.status().input_digests[TOKEN]
            payload = {"input_digest": digest, "note": "", "role": "ci"}
            graph.append(
                "approval", TOKEN, criterion="ac-security-review", by="ci", payload=payload
            )
    status = plangraph_main(root, "status", "--format", "json", env=judge).json()
    node = {n["id"]: n for n in status["nodes"]}[TOKEN]
    review = {c["id"]: c for c in node["criteria"]}["ac-security-review"]
    assert review["state"] == "awaiting_approval"
    approver, public, _ = keygen(root, "lead")
    judge = {"PLANGRAPH_TRUSTED_KEYS": str(trusted_file(root, [(public, ["approver"])]))}
    signed = {"PLANGRAPH_SIGNING_KEY_FILE": str(approver)}
    assert plangraph_main(root, "approve", REVIEW, "--by", "lead", env=signed).code == 0
    status = plangraph_main(root, "status", "--format", "json", env=judge).json()
    node = {n["id"]: n for n in status["nodes"]}[TOKEN]
    assert {c["id"]: c for c in node["criteria"]}["ac-security-review"]["state"] == "valid"


def test_a_write_the_file_dropped_is_not_kept(tmp_path: Path) -> None:
    """The check after inserting, on its own: an insert that SQLite reports done but that a
    trigger of the file turned into nothing is refused, naming the event."""
    from pytest_plangraph.errors import StoreTamperedError
    from pytest_plangraph.plan.model import Event
    from pytest_plangraph.store import Store
    from pytest_plangraph.store.chain import seal
    from pytest_plangraph.store.rows import INSERT_EVENT, event_row
    from pytest_plangraph.store.schemacheck import confirm_stored

    path = tmp_path / "store.db"
    event = Event(
        kind="claim",
        node="n",
        at="2026-01-01T00:00:00+00:00",
        by="a",
        plan_digest="a" * 64,
        payload={"verdict": "FAILED"},
    )
    with Store.open(path) as store:
        store.append(event)
    con = sqlite3.connect(path, isolation_level=None)
    con.execute("CREATE TRIGGER zz BEFORE INSERT ON events BEGIN SELECT RAISE(IGNORE); END")
    [(seq, prev)] = con.execute("SELECT seq, hash FROM events").fetchall()
    second = seal(event.replace(by="b"), seq + 1, prev, None)
    con.execute("BEGIN")
    con.execute(INSERT_EVENT, event_row(second))
    with pytest.raises(StoreTamperedError, match=f"event {seq + 1} .* did not keep it"):
        confirm_stored(con, path, seq, [(second.seq, second.id)])
    con.execute("ROLLBACK")
    con.close()
