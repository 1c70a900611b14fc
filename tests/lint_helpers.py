"""Plans linted from fixtures and from node and edge dicts, for the lint tests."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import jsonschema

from pytest_plangraph.lint.findings import (
    Finding,
)
from pytest_plangraph.lint.runner import lint_plan
from pytest_plangraph.plan.file import load_plan
from pytest_plangraph.plan.model import Criterion, Node, SchemaVerifier
from pytest_plangraph.vcs.workspace import Workspace

ROOT = Path(__file__).resolve().parents[1]

LINT_FIXTURES = ROOT / "fixtures" / "lint"

APPROVED = [{"id": "ac-1", "verifier": {"type": "approval"}}]


class _Files:
    """A real :class:`FileCheck` over a directory: symlinks and schema files on disk."""

    def __init__(self, root: Path) -> None:
        self.workspace = Workspace.at(root)

    def escapes(self, path: str) -> bool:
        return self.workspace.escapes(path)

    def escaping(self, paths: Iterable[str]) -> set[str]:
        return self.workspace.escaping(paths)

    def settings_on_disk(self, verifier_type: str) -> bool:
        return verifier_type == "schema"

    def present(self, patterns: Iterable[str]) -> set[str]:
        root = self.workspace.root
        return {p for p in patterns if any(root.glob(p)) or (root / p).exists()}

    def is_file(self, path: str) -> bool:
        return (self.workspace.root / path).is_file()

    def verifier_problems(self, node: Node, criterion: Criterion) -> list[str]:
        verifier = criterion.verifier
        if not isinstance(verifier, SchemaVerifier):
            return []
        target = self.workspace.root / verifier.schema_path
        if not target.is_file():
            return [f"schema file {verifier.schema_path} does not exist"]
        try:
            schema = json.loads(target.read_text(encoding="utf-8"))
            jsonschema.validators.validator_for(schema).check_schema(schema)
        except (ValueError, jsonschema.SchemaError) as exc:
            return [f"{verifier.schema_path} is not a valid JSON Schema: {exc}"]
        return []


def _fixture(code: str) -> str:
    return code.lower().replace("_", "-")


def _lint_fixture(name: str) -> list[Finding]:
    loaded = load_plan(LINT_FIXTURES / f"{name}.yaml", display=f"{name}.yaml")
    return lint_plan(loaded, files=_Files(LINT_FIXTURES))


def _lint(
    tmp_path: Path, nodes: Sequence[Any], edges: Sequence[Any] = (), **options: Any
) -> list[Finding]:
    path = tmp_path / "plan.json"
    body = {"plangraph": 1, "plan": "p", "nodes": nodes, "edges": list(edges)}
    path.write_text(json.dumps(body, indent=1), encoding="utf-8")
    return lint_plan(load_plan(path, display="plan.json"), **options)


def _step(node_id: str, **fields: Any) -> dict[str, Any]:
    return {"id": node_id, "acceptance": APPROVED, **fields}


def _edge(source: str, target: str, kind: str = "requires", **fields: Any) -> dict[str, Any]:
    return {"from": source, "to": target, "type": kind, **fields}


def _codes(findings: list[Finding]) -> list[str]:
    return [finding.code for finding in findings]
