"""Digests survive a change of the code that computes them: plan digests, criterion digests,
evidence ids and event hashes are the ones the code of an earlier release computed (frozen in
``tests/data/prechange``), and a store that code wrote still verifies and judges the same."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import plangraph
from conftest import FIXTURES, ROOT

from pytest_plangraph.canonical import digest
from pytest_plangraph.plan.evidence import Evidence, GitInfo, PlanRef, RunInfo
from pytest_plangraph.plan.file import load_plan
from pytest_plangraph.plan.model import Event, canonical_plan, criterion_digest
from pytest_plangraph.store.chain import seal

DATA = Path(__file__).parent / "data" / "prechange"
FROZEN: dict[str, Any] = json.loads((DATA / "digests.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("name", sorted(FROZEN["plans"]))
def test_plan_digests_are_the_ones_computed_before(name: str, tmp_path: Path) -> None:
    frozen = FROZEN["plans"][name]
    for cache in (None, tmp_path / "cache", tmp_path / "cache"):  # fresh, kept, read back
        plan = load_plan(ROOT / name, cache_dir=cache).plan
        assert plan.digest == frozen["digest"]
        assert digest(canonical_plan(plan)) == frozen["canonical"]
        criteria = {f"{n}/{c}": d for (n, c), d in plan.criterion_digests.items()}
        assert criteria == frozen["criteria"]
        each = {
            f"{node.id}/{c.id}": criterion_digest(node.id, c, plan.defaults)
            for node in plan.nodes
            for c in node.acceptance
        }
        assert each == frozen["each"]
        assert list(plan.topological_order) == frozen["order"]


def test_every_fixture_plan_is_frozen() -> None:
    plans = {
        str(path.relative_to(ROOT))
        for path in [*FIXTURES.glob("**/plangraph.yaml"), *FIXTURES.glob("lint/*.yaml")]
    }
    assert plans <= set(FROZEN["plans"])
    assert len(FROZEN["plans"]) >= 25


def _run(index: int) -> RunInfo:
    if index == 1:
        return RunInfo(
            id="r2",
            started="s",
            finished="f",
            python="3",
            plugin="p",
            optimize=1,
            assert_mode="plain",
        )
    return RunInfo(
        id="r1",
        started="2026-01-01T00:00:00Z",
        finished="2026-01-01T00:00:01Z",
        python="3.12.0",
        pytest="8.0",
        plugin="0.1",
        ci={"CI": "true"},
    )


def test_evidence_ids_are_the_ones_computed_before() -> None:
    made = []
    for index, (dumped, frozen_id) in enumerate(FROZEN["evidence"]):
        record = Evidence.create(
            plan=PlanRef(id="p", version=2, digest="d" * 64),
            node="n",
            criterion=f"c{index}",
            criterion_digest="c" * 64,
            input_digest="i" * 64,
            verifier="test",
            outcome=dumped["outcome"],
            reason=dumped["reason"],
            details=dumped["details"],
            subjects={"a.py": "0" * 64},
            git=GitInfo(commit="abc", dirty=bool(index % 2), branch=None if index else "main"),
            run=_run(index),
            recorded_by="me",
        )
        assert record.id == frozen_id
        made.append(record)
    assert len({record.id for record in made}) == 3


def test_event_ids_and_hashes_are_the_ones_computed_before() -> None:
    prev = ""
    for seq, (content, frozen_id, frozen_hash, signature) in enumerate(FROZEN["events"], 1):
        event = Event(**content)
        sealed = seal(event, seq, prev, b"key" if seq == 2 else None)
        assert event.content() == content
        assert (sealed.id, sealed.hash, sealed.signature) == (frozen_id, frozen_hash, signature)
        prev = sealed.hash


def test_a_store_written_before_still_verifies_and_judges_the_same(project) -> None:
    root = project("jwt-login")
    (root / ".plangraph").mkdir()
    shutil.copy(DATA / "jwt-login-store.db", root / ".plangraph" / "store.db")
    audit = plangraph(root, "audit", "--format", "json")
    frozen_audit = json.loads((DATA / "jwt-login-audit.json").read_text(encoding="utf-8"))
    found = audit.json()
    assert found.pop("needs_person") == []  # a finding added since the store was written
    assert found == frozen_audit  # no chain problem; the same two phantom completions
    assert audit.json()["chain"] == []
    status = plangraph(root, "status", "--format", "json")
    assert status.json() == json.loads((DATA / "jwt-login-status.json").read_text("utf-8"))
    history = plangraph(root, "history", "step-token-endpoint", "--format", "json")
    assert history.json() == json.loads((DATA / "jwt-login-history.json").read_text("utf-8"))
    head = plangraph(root, "head")
    assert head.out.strip() == "9:9754ef1d4cff496eaeef390d8f053be91a1003ad8e4c58ad425347db86a31ad7"
