"""The store through the CLI on the JWT-login sample: a corrupt, signed, read-only, missing or empty
store, the store kept out of the tree, names refused before anything is written, and what a merge
or a deleted schema file leaves.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from cli_helpers import plangraph, plangraph_main
from cli_state_helpers import (
    SCHEMA,
    STORE,
    TOKEN,
    pytest_plangraph_run,
    record_token_tests,
    statuses,
)
from conftest import git


def test_a_corrupt_store_is_refused_and_left_alone(jwt):
    (jwt / STORE).write_bytes(b"this is not sqlite" * 100)
    for stale in ("-wal", "-shm"):
        Path(str(jwt / STORE) + stale).unlink(missing_ok=True)
    result = plangraph(jwt, "status")
    assert result.code == 2
    assert str(STORE.name) in result.err and "Traceback" not in result.err
    assert (jwt / STORE).read_bytes() == b"this is not sqlite" * 100


def test_signed_store_and_wrong_key(jwt, tmp_path):
    store = str(tmp_path / "signed.db")
    env = {"PLANGRAPH_SIGNING_KEY": "k1"}
    plangraph_main(jwt, "verify", "--store", store, env=env)
    assert plangraph_main(jwt, "audit", "--store", store, env=env).code == 0
    wrong = plangraph_main(
        jwt, "audit", "--store", store, "--format", "json", env={"PLANGRAPH_SIGNING_KEY": "k2"}
    )
    assert wrong.code == 1
    assert {p["code"] for p in wrong.json()["chain"]} == {"BAD_SIGNATURE"}
    unkeyed = plangraph_main(jwt, "audit", "--store", store, "--format", "json")
    assert unkeyed.code == 0  # nothing wrong could be found, but it says what was not checked
    assert unkeyed.json()["notes"] == [
        "1 event(s) are signed, and their signatures were not checked: neither "
        "PLANGRAPH_SIGNING_KEY nor PLANGRAPH_TRUSTED_KEYS is set"
    ]
    assert "signatures were not checked" in plangraph_main(jwt, "audit", "--store", store).out
    assert plangraph_main(jwt, "audit", "--format", "json").json()["notes"] == []


def test_the_store_does_not_make_the_tree_dirty(jwt):
    from conftest import git

    assert git(jwt, "status", "--porcelain") == ""
    assert (jwt / ".plangraph/.gitignore").read_text().splitlines()[-1] == "*"
    exported = plangraph_main(jwt, "export")
    record = json.loads(exported.out.splitlines()[0])["payload"]
    assert record["git"]["dirty"] is False
    assert record["git"]["branch"] == "main"
    assert record["git"]["commit"] == git(jwt, "rev-parse", "HEAD").strip()


def test_a_plan_with_lint_errors_is_refused_before_anything_is_recorded(project):
    root = project("seed-000")
    plan = root / "plangraph.yaml"
    plan.write_text(plan.read_text().replace("{from: T3, to: T5", "{from: T3x, to: T5"))
    for args in (("claim", "T5", "--by", "agent"), ("verify", "T5"), ("status",)):
        result = plangraph_main(root, *args)
        assert result.code == 2, args
        assert "MISSING_DEP" in result.err and "fix these first (plangraph lint)" in result.err
    assert not (root / ".plangraph" / "store.db").exists()


def test_status_check_fails_for_a_stale_node_never_completed(jwt):
    """A node with stale evidence fails the check even when it never completed (here its
    approval was never given) and nobody claimed it."""
    root = jwt
    record_token_tests(root)
    assert statuses(root)[TOKEN] == "awaiting_approval"
    assert plangraph_main(root, "status", "--check").code == 0
    schema = root / "src/auth/user_schema.json"
    schema.write_text(schema.read_text().replace('"minLength": 3', '"minLength": 2'))
    assert statuses(root)[TOKEN] == "stale"
    result = plangraph_main(root, "status", "--check")
    assert result.code == 1
    assert f"status --check: {TOKEN} is stale (" in result.err


def test_status_check_catches_completed_turned_failed(jwt):
    assert plangraph_main(jwt, "status", "--check").code == 0
    (jwt / "fixtures/user.json").write_text('{"username": 5}')
    assert plangraph_main(jwt, "verify").code == 1
    result = plangraph_main(jwt, "status", "--check")
    assert result.code == 1
    assert "step-user-schema was satisfied by evidence before and is failed now" in result.err


def test_expected_plan_version_is_the_version_of_the_plan_in_the_repository(jwt):
    plan = jwt / "plangraph.yaml"
    original = plan.read_text()
    plan.write_text(original.replace("title: JWT login", "title: JWT login v2"))
    assert plangraph_main(jwt, "status").code == 0  # registers version 2
    plan.write_text(original)  # back to version 1
    stale = plangraph_main(jwt, "claim", TOKEN, "--by", "a", "--expected-plan-version", "2")
    assert stale.code == 1
    assert "plan in the repository is version 1" in stale.err
    ok = plangraph_main(
        jwt, "claim", TOKEN, "--by", "a", "--expected-plan-version", "1", "--format", "json"
    )
    assert ok.json()["node"] == TOKEN


def test_revoke_needs_an_approval_in_force(jwt):
    ref = f"{TOKEN}/ac-security-review"
    result = plangraph_main(jwt, "revoke", ref, "--by", "sec", "--format", "json")
    assert result.code == 2
    assert "has no approval in force to revoke" in result.err
    assert result.json() == {"format": 1, "error": f"{ref} has no approval in force to revoke"}


def test_export_to_an_unwritable_place_exits_2(jwt, tmp_path):
    result = plangraph_main(jwt, "export", "--output", str(tmp_path / "missing" / "x.jsonl"))
    assert result.code == 2
    assert "cannot write" in result.err and "No such file or directory" in result.err


def test_verify_text_says_why_a_criterion_failed(jwt):
    (jwt / "fixtures/user.json").write_text('{"username": 5}')
    result = plangraph_main(jwt, "verify")
    assert result.code == 1
    assert "step-user-schema/ac-schema-valid: fixtures/user.json: $" in result.out


def test_a_store_kept_elsewhere_in_the_repository_is_not_a_change(project):
    root = project("jwt-login")
    assert plangraph_main(root, "verify", "--store", "evidence/store.db").code == 0
    exported = plangraph_main(root, "export", "--store", "evidence/store.db")
    record = json.loads(exported.out.splitlines()[0])["payload"]
    assert record["git"]["dirty"] is False
    (root / "notes.txt").write_text("an untracked file is a change\n")
    plangraph_main(root, "verify", "--store", "evidence/store.db")
    exported = plangraph_main(root, "export", "--store", "evidence/store.db")
    assert json.loads(exported.out.splitlines()[-1])["payload"]["git"]["dirty"] is True


def test_a_step_without_criteria_is_never_completed_on_a_claim(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / "plangraph.yaml").write_text(
        "plangraph: 1\nplan: p\nnodes:\n"
        "  - {id: goal, kind: objective}\n"
        "  - {id: bare, parent: goal}\n"
        "  - id: checked\n    parent: goal\n"
        "    acceptance: [{id: ok, verifier: {type: approval}}]\n"
    )
    result = plangraph_main(tmp_path, "claim", "bare", "--by", "agent", "--format", "json")
    assert result.code == 1
    assert [r["code"] for r in result.json()["reasons"]] == ["NO_ACCEPTANCE"]
    plangraph_main(tmp_path, "cancel", "bare", "--by", "lead")
    plangraph_main(tmp_path, "approve", "checked/ok", "--by", "lead")
    goal = plangraph_main(tmp_path, "claim", "goal", "--by", "agent", "--format", "json")
    assert [r["code"] for r in goal.json()["reasons"]] == ["CHILD_CANCELLED_BY_EVENT"]
    plan = tmp_path / "plangraph.yaml"  # only the plan file settles the parent
    plan.write_text(plan.read_text().replace("parent: goal}", "parent: goal, cancelled: true}"))
    goal = plangraph_main(tmp_path, "claim", "goal", "--by", "agent", "--format", "json")
    assert goal.json()["verdict"] == "PASSED"


@pytest.fixture(params=["file-and-directory", "file-only"])
def immutable(jwt, request, make_immutable):
    """The JWT store made read-only with ``chattr +i`` (which binds root too), with its
    directory or alone (then SQLite opens it without an error and only a write fails)."""
    paths = [jwt / STORE, jwt / STORE.parent][: 2 if request.param != "file-only" else 1]
    make_immutable(*paths)
    return jwt


def test_a_read_only_store_can_still_be_read(immutable):
    before = (immutable / STORE).read_bytes()
    (immutable / "fixtures/user.json").write_text('{"username": "alice", "note": "edited"}')
    status = plangraph_main(immutable, "status")  # a file to hash again: nothing is cached
    assert status.code == 0, status.err
    assert plangraph_main(immutable, "audit").code == 1  # the edit made evidence stale
    assert plangraph_main(immutable, "history", TOKEN).code == 0
    exported = plangraph_main(immutable, "export")
    assert exported.code == 0 and '"kind":"evidence"' in exported.out.replace(" ", "")
    refused = plangraph_main(immutable, "claim", TOKEN, "--by", "agent")
    assert refused.code == 2
    assert "this process may not write the file" in refused.err  # says why
    assert "nothing was written" in refused.err
    run = pytest_plangraph_run(immutable)
    assert run.returncode == 4  # refused before any test runs, not after the whole session
    assert "cannot write to the store" in run.stderr and "--plangraph-store" in run.stderr
    assert "passed" not in run.stdout
    assert (immutable / STORE).read_bytes() == before


def test_after_a_merge_the_newer_verdict_counts(jwt, tmp_path):
    """A shard's older failing verdict, merged after a newer passing one, does not win."""
    shard = str(tmp_path / "shard.db")
    user = jwt / "fixtures/user.json"
    good = user.read_text()
    user.write_text('{"username": 5}')
    assert plangraph_main(jwt, "verify", "--store", shard).code == 1  # older: failed
    user.write_text(good)
    assert plangraph_main(jwt, "verify").code == 0  # newer: passed, in the main store
    assert plangraph_main(jwt, "merge", shard).code == 0
    assert statuses(jwt)["step-user-schema"] == "completed"


