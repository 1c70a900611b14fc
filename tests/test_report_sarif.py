"""``plangraph lint --format sarif``: every lint fixture's findings as SARIF 2.1.0, validated
against the parts of the standard it uses (``sarif_schema``), each result at the plan's line."""

from __future__ import annotations

import copy
import shutil
from pathlib import Path

import jsonschema
import pytest
from cli_helpers import plangraph, plangraph_main
from conftest import FIXTURES
from repo_helpers import git
from sarif_schema import SARIF_SUBSET

from pytest_plangraph.lint.findings import LINT_CODES
from pytest_plangraph.report.sarif import split_location

CASES = sorted(p.name for p in (FIXTURES / "lint").glob("*.yaml"))


@pytest.fixture(scope="module")
def lint_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The lint fixtures in one git repository, with their plans under ``plans/``."""
    root = tmp_path_factory.mktemp("lint")
    shutil.copytree(FIXTURES / "lint", root, dirs_exist_ok=True)
    (root / "plans").mkdir()
    for name in CASES:
        shutil.copy(root / name, root / "plans" / name)
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "fixtures")
    return root


@pytest.mark.parametrize("case", CASES)
def test_sarif_is_valid_and_places_each_finding(lint_repo: Path, case: str) -> None:
    text = plangraph_main(lint_repo, "lint", f"plans/{case}", "--format", "json")
    findings = text.json()["findings"]
    result = plangraph_main(lint_repo, "lint", f"plans/{case}", "--format", "sarif")
    assert result.code == text.code, result.err
    log = result.json()
    jsonschema.Draft4Validator(SARIF_SUBSET).validate(log)
    run = log["runs"][0]
    rules = [rule["id"] for rule in run["tool"]["driver"]["rules"]]
    assert rules == list(LINT_CODES)
    assert len(run["results"]) == len(findings)
    for found, sarif in zip(findings, run["results"], strict=True):
        assert sarif["ruleId"] == found["code"] and rules[sarif["ruleIndex"]] == found["code"]
        assert sarif["level"] == found["severity"]
        where = sarif["locations"][0]["physicalLocation"]
        assert where["artifactLocation"]["uri"] == f"plans/{case}"
        _, line, column = split_location(found["location"])
        if line is not None:
            assert where["region"] == {"startLine": line, "startColumn": column or 1}


def test_a_plan_that_cannot_be_read_is_a_usage_error(lint_repo: Path) -> None:
    broken = lint_repo / "broken.yaml"
    broken.write_text("plangraph: 1\nnodes: [\n", encoding="utf-8")
    result = plangraph(lint_repo, "lint", "broken.yaml", "--format", "sarif")
    assert result.code == 2 and result.out == ""
    assert result.err.startswith("plangraph: error:") and "Traceback" not in result.err


@pytest.mark.parametrize(
    ("location", "parts"),
    [
        ("plangraph.yaml:14:7", ("plangraph.yaml", 14, 7)),
        ("plangraph.yaml:3", ("plangraph.yaml", 3, None)),
        ("plangraph.yaml", ("plangraph.yaml", None, None)),
        ("c:/plans/p.yaml:2:5", ("c:/plans/p.yaml", 2, 5)),
        ("odd:name.yaml", ("odd:name.yaml", None, None)),
        ("p.yaml:0:0", ("p.yaml", None, None)),
    ],
)
def test_split_location(location: str, parts: tuple[str, int | None, int | None]) -> None:
    assert split_location(location) == parts


def test_findings_point_at_their_line(lint_repo: Path) -> None:
    log = plangraph_main(lint_repo, "lint", "plans/missing-dep.yaml", "--format", "sarif").json()
    regions = [r["locations"][0]["physicalLocation"]["region"] for r in log["runs"][0]["results"]]
    plan_lines = (lint_repo / "plans/missing-dep.yaml").read_text(encoding="utf-8").splitlines()
    assert regions and all(r["startLine"] > 1 for r in regions)
    named = [plan_lines[r["startLine"] - 1] for r in regions]
    assert any("step-gone" in line or "step-aa" in line for line in named), named


def test_the_schema_subset_rejects_what_sarif_forbids() -> None:
    """The subset schema is not a rubber stamp: a 0-based line, an unknown level and a
    missing message are each refused."""
    good = {
        "version": "2.1.0",
        "runs": [
            {
                "tool": {"driver": {"name": "plangraph"}},
                "results": [
                    {
                        "ruleId": "CYCLE",
                        "level": "error",
                        "message": {"text": "a cycle"},
                        "locations": [
                            {
                                "physicalLocation": {
                                    "artifactLocation": {"uri": "plangraph.yaml"},
                                    "region": {"startLine": 1, "startColumn": 1},
                                }
                            }
                        ],
                    }
                ],
            }
        ],
    }
    jsonschema.Draft4Validator(SARIF_SUBSET).validate(good)
    for key, bad in (("level", "fatal"), ("message", {}), ("ruleId", "")):
        broken = copy.deepcopy(good)
        broken["runs"][0]["results"][0][key] = bad
        assert not jsonschema.Draft4Validator(SARIF_SUBSET).is_valid(broken), key
    broken = copy.deepcopy(good)
    where = broken["runs"][0]["results"][0]["locations"][0]["physicalLocation"]
    where["region"]["startLine"] = 0
    assert not jsonschema.Draft4Validator(SARIF_SUBSET).is_valid(broken)
