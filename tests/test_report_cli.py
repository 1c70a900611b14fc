"""``plangraph status --format markdown`` and ``plangraph report`` (markdown, dot, text, json,
html) on the JWT-login sample with real evidence in a real store and a real git history."""

from __future__ import annotations

import json
import re
from pathlib import Path

from cli_helpers import plangraph, plangraph_main
from report_helpers import jwt_verified, make_stale


def _statuses(root: Path) -> dict[str, str]:
    status = plangraph_main(root, "status", "--format", "json").json()
    return {n["id"]: n["status"] for n in status["nodes"]}


def test_status_markdown_has_the_table_the_fixes_and_a_mermaid_graph(tmp_path: Path) -> None:
    root = jwt_verified(tmp_path / "jwt")
    statuses = _statuses(root)
    result = plangraph_main(root, "status", "--format", "markdown")
    assert result.code == 0, result.err
    lines = result.out.splitlines()
    assert lines[0] == "## plangraph: auth-login v1 — Basic JWT login — no RBAC, OAuth or 2FA"
    for node, status in statuses.items():
        assert any(line.startswith(f"| `{node}` |") and f"**{status}**" in line for line in lines)
    mermaid = result.out.split("```mermaid\n", 1)[1].split("```", 1)[0]
    declared = re.findall(r'^  (n\d+)\["([^"]+)"\]:::st_(\w+)$', mermaid, re.M)
    assert {label.split("<br/>")[0]: status for _, label, status in declared} == statuses
    assert "n1 ==>|consumes| n2" in mermaid
    assert re.findall(r"classDef st_(\w+) fill:#[0-9a-f]{6}", mermaid)[:1] == ["completed"]
    pytest_fix = "`pytest --plangraph tests/test_login.py::test_login_success`"
    assert any(pytest_fix in line for line in lines)
    approve = "`plangraph approve step-token-endpoint/ac-security-review --by NAME --role security`"
    assert any(approve in line for line in lines)


def test_report_markdown_chains_stale_nodes_back_to_the_commit(tmp_path: Path) -> None:
    root = jwt_verified(tmp_path / "jwt")
    short = make_stale(root)
    result = plangraph_main(root, "report", "--format", "markdown")
    assert result.code == 0, result.err
    stale = result.out.split("### Stale, and why", 1)[1].split("###", 1)[0]
    assert "- `step-user-schema`" in stale
    assert f"ARTIFACT\\_CHANGED src/auth/user\\_schema.json \\(commit {short}\\)" in stale
    assert "### Audit" in result.out
    assert "- **stale**: 1 finding(s)" in result.out


def test_report_text_json_and_dot_name_every_node(tmp_path: Path) -> None:
    root = jwt_verified(tmp_path / "jwt")
    statuses = _statuses(root)
    text = plangraph_main(root, "report", "--no-audit")
    assert text.code == 0, text.err
    for node, status in statuses.items():
        assert re.search(rf"^{node}\s+\w+\s+{status}\s", text.out, re.M), text.out
    data = plangraph_main(root, "report", "--format", "json", "--no-audit").json()
    assert data["format"] == 1 and data["audit"] is None
    assert {n["id"]: n["status"] for n in data["nodes"]} == statuses
    schema_criterion = data["nodes"][1]["criteria"][0]
    assert schema_criterion["evidence"]["outcome"] == "passed"
    assert set(schema_criterion["evidence"]["subjects"]) == {
        "src/auth/user_schema.json",
        "fixtures/user.json",
    }
    dot = plangraph_main(root, "report", "--format", "dot", "--no-audit").out
    assert dot.startswith('digraph "auth-login" {') and dot.rstrip().endswith("}")
    for node in statuses:
        assert re.search(rf'^  "{node}" \[label="{node}\\n', dot, re.M)
    assert '"step-user-schema" -> "step-token-endpoint" [label="consumes", style=bold' in dot


def test_report_html_is_one_file_with_no_outside_reference(tmp_path: Path) -> None:
    root = jwt_verified(tmp_path / "jwt")
    out = tmp_path / "report.html"
    result = plangraph_main(root, "report", "--format", "html", "--output", str(out))
    assert result.code == 0 and result.out == "", result.err
    page = out.read_text(encoding="utf-8")
    assert "default-src 'none'" in page
    references = re.findall(r'(?:src|href)\s*=\s*"([^"]*)"', page)
    assert references == []
    assert re.findall(r"https?://[^\s\"']+", page) == ["http://www.w3.org/2000/svg"]
    for node in _statuses(root):
        assert f'<g class="node" data-node="{node}"' in page


def test_an_output_over_the_plan_or_the_store_is_refused(tmp_path: Path) -> None:
    root = jwt_verified(tmp_path / "jwt")
    plan_before = (root / "plangraph.yaml").read_bytes()
    store = root / ".plangraph/store.db"
    store_before = store.read_bytes()
    for target in ("plangraph.yaml", ".plangraph/store.db", ".plangraph/store.db-wal"):
        result = plangraph(root, "report", "--format", "html", "--output", target)
        assert result.code == 2, result
        assert result.err.startswith(f"plangraph: error: --output {target} is the ")
        assert "Traceback" not in result.err
    assert (root / "plangraph.yaml").read_bytes() == plan_before
    assert store.read_bytes() == store_before
    missing = plangraph(root, "report", "--output", "no/such/folder/r.md")
    assert missing.code == 2 and "cannot write the report to no/such/folder/r.md" in missing.err
    folder = plangraph(root, "report", "--output", "src")
    assert folder.code == 2 and "is a directory" in folder.err


def test_a_report_without_a_store_makes_none(tmp_path: Path) -> None:
    root = jwt_verified(tmp_path / "jwt")
    (root / ".plangraph/store.db").unlink()
    for name in ("store.db-wal", "store.db-shm"):
        (root / ".plangraph" / name).unlink(missing_ok=True)
    result = plangraph_main(root, "report", "--format", "markdown")
    assert result.code == 0, result.err
    assert "| `step-user-schema` | step | **ready** |" in result.out
    assert not (root / ".plangraph/store.db").exists()
    assert json.loads(plangraph_main(root, "report", "--format", "json").out)["version"] == 0


def test_an_approval_is_shown_as_the_evidence_of_its_criterion(tmp_path: Path) -> None:
    root = jwt_verified(tmp_path / "jwt")
    ref = "step-token-endpoint/ac-security-review"
    assert plangraph_main(root, "approve", ref, "--by", "sec-lead").code == 0
    data = plangraph_main(root, "report", "--format", "json", "--no-audit").json()
    node = next(n for n in data["nodes"] if n["id"] == "step-token-endpoint")
    review = next(c for c in node["criteria"] if c["id"] == "ac-security-review")
    assert review["state"] == "valid"
    assert review["evidence"]["kind"] == "approval"
    assert review["evidence"]["by"] == "sec-lead"
    assert review["evidence"]["outcome"] == "approved as security"
    assert not any("approve" in fix for fix in node["fixes"])


def test_an_output_linked_to_the_plan_is_refused(tmp_path: Path) -> None:
    root = jwt_verified(tmp_path / "jwt")
    link = tmp_path / "innocent.html"
    link.symlink_to(root / "plangraph.yaml")
    before = (root / "plangraph.yaml").read_bytes()
    result = plangraph(root, "report", "--format", "html", "--output", str(link))
    assert result.code == 2 and "is the plan file" in result.err
    assert (root / "plangraph.yaml").read_bytes() == before
