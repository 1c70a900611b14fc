"""``plangraph serve`` writes: claims and patches through a real uvicorn server on a loopback
port, with ``expected_plan_version`` and ``Idempotency-Key`` on every write, concurrent clients
(bounded counts, threads), two agents racing on one plan version, and a restart in between."""

from __future__ import annotations

import copy
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import plangraph_main
from server_helpers import Server, is_problem

from pytest_plangraph.api import PlanGraph

PLAN = "auth-login"
SCHEMA = "step-user-schema"
TOKEN = "step-token-endpoint"


@pytest.fixture
def fresh(project) -> Path:
    """The JWT-login sample with no evidence yet."""
    return project("jwt-login")


def events(root: Path, kind: str) -> list[Any]:
    with PlanGraph.open(root) as graph:
        return graph.store.events(kinds=[kind])


def claim(node: str = SCHEMA, version: int = 1, by: str = "agent") -> dict[str, Any]:
    return {"expected_plan_version": version, "node": node, "by": by}


def add_node(name: str, version: int, by: str = "agent") -> dict[str, Any]:
    step = {"id": name, "parent": "objective-auth", "title": name,
            "acceptance": [{"id": "ac", "verifier": {"type": "approval"}}]}  # fmt: skip
    patch = {"plangraph_patch": 1, "nodes": {"add": [step]}}
    return {"expected_plan_version": version, "by": by, "patch": patch}


def test_a_claim_is_the_clis_answer_and_the_same_key_is_one_claim(fresh: Path, serve) -> None:
    server = serve(fresh)
    first = server.post(f"/plans/{PLAN}/claims", claim(), key="claim-1")
    assert first.status_code == 200 and first.json()["verdict"] == "FAILED", first.text
    assert "Idempotency-Replayed" not in first.headers
    again = server.post(f"/plans/{PLAN}/claims", claim(), key="claim-1")
    assert again.status_code == 200 and again.json() == first.json()
    assert again.headers["Idempotency-Replayed"] == "true"
    cli = plangraph_main(fresh, "claim", SCHEMA, "--by", "agent", "--idempotency-key",
                         "claim-1", "--expected-plan-version", "1", "--format", "json")  # fmt: skip
    assert cli.json() == first.json()
    assert len(events(fresh, "claim")) == 1  # three asks with one key: one claim
    other = server.post(f"/plans/{PLAN}/claims", claim(TOKEN), key="claim-1")
    assert "claim-1" in is_problem(other, 422, "IDEMPOTENCY_CONFLICT")["detail"]
    assert len(events(fresh, "claim")) == 1


def test_the_same_key_gets_the_first_answer_after_the_evidence_changed(fresh: Path, serve):
    server = serve(fresh)
    refused = server.post(f"/plans/{PLAN}/claims", claim(), key="before")
    assert refused.json()["verdict"] == "FAILED"
    assert plangraph_main(fresh, "verify", SCHEMA).code == 0  # CI recorded passing evidence
    replay = server.post(f"/plans/{PLAN}/claims", claim(), key="before")
    assert replay.json() == refused.json() and replay.headers["Idempotency-Replayed"] == "true"
    accepted = server.post(f"/plans/{PLAN}/claims", claim(), key="after")
    assert accepted.json()["verdict"] == "PASSED" and accepted.json()["status"] == "completed"
    assert len(events(fresh, "claim")) == 2


def test_a_write_against_another_plan_version_is_409_and_stores_nothing(fresh: Path, serve):
    server = serve(fresh)
    stale = server.post(f"/plans/{PLAN}/claims", claim(version=7), key="v7")
    assert is_problem(stale, 409, "PLAN_VERSION_CONFLICT")["current_plan_version"] == 1
    patch = server.post(f"/plans/{PLAN}/changes", add_node("step-x", 3), key="p3")
    assert is_problem(patch, 409, "PLAN_VERSION_CONFLICT")["current_plan_version"] == 1
    assert events(fresh, "claim") == [] and events(fresh, "patch") == []
    with PlanGraph.open(fresh) as graph:
        assert graph.store.kept_answer("v7") is None  # a refusal is not kept: retry may
        assert "step-x" not in graph.graph.nodes
    retried = server.post(f"/plans/{PLAN}/claims", claim(version=1), key="v7")
    assert retried.status_code == 200 and len(events(fresh, "claim")) == 1


