"""A patch may not widen the retry budget it is held to: raising a node's ``max_retry``
(in either patch format, or by removing the node and adding it again) is refused with
``PATCH_WIDENS_BUDGET``, the plan file is not touched, and the attempt is recorded. Lowering it
is a patch like any other. Through the real ``plangraph`` command on the JWT sample."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_helpers import plangraph_main

CODE = "PATCH_WIDENS_BUDGET"
STEP = "step-user-schema"


@pytest.fixture
def jwt(project) -> Path:
    return project("jwt-login")


def patch(root: Path, content: object, suffix: str = ".json"):
    file = root.parent / f"patch{suffix}"
    file.write_text(json.dumps(content), encoding="utf-8")
    return plangraph_main(
        root,
        "patch",
        str(file),
        "--by",
        "agent",
        "--expected-plan-version",
        "1",
        "--format",
        "json",
    )


def node(root: Path) -> dict:
    data = json.loads(plangraph_main(root, "show", "--format", "json").out)
    return next(n for n in data["nodes"] if n["id"] == STEP)


def test_a_json_patch_raising_max_retry_is_refused(jwt: Path) -> None:
    plan = jwt / "plangraph.yaml"
    before = plan.read_bytes()
    ops = [{"op": "add", "path": "/nodes/1/max_retry", "value": 99}]
    result = patch(jwt, ops)
    assert result.code == 1, result.out + result.err
    answer = result.json()
    assert (answer["outcome"], answer["code"]) == ("refused", CODE)
    assert plan.read_bytes() == before
    last = plangraph_main(jwt, "history", STEP).out.splitlines()[-1]
    assert f"refused {CODE}" in last


def test_removing_and_adding_the_node_again_does_not_widen_it(jwt: Path) -> None:
    plan = jwt / "plangraph.yaml"
    before = plan.read_bytes()
    ops = [
        {"op": "copy", "from": "/nodes/1", "path": "/nodes/-"},
        {"op": "remove", "path": "/nodes/1"},
        {"op": "add", "path": "/nodes/2/max_retry", "value": 5},
    ]
    assert patch(jwt, ops).json()["code"] == CODE
    assert plan.read_bytes() == before


def test_a_small_format_node_replace_raising_max_retry_is_refused(jwt: Path) -> None:
    plan = jwt / "plangraph.yaml"
    before = plan.read_bytes()
    replaced = {
        "id": STEP,
        "parent": "objective-auth",
        "title": "User record schema",
        "outputs": ["src/auth/user_schema.json"],
        "max_retry": 50,
        "acceptance": [
            {
                "id": "ac-schema-valid",
                "verifier": {
                    "type": "schema",
                    "schema": "src/auth/user_schema.json",
                    "artifact": "fixtures/user.json",
                },
            }
        ],
    }
    result = patch(jwt, {"plangraph_patch": 1, "nodes": {"replace": [replaced]}})
    assert (result.code, result.json()["code"]) == (1, CODE)
    assert result.json()["nodes"] == [STEP]
    assert plan.read_bytes() == before


def test_lowering_max_retry_is_applied(jwt: Path) -> None:
    ops = [{"op": "add", "path": "/nodes/1/max_retry", "value": 0}]
    result = patch(jwt, ops)
    assert (result.code, result.json()["outcome"]) == (0, "applied")
    assert "max_retry: 0" in (jwt / "plangraph.yaml").read_text(encoding="utf-8")


def test_a_patch_dropping_a_failing_criterion_says_so(jwt: Path) -> None:
    """Removing a criterion, making it not required or cancelling its node is a re-plan the
    answer and the event name loudly (``dropped``), with the criterion's state before."""
    ops = [
        {"op": "remove", "path": "/nodes/2/acceptance/0"},
        {"op": "add", "path": "/nodes/2/acceptance/0/required", "value": False},
    ]
    result = patch(jwt, ops)
    assert result.code == 0, result.out + result.err
    dropped = result.json()["dropped"]
    got = [(d["node"], d["criterion"], d["how"]) for d in dropped]
    assert got == [
        ("step-token-endpoint", "ac-http-200", "removed"),
        ("step-token-endpoint", "ac-invalid-401", "not required"),
    ]
    assert all(d["was"] == "missing" for d in dropped), dropped
    history = plangraph_main(jwt, "history", "step-token-endpoint", "--format", "json")
    assert history.code == 0, history.err
    assert '"how": "not required"' in json.dumps(history.json())


def test_cancelling_a_node_by_patch_is_named_in_the_text_answer(jwt: Path) -> None:
    file = jwt.parent / "cancel.json"
    file.write_text(json.dumps([{"op": "add", "path": "/nodes/1/cancelled", "value": True}]))
    args = ["patch", str(file), "--by", "agent", "--expected-plan-version", "1"]
    result = plangraph_main(jwt, *args)
    assert result.code == 0, result.out + result.err
    assert (
        f"dropped {STEP}/ac-schema-valid (node cancelled; was missing): the gate no longer "
        "checks it" in result.out
    )


def test_a_node_held_after_refused_claims_cannot_be_renamed_away(jwt: Path) -> None:
    """A node blocked with ``RETRY_BUDGET_EXHAUSTED`` waits for a person: a patch touching it
    (here: renaming it, which would leave a fresh node without the hold) is refused."""
    for _ in range(3):
        assert plangraph_main(jwt, "claim", STEP, "--by", "agent").code == 1
    plan = jwt / "plangraph.yaml"
    before = plan.read_bytes()
    ops = [
        {"op": "replace", "path": "/nodes/1/id", "value": "step-user-schema-2"},
        {"op": "replace", "path": "/edges/0/from", "value": "step-user-schema-2"},
    ]
    result = patch(jwt, ops)
    assert (result.code, result.json()["code"]) == (1, "RETRY_BUDGET_EXHAUSTED")
    assert plan.read_bytes() == before
    assert plangraph_main(jwt, "retry", STEP, "--by", "lead").code == 0
    assert patch(jwt, ops).json()["outcome"] == "applied"
