"""With keys configured the gate counts only signed events: one test per attack, each on the
JWT-login sample in a real git repository with a real store, through the real command."""

from __future__ import annotations

import base64
import hashlib
import json
import sqlite3
from pathlib import Path

import pytest
from cli_helpers import plangraph_main

from pytest_plangraph.plan.model import Event
from pytest_plangraph.store.chain import seal
from pytest_plangraph.store.rows import INSERT_EVENT, event_row

SCHEMA = "step-user-schema"
TOKEN = "step-token-endpoint"
REVIEW = f"{TOKEN}/ac-security-review"
HMAC = {"PLANGRAPH_SIGNING_KEY": "ci-secret"}


@pytest.fixture
def jwt(project) -> Path:
    """The sample with no evidence recorded yet."""
    return project("jwt-login")


def keygen(root: Path, name: str) -> tuple[Path, str, str]:
    """A key pair made by ``plangraph keygen``: private key path, public key, key id."""
    made = plangraph_main(root.parent, "keygen", "--output", str(root.parent / name))
    assert made.code == 0, made.err
    _, public, key_id = (root.parent / f"{name}.pub").read_text().split()
    return root.parent / name, public, key_id


def trusted_file(root: Path, entries: list[tuple[str, list[str]]]) -> Path:
    """A trusted-keys file (YAML) listing each public key with its roles."""
    path = root.parent / "trusted-keys.yaml"
    lines = ["format: 1", "keys:"]
    lines += [f"  - {{public_key: '{key}', roles: {json.dumps(roles)}}}" for key, roles in entries]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def claim(root: Path, node: str, env: dict[str, str] | None = None) -> tuple[int, list[str]]:
    """Claim *node* as an agent; the exit code and the reason codes of the decision."""
    result = plangraph_main(root, "claim", node, "--by", "agent", "--format", "json", env=env)
    assert result.code in (0, 1), result.err
    return result.code, [r["code"] for r in result.json()["reasons"]]


def criterion_state(root: Path, node: str, criterion: str, env: dict[str, str]) -> dict:
    data = plangraph_main(root, "status", "--format", "json", env=env).json()
    found = {n["id"]: n for n in data["nodes"]}[node]
    return {c["id"]: c for c in found["criteria"]}[criterion]


@pytest.fixture
def ci_keys(jwt) -> dict[str, str]:
    """CI's private key and a trusted-keys file trusting it for role ci: the environments of
    the machine that records (``record``) and of the one that judges (``judge``)."""
    private, public, _ = keygen(jwt, "ci")
    trusted = trusted_file(jwt, [(public, ["ci"])])
    judge = {"PLANGRAPH_TRUSTED_KEYS": str(trusted)}
    return {"record": str(private), "judge": json.dumps(judge)}


def test_unsigned_evidence_with_a_key_configured_is_refused(jwt):
    assert plangraph_main(jwt, "verify", SCHEMA).code == 0  # recorded without the key
    code, reasons = claim(jwt, SCHEMA, env=HMAC)
    assert code == 1 and reasons[0] == "UNSIGNED_EVENT"
    assert claim(jwt, SCHEMA)[0] == 0  # without a key configured it counts, as before


def test_hmac_signed_evidence_counts_as_before(jwt):
    assert plangraph_main(jwt, "verify", SCHEMA, env=HMAC).code == 0
    assert claim(jwt, SCHEMA, env=HMAC) == (0, [])


def test_badly_signed_evidence_is_refused(jwt):
    assert plangraph_main(jwt, "verify", SCHEMA, env={"PLANGRAPH_SIGNING_KEY": "other"}).code == 0
    code, reasons = claim(jwt, SCHEMA, env=HMAC)
    assert code == 1 and reasons[0] == "BAD_SIGNATURE"


def test_merged_unsigned_store_is_refused(jwt, tmp_path):
    shard = tmp_path / "shard.db"
    assert plangraph_main(jwt, "verify", SCHEMA, "--store", str(shard)).code == 0
    assert plangraph_main(jwt, "merge", str(shard)).code == 0  # merged without the key
    code, reasons = claim(jwt, SCHEMA, env=HMAC)
    assert code == 1 and reasons[0] == "UNSIGNED_EVENT"
    history = plangraph_main(jwt, "history", SCHEMA, "--format", "json", env=HMAC).json()
    assert [e["ignored"] for e in history["events"]] == ["UNSIGNED_EVENT", None]


