"""Patch-only replanning (issue 20 §3) through the real ``plangraph patch`` command on the
JWT-login sample in a real git repository with a real store: the plan file keeps its comments
and layout, lint refuses a bad patch whole, two rounds per node, and every attempt is an event."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from cli_helpers import plangraph, plangraph_main

from pytest_plangraph.api import PlanGraph
from pytest_plangraph.errors import PlanError, UsageError

SCHEMA = "step-user-schema"
TOKEN = "step-token-endpoint"
HMAC = {"PLANGRAPH_SIGNING_KEY": "ci-secret"}

ADD_STEP = """
plangraph_patch: 1
note: rate-limit the login
nodes:
  add:
    - id: step-rate-limit
      parent: objective-auth
      title: Rate limit
      acceptance:
        - {id: ac-limit, verifier: {type: approval}}
edges:
  add:
    - {from: step-rate-limit, to: step-token-endpoint, type: requires}
"""

REWORD = """
plangraph_patch: 1
criteria:
  replace:
    - node: step-user-schema
      criterion:
        id: ac-schema-valid
        assertion: {words}
        verifier: {{type: schema, schema: src/auth/user_schema.json, artifact: fixtures/user.json}}
"""

CYCLE = """
plangraph_patch: 1
edges:
  add:
    - {from: step-token-endpoint, to: step-user-schema, type: requires}
