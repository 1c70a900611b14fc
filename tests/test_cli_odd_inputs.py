"""Odd inputs to the key, head and recording commands: each is one clear message and exit 2,
never a traceback or a hang. Key files and environment variables reach the real command in a
subprocess (a FIFO read in-process would hang the test itself, and environment bytes that are
not UTF-8 only exist in a real process)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from cli_helpers import PLANGRAPH, plangraph_main

SCHEMA = "step-user-schema"


@pytest.fixture
def jwt(project) -> Path:
    return project("jwt-login")


def _run(cwd: Path, *args: str, env: dict[str, str] | None = None, **raw: bytes) -> tuple[int, str]:
    """The command in a subprocess (a generous hang guard); exit code and stderr."""
    full = {k: v for k, v in os.environ.items() if not k.startswith("PLANGRAPH_")}
    full.update({"PLANGRAPH_ACTOR": "tester", **(env or {})})
    environ = {os.fsencode(k): os.fsencode(v) for k, v in full.items()}
    environ.update({k.encode(): v for k, v in raw.items()})
    proc = subprocess.run(
        [os.fsencode(PLANGRAPH), *map(os.fsencode, args)],
        cwd=cwd,
        env=environ,
        capture_output=True,
        timeout=120,
        check=False,
    )
    err = proc.stderr.decode("utf-8", "replace")
    assert "Traceback" not in err, err
    return proc.returncode, err


@pytest.mark.parametrize("variable", ["PLANGRAPH_TRUSTED_KEYS", "PLANGRAPH_SIGNING_KEY_FILE"])
def test_a_fifo_as_a_key_file_is_refused_at_once(jwt, variable):
    fifo = jwt.parent / "keys.fifo"
    os.mkfifo(fifo)
    code, err = _run(jwt, "verify", SCHEMA, env={variable: str(fifo)})
    assert code == 2 and "not a regular file" in err and err.count("\n") == 1


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("[" * 100_000, "nested too deeply"),
        ("format: 1\nkeys: []\nkeys: []\n", "'keys' is written twice"),
    ],
    ids=["deep", "duplicate-key"],
)
def test_a_trusted_keys_file_that_cannot_mean_one_thing_is_refused(jwt, text, expected):
    trusted = jwt.parent / "trusted.yaml"
    trusted.write_text(text, encoding="utf-8")
    code, err = _run(jwt, "status", env={"PLANGRAPH_TRUSTED_KEYS": str(trusted)})
    assert code == 2 and expected in err


def test_a_key_id_must_be_the_keys_own_id_as_text(jwt):
    made = plangraph_main(jwt.parent, "keygen", "--output", str(jwt.parent / "ci"))
    assert made.code == 0, made.err
    assert "id: '" in made.out  # the entry keygen prints quotes the id, so YAML keeps it text
    _, public, key_id = (jwt.parent / "ci.pub").read_text().split()
    trusted = jwt.parent / "trusted.yaml"
    for written, accepted in ((f"'{key_id}'", True), ("1234", False)):
        trusted.write_text(
            f"format: 1\nkeys:\n  - {{id: {written}, public_key: '{public}', roles: [ci]}}\n"
        )
        code, err = _run(jwt, "status", env={"PLANGRAPH_TRUSTED_KEYS": str(trusted)})
        assert (code == 0) is accepted, err
        if not accepted:
            assert f"id: '{key_id}'" in err  # the fix, written out


@pytest.mark.parametrize("prefix", [".", "/", "existing-dir"])
def test_keygen_refuses_a_directory_as_its_prefix(tmp_path, prefix):
    (tmp_path / "existing-dir").mkdir()
    made = plangraph_main(tmp_path, "keygen", "--output", prefix)
    assert made.code == 2 and "is a directory" in made.err


def test_keygen_leaves_no_half_pair_behind(tmp_path):
    name = "k" * 252  # the private key's name fits, the ".pub" one is too long
    made = plangraph_main(tmp_path, "keygen", "--output", str(tmp_path / name))
    assert made.code == 2 and "cannot write the key pair" in made.err
    assert list(tmp_path.iterdir()) == []


def test_head_refuses_a_root_that_would_publish_no_head(tmp_path, jwt):
    assert plangraph_main(jwt, "head", "--root", str(tmp_path / "missing")).code == 2
    outside = tmp_path / "not-a-repository"
    outside.mkdir()
    refused = plangraph_main(outside, "head")
    assert refused.code == 2 and "not a repository" in refused.err
    assert plangraph_main(jwt, "head").out.strip() == "0:"  # a repository without a store


@pytest.mark.parametrize(
    ("variable", "value"),
    [("PLANGRAPH_ACTOR", b"\xff"), ("LOGNAME", b"a\xffb"), ("GITHUB_SHA", b"\xff")],
)
def test_recording_refuses_environment_text_that_is_not_utf8(jwt, variable, value):
    env = {} if variable == "PLANGRAPH_ACTOR" else {"PLANGRAPH_ACTOR": ""}
    if variable == "LOGNAME":
        env["USER"] = env["LNAME"] = env["USERNAME"] = ""
    code, err = _run(jwt, "verify", SCHEMA, env=env, **{variable: value})
    assert code == 2 and "UTF-8" in err


def test_the_login_name_is_checked_as_by_is(jwt):
    env = {"PLANGRAPH_ACTOR": "", "LOGNAME": "a\tb"}
    code, err = _run(jwt, "verify", SCHEMA, env=env)
    assert code == 2 and "control characters" in err and "PLANGRAPH_ACTOR" in err
    code, err = _run(jwt, "verify", SCHEMA, PLANGRAPH_ACTOR="ci\u202eb".encode())
    assert code == 2 and "PLANGRAPH_ACTOR: " in err and "U+202E" in err


@pytest.mark.parametrize("text", ["\u0664:", "\uff14:" + "0" * 64])
def test_expect_head_takes_ascii_digits_only(jwt, text):
    audited = plangraph_main(jwt, "audit", "--expect-head", text)
    assert audited.code == 2 and "expected SEQ:HASH" in audited.err
