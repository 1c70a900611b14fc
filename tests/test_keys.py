"""Key files, the checkpoint under trust settings, and text arguments that are not UTF-8: real
files, a real store and the real command."""

from __future__ import annotations

import json
import os
import stat
import subprocess
from pathlib import Path

import pytest
from cli_helpers import PLANGRAPH, plangraph_main

from pytest_plangraph import checkpoint
from pytest_plangraph.store.trust import policy_from_env

SCHEMA = "step-user-schema"
HMAC = {"PLANGRAPH_SIGNING_KEY": "ci-secret"}


@pytest.fixture
def jwt(project) -> Path:
    return project("jwt-login")


def keygen(where: Path, name: str) -> tuple[Path, str]:
    made = plangraph_main(where, "keygen", "--output", str(where / name), "--format", "json")
    assert made.code == 0, made.err
    public = (where / f"{name}.pub").read_text().split()[1]
    return Path(made.json()["private_key"]), public


def test_keygen_writes_a_private_key_only_its_owner_reads_and_never_overwrites(tmp_path):
    private, public = keygen(tmp_path, "ci")
    assert stat.S_IMODE(private.stat().st_mode) == 0o600
    assert b"PRIVATE KEY" in private.read_bytes() and len(public) == 44
    before = private.read_bytes()
    again = plangraph_main(tmp_path, "keygen", "--output", str(tmp_path / "ci"))
    assert again.code == 2 and "refusing to overwrite" in again.err
    assert private.read_bytes() == before


@pytest.mark.parametrize(
    ("content", "mode", "expected"),
    [
        (None, 0o600, "chmod 600"),  # a good key, readable by others (mode set below)
        (b"not a key", 0o600, "not an unencrypted PEM private key"),
        ("missing", 0o600, "cannot be read"),
    ],
)
def test_a_bad_private_key_file_is_one_message(jwt, content, mode, expected):
    private, _ = keygen(jwt.parent, "ci")
    if content is None:
        private.chmod(0o644)
    elif content == "missing":
        private = jwt.parent / "nowhere"
    else:
        private.write_bytes(content)
    result = plangraph_main(jwt, "verify", env={"PLANGRAPH_SIGNING_KEY_FILE": str(private)})
    assert result.code == 2, result.err
    assert "PLANGRAPH_SIGNING_KEY_FILE=" in result.err and expected in result.err
    assert "Traceback" not in result.err
    assert not (jwt / ".plangraph/store.db").exists() or plangraph_main(jwt, "audit").code == 0


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (None, "cannot be read"),
        ("keys: [", "not valid YAML or JSON"),
        ('{"format": 1, "keys": [{"public_key": "abc", "roles": ["ci"]}]}', "32-byte"),
        ("format: 1\nkeys: [{public_key: KEY, roles: []}]", "non-empty list of role names"),
        ("format: 2\nkeys: []", "format: 1"),
        ("format: 1\nkeys: [{public_key: KEY, roles: [ci], id: abc}]", "is not this key's id"),
    ],
)
def test_a_bad_trusted_keys_file_is_one_message(jwt, text, expected):
    _, public = keygen(jwt.parent, "ci")
    path = jwt.parent / "trusted.yaml"
    if text is not None:
        path.write_text(text.replace("KEY", public), encoding="utf-8")
    result = plangraph_main(jwt, "status", env={"PLANGRAPH_TRUSTED_KEYS": str(path)})
    assert result.code == 2 and "Traceback" not in result.err
    assert f"PLANGRAPH_TRUSTED_KEYS={path}" in result.err and expected in result.err


def test_text_arguments_that_are_not_utf8_are_one_message(jwt):
    for args in (
        [b"claim", b"step-user-schema", b"--by", b"\xff"],
        [b"approve", b"a\xfe/b", b"--by", b"dev"],
        [b"status", b"--format", b"json", b"--plan", b"plangraph.yaml", b"--root", b"."],
    ):
        proc = subprocess.run(
            [os.fsencode(PLANGRAPH), *args], cwd=jwt, capture_output=True, check=False
        )
        if args[0] == b"status":  # the control: the same command with UTF-8 text runs
            assert proc.returncode == 0, proc.stderr
            continue
        assert proc.returncode == 2
        assert b"is not valid UTF-8 text" in proc.stderr and b"Traceback" not in proc.stderr
        assert proc.stderr.count(b"\n") == 1