def change(server: Server, patch: Any, key: str, version: int = 2) -> Any:
    body = {"expected_plan_version": version, "by": "agent", "patch": patch}
    return server.post(f"/plans/{PLAN}/changes", body, key=key)


def test_a_patch_is_the_clis_answer_and_refusals_are_answers_too(fresh: Path, serve) -> None:
    server = serve(fresh)
    applied = server.post(f"/plans/{PLAN}/changes", add_node("step-x", 1), key="x")
    assert applied.status_code == 200, applied.text
    body = applied.json()
    assert body["format"] == 1 and body["outcome"] == "applied"
    assert (body["version_before"], body["version_after"]) == (1, 2)
    assert "step-x" in (fresh / "plangraph.yaml").read_text()
    assert server.get(f"/plans/{PLAN}").json()["plan"]["version"] == 2
    assert [e.id for e in events(fresh, "patch")] == body["events"]
    cycle = {"plangraph_patch": 1, "edges": {"add": [
        {"from": TOKEN, "to": SCHEMA, "type": "requires"}]}}  # fmt: skip
    text = "plangraph_patch: 1\nedges:\n  add:\n    - {from: step-token-endpoint, to: " \
           "step-user-schema, type: requires}\n"  # fmt: skip
    refused = change(server, cycle, key="c")
    assert refused.status_code == 200 and refused.json()["code"] == "LINT_ERRORS"
    (fresh.parent / "cycle.yaml").write_text(text, encoding="utf-8")
    cli = plangraph_main(fresh, "patch", str(fresh.parent / "cycle.yaml"), "--by", "agent",
                         "--expected-plan-version", "2", "--format", "json")  # fmt: skip
    assert cli.code == 1
    strip = ("events",)  # each attempt is its own event
    assert {k: v for k, v in cli.json().items() if k not in strip} == {
        k: v for k, v in refused.json().items() if k not in strip
    }
    as_text = change(server, text, key="t")
    assert as_text.json()["code"] == "REPLAN_BUDGET_EXHAUSTED"  # the third round on the node
    broken = change(server, "x: [", key="b")
    is_problem(broken, 422, "BAD_PATCH")


def test_two_agents_racing_on_one_plan_version_one_wins_and_nothing_is_lost(fresh, serve):
    server = serve(fresh)
    version = 1
    for round_ in range(3):
        barrier = threading.Barrier(2)

        def agent(index: int, version: int = version, round_: int = round_, barrier=barrier) -> Any:
            body = add_node(f"step-r{round_}-a{index}", version, by=f"agent-{index}")
            barrier.wait()
            return server.post(f"/plans/{PLAN}/changes", body, key=f"race-{round_}-{index}")

        with ThreadPoolExecutor(2) as pool:
            answers = list(pool.map(agent, range(2)))
        assert sorted(a.status_code for a in answers) == [200, 409], [a.text for a in answers]
        won = next(a for a in answers if a.status_code == 200).json()
        lost = is_problem(next(a for a in answers if a.status_code == 409), 409,
                          "PLAN_VERSION_CONFLICT")  # fmt: skip
        assert won["outcome"] == "applied" and lost["current_plan_version"] == version + 1
        version += 1
        plan = (fresh / "plangraph.yaml").read_text()
        assert won["nodes"][0] in plan
        loser = {f"step-r{round_}-a0", f"step-r{round_}-a1"} - set(won["nodes"])
        assert loser.pop() not in plan
    patches = events(fresh, "patch")
    assert len(patches) == 3 and all(e.payload["outcome"] == "applied" for e in patches)
    assert server.get(f"/plans/{PLAN}").json()["plan"]["version"] == 4