"""


@pytest.fixture
def jwt(project) -> Path:
    return project("jwt-login")


def write(root: Path, text: str, name: str = "patch.yaml") -> Path:
    path = root.parent / name
    path.write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
    return path


def patch(root: Path, text: str, version: int, env: dict[str, str] | None = None):
    file = write(root, text)
    args = ["patch", str(file), "--by", "agent", "--expected-plan-version", str(version)]
    return plangraph_main(root, *args, "--format", "json", env=env)


def patch_events(root: Path) -> list:
    with PlanGraph.open(root) as graph:
        return graph.store.events(kinds=["patch"])


def test_an_applied_patch_keeps_comments_and_layout_and_is_an_event(jwt: Path) -> None:
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
    assert [(e.node, e.by, e.payload["outcome"]) for e in events] == [
        ("step-rate-limit", "agent", "applied"),
        (TOKEN, "agent", "applied"),
    ]
    payload = events[0].payload
    assert payload["patch"]["note"] == "rate-limit the login"
    assert (payload["version_before"], payload["version_after"]) == (1, 2)
    with PlanGraph.open(jwt) as graph:
        assert payload["digest_after"] == graph.plan.digest != payload["digest_before"]
    shown = plangraph_main(jwt, "history", TOKEN)
    assert "patch" in shown.out and "applied v1 -> v2" in shown.out


def test_impact_and_the_answer_list_what_the_patch_invalidated(jwt: Path) -> None:
    assert plangraph_main(jwt, "verify", SCHEMA).code == 0
    result = patch(jwt, REWORD.format(words="the schema is valid"), 1)
    assert result.code == 0, result.err
    (invalidated,) = result.json()["invalidated"]
    assert (invalidated["node"], invalidated["criterion"]) == (SCHEMA, "ac-schema-valid")
    assert invalidated["reasons"] == ["CRITERION_CHANGED"] and invalidated["evidence"]
    impact = plangraph_main(jwt, "impact", "--format", "json").json()
    assert SCHEMA in [entry["node"] for entry in impact["invalidated"]]
    assert patch_events(jwt)[0].payload["invalidated"] == [invalidated]


def test_lint_errors_refuse_the_whole_patch_and_leave_the_file(jwt: Path) -> None:
    before = (jwt / "plangraph.yaml").read_bytes()
    result = patch(jwt, CYCLE, 1)
    assert result.code == 1
    data = result.json()
    assert (data["outcome"], data["code"]) == ("refused", "LINT_ERRORS")
    assert [(f["code"], f["node"]) for f in data["findings"]] == [("CYCLE", SCHEMA)]
    assert "step-token-endpoint -> step-user-schema" in data["findings"][0]["hint"]
    assert (jwt / "plangraph.yaml").read_bytes() == before
    text = plangraph_main(jwt, "patch", str(write(jwt, CYCLE)), "--by", "a",
                          "--expected-plan-version", "1")  # fmt: skip
    assert text.code == 1 and "CYCLE [step-user-schema]" in text.out
    assert [e.payload["code"] for e in patch_events(jwt)] == ["LINT_ERRORS", "LINT_ERRORS"]


def test_the_third_round_is_refused_and_marks_the_node_for_a_person(jwt: Path) -> None:
    assert patch(jwt, REWORD.format(words="one"), 1).code == 0
    assert patch(jwt, REWORD.format(words="two"), 2).code == 0
    before = (jwt / "plangraph.yaml").read_bytes()
    third = patch(jwt, REWORD.format(words="three"), 3)
    assert third.code == 1
    assert (third.json()["code"], third.json()["exhausted"]) == (
        "REPLAN_BUDGET_EXHAUSTED",
        {SCHEMA: 2},
    )
    assert (jwt / "plangraph.yaml").read_bytes() == before
    marks = [e for e in patch_events(jwt) if e.payload["code"] == "REPLAN_BUDGET_EXHAUSTED"]
    assert [e.node for e in marks] == [SCHEMA]
    assert "refused REPLAN_BUDGET_EXHAUSTED" in plangraph_main(jwt, "history", SCHEMA).out
    assert patch(jwt, REWORD.format(words="four"), 3).code == 1  # still spent
    assert plangraph_main(jwt, "retry", SCHEMA, "--by", "lead").code == 0
    assert patch(jwt, REWORD.format(words="five"), 3).code == 0


def test_with_keys_only_a_signed_retry_grant_gives_more_rounds(jwt: Path) -> None:
    assert patch(jwt, REWORD.format(words="one"), 1, HMAC).code == 0
    assert patch(jwt, REWORD.format(words="two"), 2, HMAC).code == 0
    assert plangraph_main(jwt, "retry", SCHEMA, "--by", "agent").code == 0  # unsigned
    assert patch(jwt, REWORD.format(words="three"), 3, HMAC).json()["code"] == (
        "REPLAN_BUDGET_EXHAUSTED"
    )
    assert plangraph_main(jwt, "retry", SCHEMA, "--by", "lead", env=HMAC).code == 0
    assert patch(jwt, REWORD.format(words="three"), 3, HMAC).code == 0


def test_the_round_budget_is_a_plan_setting(jwt: Path) -> None:
    plan = jwt / "plangraph.yaml"
    plan.write_text(plan.read_text().replace("plan: auth-login\n", "plan: auth-login\n"
                                             "max_replan_rounds: 0\n"))  # fmt: skip
    assert patch(jwt, ADD_STEP, 1).json()["code"] == "REPLAN_BUDGET_EXHAUSTED"


def test_a_stale_plan_version_is_a_conflict_and_nothing_changes(jwt: Path) -> None:
    before = (jwt / "plangraph.yaml").read_bytes()
    result = patch(jwt, ADD_STEP, 7)
    assert result.code == 1
    assert "PLAN_VERSION_CONFLICT" in result.err and "Traceback" not in result.err
    assert (jwt / "plangraph.yaml").read_bytes() == before
    assert patch_events(jwt) == []


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("- a list\n", "op 0: expected an object with 'op' and 'path', got text"),
        ("42\n", "expected a mapping with 'plangraph_patch: 1' (or a JSON Patch"),
        ("plangraph_patch: 2\n", "plangraph_patch: expected 1"),
        ("plangraph_patch: 1\nnodes: {add: [{id: 3}]}\n", "nodes.add[0].id: expected text"),
        ("plangraph_patch: 1\nnodez: {}\n", "unknown field 'nodez'"),
        ("plangraph_patch: 1\n", "the patch changes nothing"),
        ("plangraph_patch: 1\nnodes: {remove: [ghost]}\n", "no node 'ghost' to remove"),
        ("plangraph_patch: 1\nnodes: {add: [{id: step-user-schema}]}\n", "use nodes.replace"),
        (
            "plangraph_patch: 1\ncriteria: {remove: [{node: step-user-schema, id: nope}]}\n",
            "no criterion step-user-schema/nope",
        ),
        (
            "plangraph_patch: 1\nedges: {remove: [{from: a, to: b, type: requires}]}\n",
            "no requires edge from a to b",
        ),
        ("plangraph_patch: 1\nnodes: {add: [{id: x}]}\nnodes: {}\n", "duplicate"),
        ("plangraph_patch: [1\n", "YAML syntax error"),
    ],
)
def test_bad_patches_are_usage_errors_and_change_nothing(
    jwt: Path, text: str, message: str
) -> None:
    before = (jwt / "plangraph.yaml").read_bytes()
    result = patch(jwt, text, 1)
    assert result.code == 2, result.out
    assert message in result.err and "Traceback" not in result.err
    assert (jwt / "plangraph.yaml").read_bytes() == before
    assert patch_events(jwt) == []


def test_a_missing_patch_file_is_a_usage_error(jwt: Path) -> None:
    result = plangraph(jwt, "patch", "nope.yaml", "--by", "a", "--expected-plan-version", "1")
    assert result.code == 2 and "patch file nope.yaml does not exist" in result.err
    needs = plangraph_main(jwt, "patch", str(write(jwt, ADD_STEP)), "--by", "a")
    assert needs.code == 2 and "--expected-plan-version" in needs.err


def test_a_json_plan_is_patched_as_json(jwt: Path) -> None:
    with PlanGraph.open(jwt) as graph:
        data = graph.plan.to_json(by_alias=True, exclude_defaults=True)
    (jwt / "plangraph.yaml").unlink()
    (jwt / "plan.json").write_text(json.dumps(data), encoding="utf-8")
    file = write(jwt, ADD_STEP)
    args = ["patch", str(file), "--by", "a", "--expected-plan-version", "1", "--plan", "plan.json"]
    assert plangraph_main(jwt, *args).code == 0
    patched = json.loads((jwt / "plan.json").read_text())
    assert "step-rate-limit" in [n["id"] for n in patched["nodes"]]


def test_the_api_takes_a_patch_as_a_mapping(jwt: Path) -> None:
    change = {
        "plangraph_patch": 1,
        "edges": {"remove": [{"from": SCHEMA, "to": TOKEN, "type": "consumes"}]},
    }
    with PlanGraph.open(jwt) as plangraph:
        result = plangraph.patch(change, by="agent-7", expected_plan_version=1)
        assert (result.outcome, result.nodes) == ("applied", [TOKEN])
        assert plangraph.graph.prerequisites(TOKEN) == []
        with pytest.raises(PlanError, match="unknown field 'nodes_add'"):
            plangraph.patch({"plangraph_patch": 1, "nodes_add": []}, by="agent-7")
        with pytest.raises(UsageError, match="not int"):
            plangraph.patch(3, by="agent-7")  # type: ignore[arg-type]
    assert "consumes" not in (jwt / "plangraph.yaml").read_text()


def test_the_patched_plan_is_read_once_through_the_plan_cache(
    jwt: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The patched text is parsed once, with the plan cache (only what the patch changed is
    validated again): lint sees it under its "(as patched)" name, and the plan judged after
    is the file's, under the file's name."""
    from pytest_plangraph.plan import file

    parsed: list[tuple[str, bool]] = []
    parse = file.parse_plan

    def parse_counted(raw: bytes, name: str, **kwargs: object) -> file.LoadedPlan:
        parsed.append((name, kwargs.get("cache_dir") is not None))
        return parse(raw, name, **kwargs)  # type: ignore[arg-type]

    with PlanGraph.open(jwt) as plangraph:
        name = plangraph.loaded.file
        monkeypatch.setattr(file, "parse_plan", parse_counted)
        edge = {"from": SCHEMA, "to": TOKEN, "type": "consumes"}
        change = {"plangraph_patch": 1, "edges": {"remove": [edge]}}
        assert plangraph.patch(change, by="agent-7", expected_plan_version=1).outcome == "applied"
        monkeypatch.undo()
        assert plangraph.loaded.file == name
        with PlanGraph.open(jwt) as again:
            assert plangraph.plan.digest == again.plan.digest
    shown = f"{name} (as patched)"
    assert parsed == [(shown, True), (name, True)]  # the patched text, then the file read back


