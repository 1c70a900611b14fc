"""The patch format and its application to a plan's text, pure (no repository, no store)."""

from __future__ import annotations

import json

import pytest

from pytest_plangraph.errors import PlanError, UsageError
from pytest_plangraph.plan.file import parse_plan
from pytest_plangraph.plan.patch import (
    PlanPatch,
    edit_plan_text,
    patched_plan,
    read_patch,
    touched_nodes,
)

PLAN = """\
plangraph: 1   # the format
plan: p
nodes:
  # the steps
  - id: a
    outputs: [a.txt]
  - id: b
    acceptance:
      - {id: c1, verifier: {type: approval}}
edges:
  - {from: a, to: b, type: requires}   # b needs a
"""


def patch_of(data: dict) -> PlanPatch:
    return read_patch(json.dumps({"plangraph_patch": 1, **data}).encode(), "p.json")


@pytest.mark.parametrize(
    ("data", "nodes"),
    [
        ({"nodes": {"add": [{"id": "x"}], "remove": ["a"]}}, ["x", "a"]),
        ({"criteria": {"remove": [{"node": "b", "id": "c1"}]}}, ["b"]),
        ({"edges": {"add": [{"from": "a", "to": "b", "type": "requires"}]}}, ["b"]),
        ({"nodes": {"replace": [{"id": "b"}]}, "edges": {"remove": [
            {"from": "a", "to": "b", "type": "requires"}]}}, ["b"]),
    ],
)  # fmt: skip
def test_touched_nodes(data: dict, nodes: list[str]) -> None:
    assert touched_nodes(patch_of(data)) == nodes


def test_an_empty_patch_is_empty() -> None:
    assert patch_of({}).is_empty()
    assert not patch_of({"nodes": {"remove": ["a"]}}).is_empty()


def test_the_text_edit_keeps_comments_and_agrees_with_the_model_edit() -> None:
    change = patch_of(
        {
            "criteria": {"add": [{"node": "a", "criterion": {"id": "c2", "verifier": {
                "type": "test", "tests": ["t.py::x"]}}}]},
            "edges": {"add": [{"from": "b", "to": "a", "type": "related"}]},
        }
    )  # fmt: skip
    text = edit_plan_text(PLAN, change, "plan.yaml", json_file=False)
    for comment in ("# the format", "# the steps", "# b needs a"):
        assert comment in text
    assert "  - {from: b, to: a, type: related}\n" in text
    edited = parse_plan(text.encode(), "plan.yaml").plan
    assert edited.digest == patched_plan(parse_plan(PLAN.encode(), "x").plan, change, "x").digest


def test_a_json_plan_stays_json() -> None:
    plan = parse_plan(PLAN.encode(), "x").plan
    original = json.dumps(plan.to_json(by_alias=True, exclude_unset=True))
    text = edit_plan_text(
        original, patch_of({"nodes": {"remove": ["b"]}}), "p.json", json_file=True
    )
    assert [n["id"] for n in json.loads(text)["nodes"]] == ["a"]


def test_what_does_not_fit_is_named_and_nothing_is_half_applied() -> None:
    change = patch_of({"nodes": {"add": [{"id": "a"}], "replace": [{"id": "zz"}]}})
    with pytest.raises(UsageError) as caught:
        edit_plan_text(PLAN, change, "plan.yaml", json_file=False)
    assert "nodes.replace: no node 'zz'" in str(caught.value)
    assert "nodes.add: node 'a' is already in the plan" in str(caught.value)


def test_a_patch_too_large_or_not_a_mapping_is_refused() -> None:
    with pytest.raises(PlanError, match="split it"):
        read_patch(b"#" * (4 * 1024 * 1024 + 1), "big.yaml")
    with pytest.raises(PlanError, match="got str"):
        read_patch(b"just text", "t.yaml")
