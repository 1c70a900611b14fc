"""The in-toto Statement v1 about one completed node, built from values, and read back.

Shape (``docs/agents.md``)::

    {"_type": "https://in-toto.io/Statement/v1",
     "subject": [{"name": "<path>", "digest": {"sha256": "<hex>"}}, ...],
     "predicateType": PREDICATE_TYPE,
     "predicate": {"format": 1, "node": ..., "kind": ..., "title": ..., "verdict": "PASSED",
                   "status": "completed", "criteria": [...], "evidence": [...],
                   "plan": {"id", "version", "digest", "file"}, "commit": ..., "dirty": ...,
                   "attested_at": ...}}

The subjects are the files the node's evidence is bound to (its outputs, the files it
consumes from upstream and the subjects of the evidence deciding its criteria) and the plan
file, each with the sha256 it had when attested.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..judge.gate import GateDecision
from ..judge.states import NodeState
from ..plan.evidence import GitInfo, PlanRef
from ..plan.model import Node

STATEMENT_TYPE = "https://in-toto.io/Statement/v1"
PREDICATE_TYPE = "urn:pytest-plangraph:attestation:node:v1"
"""The predicate type of a node attestation (a URI naming this format, version 1)."""
PREDICATE_FORMAT = 1


def statement(
    node: Node,
    state: NodeState,
    decision: GateDecision,
    *,
    files: Mapping[str, str],
    plan: PlanRef,
    plan_file: str | None,
    git: GitInfo,
    at: str,
) -> dict[str, Any]:
    """The statement that *node* was completed, with *files* (path → sha256) as subjects."""
    return {
        "_type": STATEMENT_TYPE,
        "subject": [{"name": name, "digest": {"sha256": files[name]}} for name in sorted(files)],
        "predicateType": PREDICATE_TYPE,
        "predicate": {
            "format": PREDICATE_FORMAT,
            "node": node.id,
            "kind": node.kind,
            "title": node.title,
            "verdict": decision.verdict,
            "status": state.status,
            "criteria": [
                {
                    "id": c.id,
                    "assertion": criterion.assertion,
                    "verifier": criterion.verifier.type,
                    "required": c.required,
                    "state": c.state,
                    "evidence": c.evidence,
                }
                for c in state.criteria
                if (criterion := node.criterion(c.id)) is not None
            ],
            "evidence": list(decision.evidence),
            "plan": {**plan.to_json(), "file": plan_file},
            "commit": git.commit,
            "dirty": git.dirty,
            "attested_at": at,
        },
    }


def payload(data: Mapping[str, Any]) -> bytes:
    """The statement as the bytes that are signed (canonical: sorted keys, no spaces)."""
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


@dataclass(frozen=True)
class Subject:
    """One subject of a statement: a path and the sha256 it had."""

    name: str
    sha256: str


def read_statement(body: bytes) -> tuple[dict[str, Any], list[Subject]] | str:
    """The statement in *body* and its subjects, or a sentence saying what is wrong."""
    try:
        data = json.loads(body)
    except (ValueError, RecursionError):
        return "the payload is not JSON"
    if not isinstance(data, dict) or data.get("_type") != STATEMENT_TYPE:
        return f"the payload is not an in-toto statement (_type {STATEMENT_TYPE})"
    if data.get("predicateType") != PREDICATE_TYPE:
        return f"the statement's predicateType is not {PREDICATE_TYPE}"
    subjects = _subjects(data.get("subject"))
    if subjects is None:
        return "the statement's subjects are malformed (name and digest.sha256 each)"
    if not isinstance(data.get("predicate"), dict):
        return "the statement has no predicate"
    return data, subjects


def _subjects(entries: Any) -> list[Subject] | None:
    if not isinstance(entries, list) or not entries:
        return None
    found: list[Subject] = []
    for entry in entries:
        name = entry.get("name") if isinstance(entry, dict) else None
        digest = entry.get("digest") if isinstance(entry, dict) else None
        sha = digest.get("sha256") if isinstance(digest, dict) else None
        if not isinstance(name, str) or not name or not isinstance(sha, str):
            return None
        found.append(Subject(name, sha))
    return found


def differences(subjects: Sequence[Subject], now: Mapping[str, str | None]) -> list[dict[str, Any]]:
    """Each subject whose sha256 *now* differs from the statement's (None: missing)."""
    return [
        {"name": s.name, "attested": s.sha256, "current": now.get(s.name)}
        for s in subjects
        if now.get(s.name) != s.sha256
    ]
