"""``plangraph serve`` read side, errors and documents: a real uvicorn server on a free loopback
port in a real git repository with a real store, asked by a real HTTP client. Each answer is
compared with what ``plangraph … --format json`` says to the same question."""

from __future__ import annotations

import json
import socket
from pathlib import Path

from cli_helpers import plangraph, plangraph_main
from server_helpers import JSON, is_problem

from pytest_plangraph.api import PlanGraph

ROOT = Path(__file__).resolve().parents[1]
PLAN = "auth-login"
SCHEMA = "step-user-schema"


def test_the_plan_and_its_status_are_the_clis_answers(jwt: Path, serve) -> None:
    server = serve(jwt)
    assert server.url.startswith("http://127.0.0.1:")
    plan = server.get(f"/plans/{PLAN}")
    assert plan.status_code == 200
    body = plan.json()
    with PlanGraph.open(jwt) as graph:
        ref = graph.plan_ref()
    assert body["format"] == 1 and body["plan"] == ref.to_json()
    assert body["document"]["plan"] == PLAN
    assert [n["id"] for n in body["document"]["nodes"]] == [
        "objective-auth",
        SCHEMA,
        "step-token-endpoint",
    ]
    status = server.get(f"/plans/{PLAN}/status")
    assert status.status_code == 200
    cli = plangraph_main(jwt, "status", "--format", "json")
    assert status.json() == cli.json()
    schema = next(n for n in status.json()["nodes"] if n["id"] == SCHEMA)
    assert schema["status"] == "completed"  # the fixture verified it


def test_next_is_the_clis_answer(jwt: Path, serve) -> None:
    server = serve(jwt)
    answer = server.get(f"/plans/{PLAN}/next")
    assert answer.status_code == 200, answer.text
    cli = plangraph_main(jwt, "next", "--format", "json")
    assert answer.json() == cli.json()
    assert answer.json()["next"], "the sample has nodes ready to work on"
    is_problem(server.get("/plans/nope/next"), 404, "PLAN_NOT_FOUND")


def test_impact_analysis_is_the_clis_answer(jwt: Path, serve) -> None:
    server = serve(jwt)
    schema = jwt / "src/auth/user_schema.json"
    schema.write_text(schema.read_text().replace("{", "{\n", 1), encoding="utf-8")
    now = server.post(f"/plans/{PLAN}/impact-analysis", {})
    assert now.status_code == 200
    assert now.json() == plangraph_main(jwt, "impact", "--format", "json").json()
    assert [e["node"] for e in now.json()["invalidated"]][:1] == [SCHEMA]
    since = server.post(f"/plans/{PLAN}/impact-analysis", {"since": "HEAD", "commits": False})
    cli = plangraph_main(jwt, "impact", "--since", "HEAD", "--no-commits", "--format", "json")
    assert since.status_code == 200 and since.json() == cli.json()
    bare = server.post(f"/plans/{PLAN}/impact-analysis")  # no body: the defaults
    assert bare.status_code == 200 and bare.json() == now.json()
    unknown = server.post(f"/plans/{PLAN}/impact-analysis", {"since": "no-such-rev"})
    assert "no-such-rev" in is_problem(unknown, 422, "GIT_ERROR")["detail"]


def test_verify_runs_the_verifiers_and_records_nothing(jwt: Path, serve) -> None:
    server = serve(jwt)
    with PlanGraph.open(jwt) as graph:
        before = graph.store.count()
    answer = server.post(f"/plans/{PLAN}/verify", {"nodes": [SCHEMA], "by": "agent"})
    assert answer.status_code == 200
    cli = plangraph_main(jwt, "verify", SCHEMA, "--by", "agent", "--dry-run", "--format", "json")
    assert cli.code == 0
    with PlanGraph.open(jwt) as graph:
        assert graph.store.count() == before  # neither the server nor the dry run recorded

    def same(records: list[dict]) -> list[tuple]:  # a run's id and times differ, not its verdict
        keys = ("node", "criterion", "outcome", "subjects", "input_digest", "recorded_by")
        return [tuple(json.dumps(r[k], sort_keys=True) for k in keys) for r in records]

    assert same(answer.json()["evidence"]) == same(cli.json()["evidence"])
    assert [e["outcome"] for e in answer.json()["evidence"]] == ["passed"]
    (jwt / "fixtures/user.json").write_text("{}", encoding="utf-8")  # no longer conforms
    failing = server.post(f"/plans/{PLAN}/verify", {"nodes": [SCHEMA]})
    assert [e["outcome"] for e in failing.json()["evidence"]] == ["failed"]
    unknown = server.post(f"/plans/{PLAN}/verify", {"nodes": ["no-such-node"]})
    assert "no-such-node" in is_problem(unknown, 422, "BAD_REQUEST")["detail"]


