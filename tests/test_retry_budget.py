"""The retry budget decides (DESIGN §5): once a node's refused claims pass its ``max_retry``,
every claim is refused with ``RETRY_BUDGET_EXHAUSTED`` whatever the evidence, the node shows
``blocked`` and ``pytest --plangraph-gate`` fails, until a person runs ``plangraph retry``.
Through the real command and real pytest sessions on the JWT-login sample."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_helpers import plangraph_main
from plugin_helpers import jwt_project, section

SCHEMA = "step-user-schema"
HMAC = {"PLANGRAPH_SIGNING_KEY": "ci-secret"}


def claim(root: Path, node: str, env: dict[str, str] | None = None) -> tuple[int, dict]:
    result = plangraph_main(root, "claim", node, "--by", "agent", "--format", "json", env=env)
    assert result.code in (0, 1), result.err
    return result.code, result.json()


def node_status(root: Path, node: str, env: dict[str, str] | None = None) -> dict:
    data = plangraph_main(root, "status", "--format", "json", env=env).json()
    return {n["id"]: n for n in data["nodes"]}[node]


def spend_budget(root: Path, env: dict[str, str] | None = None) -> None:
    """Three refused claims on the schema step (max_retry 2): its budget is spent."""
    for _ in range(3):
        assert claim(root, SCHEMA, env)[0] == 1


@pytest.fixture
def jwt(project) -> Path:
    return project("jwt-login")


def test_a_spent_budget_refuses_a_claim_with_valid_evidence_until_a_retry(jwt: Path) -> None:
    spend_budget(jwt)
    assert plangraph_main(jwt, "verify", SCHEMA).code == 0  # valid evidence now
    state = node_status(jwt, SCHEMA)
    assert state["status"] == "blocked"
    assert [r["code"] for r in state["reasons"]] == ["RETRY_BUDGET_EXHAUSTED"]
    assert {c["state"] for c in state["criteria"]} == {"valid"}
    code, decision = claim(jwt, SCHEMA)
    assert (code, decision["verdict"], decision["status"]) == (1, "FAILED", "blocked")
    assert [r["code"] for r in decision["reasons"]] == ["RETRY_BUDGET_EXHAUSTED"]
    assert plangraph_main(jwt, "retry", SCHEMA, "--by", "lead").code == 0
    code, decision = claim(jwt, SCHEMA)
    assert (code, decision["verdict"], decision["status"]) == (0, "PASSED", "completed")


def test_the_claim_says_what_to_run(jwt: Path) -> None:
    spend_budget(jwt)
    plangraph_main(jwt, "verify", SCHEMA)
    shown = plangraph_main(jwt, "claim", SCHEMA, "--by", "agent")
    assert shown.code == 1
    assert "RETRY_BUDGET_EXHAUSTED" in shown.out
    assert f"plangraph retry {SCHEMA}" in shown.out


def test_a_spent_budget_keeps_the_dependents_waiting(jwt: Path) -> None:
    spend_budget(jwt)
    plangraph_main(jwt, "verify", SCHEMA)
    token = node_status(jwt, "step-token-endpoint")
    waiting = [r for r in token["reasons"] if r["code"] == "PREREQUISITE_NOT_COMPLETED"]
    assert [r["node"] for r in waiting] == [SCHEMA]


def test_with_keys_only_a_signed_retry_grant_renews_the_budget(jwt: Path) -> None:
    spend_budget(jwt, HMAC)
    assert plangraph_main(jwt, "verify", SCHEMA, env=HMAC).code == 0
    assert plangraph_main(jwt, "retry", SCHEMA, "--by", "agent").code == 0  # unsigned
    code, decision = claim(jwt, SCHEMA, HMAC)
    assert code == 1 and [r["code"] for r in decision["reasons"]] == ["RETRY_BUDGET_EXHAUSTED"]
    assert plangraph_main(jwt, "retry", SCHEMA, "--by", "lead", env=HMAC).code == 0
    assert claim(jwt, SCHEMA, HMAC)[0] == 0


def test_the_pytest_gate_refuses_a_node_whose_budget_is_spent(pytester: pytest.Pytester) -> None:
    root = jwt_project(pytester)
    spend_budget(root)
    passing = pytester.runpytest("--plangraph", "--plangraph-gate")
    assert passing.ret == 1
    lines = section(passing.stdout.str())
    refusal = next(line for line in lines if line.startswith(f"gate refused {SCHEMA}"))
    assert "(blocked)" in refusal and f"plangraph retry {SCHEMA}" in refusal
    assert plangraph_main(root, "retry", SCHEMA, "--by", "lead").code == 0
    again = pytester.runpytest("--plangraph", "--plangraph-gate", f"--plangraph-require={SCHEMA}")
    assert again.ret == 0, again.stdout.str()
