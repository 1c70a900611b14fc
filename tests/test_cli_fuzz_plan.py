"""Plan files with huge offending values through the real ``plangraph lint`` and ``status``:
the message quotes at most 80 characters of the value (its start, ``…`` and its length)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import plangraph

from pytest_plangraph.errors import QUOTE_LIMIT

LONG = "Q" * 5000


def _plan(**changes: Any) -> dict[str, Any]:
    node: dict[str, Any] = {
        "id": "step-a",
        "kind": "step",
        "acceptance": [{"id": "ac-a", "verifier": {"type": "approval", "role": "security"}}],
    }
    node.update(changes.pop("node", {}))
    return {"plangraph": 1, "plan": "fuzz", "nodes": [node], **changes}


@pytest.mark.parametrize(
    ("plan", "says"),
    [
        (_plan(node={"kind": LONG}), "nodes[0].kind: expected 'objective', 'step' or"),
        (_plan(plangraph=LONG), "plangraph: expected the whole number 1, got str"),
        (_plan(node={LONG: 1}), "unknown field"),
        (_plan(node={"id": "step-!" + "Q" * 190}), "is not a valid id"),
        (_plan(node={"max_retry": [LONG]}), "nodes[0].max_retry: expected a whole number"),
    ],
    ids=["kind", "format-version", "unknown-field", "bad-id", "max-retry-list"],
)
def test_a_plan_error_quotes_at_most_80_characters_of_the_value(
    tmp_path: Path, plan: dict[str, Any], says: str
) -> None:
    (tmp_path / "plan.json").write_text(json.dumps(plan), encoding="utf-8")
    for command in (("lint", "plan.json"), ("status", "--plan", "plan.json")):
        result = plangraph(tmp_path, *command)
        assert result.code == 2 and "Traceback" not in result.err, result.err
        assert says in result.err and len(result.err) < 400, result.err
        quotes = re.findall(r"'[^']*?(?:'|… \([\d,]+ characters\))", result.err)
        assert any("QQQ" in quote for quote in quotes), result.err
        assert all(len(quote) <= QUOTE_LIMIT for quote in quotes), quotes


@pytest.mark.parametrize(
    ("node", "code"),
    [
        ({"acceptance": [{"id": "ac-a", "verifier": {"type": LONG}}]}, "UNKNOWN_VERIFIER"),
        ({"parent": "step-" + "q" * 190}, "MISSING_DEP"),
        (
            {"acceptance": [{"id": "ac-a", "verifier": {"type": "test", "tests": [LONG]}}]},
            "TESTS_NOT_FOUND",
        ),
    ],
    ids=["verifier-type", "parent", "test-pattern"],
)
def test_a_lint_finding_quotes_at_most_80_characters_of_the_value(
    tmp_path: Path, node: dict[str, Any], code: str
) -> None:
    (tmp_path / "plan.json").write_text(json.dumps(_plan(node=node)), encoding="utf-8")
    result = plangraph(tmp_path, "lint", "plan.json", "--format", "json")
    assert "Traceback" not in result.err, result.err
    findings = [f for f in result.json()["findings"] if f["code"] == code]
    assert findings, result.out
    for finding in findings:
        quotes = re.findall(r"'[^']*?(?:'|… \([\d,]+ characters\))", finding["hint"])
        assert any("qqq" in q.lower() for q in quotes), finding["hint"]
        assert all(len(quote) <= QUOTE_LIMIT for quote in quotes), quotes
        assert len(finding["hint"]) < 400, finding["hint"]  # the path is cut too


def test_a_file_name_too_long_for_the_system_is_cut_in_the_message(tmp_path: Path) -> None:
    result = plangraph(tmp_path, "lint", "Q" * 5000)
    assert result.code == 2 and "Traceback" not in result.err, result.err
    assert result.err.startswith("plangraph: error: File name too long: "), result.err
    assert "… (5," in result.err and len(result.err) < 200, result.err