def test_a_patch_event_cannot_be_appended_by_hand(jwt: Path) -> None:
    with PlanGraph.open(jwt) as graph, pytest.raises(UsageError, match="recorded by patch"):
        graph.append("patch", SCHEMA, by="agent", payload={"outcome": "applied"})
    assert patch_events(jwt) == []


def test_two_agents_racing_on_one_version_one_wins_and_nothing_is_lost(jwt: Path) -> None:
    import subprocess

    from cli_helpers import PLANGRAPH, _environment

    assert plangraph_main(jwt, "status").code == 0  # the plan is version 1 in the store
    files = [write(jwt, REWORD.format(words=f"words {i}"), f"p{i}.yaml") for i in range(2)]
    files.append(write(jwt, ADD_STEP, "p2.yaml"))
    runs = [
        subprocess.Popen(
            [str(PLANGRAPH), "patch", str(f), "--by", f"agent-{i}", "--expected-plan-version", "1"],
            cwd=jwt, env=_environment(None), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True,
        )
        for i, f in enumerate(files)
    ]  # fmt: skip
    results = [(run.wait(60), run.communicate()[1]) for run in runs]
    assert sorted(code for code, _ in results) == [0, 1, 1]
    assert all("PLAN_VERSION_CONFLICT" in err for code, err in results if code == 1)
    applied = [e for e in patch_events(jwt) if e.payload["outcome"] == "applied"]
    assert {(e.payload["version_before"], e.payload["version_after"]) for e in applied} == {(1, 2)}
    with PlanGraph.open(jwt) as graph:
        assert graph.plan.digest == applied[0].payload["digest_after"]
    assert "?? " not in subprocess.run(
        ["git", "status", "--porcelain"], cwd=jwt, capture_output=True, text=True, check=True
    ).stdout.replace("?? .plangraph/", "")


