"""The JWT-login sample project, end to end: ``pytest --plangraph``, ``plangraph status``, a
claim refused by ``--plangraph-gate`` for want of an approval, then accepted once approved."""

from __future__ import annotations

import hashlib
import shutil

import pytest
from cli_helpers import plangraph
from conftest import FIXTURES, git
from plugin_helpers import latest, section


def test_the_jwt_login_project_from_run_to_gate(pytester: pytest.Pytester) -> None:
    root = pytester.path
    shutil.copytree(FIXTURES / "jwt-login", root, dirs_exist_ok=True)
    (root / ".gitignore").write_text(".plangraph/\n", encoding="utf-8")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "initial")

    result = pytester.runpytest("--plangraph")
    result.assert_outcomes(passed=3)
    for record in latest(root).values():
        for path, digest in record.subjects.items():
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
