"""The Python API agent runtimes use: PlanGraph.open / status / claim / approve / record."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_plangraph import PlanGraph
from pytest_plangraph.errors import UsageError
from pytest_plangraph.vcs.environment import now, run_info

TOKEN = "step-token-endpoint"


def test_an_agent_claim_is_refused_then_accepted_from_evidence(project) -> None:
    root = project("jwt-login")
    with PlanGraph.open(str(root)) as graph:  # a str is accepted as well as a Path
        assert graph.root == Path(root).resolve()
        assert graph.status().nodes[TOKEN].status == "pending"  # its prerequisite is not done
        graph.verify()
        assert graph.status().nodes[TOKEN].status == "ready"
        refused = graph.claim(TOKEN, by="agent-42")
        assert refused.verdict == "FAILED"
        assert {r.code for r in refused.reasons} == {"CRITERION_MISSING", "APPROVAL_MISSING"}

        run = run_info(now(), now(), None)
        snapshot = graph.snapshot()
        records = [
            graph.make_evidence(
                TOKEN,
                criterion,
                outcome="passed",
                reason=None,
                details={
                    "tests": [{"nodeid": f"tests/test_login.py::{criterion}", "outcome": "passed"}]
                },
                subjects={},
                run=run,
                recorded_by="agent-runtime",
                snapshot=snapshot,
            )
            for criterion in ("ac-http-200", "ac-invalid-401")
        ]
        stored = graph.record(records)
        assert [e.payload["id"] for e in stored] == [r.id for r in records]
        assert "src/auth/login.py" in records[0].subjects
        assert "src/auth/user_schema.json" in records[0].subjects  # consumed upstream output

        graph.approve(TOKEN, "ac-security-review", by="security-lead", note="reviewed")
        accepted = graph.claim(TOKEN, by="agent-42")
        assert accepted.verdict == "PASSED"
        assert set(accepted.evidence) >= {r.id for r in records}
        assert graph.status().nodes["objective-auth"].status == "completed"


def test_unknown_names_are_usage_errors(project) -> None:
    with PlanGraph.open(project("jwt-login")) as graph:
        with pytest.raises(UsageError, match="unknown node 'nope'"):
            graph.claim("nope", by="agent")
        with pytest.raises(UsageError, match="only approval criteria"):
            graph.approve(TOKEN, "ac-http-200", by="someone")