def test_ed25519_evidence_from_ci_counts_where_only_the_public_key_is(jwt, ci_keys):
    record = {"PLANGRAPH_SIGNING_KEY_FILE": ci_keys["record"]}
    assert plangraph_main(jwt, "verify", SCHEMA, env=record).code == 0
    events = plangraph_main(jwt, "history", SCHEMA, "--format", "json").json()["events"]
    assert events[0]["signature"].startswith("ed25519:")
    assert claim(jwt, SCHEMA, env=json.loads(ci_keys["judge"])) == (0, [])


def test_an_agent_with_only_the_public_key_cannot_make_counted_evidence(jwt, ci_keys):
    judge = json.loads(ci_keys["judge"])
    from pytest_plangraph import PlanGraph

    # Recorded through the Python API, where the agent runs: no private key there.
    with pytest.MonkeyPatch.context() as env:
        env.chdir(jwt)
        env.setenv("PLANGRAPH_TRUSTED_KEYS", judge["PLANGRAPH_TRUSTED_KEYS"])
        with PlanGraph.open(jwt) as graph:
            graph.verify([SCHEMA], by="agent")
    assert claim(jwt, SCHEMA, env=judge)[1][0] == "UNSIGNED_EVENT"
    # Signed with a key of its own making: not a trusted one.
    own, _, _ = keygen(jwt, "agent")
    signed = {"PLANGRAPH_SIGNING_KEY_FILE": str(own), **judge}
    assert plangraph_main(jwt, "verify", SCHEMA, "--by", "agent2", env=signed).code == 0
    assert claim(jwt, SCHEMA, env=judge)[1][0] == "UNTRUSTED_KEY"
    # Its own signature presented under the trusted key's id: it does not verify.
    _forge_with_trusted_id(jwt, ci_keys)
    code, reasons = claim(jwt, SCHEMA, env=judge)
    assert code == 1 and reasons[0] == "BAD_SIGNATURE"
    audit = plangraph_main(jwt, "audit", "--format", "json", env=judge).json()
    found = {e["code"] for e in audit["ignored_events"]}
    assert {"UNSIGNED_EVENT", "UNTRUSTED_KEY", "BAD_SIGNATURE"} <= found
    assert [p["node"] for p in audit["phantom_completions"]] == [SCHEMA]


def _forge_with_trusted_id(root: Path, ci_keys: dict[str, str]) -> None:
    """Append, as someone writing the SQLite file, a copy of the latest evidence recorded at
    another time whose signature names the trusted key's id with made-up bytes."""
    trusted = Path(json.loads(ci_keys["judge"])["PLANGRAPH_TRUSTED_KEYS"]).read_text()
    key_id = _id_of(trusted)
    con = sqlite3.connect(root / ".plangraph/store.db")
    with con:
        row = con.execute(
            "SELECT seq, hash, payload, at, by_, plan_digest FROM events ORDER BY seq DESC"
        ).fetchone()
        event = Event(
            kind="evidence",
            node=SCHEMA,
            criterion="ac-schema-valid",
            at=row[3] + "9",
            by="forger",
            plan_digest=row[5],
            payload=json.loads(row[2]),
        )
        sealed = seal(event, row[0] + 1, row[1], None)
        fake = base64.b64encode(b"\x01" * 64).decode()
        forged = sealed.replace(**{"signature": f"ed25519:{key_id}:{fake}"})
        con.execute(INSERT_EVENT, event_row(forged))
    con.close()


def _id_of(trusted: str) -> str:
    from pytest_plangraph.store.keys import key_id

    public = trusted.split("public_key: '")[1].split("'")[0]
    return key_id(base64.b64decode(public))


