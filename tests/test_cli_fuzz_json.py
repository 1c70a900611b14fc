"""JSON nested too deep for the parser (100,000 ``[``) wherever plangraph reads JSON: an event
edited so is a damaged event that audit reports, a cache file so is a cache miss (the answer is
the one without it), a plan file so is a plan error, each without a traceback."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_helpers import plangraph
from cli_state_helpers import STORE
from repo_helpers import edit_store

DEEP = "[" * 100_000


def test_a_deeply_nested_event_payload_is_a_damaged_event(jwt: Path) -> None:
    edit_store(jwt / STORE, f"UPDATE events SET payload = '{DEEP}' WHERE seq = 1")
    audit = plangraph(jwt, "audit")
    assert audit.code == 1 and "Traceback" not in audit.err, audit.err
    assert "CONTENT_TAMPERED: event 1" in audit.out and "cannot be read" in audit.out
    for command in (("history", "step-user-schema"), ("export",)):
        result = plangraph(jwt, *command)
        assert result.code == 2 and "Traceback" not in result.err, result.err
        assert "event 1 of the store" in result.err and "nested too deeply" in result.err


def test_a_deeply_nested_cache_file_is_a_cache_miss(jwt: Path) -> None:
    commands = [("status", "--format", "json"), ("status",), ("impact",), ("lint",)]
    answers = [plangraph(jwt, *command) for command in commands]
    kept = sorted(p for p in (jwt / ".plangraph" / "cache").rglob("*") if p.is_file())
    assert len(kept) >= 5, kept  # the kept answers, the validated plan, the schemas read
    for path in kept:
        original = path.read_bytes()
        path.write_text(DEEP, encoding="utf-8")
        for command, answer in zip(commands, answers, strict=True):
            result = plangraph(jwt, *command)
            assert "Traceback" not in result.err, (path, result.err)
            assert (result.code, result.out) == (answer.code, answer.out), path
        path.write_bytes(original)


@pytest.mark.parametrize(
    ("name", "says"),
    [("deep.json", "values nested too deeply to read"), ("deep.yaml", "nesting depth")],
)
def test_a_deeply_nested_plan_file_is_a_plan_error(jwt: Path, name: str, says: str) -> None:
    (jwt / name).write_text(DEEP, encoding="utf-8")
    for command in (("lint", name), ("status", "--plan", name)):
        result = plangraph(jwt, *command)
        assert result.code == 2, result.err
        assert result.err.startswith(f"plangraph: error: {name}:") and says in result.err
        assert "Traceback" not in result.err


def test_a_plan_file_with_a_deep_value_in_a_field_is_a_plan_error(jwt: Path) -> None:
    text = json.dumps({"plan": "auth-login", "title": "@", "nodes": []})
    (jwt / "deep.json").write_text(text.replace('"@"', "[" * 900 + "]" * 900), encoding="utf-8")
    result = plangraph(jwt, "lint", "deep.json")
    assert result.code == 2 and "Traceback" not in result.err, result.err
    assert result.err.startswith("plangraph: error: deep.json")
