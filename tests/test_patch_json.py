"""``plangraph patch`` with a JSON Patch (RFC 6902) through the real command on the JWT-login
sample, in a real git repository with a real store: comments and layout kept, lint refuses it
whole, the same two rounds per node, the same event, and one clear message (operation index and
pointer, exit 2, nothing written) for a failing ``test`` or a pointer that names nothing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import plangraph_main

from pytest_plangraph.api import PlanGraph

SCHEMA = "step-user-schema"
TOKEN = "step-token-endpoint"

ADD_STEP = [
    {"op": "test", "path": "/nodes/2/id", "value": TOKEN},
    {"op": "add", "path": "/nodes/-", "value": {
        "id": "step-rate-limit", "parent": "objective-auth", "title": "Rate limit",
        "acceptance": [{"id": "ac-limit", "verifier": {"type": "approval"}}]}},
    {"op": "add", "path": "/edges/-",
     "value": {"from": "step-rate-limit", "to": TOKEN, "type": "requires"}},
]  # fmt: skip


def reword(words: str) -> list[dict[str, Any]]:
    return [{"op": "replace", "path": "/nodes/1/acceptance/0/assertion", "value": words}]


@pytest.fixture
def jwt(project) -> Path:
    return project("jwt-login")


def patch(root: Path, ops: Any, version: int, *extra: str):
    file = root.parent / "patch.json"
    file.write_text(ops if isinstance(ops, str) else json.dumps(ops), encoding="utf-8")
    args = ["patch", str(file), "--by", "agent", "--expected-plan-version", str(version)]
    return plangraph_main(root, *args, "--format", "json", *extra)


def patch_events(root: Path) -> list:
    with PlanGraph.open(root) as graph:
        return graph.store.events(kinds=["patch"])


def test_a_json_patch_is_applied_keeping_comments_and_layout(jwt: Path) -> None:
    before = (jwt / "plangraph.yaml").read_text()
    result = patch(jwt, ADD_STEP, 1)
    assert result.code == 0, result.err
    data = result.json()
    assert (data["outcome"], data["version_before"], data["version_after"]) == ("applied", 1, 2)
    assert data["nodes"] == ["step-rate-limit", TOKEN]
    after = (jwt / "plangraph.yaml").read_text()
    assert after.startswith(before.rstrip("\n").rsplit("\nedges:", 1)[0])  # untouched, to the byte
    assert "# format version of this file" in after
    assert "# tests marked @pytest.mark.criterion" in after
    assert "  - {from: step-rate-limit, to: step-token-endpoint, type: requires}\n" in after
    assert "        verifier: {type: approval}\n" in after
    events = patch_events(jwt)
    assert [(e.node, e.payload["outcome"]) for e in events] == [
        ("step-rate-limit", "applied"),
        (TOKEN, "applied"),
    ]
    assert events[0].payload["patch"] == ADD_STEP  # the operations as written
    shown = plangraph_main(jwt, "history", TOKEN)
    assert "applied v1 -> v2" in shown.out
    with PlanGraph.open(jwt) as graph:
        assert "step-rate-limit" in graph.graph.nodes
        assert graph.plan.digest == events[0].payload["digest_after"]


def test_the_json_patch_may_be_written_in_yaml_and_invalidates_like_any(jwt: Path) -> None:
    assert plangraph_main(jwt, "verify", SCHEMA).code == 0
    text = "- op: replace\n  path: /nodes/1/acceptance/0/assertion\n  value: the schema holds\n"
    result = patch(jwt, text, 1)
    assert result.code == 0, result.err
    (invalidated,) = result.json()["invalidated"]
    assert (invalidated["node"], invalidated["reasons"]) == (SCHEMA, ["CRITERION_CHANGED"])
    assert "assertion: the schema holds\n" in (jwt / "plangraph.yaml").read_text()


def test_lint_errors_refuse_the_whole_json_patch(jwt: Path) -> None:
    before = (jwt / "plangraph.yaml").read_bytes()
    cycle = [{"op": "add", "path": "/edges/-",
              "value": {"from": TOKEN, "to": SCHEMA, "type": "requires"}}]  # fmt: skip
    result = patch(jwt, cycle, 1)
    assert result.code == 1
    data = result.json()
    assert (data["outcome"], data["code"]) == ("refused", "LINT_ERRORS")
    assert [(f["code"], f["node"]) for f in data["findings"]] == [("CYCLE", SCHEMA)]
    assert (jwt / "plangraph.yaml").read_bytes() == before
    assert [e.payload["code"] for e in patch_events(jwt)] == ["LINT_ERRORS"]


def test_json_patches_spend_the_same_two_rounds_as_the_small_format(jwt: Path) -> None:
    assert patch(jwt, reword("one"), 1).code == 0
    small = jwt.parent / "small.yaml"
    small.write_text(
        "plangraph_patch: 1\ncriteria:\n  replace:\n    - node: step-user-schema\n"
        "      criterion: {id: ac-schema-valid, assertion: two, verifier: {type: schema, "
        "schema: src/auth/user_schema.json, artifact: fixtures/user.json}}\n",
        encoding="utf-8",
    )
    second = plangraph_main(jwt, "patch", str(small), "--by", "a", "--expected-plan-version", "2")
    assert second.code == 0, second.err
    before = (jwt / "plangraph.yaml").read_bytes()
    third = patch(jwt, reword("three"), 3)
    assert third.code == 1
    assert (third.json()["code"], third.json()["exhausted"]) == (
        "REPLAN_BUDGET_EXHAUSTED",
        {SCHEMA: 2},
    )
    assert (jwt / "plangraph.yaml").read_bytes() == before


@pytest.mark.parametrize(
    ("ops", "message"),
    [
        ([{"op": "replace", "path": "/nodes/1/title", "value": "t"},
          {"op": "test", "path": "/nodes/1/id", "value": "step-other"}],
         'op 1 (test /nodes/1/id) on plangraph.yaml: the value there is "step-user-schema", '
         'not "step-other"'),
        ([{"op": "remove", "path": "/nodes/7"}],
         "op 0 (remove /nodes/7) on plangraph.yaml: /nodes/7 does not exist: /nodes has 3"),
        ([{"op": "replace", "path": "/nodes/1/acceptance/0/nope", "value": 1}],
         "/nodes/1/acceptance/0/nope does not exist"),
        ([{"op": "remove", "path": "edges/0"}], "op 0 (remove edges/0): 'path' 'edges/0' is "
         "not a JSON Pointer"),
        ([{"op": "replace", "path": "/max_replan_rounds", "value": 99}],
         "plan-level settings are changed by a person in the plan file"),
        ([{"op": "replace", "path": "/nodes/0/kind", "value": "banana"}],
         "plangraph.yaml (as patched): nodes[0].kind: expected"),
        ([{"op": "test", "path": "/plan", "value": "auth-login"}], "the patch changes nothing"),
        ("[]", "the patch changes nothing"),
        ('[{"op": "add", "path": "/nodes/-", "value": ', "syntax error"),
    ],
)  # fmt: skip
def test_a_json_patch_that_does_not_fit_is_exit_2_and_writes_nothing(
    jwt: Path, ops: Any, message: str
) -> None:
    before = (jwt / "plangraph.yaml").read_bytes()
    result = patch(jwt, ops, 1)
    assert result.code == 2, result.out
    assert message in result.err, result.err
    assert "Traceback" not in result.err
    assert (jwt / "plangraph.yaml").read_bytes() == before
    assert patch_events(jwt) == []


def test_the_api_takes_a_list_of_operations(jwt: Path) -> None:
    ops = [{"op": "remove", "path": "/edges/0"}]
    with PlanGraph.open(jwt) as plangraph:
        result = plangraph.patch(ops, by="agent-7", expected_plan_version=1)
        assert (result.outcome, result.nodes) == ("applied", [TOKEN])
        assert plangraph.graph.prerequisites(TOKEN) == []
    assert "consumes" not in (jwt / "plangraph.yaml").read_text()


def test_a_json_plan_file_takes_a_json_patch(jwt: Path) -> None:
    with PlanGraph.open(jwt) as graph:
        data = graph.plan.to_json(by_alias=True, exclude_defaults=True)
    (jwt / "plangraph.yaml").unlink()
    (jwt / "plan.json").write_text(json.dumps(data), encoding="utf-8")
    assert patch(jwt, ADD_STEP, 1, "--plan", "plan.json").code == 0
    patched = json.loads((jwt / "plan.json").read_text())
    assert patched["nodes"][-1]["id"] == "step-rate-limit"


def test_an_operation_on_a_value_yaml_shares_is_refused_not_spread(jwt: Path) -> None:
    plan = jwt / "plangraph.yaml"
    plan.write_text(
        "plangraph: 1\nplan: anchors\nnodes:\n"
        "  - id: step-a\n    acceptance:\n      - {id: ac, verifier: &v {type: approval}}\n"
        "  - id: step-b\n    acceptance:\n      - {id: ac, verifier: *v}\n",
        encoding="utf-8",
    )
    before = plan.read_bytes()
    ops = [{"op": "add", "path": "/nodes/0/acceptance/0/verifier/role", "value": "lead"}]
    result = patch(jwt, ops, 1)
    assert result.code == 2
    assert "could not be edited without changing what the patch does not touch" in result.err
    assert plan.read_bytes() == before and patch_events(jwt) == []