def _checkpoint_signature(root: Path) -> object:
    path = checkpoint.checkpoint_path(root / ".plangraph/store.db")
    if not path.exists():
        return "no checkpoint"
    return json.loads(path.read_text(encoding="utf-8").split("\n", 1)[0])["signature"]


def test_a_checkpoint_made_without_a_key_is_not_used_with_one(jwt, monkeypatch):
    monkeypatch.setattr(checkpoint, "FIRST_AT", 1)
    assert plangraph_main(jwt, "verify", SCHEMA).code == 0  # unsigned
    plangraph_main(jwt, "status")
    # written, counting the unsigned evidence, and signed with this user's key only
    assert isinstance(_checkpoint_signature(jwt), str)
    claimed = plangraph_main(jwt, "claim", SCHEMA, "--by", "agent", env=HMAC)
    assert claimed.code == 1 and "UNSIGNED_EVENT" in claimed.out


def test_a_checkpoint_made_with_a_key_is_not_used_without_it(jwt, monkeypatch):
    monkeypatch.setattr(checkpoint, "FIRST_AT", 1)
    assert plangraph_main(jwt, "verify", SCHEMA).code == 0  # unsigned: ignored with the key
    plangraph_main(jwt, "status", env=HMAC)
    assert isinstance(_checkpoint_signature(jwt), str)
    assert plangraph_main(jwt, "claim", SCHEMA, "--by", "agent").code == 0


def test_only_a_checkpoint_signed_by_a_trusted_ci_key_spares_the_signature_checks(jwt, monkeypatch):
    monkeypatch.setattr(checkpoint, "FIRST_AT", 1)
    private, public = keygen(jwt.parent, "ci")
    trusted = jwt.parent / "trusted.json"
    entry = {"public_key": public, "roles": ["ci"]}
    trusted.write_text(json.dumps({"format": 1, "keys": [entry]}), encoding="utf-8")
    judge = {"PLANGRAPH_TRUSTED_KEYS": str(trusted)}
    ci = {**judge, "PLANGRAPH_SIGNING_KEY_FILE": str(private)}
    assert plangraph_main(jwt, "verify", SCHEMA, env=ci).code == 0
    plangraph_main(jwt, "status", env=judge)  # public keys only: nothing to sign a checkpoint
    assert _checkpoint_signature(jwt) == "no checkpoint"
    plangraph_main(jwt, "status", env=ci)
    assert str(_checkpoint_signature(jwt)).startswith("ed25519:")
    path = checkpoint.checkpoint_path(jwt / ".plangraph/store.db")
    monkeypatch.setenv("PLANGRAPH_TRUSTED_KEYS", str(trusted))
    assert checkpoint._load(path, policy_from_env()) is not None  # the judge takes it
    monkeypatch.setenv("PLANGRAPH_SIGNING_KEY", "another setting")
    assert checkpoint._load(path, policy_from_env()) is None
    assert plangraph_main(jwt, "claim", SCHEMA, "--by", "agent", env=judge).code == 0


def test_the_pytest_gate_counts_a_runs_evidence_only_when_a_trusted_key_signed_it(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    from plugin_helpers import make_project, section

    root = make_project(pytester)
    private, public = keygen(root.parent, "ci")
    trusted = root.parent / "trusted.json"
    entry = {"public_key": public, "roles": ["ci"]}
    trusted.write_text(json.dumps({"format": 1, "keys": [entry]}), encoding="utf-8")
    for name in ("PLANGRAPH_SIGNING_KEY", "PLANGRAPH_SIGNING_KEY_FILE", "PLANGRAPH_STORE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("PLANGRAPH_TRUSTED_KEYS", str(trusted))
    gate = (
        "--plangraph",
        "--plangraph-gate",
        "--plangraph-require=step-a",
        "-p",
        "no:cacheprovider",
    )
    unsigned = pytester.runpytest_subprocess(*gate)  # an agent's machine: public keys only
    assert unsigned.ret == 1
    assert any(line.startswith("gate refused step-a") for line in section(unsigned.stdout.str()))
    monkeypatch.setenv("PLANGRAPH_SIGNING_KEY_FILE", str(private))
    signed = pytester.runpytest_subprocess(*gate)  # CI: its trusted key signs the records
    assert signed.ret == 0, signed.stdout.str()
