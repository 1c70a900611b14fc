"""``plangraph attest`` and ``export --format in-toto``: in-toto statements in DSSE envelopes,
signed with real keys from ``plangraph keygen``, over a real repository, store and command."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import subprocess
import sys

import pytest
from cli_helpers import plangraph, plangraph_main

SCHEMA = "step-user-schema"
TOKEN = "step-token-endpoint"


@pytest.fixture
def signed(project):
    """The jwt-login project with a CI key pair, its trusted-keys file, and the schema step
    verified (so completed) under that key: (repository, environment)."""
    repo = project("jwt-login")
    made = plangraph_main(repo.parent, "keygen", "--output", str(repo.parent / "ci"))
    assert made.code == 0, made.err
    public = (repo.parent / "ci.pub").read_text().split()[1]
    trusted = repo.parent / "trusted.yaml"
    trusted.write_text(f"format: 1\nkeys: [{{public_key: {public}, roles: [ci]}}]\n")
    env = {
        "PLANGRAPH_SIGNING_KEY_FILE": str(repo.parent / "ci"),
        "PLANGRAPH_TRUSTED_KEYS": str(trusted),
    }
    verified = plangraph_main(repo, "verify", SCHEMA, env=env)
    assert verified.code == 0, verified.err
    return repo, env


def _statement(envelope: dict) -> dict:
    return json.loads(base64.b64decode(envelope["payload"]))


def test_a_completed_node_is_attested_and_the_attestation_verifies(signed):
    repo, env = signed
    made = plangraph(repo, "attest", SCHEMA, "--output", "schema.intoto.json", env=env)
    assert made.code == 0, made.err
    assert "attested in schema.intoto.json" in made.out
    envelope = json.loads((repo / "schema.intoto.json").read_text())
    mask = os.umask(0o022)
    os.umask(mask)  # a new file's mode, as export --output writes it (not a temporary's 0600)
    assert (repo / "schema.intoto.json").stat().st_mode & 0o777 == 0o666 & ~mask
    assert envelope["payloadType"] == "application/vnd.in-toto+json"
    statement = _statement(envelope)
    assert statement["_type"] == "https://in-toto.io/Statement/v1"
    subjects = {s["name"]: s["digest"]["sha256"] for s in statement["subject"]}
    schema = "src/auth/user_schema.json"
    assert subjects[schema] == hashlib.sha256((repo / schema).read_bytes()).hexdigest()
    assert "plangraph.yaml" in subjects
    predicate = statement["predicate"]
    assert predicate["node"] == SCHEMA and predicate["verdict"] == "PASSED"
    assert [c["id"] for c in predicate["criteria"]] == ["ac-schema-valid"]
    assert (
        predicate["evidence"] and predicate["evidence"][0] == predicate["criteria"][0]["evidence"]
    )
    head = plangraph_main(repo, "status", "--format", "json", env=env).json()
    assert predicate["plan"]["digest"] == head["plan"]["digest"]
    assert predicate["commit"] and len(predicate["commit"]) == 40

    checked = plangraph(repo, "attest", "--verify", "schema.intoto.json", env=env)
    assert checked.code == 0, checked.out + checked.err
    assert "verified" in checked.out and SCHEMA in checked.out


def test_a_node_that_is_not_completed_is_refused_with_reasons(signed):
    repo, env = signed
    refused = plangraph_main(repo, "attest", TOKEN, "--output", "t.json", env=env)
    assert refused.code == 1
    assert "not attested" in refused.out and "CRITERION_MISSING" in refused.out
    assert not (repo / "t.json").exists()
    as_json = plangraph_main(repo, "attest", TOKEN, "--format", "json", env=env)
    assert as_json.code == 1 and as_json.json()["envelope"] is None
    assert as_json.json()["verdict"] == "FAILED" and as_json.json()["reasons"]


def _tamper_payload(envelope: dict) -> None:
    statement = _statement(envelope)
    statement["predicate"]["verdict"] = "PASSED"
    statement["predicate"]["node"] = TOKEN  # claim another node with the same signature
    envelope["payload"] = base64.b64encode(json.dumps(statement).encode()).decode()


def _tamper_signature(envelope: dict) -> None:
    raw = bytearray(base64.b64decode(envelope["signatures"][0]["sig"]))
    raw[0] ^= 1
    envelope["signatures"][0]["sig"] = base64.b64encode(bytes(raw)).decode()


@pytest.mark.parametrize(
    ("tamper", "reason"),
    [
        (_tamper_payload, "the signature does not verify"),
        (_tamper_signature, "the signature does not verify"),
    ],
)
def test_a_tampered_envelope_does_not_verify(signed, tamper, reason):
    repo, env = signed
    assert plangraph_main(repo, "attest", SCHEMA, "-o", "a.json", env=env).code == 0
    envelope = json.loads((repo / "a.json").read_text())
    tamper(envelope)
    (repo / "a.json").write_text(json.dumps(envelope))
    checked = plangraph(repo, "attest", "--verify", "a.json", env=env)
    assert checked.code == 1, checked.out
    assert "does NOT verify" in checked.out and reason in checked.out
    assert "Traceback" not in checked.err


def test_a_subject_changed_since_is_named(signed):
    repo, env = signed
    assert plangraph_main(repo, "attest", SCHEMA, "-o", "a.json", env=env).code == 0
    schema = repo / "src/auth/user_schema.json"
    schema.write_text(schema.read_text() + "\n")
    checked = plangraph_main(repo, "attest", "--verify", "a.json", "--format", "json", env=env)
    assert checked.code == 1
    data = checked.json()
    assert data["verified"] is False
    assert [c["name"] for c in data["changed"]] == ["src/auth/user_schema.json"]
    assert "src/auth/user_schema.json: its sha256 differs" in data["problems"][0]
    schema.unlink()
    gone = plangraph_main(repo, "attest", "--verify", "a.json", env=env)
    assert gone.code == 1 and "src/auth/user_schema.json: missing now" in gone.out


def test_a_key_that_is_not_trusted_does_not_verify(signed, tmp_path):
    repo, env = signed
    assert plangraph_main(repo, "attest", SCHEMA, "-o", "a.json", env=env).code == 0
    assert plangraph_main(tmp_path, "keygen", "--output", str(tmp_path / "other")).code == 0
    other = (tmp_path / "other.pub").read_text().split()[1]
    trusted = tmp_path / "other-trusted.yaml"
    trusted.write_text(f"format: 1\nkeys: [{{public_key: {other}, roles: [ci]}}]\n")
    checked = plangraph_main(
        repo, "attest", "--verify", "a.json", env={**env, "PLANGRAPH_TRUSTED_KEYS": str(trusted)}
    )
    assert checked.code == 1 and "signed by no trusted key" in checked.out


@pytest.mark.parametrize(
    ("args", "env_drop", "expected"),
    [
        (["attest"], None, "give either NODE"),
        (["attest", SCHEMA, "--verify", "a.json"], None, "give either NODE"),
        (["attest", "no-such-node"], None, "no-such-node"),
        (["attest", SCHEMA], "PLANGRAPH_SIGNING_KEY_FILE", "PLANGRAPH_SIGNING_KEY_FILE"),
        (["attest", "--verify", "missing.json"], None, "cannot read missing.json"),
        (["attest", "--verify", "a.json"], "PLANGRAPH_TRUSTED_KEYS", "PLANGRAPH_TRUSTED_KEYS"),
    ],
)
def test_bad_input_is_one_message_and_exit_2(signed, args, env_drop, expected):
    repo, env = signed
    (repo / "a.json").write_text("{}")
    env = {k: v for k, v in env.items() if k != env_drop}
    result = plangraph_main(repo, *args, env=env)
    assert result.code == 2, result.out + result.err
    assert expected in result.err and "Traceback" not in result.err


@pytest.mark.parametrize("content", ["not json", "[]", '{"payload": 3}', "{}"])
def test_a_file_that_is_no_envelope_does_not_verify(signed, content):
    repo, env = signed
    (repo / "a.json").write_text(content)
    result = plangraph_main(repo, "attest", "--verify", "a.json", env=env)
    assert result.code == 1 and "does NOT verify" in result.out


def test_export_in_toto_writes_one_envelope_per_completed_node(signed):
    repo, env = signed
    exported = plangraph_main(repo, "export", "--format", "in-toto", "-o", "all.jsonl", env=env)
    assert exported.code == 0, exported.err
    assert "exported 1 attestation(s)" in exported.err
    lines = (repo / "all.jsonl").read_text().splitlines()
    assert [_statement(json.loads(line))["predicate"]["node"] for line in lines] == [SCHEMA]
    (repo / "one.json").write_text(lines[0])
    assert plangraph_main(repo, "attest", "--verify", "one.json", env=env).code == 0
    events = plangraph_main(repo, "export", "--plan", "plangraph.yaml", env=env)
    assert events.code == 2 and "--plan goes with --format in-toto" in events.err


def test_pae_is_the_dsse_specs_encoding():
    from pytest_plangraph.attest.dsse import pae

    # the DSSE protocol document's example
    assert (
        pae("http://example.com/HelloWorld", b"hello world")
        == b"DSSEv1 29 http://example.com/HelloWorld 11 hello world"
    )
    assert pae("t", b"") == b"DSSEv1 1 t 0 "


def test_the_signature_checks_with_the_raw_public_key_alone(signed):
    """Another DSSE tool needs only the public key of ``PREFIX.pub`` and the PAE."""
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    repo, env = signed
    made = plangraph_main(repo, "attest", SCHEMA, env=env)
    assert made.code == 0, made.err
    envelope = json.loads(made.out)
    public = base64.b64decode((repo.parent / "ci.pub").read_text().split()[1])
    payload = base64.b64decode(envelope["payload"])
    kind = envelope["payloadType"].encode()
    message = b"DSSEv1 %d %s %d %s" % (len(kind), kind, len(payload), payload)
    signature = envelope["signatures"][0]
    Ed25519PublicKey.from_public_bytes(public).verify(base64.b64decode(signature["sig"]), message)
    assert signature["keyid"] == (repo.parent / "ci.pub").read_text().split()[2]
    assert _statement(envelope)["predicateType"] == "urn:pytest-plangraph:attestation:node:v1"


TESTED_PLAN = """plangraph: 1
plan: demo
nodes:
  - id: step-add
    acceptance:
      - id: ac-add
        verifier: {type: test, tests: ["tests/test_add.py"]}
