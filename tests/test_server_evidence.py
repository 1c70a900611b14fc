"""``POST /plans/{id}/evidence`` stores evidence only with a signature the gate trusts (DESIGN §5,
docs/trust.md): CI records and signs with its own store, exports, and hands the event over; an
unsigned, forged, self-signed or wrongly-roled event is refused with 403 and not stored. A real
server, real keys, real stores."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import plangraph_main
from server_helpers import Server, is_problem

from pytest_plangraph.api import PlanGraph
from pytest_plangraph.plan.model import checked_event
from pytest_plangraph.store.chain import event_id
from pytest_plangraph.store.keys import load_private
from pytest_plangraph.store.signatures import event_message

PLAN = "auth-login"
SCHEMA = "step-user-schema"


def keygen(where: Path, name: str) -> tuple[Path, str]:
    made = plangraph_main(where, "keygen", "--output", str(where / name), "--format", "json")
    assert made.code == 0, made.err
    return Path(made.json()["private_key"]), (where / f"{name}.pub").read_text().split()[1]


@pytest.fixture
def keys(project) -> dict[str, Any]:
    """A repository with no evidence, CI's key (role ci), a person's key (role approver), an
    agent's own key (trusted for nothing) and the trusted-keys file of the judging machine."""
    root = project("jwt-login")
    ci, ci_public = keygen(root.parent, "ci")
    person, person_public = keygen(root.parent, "person")
    agent, _ = keygen(root.parent, "agent")
    trusted = root.parent / "trusted.json"
    entries = [{"public_key": ci_public, "roles": ["ci"]},
               {"public_key": person_public, "roles": ["approver"]}]  # fmt: skip
    trusted.write_text(json.dumps({"format": 1, "keys": entries}), encoding="utf-8")
    judge = {"PLANGRAPH_TRUSTED_KEYS": str(trusted)}
    return {"root": root, "ci": ci, "person": person, "agent": agent, "judge": judge}


def recorded(keys: dict[str, Any], signer: str | None, name: str) -> list[dict[str, Any]]:
    """The events of a store of its own (*name*) where ``plangraph verify`` recorded the schema
    criterion, signed with *signer*'s key (None: unsigned), as ``plangraph export`` writes."""
    root, store = keys["root"], str(keys["root"].parent / f"{name}.db")
    env = dict(keys["judge"])
    if signer is not None:
        env["PLANGRAPH_SIGNING_KEY_FILE"] = str(keys[signer])
    made = plangraph_main(root, "verify", SCHEMA, "--store", store, env=env)
    assert made.code == 0, made.err
    claimed = plangraph_main(root, "claim", SCHEMA, "--by", "ci", "--store", store, env=env)
    assert claimed.code in (0, 1), claimed.err  # a claim event to export, whatever its verdict
    exported = plangraph_main(root, "export", "--store", store, env=env)
    return [json.loads(line) for line in exported.out.splitlines()]


def evidence_of(lines: list[dict[str, Any]]) -> dict[str, Any]:
    return next(e for e in lines if e["kind"] == "evidence")


def signed_anew(event: dict[str, Any], private: Path) -> dict[str, Any]:
    """*event* addressed and signed again with the key at *private*: as CI's key would have
    signed it, had CI recorded it so."""
    fields = {k: v for k, v in event.items() if k != "format"}
    content = checked_event({**fields, "id": "", "signature": None})
    content_id = event_id(content)
    signature = load_private(private, "test").sign(event_message(content_id))
    return {**event, "id": content_id, "signature": signature}


def send(server: Server, event: dict[str, Any], key: str, version: int = 1) -> Any:
    body = {"expected_plan_version": version, "event": event}
    return server.post(f"/plans/{PLAN}/evidence", body, key=key)


def stored_evidence(root: Path) -> list[Any]:
    with PlanGraph.open(root) as graph:
        return graph.store.events(kinds=["evidence"])


def test_evidence_ci_signed_is_stored_and_lets_a_refused_claim_pass(keys, serve) -> None:
    root = keys["root"]
    server = serve(root, env=keys["judge"])  # a judging machine: public keys only
    claim = {"expected_plan_version": 1, "node": SCHEMA, "by": "agent"}
    refused = server.post(f"/plans/{PLAN}/claims", claim, key="first")
    assert refused.json()["verdict"] == "FAILED"
    event = evidence_of(recorded(keys, "ci", "ci"))
    assert event["signature"].startswith("ed25519:")
    taken = send(server, event, "ci-1")
    assert taken.status_code == 200, taken.text
    stored = taken.json()["event"]
    assert stored["id"] == event["id"] and stored["signature"] == event["signature"]
    assert stored["payload"] == event["payload"] and taken.json()["format"] == 1
    accepted = server.post(f"/plans/{PLAN}/claims", claim, key="second")
    assert accepted.json()["verdict"] == "PASSED", accepted.text
    status = server.get(f"/plans/{PLAN}/status").json()
    assert status == plangraph_main(root, "status", "--format", "json", env=keys["judge"]).json()
    again = send(server, event, "ci-2")  # the same event under another key: still one
    assert again.status_code == 200 and again.json()["event"]["seq"] == stored["seq"]
    assert [e.id for e in stored_evidence(root)] == [event["id"]]