def test_an_approval_counts_only_with_a_key_trusted_for_its_role(jwt):
    ci, ci_public, _ = keygen(jwt, "ci")
    security, security_public, _ = keygen(jwt, "security")
    judge = {
        "PLANGRAPH_TRUSTED_KEYS": str(
            trusted_file(jwt, [(ci_public, ["ci"]), (security_public, ["security"])])
        )
    }
    approve = ["approve", REVIEW, "--by", "dev", "--role", "security"]
    assert plangraph_main(jwt, *approve).code == 0  # unsigned
    state = criterion_state(jwt, TOKEN, "ac-security-review", judge)
    assert state["state"] == "awaiting_approval"
    assert state["reasons"][0]["code"] == "UNSIGNED_EVENT"
    assert plangraph_main(jwt, *approve, env={"PLANGRAPH_SIGNING_KEY_FILE": str(ci)}).code == 0
    state = criterion_state(jwt, TOKEN, "ac-security-review", judge)
    assert state["reasons"][0]["code"] == "ROLE_NOT_TRUSTED"
    by_security = {"PLANGRAPH_SIGNING_KEY_FILE": str(security)}
    assert plangraph_main(jwt, *approve, env=by_security).code == 0
    assert criterion_state(jwt, TOKEN, "ac-security-review", judge)["state"] == "valid"


def test_approve_refuses_a_role_the_criterion_does_not_ask_for(jwt):
    wrong = plangraph_main(jwt, "approve", REVIEW, "--by", "dev", "--role", "qa")
    assert wrong.code == 2 and "--role security" in wrong.err
    assert plangraph_main(jwt, "approve", REVIEW, "--by", "dev").code == 0  # no keys: as before
    assert criterion_state(jwt, TOKEN, "ac-security-review", {})["state"] == "valid"


def test_an_approval_given_as_another_role_does_not_count(jwt):
    from pytest_plangraph import PlanGraph

    with PlanGraph.open(jwt) as graph:
        digest = graph.status().input_digests[TOKEN]
        payload = {"input_digest": digest, "note": "", "role": "intern"}
        graph.append("approval", TOKEN, criterion="ac-security-review", by="x", payload=payload)
    assert criterion_state(jwt, TOKEN, "ac-security-review", {})["state"] == "awaiting_approval"


def test_an_unsigned_retry_grant_does_not_reset_the_budget(jwt):
    for _ in range(3):  # max_retry 2: the third refusal spends the budget
        claim(jwt, SCHEMA, env=HMAC)
    assert claim(jwt, SCHEMA, env=HMAC)[1][-1] == "RETRY_BUDGET_EXHAUSTED"
    assert plangraph_main(jwt, "retry", SCHEMA, "--by", "agent").code == 0  # no key
    assert "RETRY_BUDGET_EXHAUSTED" in claim(jwt, SCHEMA, env=HMAC)[1]
    assert plangraph_main(jwt, "retry", SCHEMA, "--by", "lead", env=HMAC).code == 0
    assert "RETRY_BUDGET_EXHAUSTED" not in claim(jwt, SCHEMA, env=HMAC)[1]


def test_with_keys_a_cache_row_forged_with_this_users_key_hides_no_change(jwt, ci_keys):
    """The agent runs as the same user, so it can read the key that tags hash-cache rows and
    forge one; with keys configured the gate reads every file instead of the cache."""
    from pytest_plangraph.store.filecache import row_tag
    from pytest_plangraph.store.localkey import local_key

    record = {"PLANGRAPH_SIGNING_KEY_FILE": ci_keys["record"]}
    judge = json.loads(ci_keys["judge"])
    assert plangraph_main(jwt, "verify", SCHEMA, env=record).code == 0
    assert claim(jwt, SCHEMA, env=judge) == (0, [])
    rel = "src/auth/user_schema.json"
    schema = jwt / rel
    before = hashlib.sha256(schema.read_bytes()).hexdigest()
    schema.write_text(schema.read_text(encoding="utf-8") + "\n", encoding="utf-8")
    info = schema.stat()
    row = (rel, info.st_ino, info.st_mtime_ns, info.st_ctime_ns, info.st_size, before, 2**62)
    with sqlite3.connect(jwt / ".plangraph" / "store.db") as con:
        con.execute(
            "INSERT OR REPLACE INTO file_cache "
            "(path, inode, mtime_ns, ctime_ns, size, sha256, recorded_ns, tag) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (*row, row_tag(local_key(), row)),
        )
    code, reasons = claim(jwt, SCHEMA, env=judge)
    assert code == 1 and "ARTIFACT_CHANGED" in reasons
    # without keys the forged row is believed: the trust model's "no key" line (docs/trust.md)
    assert claim(jwt, SCHEMA) == (0, [])
