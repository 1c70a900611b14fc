"""The JSON Schema of the plan format: generated, printed, and kept in sync with docs/."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import yaml

from pytest_plangraph.plan.boundary import plan_json_schema

DOC = Path(__file__).resolve().parents[1] / "docs" / "plangraph.schema.json"
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def test_docs_copy_matches_the_models():
    generated = json.dumps(plan_json_schema(), indent=2, ensure_ascii=False) + "\n"
    assert DOC.read_text(encoding="utf-8") == generated, (
        "docs/plangraph.schema.json is out of date: run "
        "`.venv/bin/plangraph schema > docs/plangraph.schema.json`"
    )


def test_the_schema_accepts_the_sample_plans_and_rejects_typos():
    schema = plan_json_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    for name in ("jwt-login", "seed-000"):
        data = yaml.safe_load((FIXTURES / name / "plangraph.yaml").read_text(encoding="utf-8"))
        assert list(validator.iter_errors(data)) == []
    data["nodes"][0]["colour"] = "red"
    assert [e.validator for e in validator.iter_errors(data)] == ["additionalProperties"]
