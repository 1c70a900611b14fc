"""The plan's digest and criterion digests put together from facts kept per node and edge
(``plan/factcache.py``): byte for byte the digests computed over the whole plan (and those of
the models before the runtime classes), on every fixture plan, on generated plans and generated
edits of them; a one-node edit of a real plan file computes that node's facts alone and still
shows its new title; a change of ``defaults`` gives the criteria their new digests; a damaged
``itemfacts.txt`` is a miss, never an answer."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from test_plan_builders import FIXTURE_PLANS
from test_plan_items import _big, edited
from test_runtime_models import SETTINGS, _reference_plan_digest, plans

from pytest_plangraph.plan import boundary
from pytest_plangraph.plan.digests import plan_criterion_digests, plan_digest
from pytest_plangraph.plan.factcache import FILE_NAME, facts_by_item
from pytest_plangraph.plan.file import load_plan
from pytest_plangraph.plan.itemcache import validated_by_item
from pytest_plangraph.plan.model import runtime_plan


def _check(data: dict[str, Any], cache: Path) -> None:
    """The facts by item of *data* are the whole plan's (nothing when it is not valid)."""
    found = validated_by_item(json.loads(json.dumps(data)), cache)
    if found is None:
        return
    plan, _, items, _ = found
    facts = facts_by_item(plan, cache, items)
    assert facts is not None
    whole = runtime_plan(data)
    assert facts == (plan_digest(whole), plan_criterion_digests(whole))
    assert facts[0] == _reference_plan_digest(boundary.Plan.model_validate(data))


@pytest.mark.parametrize("path", FIXTURE_PLANS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_fixture_plan_has_the_same_digests_by_item(path: Path, tmp_path: Path) -> None:
    data = json.loads(json.dumps(load_plan(path).plan.to_data()))
    for _ in range(2):  # computed, then read back from the kept facts
        _check(data, tmp_path)
    assert (tmp_path / FILE_NAME).exists() == bool(data.get("nodes") or data.get("edges"))


@SETTINGS
@given(st.data())
def test_generated_plans_and_edits_have_the_same_digests_by_item(data: st.DataObject) -> None:
    base = data.draw(plans)
    with tempfile.TemporaryDirectory() as name:
        cache = Path(name)
        _check(base, cache)
        for _ in range(2):  # edits of it, read with the facts kept so far
            _check(data.draw(edited(base)), cache)
        policy = data.draw(st.sampled_from(["allow", "fail"]))
        _check({**base, "defaults": {"test": {"skips": policy, "min_passed": 2}}}, cache)


def _lines(cache: Path) -> int:
    return len((cache / FILE_NAME).read_text().splitlines())


def test_a_one_node_edit_computes_that_node_alone(tmp_path: Path) -> None:
    plan, cache = tmp_path / "plangraph.yaml", tmp_path / "cache"
    _big(plan)
    first = load_plan(plan, cache_dir=cache).plan
    assert _lines(cache) == 300 + 299
    edit = "- id: n7\n  risk: high\n  title: y"  # more than a title: not patched by title
    plan.write_text(plan.read_text().replace("- id: n7\n  title: x", edit, 1))
    edited_plan = load_plan(plan, cache_dir=cache).plan
    assert _lines(cache) == 300 + 299 + 1  # the one node's facts, computed alone
    fresh = load_plan(plan).plan  # no cache at all
    assert edited_plan.node("n7") is not None and edited_plan.node("n7").title.startswith("y")
    assert edited_plan.digest == fresh.digest == plan_digest(fresh) != first.digest
    assert edited_plan.criterion_digests == fresh.criterion_digests


def test_a_change_of_defaults_gives_new_criterion_digests(tmp_path: Path) -> None:
    plan, cache = tmp_path / "plangraph.yaml", tmp_path / "cache"
    _big(plan)
    text = plan.read_text().replace(
        "type: artifact, path: out/n3.txt}", "type: test, tests: ['tests/x.py::t']}"
    )
    plan.write_text(text)
    before = load_plan(plan, cache_dir=cache).plan
    plan.write_text(text.replace("plan: big\n", "plan: big\ndefaults: {test: {skips: allow}}\n"))
    after = load_plan(plan, cache_dir=cache).plan
    fresh = load_plan(plan).plan
    assert after.criterion_digests == fresh.criterion_digests
    assert after.criterion_digests[("n3", "ac")] != before.criterion_digests[("n3", "ac")]
    assert after.digest == fresh.digest


DAMAGES = [
    lambda text: text[: len(text) // 2],  # an interrupted write
    lambda text: text.replace("\t", " ", 3),  # lines that do not parse
    lambda text: text.replace('[["ac",', '[["other",', 5),  # criterion ids not the node's
    lambda text: text.replace('[["ac","', '[["ac",7,"', 2),  # not a digest
    lambda text: text.replace("\t{", "\tnot json{", 4),  # a canonical text that is not
    lambda text: "\n".join(line[:70] for line in text.split("\n")),  # every line cut
    lambda text: "garbage\n" * 10,
]


@pytest.mark.parametrize("damage", DAMAGES)
def test_damaged_facts_are_a_miss(tmp_path: Path, damage: Any) -> None:
    plan, cache = tmp_path / "plangraph.yaml", tmp_path / "cache"
    _big(plan)
    load_plan(plan, cache_dir=cache)
    facts = cache / FILE_NAME
    facts.write_text(damage(facts.read_text()))
    plan.write_text(plan.read_text().replace("- id: n7\n", "- id: n7\n  risk: high\n", 1))
    edited_plan = load_plan(plan, cache_dir=cache).plan
    fresh = load_plan(plan).plan
    assert edited_plan.digest == fresh.digest
    assert edited_plan.criterion_digests == fresh.criterion_digests
    plan.write_text(plan.read_text().replace("- id: n8\n", "- id: n8\n  risk: high\n", 1))
    again = load_plan(plan, cache_dir=cache).plan  # the file made good again
    assert again.digest == load_plan(plan).plan.digest