def test_a_wrong_plan_id_path_or_method_is_a_problem(jwt: Path, serve) -> None:
    server = serve(jwt)
    for path in ("/plans/other", "/plans/other/status"):
        body = is_problem(server.get(path), 404, "PLAN_NOT_FOUND")
        assert PLAN in body["detail"]
    wrong = server.post("/plans/other/claims", {"expected_plan_version": 1, "node": SCHEMA,
                                                "by": "a"}, key="k")  # fmt: skip
    is_problem(wrong, 404, "PLAN_NOT_FOUND")
    is_problem(server.get("/nowhere"), 404, "NOT_FOUND")
    with server.client() as client:
        is_problem(client.delete(f"/plans/{PLAN}"), 405, "METHOD_NOT_ALLOWED")


BAD_BODIES = [
    ({"expected_plan_version": "1", "node": SCHEMA, "by": "a"}, 422, "BAD_REQUEST"),
    ({"expected_plan_version": True, "node": SCHEMA, "by": "a"}, 422, "BAD_REQUEST"),
    ({"expected_plan_version": 0, "node": SCHEMA, "by": "a"}, 422, "BAD_REQUEST"),
    ({"node": SCHEMA, "by": "a"}, 422, "BAD_REQUEST"),
    ({"expected_plan_version": 1, "node": SCHEMA, "by": "a", "extra": 1}, 422, "BAD_REQUEST"),
    ({"expected_plan_version": 1, "node": SCHEMA, "by": " "}, 422, "BAD_REQUEST"),
    ({"expected_plan_version": 1, "node": SCHEMA, "by": "a\nb"}, 422, "BAD_REQUEST"),
    ({"expected_plan_version": 1, "node": SCHEMA, "by": "a\u202eb"}, 422, "BAD_REQUEST"),
    ({"expected_plan_version": 1, "node": 7, "by": "a"}, 422, "BAD_REQUEST"),
    ({"expected_plan_version": 1, "node": "\ud800", "by": "a"}, 422, "BAD_TEXT"),
    ({"expected_plan_version": 1, "node": "no-such-node", "by": "a"}, 422, "BAD_REQUEST"),
    ([1, 2], 422, "BAD_REQUEST"),
]


def test_bad_input_is_a_4xx_problem_and_records_nothing(jwt: Path, serve) -> None:
    server = serve(jwt)
    for index, (body, status, code) in enumerate(BAD_BODIES):
        is_problem(server.post(f"/plans/{PLAN}/claims", body, key=f"k{index}"), status, code)
    url = f"/plans/{PLAN}/claims"
    with server.client() as client:
        text = client.post(url, content=b"{not json", headers={**JSON, "Idempotency-Key": "j"})
        is_problem(text, 400, "BAD_JSON")
        form = client.post(url, content=b"node=x", headers={"Idempotency-Key": "f"})
        is_problem(form, 415, "UNSUPPORTED_MEDIA_TYPE")
        huge = client.post(url, content=b" " * (4 * 1024 * 1024 + 1), headers=JSON)
        is_problem(huge, 413, "BODY_TOO_LARGE")
        chunks = (b" " * 65536 for _ in range(65))  # no Content-Length: counted as it comes
        chunked = client.post(url, content=chunks, headers={**JSON, "Idempotency-Key": "c"})
        is_problem(chunked, 413, "BODY_TOO_LARGE")
        deep = "[" * 100_000 + "]" * 100_000  # deeper than Python's JSON parser goes
        nested = client.post(url, content=deep, headers={**JSON, "Idempotency-Key": "d"})
        is_problem(nested, 400, "BAD_JSON")
        good = {"expected_plan_version": 1, "node": SCHEMA, "by": "a"}
        for key, code in (
            ("x" * 201, "IDEMPOTENCY_KEY_INVALID"),
            ("a\tb", "IDEMPOTENCY_KEY_INVALID"),
        ):
            sent = client.post(url, json=good, headers={"Idempotency-Key": key})
            is_problem(sent, 400, code)
        unsent = client.post(url, json=good)
        is_problem(unsent, 400, "IDEMPOTENCY_KEY_MISSING")
    with PlanGraph.open(jwt) as graph:
        assert graph.store.events(kinds=["claim"]) == []
        assert graph.store.kept_answer("k0") is None