def test_a_command_checks_a_schema_file_once_per_content(jwt: Path) -> None:
    """Lint before a command compiles each schema file once; afterwards, with the file
    unchanged, a command does not even import jsonschema."""
    probe = (
        "import sys, io, contextlib\n"
        "from pytest_plangraph.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    code = main(['status'])\n"
        "print(code, 'jsonschema' in sys.modules)\n"
    )

    def status_imports() -> str:
        done = subprocess.run(
            [sys.executable, "-c", probe], cwd=jwt, capture_output=True, text=True, check=True
        )
        return done.stdout.strip()

    shutil.rmtree(jwt / ".plangraph" / "cache", ignore_errors=True)
    assert status_imports() == "0 True"
    assert status_imports() == "0 False"
    schema = jwt / "src/auth/user_schema.json"
    schema.write_text(schema.read_text(encoding="utf-8") + "\n", encoding="utf-8")
    assert status_imports() == "0 True"  # new content: compiled again


def test_a_schema_file_deleted_since_warns_and_every_command_goes_on(jwt):
    git(jwt, "rm", "-q", "src/auth/user_schema.json")
    git(jwt, "commit", "-q", "-m", "drop the schema")
    warning = "VERIFIER_CONFIG: step-user-schema/ac-schema-valid: src/auth/user_schema.json"
    status = plangraph_main(jwt, "status", "--format", "json")
    assert status.code == 0, status.err
    assert f"plangraph: warning: plangraph.yaml:15:9: {warning}" in status.err
    [schema] = [n for n in status.json()["nodes"] if n["id"] == SCHEMA]
    assert schema["status"] == "stale"
    impact = plangraph_main(jwt, "impact", "--format", "json")
    assert impact.code == 0, impact.err
    [entry] = impact.json()["invalidated"]
    assert entry["node"] == SCHEMA and "ARTIFACT_DELETED" in entry["reasons"][0]
    assert plangraph_main(jwt, "audit").code == 1  # the stale evidence is a finding
    refused = plangraph_main(jwt, "claim", SCHEMA, "--by", "agent")
    assert refused.code == 1  # judged, and refused: its evidence is stale
    assert plangraph_main(jwt, "lint").code == 1  # lint still reports it as an error