def test_concurrent_clients_lose_no_claim_and_retries_add_none(fresh: Path, serve) -> None:
    server = serve(fresh)
    agents, claims = 6, 4

    def agent(index: int) -> list[Any]:
        answers = []
        with server.client() as client:
            for n in range(claims):
                for _ in range(2):  # each claim sent twice, as a client retrying would
                    answers.append(client.post(
                        f"/plans/{PLAN}/claims",
                        json=claim(TOKEN if n % 2 else SCHEMA, by=f"agent-{index}"),
                        headers={"Idempotency-Key": f"agent-{index}-claim-{n}"},
                    ))  # fmt: skip
        return answers

    with ThreadPoolExecutor(agents) as pool:
        answered = [a for batch in pool.map(agent, range(agents)) for a in batch]
    assert len(answered) == agents * claims * 2
    assert all(a.status_code == 200 for a in answered), [a.text for a in answered[:3]]
    assert all(a.json()["verdict"] == "FAILED" for a in answered)
    stored = events(fresh, "claim")
    assert len(stored) == agents * claims
    assert {e.idempotency_key for e in stored} == {
        f"agent-{i}-claim-{n}" for i in range(agents) for n in range(claims)
    }
    with PlanGraph.open(fresh) as graph:
        assert graph.store.verify() == []  # one chain, unbroken


def test_keys_and_their_answers_survive_a_restart(fresh: Path, serve) -> None:
    first = serve(fresh)
    claimed = first.post(f"/plans/{PLAN}/claims", claim(), key="restart-claim")
    patched = first.post(f"/plans/{PLAN}/changes", add_node("step-y", 1), key="restart-patch")
    assert claimed.status_code == 200 and patched.json()["outcome"] == "applied"
    first.stop()
    second = serve(fresh)
    again = second.post(f"/plans/{PLAN}/claims", claim(), key="restart-claim")
    assert again.json() == claimed.json() and again.headers["Idempotency-Replayed"] == "true"
    # the plan is version 2 now: without the kept answer this retry would be refused
    repeat = second.post(f"/plans/{PLAN}/changes", add_node("step-y", 1), key="restart-patch")
    assert repeat.status_code == 200 and repeat.json() == patched.json()
    assert len(events(fresh, "claim")) == 1 and len(events(fresh, "patch")) == 1


NON_FINITE = [  # Python's JSON reader takes these; JSON has no value for them
    ("changes", add_node("step-n", 2), ("patch", "nodes", "add", 0, "title"), float("nan"),
     "patch.nodes.add[0].title"),
    ("changes", {"expected_plan_version": 2, "by": "agent",
                 "patch": [{"op": "replace", "path": "/nodes/0/title", "value": 0}]},
     ("patch", 0, "value"), float("inf"), "patch[0].value"),
    ("evidence", {"expected_plan_version": 2, "event": {"payload": {"n": [1, 0]}}},
     ("event", "payload", "n", 1), float("-inf"), "event.payload.n[1]"),
]  # fmt: skip


def _set(body: dict[str, Any], where: tuple[Any, ...], value: float) -> dict[str, Any]:
    body = copy.deepcopy(body)
    inner: Any = body
    for step in where[:-1]:
        inner = inner[step]
    inner[where[-1]] = value
    return body


@pytest.mark.parametrize(("path", "body", "where", "value", "field"), NON_FINITE)
def test_nan_or_infinity_in_a_body_is_a_422_naming_the_member_and_stores_nothing(
    fresh: Path, serve, path: str, body: dict[str, Any], where, value: float, field: str
) -> None:
    server = serve(fresh)
    assert server.post(f"/plans/{PLAN}/changes", add_node("step-a", 1), key="a").status_code == 200
    plan = (fresh / "plangraph.yaml").read_bytes()
    with PlanGraph.open(fresh) as graph:
        before = [e.id for e in graph.store.events()]
    sent = server.post(f"/plans/{PLAN}/{path}", _set(body, where, value), key="bad")
    problem = is_problem(sent, 422, "BAD_NUMBER")
    assert problem["field"] == field and field in problem["detail"], problem
    assert (fresh / "plangraph.yaml").read_bytes() == plan
    with PlanGraph.open(fresh) as graph:
        assert [e.id for e in graph.store.events()] == before
        assert graph.store.kept_answer("bad") is None
    with server.client() as client:  # 1e400 reads as an infinity too
        big = client.post(
            f"/plans/{PLAN}/changes",
            content=b'{"expected_plan_version": 2, "by": "a", "patch": {"plangraph_patch": 1e400}}',
            headers={"content-type": "application/json", "Idempotency-Key": "big"},
        )
    assert is_problem(big, 422, "BAD_NUMBER")["field"] == "patch.plangraph_patch"
    assert (fresh / "plangraph.yaml").read_bytes() == plan