"""


def test_the_attestation_names_the_files_the_evidence_is_bound_to(tmp_path):
    """A node with no outputs is decided by its tests: the test file, the code they import and
    the configuration are subjects, so breaking the code after signing fails --verify."""
    from repo_helpers import git

    repo = tmp_path / "repo"
    (repo / "tests").mkdir(parents=True)
    (repo / "plangraph.yaml").write_text(TESTED_PLAN)
    (repo / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    (repo / "tests" / "test_add.py").write_text(
        "from calc import add\n\ndef test_add():\n    assert add(2, 2) == 4\n"
    )
    (repo / "pytest.ini").write_text("[pytest]\ntestpaths = tests\npythonpath = .\n")
    (repo / ".gitignore").write_text(".plangraph/\n__pycache__/\n")
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "initial")
    assert plangraph_main(tmp_path, "keygen", "--output", str(tmp_path / "ci")).code == 0
    public = (tmp_path / "ci.pub").read_text().split()[1]
    (tmp_path / "trusted.yaml").write_text(
        f"format: 1\nkeys: [{{public_key: {public}, roles: [ci]}}]\n"
    )
    env = {
        "PLANGRAPH_SIGNING_KEY_FILE": str(tmp_path / "ci"),
        "PLANGRAPH_TRUSTED_KEYS": str(tmp_path / "trusted.yaml"),
    }
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "--plangraph",
            "--plangraph-coverage",
            "-q",
            "-p",
            "no:cacheprovider",
        ],
        cwd=repo,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    made = plangraph(repo, "attest", "step-add", "--output", "add.json", env=env)
    assert made.code == 0, made.out + made.err
    subjects = {
        s["name"] for s in _statement(json.loads((repo / "add.json").read_text()))["subject"]
    }
    assert {"tests/test_add.py", "calc.py", "pytest.ini", "plangraph.yaml"} <= subjects
    # the record binds what the run could collect under tests/ (no file: the gate walks it
    # again), which an in-toto subject cannot name by a digest of its bytes
    from pytest_plangraph.plan.paths import COLLECT
    from pytest_plangraph.store.sqlite import Store

    with Store.open(repo / ".plangraph" / "store.db", create=False) as store:
        bound = [p for e in store.log() if e.kind == "evidence" for p in e.payload["subjects"]]
    assert any(COLLECT in p for p in bound)
    assert not any(COLLECT in name for name in subjects)
    assert plangraph(repo, "attest", "--verify", "add.json", env=env).code == 0

    (repo / "calc.py").write_text("def add(a, b):\n    return a - b\n")  # broken after signing
    checked = plangraph(repo, "attest", "--verify", "add.json", "--format", "json", env=env)
    assert checked.code == 1, checked.out + checked.err
    assert [c["name"] for c in checked.json()["changed"]] == ["calc.py"]


@pytest.mark.parametrize(
    ("output", "says"),
    [
        (".plangraph/store.db", "store"),
        (".plangraph/store.db-wal", "store"),
        ("store-link.db", "store"),
        ("plangraph.yaml", "plan"),
    ],
    ids=["store", "store-wal", "link-to-store", "plan"],
)
def test_attest_refuses_to_write_over_the_store_or_the_plan(signed, output, says):
    repo, env = signed
    os.symlink(os.path.join(".plangraph", "store.db"), repo / "store-link.db")
    kept = {p: p.read_bytes() for p in (repo / ".plangraph" / "store.db", repo / "plangraph.yaml")}
    made = plangraph(repo, "attest", SCHEMA, "--output", output, env=env)
    assert made.code == 2 and "Traceback" not in made.err, made.err
    assert made.err.startswith(f"plangraph: error: --output {output} is the {says} file"), made.err
    assert "somewhere else" in made.err
    assert {p: p.read_bytes() for p in kept} == kept
    assert plangraph(repo, "status", "--check", env=env).code in (0, 1)