def test_history_of_a_node_removed_from_the_plan_keeps_its_events(tmp_path):
    plan = tmp_path / "plangraph.yaml"
    (tmp_path / ".git").mkdir()
    both = (
        "plangraph: 1\nplan: p\nnodes:\n"
        "  - id: gone\n    acceptance: [{id: ok, verifier: {type: approval}}]\n"
        "  - id: kept\n    acceptance: [{id: ok, verifier: {type: approval}}]\n"
    )
    plan.write_text(both)
    assert plangraph_main(tmp_path, "approve", "gone/ok", "--by", "lead").code == 0
    assert plangraph_main(tmp_path, "claim", "gone", "--by", "agent").code == 0
    plan.write_text(
        both.replace("  - id: gone\n    acceptance: [{id: ok, verifier: {type: approval}}]\n", "")
    )
    result = plangraph_main(tmp_path, "history", "gone", "--format", "json")
    assert result.code == 0, result.err
    events = result.json()["events"]
    assert [(e["kind"], e["status_after"]) for e in events] == [
        ("approval", "(not in the plan)"),
        ("claim", "(not in the plan)"),
    ]
    unknown = plangraph_main(tmp_path, "history", "never-there")
    assert unknown.code == 2 and "unknown node 'never-there'" in unknown.err


