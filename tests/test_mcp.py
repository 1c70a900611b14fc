"""``plangraph mcp``: the SDK's own client over a real stdio session with the installed command,
in a real git repository with a real store, evidence recorded by a real ``pytest --plangraph``
run. Each tool answers with the JSON of the matching ``--format json`` command."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from cli_helpers import plangraph
from mcp import Client
from mcp_helpers import as_json, call, read, session
from plugin_helpers import make_project
from repo_helpers import git

from pytest_plangraph.store.sqlite import Store

pytest_plugins = ["pytester"]

PLAN = """
plangraph: 1
plan: mcp-demo
nodes:
  - id: base
    outputs: [src/a.py]
    acceptance:
      - id: ac-tests
        verifier: {type: test, tests: ["tests/test_a.py::test_base"]}
  - id: top
    acceptance:
      - id: ac-review
        verifier: {type: approval}
edges:
  - {from: base, to: top, type: requires}
"""

TESTS = """
def test_base():
    assert True
"""

TOOLS = {"status", "explain", "next", "impact", "claim", "propose_patch"}


@pytest.fixture
def repo(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> Path:
    # the per-user cache outside the repository (pytester makes the repository HOME), where the
    # server's is too (mcp_helpers)
    monkeypatch.setenv("XDG_CACHE_HOME", str(pytester.path.parent / "user-cache"))
    return make_project(pytester, plan=PLAN, tests=TESTS)


def _cli(root: Path, *args: str) -> object:
    result = plangraph(root, *args, "--format", "json")
    assert result.code in (0, 1), result.err
    return result.json()


def _kinds(root: Path) -> list[str]:
    with Store.open(root / ".plangraph" / "store.db") as store:
        return [e.kind for e in store.events()]


def _patch(criterion: str) -> str:
    return (
        "plangraph_patch: 1\n"
        "criteria:\n"
        f"  add: [{{node: top, criterion: {{id: {criterion}, verifier: {{type: approval}}}}}}]\n"
    )


def test_tools_and_resources_are_listed(repo: Path) -> None:
    async def run() -> None:
        async with session(repo) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            assert set(tools) == TOOLS  # nothing that records evidence or approvals
            assert tools["claim"].input_schema["required"] == ["node", "by"]
            assert set(tools["propose_patch"].input_schema["required"]) == {
                "patch",
                "by",
                "expected_plan_version",
            }
            resources = {str(r.uri): r for r in (await client.list_resources()).resources}
            assert set(resources) == {"plangraph://plan", "plangraph://status"}
            assert resources["plangraph://plan"].mime_type == "application/yaml"

    anyio.run(run)


def test_an_agent_reads_claims_and_is_judged_by_recorded_evidence(
    repo: Path, pytester: pytest.Pytester
) -> None:
    async def run() -> None:
        async with session(repo) as client:
            status = await call(client, "status")
            assert not status.is_error
            assert status.data == _cli(repo, "status")
            # the text is what the command prints, byte for byte
            assert status.text == plangraph(repo, "status", "--format", "json").out.rstrip("\n")
            assert as_json(await read(client, "plangraph://status")) == status.data
            assert await read(client, "plangraph://plan") == (repo / "plangraph.yaml").read_text()

            ready = await call(client, "next")
            assert ready.data == _cli(repo, "next")
            assert [n["node"] for n in ready.data["next"]] == ["base"]
            assert ready.data["next"][0]["steps"][0]["tests"] == ["tests/test_a.py::test_base"]
            explained = await call(client, "explain", node="top")
            assert explained.data == _cli(repo, "explain", "top")
            assert explained.data["waiting_for"] == ["base"]

            refused = await call(client, "claim", node="base", by="agent-1")
            assert not refused.is_error  # a refused claim is an answer, not an error
            assert refused.data["verdict"] == "FAILED"
            assert refused.data["reasons"][0]["code"] == "CRITERION_MISSING"

            ci = pytester.runpytest_subprocess("--plangraph")  # CI records evidence
            ci.assert_outcomes(passed=1)

            accepted = await call(client, "claim", node="base", by="agent-1")
            assert (accepted.is_error, accepted.data["verdict"]) == (False, "PASSED")
            assert accepted.data["status"] == "completed"
            assert accepted.data["evidence"]
            assert [n["node"] for n in (await call(client, "next")).data["next"]] == ["top"]
            # the claim was recorded as the command records it
            assert _cli(repo, "history", "base")["events"][-1]["by"] == "agent-1"

    anyio.run(run)
    kinds = _kinds(repo)
    # the session recorded two claims and nothing else: the evidence came from the run
    assert kinds.count("claim") == 2
    assert set(kinds) == {"claim", "evidence"}


def test_propose_patch_twice_then_the_budget_is_spent(repo: Path) -> None:
    async def run() -> None:
        async with session(repo) as client:
            assert (await call(client, "next")).data["plan"]["version"] == 0  # no store yet
            claimed = await call(client, "claim", node="top", by="agent-1")  # makes the store
            assert claimed.data["verdict"] == "FAILED"
            version = (await call(client, "next")).data["plan"]["version"]
            assert version == 1
            for round_, name in enumerate(("ac-one", "ac-two"), start=1):
                applied = await call(
                    client, "propose_patch", patch=_patch(name), by="agent-1",
                    expected_plan_version=version,
                )  # fmt: skip
                assert not applied.is_error, applied.text
                assert applied.data["outcome"] == "applied"
                assert applied.data["version_before"] == version
                version = applied.data["version_after"]
                assert version == 1 + round_
            assert "ac-two" in (repo / "plangraph.yaml").read_text()

            spent = await call(
                client, "propose_patch", patch=_patch("ac-three"), by="agent-1",
                expected_plan_version=version,
            )  # fmt: skip
            assert not spent.is_error
            assert (spent.data["outcome"], spent.data["code"]) == (
                "refused",
                "REPLAN_BUDGET_EXHAUSTED",
            )
            assert spent.data["version_after"] == version
            assert "ac-three" not in (repo / "plangraph.yaml").read_text()
            # a patch as its JSON object goes through the same budget
            as_object = {"plangraph_patch": 1, "nodes": {"remove": ["top"]}}
            again = await call(
                client, "propose_patch", patch=as_object, by="agent-1",
                expected_plan_version=version,
            )  # fmt: skip
            assert again.data["code"] == "REPLAN_BUDGET_EXHAUSTED"

    anyio.run(run)


def test_a_stale_plan_version_is_refused_and_nothing_changes(repo: Path) -> None:
    async def run() -> None:
        async with session(repo) as client:
            await call(client, "claim", node="top", by="agent-1")  # the store: plan version 1
            before = (repo / "plangraph.yaml").read_bytes()
            patched = await call(
                client, "propose_patch", patch=_patch("ac-x"), by="agent-1",
                expected_plan_version=7,
            )  # fmt: skip
            assert patched.is_error
            assert patched.data["reason"] == "PLAN_VERSION_CONFLICT"
            assert patched.text.startswith("plangraph: error: PLAN_VERSION_CONFLICT: ")
            assert "\n" not in patched.text
            assert (repo / "plangraph.yaml").read_bytes() == before
            claimed = await call(client, "claim", node="top", by="agent-1", expected_plan_version=2)
            assert (claimed.is_error, claimed.data["reason"]) == (True, "PLAN_VERSION_CONFLICT")

    anyio.run(run)
    assert _kinds(repo).count("claim") == 1  # the refused write recorded nothing


BAD_INPUT = [
    # (tool, arguments, a part of the message)
    ("explain", {"node": "nowhere"}, "unknown node 'nowhere'"),
    ("explain", {"node": 5}, "explain: argument node: Input should be a valid string"),
    ("explain", {}, "explain: argument node: Field required"),
    ("claim", {"node": "base", "by": " "}, "by"),
    ("claim", {"node": "base", "by": "a\nb"}, "control characters"),
    ("claim", {"node": "base", "by": "a", "expected_plan_version": -1}, "expected_plan_version"),
    ("impact", {"since": "no-such-rev"}, "unknown revision 'no-such-rev'"),
    ("impact", {"since": "--output=x"}, "--output=x"),
    ("propose_patch", {"patch": "[", "by": "a", "expected_plan_version": 1}, "YAML"),
    ("propose_patch", {"patch": 3, "by": "a", "expected_plan_version": 1}, "argument patch"),
    ("propose_patch", {"patch": {}, "by": "a", "expected_plan_version": 1}, "patch"),
]


def test_bad_input_is_a_tool_error_and_the_server_goes_on(repo: Path) -> None:
    async def run() -> None:
        async with session(repo) as client:
            for tool, arguments, message in BAD_INPUT:
                bad = await call(client, tool, **arguments)
                assert bad.is_error, (tool, arguments)
                assert bad.text.startswith("plangraph: error: "), bad.text
                assert message in bad.text, bad.text
                assert "\n" not in bad.text.strip(), bad.text
                assert "Traceback" not in bad.text
            # several problems of one patch: one line each, as the command prints them
            fields = await call(
                client, "propose_patch", patch="x: 1", by="a", expected_plan_version=1
            )
            assert fields.is_error and "unknown field 'x'" in fields.text
            assert "Traceback" not in fields.text
            # the same session answers the next call
            assert (await call(client, "status")).data["format"] == 1

    anyio.run(run)
    assert not (repo / "x").exists()
    assert not (repo / ".plangraph" / "store.db").exists() or _kinds(repo) == []


def test_impact_since_a_revision(repo: Path) -> None:
    (repo / "src" / "a.py").write_text("A = 2\n")

    async def run() -> None:
        async with session(repo) as client:
            since = await call(client, "impact", since="HEAD")
            assert since.data == _cli(repo, "impact", "--since", "HEAD")
            assert [c["path"] for c in since.data["changed"]] == ["src/a.py"]
            now = await call(client, "impact")
            assert now.data == _cli(repo, "impact")

    anyio.run(run)
    assert not (repo / ".plangraph" / "store.db").exists()  # reading made no store


def test_a_server_that_cannot_open_the_repository_does_not_start(tmp_path: Path) -> None:
    missing = plangraph(tmp_path, "mcp", "--root", str(tmp_path / "nowhere"))
    assert missing.code == 2
    assert "does not exist" in missing.err and "Traceback" not in missing.err
    (tmp_path / "plangraph.yaml").write_text("plangraph: 1\nplan: x\nnodes: [{id: a}, {id: a}]\n")
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    broken = plangraph(tmp_path, "mcp")
    assert broken.code == 2
    assert "DUPLICATE_ID" in broken.err and "Traceback" not in broken.err


def test_without_the_extra_the_command_says_how_to_install_it(repo: Path) -> None:
    # the SDK made unimportable, as in an installation without pytest-plangraph[mcp]
    code = (
        "import sys; sys.modules['mcp'] = None; sys.argv = ['plangraph', 'mcp'];"
        "from pytest_plangraph.cli import run; run()"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=repo, capture_output=True, text=True, check=False
    )
    assert proc.returncode == 2
    assert "pip install 'pytest-plangraph[mcp]'" in proc.stderr
    assert proc.stderr.startswith("plangraph: error: ")
    assert "Traceback" not in proc.stderr
    assert proc.stdout == ""


def test_a_file_name_that_is_not_utf8_is_shown_escaped(repo: Path) -> None:
    # the system keeps such a name as lone surrogates, which no JSON-RPC answer can carry:
    # unescaped, the answer would never be written and the client would wait forever
    name = b"tests/\xff_data.py"
    (repo / "tests").joinpath(name.decode("utf-8", "surrogateescape")[6:]).write_text("X = 1\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "a file name of undecodable bytes")
    (repo / "tests").joinpath(name.decode("utf-8", "surrogateescape")[6:]).write_text("X = 2\n")

    async def run() -> None:
        async with session(repo) as client:
            since = await call(client, "impact", since="HEAD")
            assert not since.is_error
            assert [c["path"] for c in since.data["changed"]] == ["tests/\\xff_data.py"]
            assert "tests/\\\\xff_data.py" in since.text

    anyio.run(run)


def test_text_that_is_not_utf8_is_refused_in_process(repo: Path) -> None:
    # over stdio the SDK's transport drops such a request before any tool sees it; a client
    # in the same process hands the text over as it is
    from pytest_plangraph.mcp.answers import ServedRepository
    from pytest_plangraph.mcp.server import build_server

    server = build_server(ServedRepository.resolve(repo, None, None))

    async def run() -> None:
        async with Client(server) as client:
            bad = await call(client, "explain", node="\ud800")
            assert bad.is_error
            assert bad.text.startswith("plangraph: error: explain: argument node is not valid")
            patch = {"plangraph_patch": 1, "note": "\udcff"}
            bad = await call(client, "propose_patch", patch=patch, by="a", expected_plan_version=1)
            assert "argument patch.note is not valid UTF-8" in bad.text
            assert (await call(client, "next")).data["next"][0]["node"] == "base"

    anyio.run(run)


def test_a_named_store_that_is_not_there_is_read_by_no_tool(repo: Path) -> None:
    async def run() -> None:
        async with session(repo, "--store", "misspelt.db") as client:
            for tool in ("status", "next"):
                missing = await call(client, tool)
                assert missing.is_error
                assert "there is no store at" in missing.text
            # a claim writes: it makes the store, as `plangraph claim --store` does
            claimed = await call(client, "claim", node="base", by="agent-1")
            assert claimed.data["verdict"] == "FAILED"
            assert not (await call(client, "status")).is_error

    anyio.run(run)
    assert (repo / "misspelt.db").exists()