BROKEN = """
plangraph: 1
plan: broken
nodes:
  - id: step-a
    acceptance:
      - {id: ac, verifier: {type: approval}}
edges:
  - {from: step-ghost, to: step-a, type: requires}   # MISSING_DEP: lint rejects the plan
"""


def test_a_plan_that_lint_rejects_is_repaired_by_a_patch(jwt: Path) -> None:
    (jwt / "plangraph.yaml").write_text(textwrap.dedent(BROKEN).lstrip(), encoding="utf-8")
    assert plangraph_main(jwt, "status").code == 2
    fix = "plangraph_patch: 1\nedges: {remove: [{from: step-ghost, to: step-a, type: requires}]}\n"
    result = patch(jwt, fix, 1)
    assert result.code == 0, result.err
    assert result.json()["invalidated"] == []
    assert plangraph_main(jwt, "status").code == 0
    assert "MISSING_DEP" not in (jwt / "plangraph.yaml").read_text()


def test_a_plan_with_anchors_is_patched_without_new_sections(jwt: Path) -> None:
    plan = jwt / "plangraph.yaml"
    plan.write_text(
        "plangraph: 1\nplan: anchors\nnodes:\n"
        "  - id: step-a   # the first step\n"
        "    acceptance:\n      - {id: ac, verifier: &v {type: approval}}\n"
        "  - id: step-b\n    acceptance:\n      - {id: ac, verifier: *v}\n",
        encoding="utf-8",
    )
    change = "plangraph_patch: 1\ncriteria: {remove: [{node: step-b, id: ac}]}\n"
    # step-b is left without criteria: lint warns (NO_ACCEPTANCE), which refuses nothing
    assert patch(jwt, change, 1).code == 0
    text = plan.read_text()
    assert "# the first step" in text and "edges" not in text
    assert "step-b\n    acceptance: []\n" in text