def test_a_blank_actor_is_not_a_name(jwt):
    result = plangraph_main(jwt, "verify", "--format", "json", env={"PLANGRAPH_ACTOR": "   "})
    assert result.code == 0
    [record] = result.json()["evidence"]
    assert record["recorded_by"].strip()  # the login name, not a blank


@pytest.mark.parametrize(
    "command",
    [["status"], ["status", "--check"], ["history", SCHEMA], ["impact"], ["audit"], ["export"]],
)
def test_a_named_store_that_is_not_there_is_refused_and_not_made(project, command):
    root = project("jwt-login")
    for named in ({"args": ["--store", "ci/stor.db"]}, {"env": {"PLANGRAPH_STORE": "ci/stor.db"}}):
        result = plangraph_main(root, *command, *named.get("args", []), env=named.get("env"))
        assert result.code == 2, (command, result.out)
        assert f"no store at {root.resolve() / 'ci' / 'stor.db'}" in result.err
        assert not (root / "ci").exists()


def test_reading_commands_make_no_store(project):
    root = project("jwt-login")
    assert statuses(root)[SCHEMA] == "ready"
    assert plangraph_main(root, "status", "--check").code == 0
    history = plangraph_main(root, "history", SCHEMA, "--format", "json")
    assert history.code == 0 and history.json()["events"] == []
    assert plangraph_main(root, "impact").code == 0
    audit = plangraph_main(root, "audit", "--format", "json")
    assert audit.code == 0
    assert audit.json()["notes"] == [
        f"no store at {root.resolve() / STORE} yet: nothing recorded, nothing to audit"
    ]
    plan = plangraph_main(root, "status", "--format", "json").json()["plan"]
    assert plan["version"] == 0  # numbered by the first store that sees it
    assert not (root / STORE).exists()


def test_a_refused_merge_makes_no_store(jwt, tmp_path):
    shard = tmp_path / "shard.db"
    shutil.copy(jwt / STORE, shard)
    with sqlite3.connect(shard) as con:
        con.execute("DROP TRIGGER events_no_update")
        con.execute("UPDATE events SET by_ = 'mallory' WHERE seq = 1")
    target = tmp_path / "merged" / "store.db"
    result = plangraph_main(jwt, "merge", str(shard), "--store", str(target))
    assert result.code == 2 and "refusing to merge" in result.err
    assert not target.parent.exists()


def test_an_actor_with_control_characters_is_refused(jwt):
    env = {"PLANGRAPH_ACTOR": "mallory\nstep-user-schema: PASSED"}
    result = plangraph_main(jwt, "verify", env=env)
    assert result.code == 2
    assert result.err.startswith("plangraph: error: PLANGRAPH_ACTOR: 'mallory\\nstep-user-schema")
    assert [
        e["by"] for e in plangraph_main(jwt, "history", SCHEMA, "--format", "json").json()["events"]
    ] == ["tester"]


def test_a_signing_key_that_is_not_utf8_signs(project):
    root = project("jwt-login")
    key = os.fsdecode(b"\xffkey")
    assert plangraph_main(root, "verify", env={"PLANGRAPH_SIGNING_KEY": key}).code == 0
    assert plangraph_main(root, "audit", env={"PLANGRAPH_SIGNING_KEY": key}).code == 0
    wrong = plangraph_main(root, "audit", env={"PLANGRAPH_SIGNING_KEY": "key"})
    assert wrong.code == 1 and "BAD_SIGNATURE" in wrong.out


def test_an_empty_file_named_as_the_store_is_no_store_and_stays_empty(project):
    root = project("jwt-login")
    empty = root / "ci.db"
    empty.write_bytes(b"")
    result = plangraph_main(root, "status", "--store", str(empty))
    assert result.code == 2 and "(no file, or an empty one)" in result.err
    assert empty.read_bytes() == b""
    assert plangraph_main(root, "verify", "--store", str(empty)).code == 0  # a writer makes it
    assert empty.stat().st_size > 0
