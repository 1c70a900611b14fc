"""The JWT-login sample project, end to end: ``pytest --plangraph``, ``plangraph status``, a
claim refused by ``--plangraph-gate`` for want of an approval, then accepted once approved."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pytest
from cli_helpers import plangraph
from conftest import FIXTURES, git
from plugin_helpers import evidence, latest, section

from pytest_plangraph.plan.evidence import ABSENT
from pytest_plangraph.vcs.quotes import CollectValues
from pytest_plangraph.vcs.testglob import is_collect_key


def _jwt(pytester: pytest.Pytester) -> Path:
    """A copy of the JWT-login sample in a fresh git repository at ``pytester.path``."""
    root = pytester.path
    shutil.copytree(FIXTURES / "jwt-login", root, dirs_exist_ok=True)
    (root / ".gitignore").write_text(".plangraph/\n", encoding="utf-8")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "initial")
    return root


def test_the_jwt_login_project_from_run_to_gate(pytester: pytest.Pytester) -> None:
    root = _jwt(pytester)

    result = pytester.runpytest("--plangraph")
    result.assert_outcomes(passed=3)
    for record in latest(root).values():
        for path, digest in record.subjects.items():
            if digest == ABSENT:  # bound absent: no file is there
                assert not (root / path).exists(), path
                continue
            if is_collect_key(path):  # what pytest could collect under a folder
                assert digest == CollectValues(str(root)).value(path), path
                continue
            assert digest == hashlib.sha256((root / path).read_bytes()).hexdigest(), path

    table = [line.split() for line in section(result.stdout.str())[2:5]]
    status = plangraph(root, "status", "--format", "json").json()
    assert table == [
        [n["id"], n["status"], f"{n['satisfied']}/{n['required_count']}" if n["criteria"] else "-"]
        for n in status["nodes"]
    ]
    assert table[2] == ["step-token-endpoint", "awaiting_approval", "2/3"]

    assert plangraph(root, "claim", "step-token-endpoint", "--by", "agent-7").code == 1
    refused = pytester.runpytest("--plangraph", "--plangraph-gate")
    assert refused.ret == 1
    refusal = [line for line in section(refused.stdout.str()) if line.startswith("gate refused")]
    assert len(refusal) == 1 and "ac-security-review" in refusal[0]

    approve = ["approve", "step-token-endpoint/ac-security-review", "--by", "security-lead"]
    assert plangraph(root, *approve).code == 0
    accepted = pytester.runpytest("--plangraph", "--plangraph-gate")
    assert accepted.ret == 0
    assert section(accepted.stdout.str())[-1] == (
        "plangraph gate: every claimed or required node is completed"
    )


def test_a_run_stores_upstream_records_first_so_stale_reasons_name_real_culprits(
    pytester: pytest.Pytester,
) -> None:
    root = _jwt(pytester)
    pytester.runpytest("--plangraph").assert_outcomes(passed=3)
    schema = root / "src/auth/user_schema.json"
    schema.write_text(schema.read_text().replace('"minLength": 3', '"minLength": 4'))
    pytester.runpytest("--plangraph").assert_outcomes(passed=3)  # every record fresh again
    kinds = plangraph(root, "history", "step-token-endpoint", "--format", "json").json()
    assert len(kinds["events"]) == 4  # two runs, two test criteria each
    # the schema's record of the second run comes before the token endpoint's records of it
    order = [e.node for e in evidence(root)[-3:]]
    assert order == ["step-user-schema", "step-token-endpoint", "step-token-endpoint"]
    plan = root / "plangraph.yaml"
    plan.write_text(plan.read_text().replace("gets 200 and a token", "gets 200 and a JWT"))
    status = plangraph(root, "status", "--format", "json").json()
    [token] = [n for n in status["nodes"] if n["id"] == "step-token-endpoint"]
    reasons = {c["id"]: [r["code"] for r in c["reasons"]] for c in token["criteria"]}
    # only the edited criterion and the node's own inputs changed; upstream did not
    assert reasons["ac-http-200"] == ["CRITERION_CHANGED"]
    assert reasons["ac-invalid-401"] == ["INPUT_CHANGED"]


def test_a_schema_file_deleted_since_is_a_warning_and_a_failed_criterion(
    pytester: pytest.Pytester,
) -> None:
    root = _jwt(pytester)
    git(root, "rm", "-q", "src/auth/user_schema.json")
    result = pytester.runpytest_subprocess("--plangraph")
    result.assert_outcomes(passed=2, failed=1)
    assert "plangraph: warning: plangraph.yaml:15:9: error VERIFIER_CONFIG" in result.stderr.str()
    record = latest(root)["step-user-schema/ac-schema-valid"]
    assert (record.outcome, record.reason) == ("error", "SCHEMA_MISSING")
