"""Lint findings as SARIF 2.1.0, the format GitHub code scanning reads: one rule per lint code
(``tool.driver.rules``), one result per finding at the plan file's ``line:column``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..lint.findings import Finding, Severity

__all__ = ["SARIF_SCHEMA", "SARIF_VERSION", "sarif"]

SARIF_VERSION = "2.1.0"
SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"


def sarif(
    findings: Sequence[Finding],
    codes: Mapping[str, tuple[Severity, str]],
    *,
    version: str,
    uris: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """The SARIF log of *findings*. *codes* are the lint codes with their severity and
    description (every code becomes a rule, found or not); *uris* turn the file part of a
    finding's location into a path relative to the repository root (``%SRCROOT%``)."""
    rules = list(codes)
    driver = {
        "name": "plangraph",
        "version": version,
        "rules": [_rule(code, severity, text) for code, (severity, text) in codes.items()],
    }
    results = [_result(f, rules, uris or {}) for f in findings]
    return {
        "$schema": SARIF_SCHEMA,
        "version": SARIF_VERSION,
        "runs": [
            {
                "tool": {"driver": driver},
                "results": results,
            }
        ],
    }


def _rule(code: str, severity: Severity, description: str) -> dict[str, Any]:
    return {
        "id": code,
        "name": "".join(part.title() for part in code.split("_")),
        "shortDescription": {"text": description},
        "help": {"text": f"{code}: {description} (docs/lint-codes.md)"},
        "defaultConfiguration": {"level": severity},
    }


def _result(finding: Finding, rules: list[str], uris: Mapping[str, str]) -> dict[str, Any]:
    file, line, column = split_location(finding.location)
    physical: dict[str, Any] = {
        "artifactLocation": {"uri": uris.get(file, file), "uriBaseId": "%SRCROOT%"}
    }
    if line is not None:
        physical["region"] = {"startLine": line, "startColumn": column or 1}
    about = f"{finding.node}: " if finding.node else ""
    result: dict[str, Any] = {
        "ruleId": finding.code,
        "level": finding.severity,
        "message": {"text": f"{about}{finding.hint}"},
        "locations": [{"physicalLocation": physical}],
    }
    if finding.code in rules:
        result["ruleIndex"] = rules.index(finding.code)
    return result


def split_location(location: str) -> tuple[str, int | None, int | None]:
    """``file:line:column`` (or ``file:line``, or ``file``) as its parts; a file name may hold
    colons of its own."""
    parts = location.rsplit(":", 2)
    numbers: list[int] = []
    while len(parts) > 1 and parts[-1].isdigit() and len(numbers) < 2:
        numbers.insert(0, int(parts.pop()))
    file = ":".join(parts)
    if not numbers:
        return location, None, None
    line = numbers[0] if numbers[0] > 0 else None
    column = numbers[1] if len(numbers) > 1 and numbers[1] > 0 else None
    return file, line, column
