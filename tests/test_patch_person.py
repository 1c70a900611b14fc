"""A node whose replan rounds are spent is marked for a person (issue 20 §3): the refused
patch holds it ``blocked`` with ``REPLAN_BUDGET_EXHAUSTED`` in ``status`` (text, JSON,
Markdown), ``explain`` and ``audit``, the gate refuses it whatever its evidence, and a person's
``plangraph retry NODE`` clears it. Through the real ``plangraph`` command on the JWT sample."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_helpers import plangraph_main

from pytest_plangraph import checkpoint
from pytest_plangraph.api import PlanGraph
from pytest_plangraph.judge.derive import derive

SCHEMA = "step-user-schema"
HMAC = {"PLANGRAPH_SIGNING_KEY": "ci-secret"}
CODE = "REPLAN_BUDGET_EXHAUSTED"


@pytest.fixture
def jwt(project) -> Path:
    return project("jwt-login")


def retitle(root: Path, round_: int, env: dict[str, str] | None = None):
    """A patch of SCHEMA's title (its evidence stays valid), written against version
    *round_* (each applied patch makes a new plan version)."""
    ops = [{"op": "replace", "path": "/nodes/1/title", "value": f"User schema, take {round_}"}]
    file = root.parent / "patch.json"
    file.write_text(json.dumps(ops), encoding="utf-8")
    args = ["patch", str(file), "--by", "agent", "--expected-plan-version", str(round_)]
    return plangraph_main(root, *args, "--format", "json", env=env)


def spend_rounds(root: Path, env: dict[str, str] | None = None) -> None:
    assert retitle(root, 1, env).code == 0
    assert retitle(root, 2, env).code == 0
    third = retitle(root, 3, env)
    assert (third.code, third.json()["code"]) == (1, CODE)


def node_json(root: Path, node: str = SCHEMA, env: dict[str, str] | None = None) -> dict:
    data = plangraph_main(root, "status", "--format", "json", env=env).json()
    return next(n for n in data["nodes"] if n["id"] == node)


def test_a_node_with_spent_rounds_is_marked_for_a_person_everywhere(jwt: Path) -> None:
    assert plangraph_main(jwt, "verify", SCHEMA).code == 0
    assert node_json(jwt)["status"] == "completed"
    spend_rounds(jwt)
    node = node_json(jwt)
    assert node["status"] == "blocked"
    reason = node["reasons"][0]
    assert (reason["code"], reason["by"], reason["max_replan_rounds"]) == (CODE, "agent", 2)
    assert "needs a person" in reason["message"]
    assert f"plangraph retry {SCHEMA}" in reason["message"]
    text = plangraph_main(jwt, "status").out
    row = next(line for line in text.splitlines() if line.startswith(SCHEMA))
    assert "blocked" in row and "needs a person" in row
    markdown = plangraph_main(jwt, "status", "--format", "markdown").out
    assert f"plangraph retry {SCHEMA} --by NAME # needs a person ({CODE})" in markdown
    explained = plangraph_main(jwt, "explain", SCHEMA, "--format", "json").json()
    assert [s["run"] for s in explained["steps"]] == [f"plangraph retry {SCHEMA} --by WHO"]
    audit = plangraph_main(jwt, "audit", "--format", "json")
    assert audit.code == 1
    assert [(h["node"], h["code"]) for h in audit.json()["needs_person"]] == [(SCHEMA, CODE)]
    assert f"needs a person: {SCHEMA} ({CODE})" in plangraph_main(jwt, "audit").out
    last = plangraph_main(jwt, "history", SCHEMA).out.splitlines()[-1]
    assert f"refused {CODE}" in last and last.endswith("blocked")


def test_the_gate_refuses_a_marked_node_until_a_person_runs_retry(jwt: Path) -> None:
    assert plangraph_main(jwt, "verify", SCHEMA).code == 0
    spend_rounds(jwt)
    claim = plangraph_main(jwt, "claim", SCHEMA, "--by", "agent", "--format", "json")
    assert claim.code == 1
    assert (claim.json()["verdict"], claim.json()["reasons"][0]["code"]) == ("FAILED", CODE)
    assert plangraph_main(jwt, "status", "--check").code == 1
    # the dependent waits for it as for any node that is not completed
    token = node_json(jwt, "step-token-endpoint")
    assert "step-user-schema" in json.dumps(token["reasons"])
    assert plangraph_main(jwt, "retry", SCHEMA, "--by", "lead").code == 0
    assert node_json(jwt)["status"] == "completed"
    assert plangraph_main(jwt, "claim", SCHEMA, "--by", "agent").code == 0
    assert plangraph_main(jwt, "audit", "--format", "json").json()["needs_person"] == []
    assert retitle(jwt, 3).code == 0  # and the rounds are renewed


def test_applied_rounds_alone_mark_nobody(jwt: Path) -> None:
    assert retitle(jwt, 1).code == 0
    assert retitle(jwt, 2).code == 0
    assert CODE not in json.dumps(node_json(jwt))  # only a refused further patch marks


def test_with_keys_only_a_signed_retry_grant_clears_the_mark(jwt: Path) -> None:
    spend_rounds(jwt, HMAC)
    assert plangraph_main(jwt, "retry", SCHEMA, "--by", "agent").code == 0  # unsigned
    assert node_json(jwt, env=HMAC)["reasons"][0]["code"] == CODE
    assert plangraph_main(jwt, "retry", SCHEMA, "--by", "lead", env=HMAC).code == 0
    assert CODE not in json.dumps(node_json(jwt, env=HMAC))


def test_the_mark_is_kept_by_the_logs_checkpoint(
    jwt: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(checkpoint, "FIRST_AT", 1)
    monkeypatch.setattr(checkpoint, "EVERY", 1)
    spend_rounds(jwt)
    with PlanGraph.open(jwt) as graph:
        fold = graph.fold()
        assert fold.events is None  # began at the checkpoint
        assert list(fold.held) == [SCHEMA]
        from_checkpoint = graph.status(fold).nodes[SCHEMA]
        log = graph.store.log()
        whole = derive(graph.graph, log, graph.snapshot(log)).nodes[SCHEMA]
    assert from_checkpoint == whole and whole.status == "blocked"
    assert plangraph_main(jwt, "audit").code == 1  # the finding, and no CHECKPOINT_MISMATCH
    assert "CHECKPOINT" not in plangraph_main(jwt, "audit").out