def test_a_plan_that_lint_rejects_is_a_conflict_to_read_but_may_be_patched(jwt: Path, serve):
    server = serve(jwt)
    ask = {"expected_plan_version": 1, "node": SCHEMA, "by": "agent"}
    early = server.post(f"/plans/{PLAN}/claims", ask, key="early")
    assert early.json()["verdict"] == "PASSED"
    plan = jwt / "plangraph.yaml"
    plan.write_text(
        plan.read_text()
        + "  - {from: step-token-endpoint, to: step-user-schema, type: requires}\n",
        encoding="utf-8",
    )
    assert "CYCLE" in is_problem(server.get(f"/plans/{PLAN}/status"), 409, "PLAN_INVALID")["detail"]
    replay = server.post(f"/plans/{PLAN}/claims", ask, key="early")  # the first answer still
    assert replay.status_code == 200 and replay.json() == early.json()
    is_problem(server.post(f"/plans/{PLAN}/claims", ask, key="late"), 409, "PLAN_INVALID")
    with PlanGraph.open(jwt) as graph:
        version = graph.plan_ref().version
    repair = {"plangraph_patch": 1, "edges": {"remove": [
        {"from": "step-token-endpoint", "to": SCHEMA, "type": "requires"}]}}  # fmt: skip
    body = {"expected_plan_version": version, "by": "person", "patch": repair}
    fixed = server.post(f"/plans/{PLAN}/changes", body, key="repair")
    assert fixed.status_code == 200 and fixed.json()["outcome"] == "applied", fixed.text
    assert server.get(f"/plans/{PLAN}/status").status_code == 200


def test_the_openapi_document_in_docs_is_current() -> None:
    printed = plangraph(ROOT, "serve", "--openapi")
    assert printed.code == 0, printed.err
    kept = (ROOT / "docs/openapi.json").read_text(encoding="utf-8")
    assert printed.out == kept, "docs/openapi.json is stale: plangraph serve --openapi > it"
    paths = json.loads(kept)["paths"]
    assert set(paths) == {
        "/plans/{plan_id}",
        "/plans/{plan_id}/status",
        "/plans/{plan_id}/next",
        "/plans/{plan_id}/changes",
        "/plans/{plan_id}/evidence",
        "/plans/{plan_id}/impact-analysis",
        "/plans/{plan_id}/verify",
        "/plans/{plan_id}/claims",
    }
    for path in ("/plans/{plan_id}/changes", "/plans/{plan_id}/claims"):
        headers = [p["name"] for p in paths[path]["post"]["parameters"] if p["in"] == "header"]
        assert headers == ["Idempotency-Key"]


def test_without_the_extra_serve_says_how_to_install_it(jwt: Path, tmp_path: Path) -> None:
    blocker = tmp_path / "blocker" / "fastapi"
    blocker.mkdir(parents=True)
    (blocker / "__init__.py").write_text(
        "raise ModuleNotFoundError(\"No module named 'fastapi'\", name='fastapi')\n"
    )
    result = plangraph(jwt, "serve", "--port", "0", env={"PYTHONPATH": str(blocker.parent)})
    assert result.code == 2
    assert "pip install 'pytest-plangraph[server]'" in result.err
    assert "Traceback" not in result.err and result.out == ""


def test_a_port_in_use_or_a_bad_port_is_one_message(jwt: Path) -> None:
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        result = plangraph(jwt, "serve", "--port", str(port))
    assert result.code == 2 and f"cannot listen on 127.0.0.1:{port}" in result.err
    assert "Traceback" not in result.err
    wrong = plangraph(jwt, "serve", "--port", "70000")
    assert wrong.code == 2 and "is not a port" in wrong.err


def test_another_host_than_loopback_is_warned_about(jwt: Path, serve) -> None:
    server = serve(jwt, "--host", "0.0.0.0")
    assert server.get(f"/plans/{PLAN}").status_code == 200
    assert "no authentication" in server.err.read_text()
    quiet = serve(jwt, "--format", "json")
    assert quiet.get(f"/plans/{PLAN}").status_code == 200
    assert "warning" not in quiet.err.read_text()
    said = json.loads(quiet.out.read_text().splitlines()[0])
    assert said == {"format": 1, "url": quiet.url} and quiet.url.startswith("http://127.0.0.1:")


def test_serve_needs_a_repository_with_a_plan(tmp_path: Path) -> None:
    result = plangraph(tmp_path, "serve", "--port", "0", "--root", str(tmp_path))
    assert result.code == 2 and "Traceback" not in result.err, result.err
    assert "plan file not found" in result.err and result.out == ""
