"""The gate cannot be fooled: the JWT-login sample in a real git repository, run through the
real ``plangraph`` command. An artifact an upstream verifier checks flows downstream (status,
claim, audit and impact agree), and a ``cancel`` event never settles a parent's gate."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import plangraph, plangraph_main
from conftest import git

TOKEN = "step-token-endpoint"
SCHEMA = "step-user-schema"
OBJECTIVE = "objective-auth"


def _completed(root: Path) -> Path:
    """Verify every criterion of the sample, approve the review and claim the objective."""
    assert plangraph_main(root, "verify").code == 0
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "--plangraph", "-q", "-p", "no:cacheprovider"],
        cwd=root,
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    approved = plangraph_main(root, "approve", f"{TOKEN}/ac-security-review", "--by", "sec")
    assert approved.code == 0, approved.err
    assert plangraph_main(root, "claim", TOKEN, "--by", "agent").code == 0
    assert plangraph_main(root, "claim", OBJECTIVE, "--by", "agent").code == 0
    return root


@pytest.fixture
def jwt(project) -> Path:
    return _completed(project("jwt-login"))


def _nodes(root: Path) -> dict[str, Any]:
    result = plangraph_main(root, "status", "--format", "json")
    assert result.code in (0, 1), result.err
    return {n["id"]: n for n in result.json()["nodes"]}


def _codes(reasons: list[dict[str, Any]]) -> set[str]:
    return {r["code"] for r in reasons}


# --- an upstream verifier's artifact flows downstream ----------------------------------------


def _break_the_sample_user(root: Path) -> None:
    """Give the sample user another password hash: the schema still holds, the login fails."""
    user = root / "fixtures/user.json"
    data = json.loads(user.read_text())
    user.write_text(json.dumps({**data, "password_hash": "0" * 64}, indent=2))


def test_a_checked_artifact_changed_upstream_keeps_the_downstream_stale(jwt: Path) -> None:
    _break_the_sample_user(jwt)
    assert plangraph_main(jwt, "verify").code == 0  # the upstream is verified again

    nodes = _nodes(jwt)
    assert nodes[SCHEMA]["status"] == "completed"
    assert nodes[TOKEN]["status"] == "stale"
    http = next(c for c in nodes[TOKEN]["criteria"] if c["id"] == "ac-http-200")
    assert (http["state"], http["reasons"][0]["code"]) == ("stale", "UPSTREAM_CHANGED")
    assert http["reasons"][0]["node"] == SCHEMA

    claim = plangraph(jwt, "claim", TOKEN, "--by", "agent", "--format", "json")
    assert (claim.code, claim.json()["verdict"]) == (1, "FAILED")
    assert "UPSTREAM_CHANGED" in _codes(claim.json()["reasons"])
    parent = plangraph_main(jwt, "claim", OBJECTIVE, "--by", "agent", "--format", "json")
    assert (parent.code, _codes(parent.json()["reasons"])) == (1, {"CHILD_NOT_COMPLETED"})

    audit = plangraph_main(jwt, "audit", "--format", "json")
    assert audit.code == 1
    stale = {(s["criterion"], *s["reasons"]) for s in audit.json()["stale"] if s["node"] == TOKEN}
    assert ("ac-http-200", "UPSTREAM_CHANGED") in stale
    assert {p["node"] for p in audit.json()["phantom_completions"]} == {TOKEN, OBJECTIVE}


@pytest.mark.parametrize("since", [False, True], ids=["store", "since-head"])
def test_impact_names_the_downstream_of_a_changed_checked_artifact(jwt: Path, since: bool) -> None:
    _break_the_sample_user(jwt)
    assert plangraph_main(jwt, "verify").code == 0
    args = ["impact", "--format", "json", *(["--since", "HEAD"] if since else [])]
    result = plangraph_main(jwt, *args)
    assert result.code in (0, 1), result.err
    invalidated = {i["node"]: i["reasons"] for i in result.json()["invalidated"]}
    assert TOKEN in invalidated
    assert any(r.startswith("UPSTREAM_CHANGED") and SCHEMA in r for r in invalidated[TOKEN])


def test_a_schema_that_is_not_an_output_stales_only_its_own_criterion(project) -> None:
    root = project("jwt-login")
    plan = root / "plangraph.yaml"
    plan.write_text(plan.read_text().replace("outputs: [src/auth/user_schema.json]", "outputs: []"))
    git(root, "commit", "-qam", "the schema is not an output")
    _completed(root)
    schema = root / "src/auth/user_schema.json"
    schema.write_text(schema.read_text().replace('"title"', '"description": "a user", "title"'))

    nodes = _nodes(root)
    assert nodes[SCHEMA]["status"] == "stale"
    assert nodes[SCHEMA]["criteria"][0]["reasons"][0]["code"] == "ARTIFACT_CHANGED"
    assert nodes[TOKEN]["status"] == "blocked"  # not completed while its prerequisite is not
    assert _codes(nodes[TOKEN]["reasons"]) == {"PREREQUISITE_NOT_COMPLETED"}
    assert {c["state"] for c in nodes[TOKEN]["criteria"]} == {"valid"}
    for args in (["impact"], ["impact", "--since", "HEAD"]):  # impact agrees with status
        report = plangraph_main(root, *args, "--format", "json").json()
        assert [i["node"] for i in report["invalidated"]] == [SCHEMA]
        assert report["invalidated"][0]["reasons"][0].startswith("ARTIFACT_CHANGED")
        blocked = {b["node"]: b["reason"] for b in report["blocked"]}
        assert blocked[TOKEN] == f"PREREQUISITE_INVALIDATED {SCHEMA}"

    assert plangraph_main(root, "verify").code == 0
    assert plangraph_main(root, "claim", TOKEN, "--by", "agent").code == 0


# --- a cancel event never settles a parent ---------------------------------------------------


def test_a_child_cancelled_by_an_event_keeps_its_parent_from_completing(project) -> None:
    root = project("jwt-login")
    assert plangraph_main(root, "verify").code == 0
    assert plangraph_main(root, "cancel", TOKEN, "--by", "agent").code == 0

    claim = plangraph(root, "claim", OBJECTIVE, "--by", "agent", "--format", "json")
    assert (claim.code, claim.json()["verdict"]) == (1, "FAILED")
    [reason] = claim.json()["reasons"]
    assert (reason["code"], reason["node"], reason["by"]) == (
        "CHILD_CANCELLED_BY_EVENT",
        TOKEN,
        "agent",
    )
    assert "cancelled: true" in reason["message"]
    assert _nodes(root)[TOKEN]["status"] == "cancelled"
    text = plangraph_main(root, "status")
    assert f"child {TOKEN} was cancelled by agent" in text.out

    plan = root / "plangraph.yaml"
    plan.write_text(
        plan.read_text().replace(
            "    title: Token endpoint\n", "    title: Token endpoint\n    cancelled: true\n"
        )
    )
    assert "cancelled: true" in plan.read_text()
    settled = plangraph_main(root, "claim", OBJECTIVE, "--by", "agent", "--format", "json")
    assert (settled.code, settled.json()["verdict"]) == (0, "PASSED")


def test_a_prerequisite_cancelled_by_an_event_never_satisfies_its_dependent(jwt: Path) -> None:
    assert plangraph_main(jwt, "cancel", SCHEMA, "--by", "agent").code == 0
    claim = plangraph_main(jwt, "claim", TOKEN, "--by", "agent", "--format", "json")
    assert (claim.code, claim.json()["status"]) == (1, "blocked")
    assert [(r["code"], r["node"]) for r in claim.json()["reasons"]] == [
        ("PREREQUISITE_NOT_COMPLETED", SCHEMA)
    ]
    parent = plangraph_main(jwt, "claim", OBJECTIVE, "--by", "agent", "--format", "json")
    assert parent.code == 1
    assert _codes(parent.json()["reasons"]) == {"CHILD_CANCELLED_BY_EVENT", "CHILD_NOT_COMPLETED"}


def test_status_check_and_audit_are_not_settled_by_a_cancel_event(project) -> None:
    root = project("jwt-login")
    assert plangraph_main(root, "verify").code == 0
    assert plangraph_main(root, "claim", TOKEN, "--by", "agent").code == 1  # no evidence yet
    assert plangraph_main(root, "cancel", TOKEN, "--by", "agent").code == 0
    check = plangraph_main(root, "status", "--check")
    assert check.code == 1
    assert f"status --check: {TOKEN} is claimed but cancelled by an event" in check.err
    audit = plangraph_main(root, "audit", "--format", "json")
    assert audit.code == 1
    [phantom] = audit.json()["phantom_completions"]
    assert (phantom["node"], phantom["status"]) == (TOKEN, "cancelled")

    plan = root / "plangraph.yaml"
    text = plan.read_text().replace(
        "    title: Token endpoint\n", "    title: Token endpoint\n    cancelled: true\n"
    )
    plan.write_text(text)
    settled = plangraph_main(root, "status", "--check")
    assert (settled.code, settled.err) == (0, "")
    assert plangraph_main(root, "audit", "--format", "json").json()["phantom_completions"] == []
    assert _nodes(root)[OBJECTIVE]["status"] == "completed"