def test_evidence_without_a_trusted_signature_is_refused_and_not_stored(keys, serve) -> None:
    root = keys["root"]
    server = serve(root, env=keys["judge"])
    good = evidence_of(recorded(keys, "ci", "ci"))
    unsigned = evidence_of(recorded(keys, None, "unsigned"))
    own = evidence_of(recorded(keys, "agent", "agent"))
    person = evidence_of(recorded(keys, "person", "person"))
    edited = json.loads(json.dumps(good))
    edited["payload"]["details"]["message"] = "edited after signing"
    unaddressed = {k: v for k, v in edited.items() if k != "id"}
    stolen = {**unsigned, "signature": good["signature"]}
    garbled = {**good, "signature": "ed25519:abc:not-base64!"}
    cases = [
        (unsigned, "UNSIGNED_EVENT"),
        ({**good, "signature": None}, "UNSIGNED_EVENT"),
        (own, "UNTRUSTED_KEY"),
        (person, "ROLE_NOT_TRUSTED"),
        (edited, "BAD_SIGNATURE"),
        (unaddressed, "BAD_SIGNATURE"),
        (stolen, "BAD_SIGNATURE"),
        (garbled, "BAD_SIGNATURE"),
        ({**good, "signature": "0" * 64}, "UNTRUSTED_KEY"),  # HMAC-shaped, and no HMAC key
    ]
    for index, (event, code) in enumerate(cases):
        is_problem(send(server, event, f"bad-{index}"), 403, code)
    assert stored_evidence(root) == []
    with PlanGraph.open(root) as graph:
        assert graph.store.kept_answer("bad-0") is None


def test_no_key_configured_means_no_evidence_is_received(keys, serve) -> None:
    root = keys["root"]
    server = serve(root)  # no keys: nothing could be checked
    event = evidence_of(recorded(keys, "ci", "ci"))
    detail = is_problem(send(server, event, "none"), 403, "NO_TRUSTED_KEYS")["detail"]
    assert "PLANGRAPH_TRUSTED_KEYS" in detail
    assert stored_evidence(root) == []


def test_evidence_that_is_not_this_plans_is_a_422(keys, serve) -> None:
    root = keys["root"]
    server = serve(root, env=keys["judge"])
    lines = recorded(keys, "ci", "ci")
    event = evidence_of(lines)
    a_claim = next(e for e in lines if e["kind"] == "claim")
    other_plan = json.loads(json.dumps(event))
    other_plan["payload"]["plan"]["id"] = "another-plan"
    other_node = {**event, "node": "step-token-endpoint"}
    for edited in (other_plan, other_node):  # edited after signing: the signature says so
        is_problem(send(server, edited, f"edited-{edited['node']}"), 403, "BAD_SIGNATURE")
    cases = [
        (a_claim, "only evidence events"),
        (signed_anew(other_plan, keys["ci"]), "another-plan"),
        (signed_anew(other_node, keys["ci"]), "its record about"),
        ({"kind": "evidence"}, "not a plangraph event"),
        ({**event, "format": 2}, "another format"),
    ]
    for index, (sent, said) in enumerate(cases):
        assert said in is_problem(send(server, sent, f"w-{index}"), 422, "BAD_REQUEST")["detail"]
    stale = send(server, event, "v", version=5)
    assert is_problem(stale, 409, "PLAN_VERSION_CONFLICT")["current_plan_version"] == 1
    assert stored_evidence(root) == []


def test_an_hmac_signed_event_counts_only_with_the_servers_hmac_key(keys, serve) -> None:
    root = keys["root"]
    store = str(root.parent / "hmac.db")
    secret = {"PLANGRAPH_SIGNING_KEY": "ci-secret"}
    assert plangraph_main(root, "verify", SCHEMA, "--store", store, env=secret).code == 0
    exported = plangraph_main(root, "export", "--store", store, env=secret).out.splitlines()
    event = evidence_of([json.loads(line) for line in exported])
    wrong = serve(root, env={"PLANGRAPH_SIGNING_KEY": "another secret"})
    is_problem(send(wrong, event, "h-wrong"), 403, "BAD_SIGNATURE")
    assert stored_evidence(root) == []
    wrong.stop()
    right = serve(root, env=secret)
    taken = send(right, event, "h-right")
    assert taken.status_code == 200, taken.text
    assert [e.id for e in stored_evidence(root)] == [event["id"]]
    claim = {"expected_plan_version": 1, "node": SCHEMA, "by": "agent"}
    assert right.post(f"/plans/{PLAN}/claims", claim, key="c").json()["verdict"] == "PASSED"
