"""The cache of a large plan's facts (digest, criterion digests): used only for the same
bytes and the same package version, recomputed whenever it cannot be trusted."""

from __future__ import annotations

import hashlib
import json
import os
import time
from pathlib import Path

import pytest

from pytest_plangraph import __version__
from pytest_plangraph.model import Plan, plan_criterion_digests, plan_digest
from pytest_plangraph.plancache import KEEP, code_version, prune
from pytest_plangraph.planfile import load_plan


def _write_plan(path: Path, minimum: int = 3, count: int = 700) -> None:
    nodes = "".join(
        f"  - id: n{i}\n    title: {'x' * 40}\n    acceptance:\n"
        f"      - id: ac\n        assertion: at least {minimum}\n"
        f"        verifier: {{type: artifact, path: out/n{i}.txt, min_bytes: {minimum}}}\n"
        for i in range(count)
    )
    path.write_text(f"plangraph: 1\nplan: big\nnodes:\n{nodes}", encoding="utf-8")


def _fresh(plan: Plan) -> tuple[str, dict[tuple[str, str], str]]:
    """The facts computed from scratch, on a copy that has nothing cached."""
    copy = Plan.model_validate(plan.model_dump(by_alias=True))
    return plan_digest(copy), plan_criterion_digests(copy)


WRONG = {
    "version": code_version(),
    "plan": "big",
    "digest": "0" * 64,
    "criteria": [[f"n{i}", "ac", "0" * 64] for i in range(700)],
}
"""Facts that would be taken if the check let them through."""


def _facts(cache: Path) -> Path:
    [facts] = cache.glob("facts-*.json")
    return facts


def test_facts_are_kept_and_given_to_the_next_load(tmp_path: Path) -> None:
    plan_file, cache = tmp_path / "plan.yaml", tmp_path / "cache"
    _write_plan(plan_file)
    first = load_plan(plan_file, cache_dir=cache).plan
    kept = json.loads(_facts(cache).read_text())
    assert kept["version"] == code_version() and kept["digest"] == first.digest
    assert kept["version"].startswith(f"{__version__}+")
    assert len(kept["criteria"]) == 700
    second = load_plan(plan_file, cache_dir=cache).plan
    # given from the cache, before anything computed them
    assert second.__dict__["digest"] == first.digest
    assert (second.digest, second.criterion_digests) == _fresh(second)


def test_an_edited_plan_gets_its_own_facts(tmp_path: Path) -> None:
    plan_file, cache = tmp_path / "plan.yaml", tmp_path / "cache"
    _write_plan(plan_file)
    before = load_plan(plan_file, cache_dir=cache).plan
    _write_plan(plan_file, minimum=4)
    after = load_plan(plan_file, cache_dir=cache).plan
    assert (after.digest, after.criterion_digests) == _fresh(after)
    assert after.criterion_digests[("n1", "ac")] != before.criterion_digests[("n1", "ac")]
    assert len(list(cache.glob("facts-*.json"))) == 2


@pytest.mark.parametrize(
    "damage",
    [
        lambda facts: facts.write_text("{not json"),
        lambda facts: facts.write_text(json.dumps({"version": code_version()})),
        lambda facts: facts.write_text(json.dumps({**WRONG, "version": "0.0.0-other"})),
        lambda facts: facts.write_text(json.dumps({**WRONG, "version": __version__})),
        lambda facts: facts.write_text(json.dumps({**WRONG, "plan": "another-plan"})),
    ],
    ids=["unreadable", "incomplete", "another-version", "other-code", "another-plan"],
)
def test_untrusted_facts_are_recomputed_and_rewritten(tmp_path: Path, damage) -> None:
    plan_file, cache = tmp_path / "plan.yaml", tmp_path / "cache"
    _write_plan(plan_file)
    load_plan(plan_file, cache_dir=cache)
    damage(_facts(cache))
    plan = load_plan(plan_file, cache_dir=cache).plan
    assert (plan.digest, plan.criterion_digests) == _fresh(plan)
    assert json.loads(_facts(cache).read_text())["version"] == code_version()


def test_a_kept_order_that_misses_nodes_is_recomputed(tmp_path: Path) -> None:
    # lint trusts the order as the proof that the plan has no cycle: it must hold every node
    plan_file, cache = tmp_path / "plan.yaml", tmp_path / "cache"
    _write_plan(plan_file)
    load_plan(plan_file, cache_dir=cache)
    facts = json.loads(_facts(cache).read_text())
    _facts(cache).write_text(json.dumps({**facts, "order": ["n0"]}))
    plan = load_plan(plan_file, cache_dir=cache).plan
    assert plan.topological_order == tuple(f"n{i}" for i in range(700))
    assert len(json.loads(_facts(cache).read_text())["order"]) == 700


def test_small_plans_keep_nothing(tmp_path: Path) -> None:
    plan_file, cache = tmp_path / "plan.yaml", tmp_path / "cache"
    plan_file.write_text("plangraph: 1\nplan: small\nnodes:\n  - id: a\n")
    load_plan(plan_file, cache_dir=cache)
    assert not cache.exists()


def test_the_cache_keeps_the_plans_written_last(tmp_path: Path) -> None:
    plan_file, cache = tmp_path / "plan.yaml", tmp_path / "cache"
    keys = []
    for minimum in range(KEEP + 3):  # a plan edited again and again
        _write_plan(plan_file, minimum, count=110)  # just over the size that is cached
        keys.append(hashlib.sha256(plan_file.read_bytes()).hexdigest())
        load_plan(plan_file, cache_dir=cache)
        os.utime(cache / f"plan-{keys[-1]}.json", ns=(minimum * 10**9, minimum * 10**9))
    assert {p.name for p in cache.iterdir()} == {
        f"{kind}-{key}.json" for key in keys[-KEEP:] for kind in ("plan", "facts")
    }
    assert load_plan(plan_file, cache_dir=cache).plan.plan == "big"  # the last still hits


def test_the_facts_of_json_plans_are_pruned_too(tmp_path: Path) -> None:
    plan_file, cache = tmp_path / "plan.json", tmp_path / "cache"
    for n in range(KEEP + 2):
        nodes = [{"id": f"n{i}", "title": "x" * 200} for i in range(80 + n)]
        plan_file.write_text(json.dumps({"plangraph": 1, "plan": "big", "nodes": nodes}))
        load_plan(plan_file, cache_dir=cache)
    assert len(list(cache.glob("facts-*.json"))) == KEEP
    assert not list(cache.glob("plan-*.json"))  # JSON is not worth a parse cache


def test_prune_removes_only_old_leftovers_of_interrupted_writes(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    cache.mkdir()
    old, young = cache / "plan-x.123.tmp", cache / "plan-y.456.tmp"
    old.write_text("{")
    young.write_text("{")
    os.utime(old, (time.time() - 3600, time.time() - 3600))
    prune(cache)
    assert not old.exists() and young.exists()


def test_a_copy_with_other_content_computes_its_own_facts(tmp_path: Path) -> None:
    plan_file, cache = tmp_path / "plan.yaml", tmp_path / "cache"
    _write_plan(plan_file)
    plan = load_plan(plan_file, cache_dir=cache).plan
    assert plan.topological_order[:2] == ("n0", "n1")
    edges = [{"from": "n1", "to": "n0", "type": "requires"}]
    changed = plan.model_copy(
        update={
            "edges": Plan.model_validate(
                {"plangraph": 1, "plan": "x", "nodes": [{"id": "n0"}, {"id": "n1"}], "edges": edges}
            ).edges
        }
    )
    assert changed.topological_order[0] == "n1" and changed.topological_order[-1] == "n0"
    assert changed.digest != plan.digest
    assert (changed.digest, changed.criterion_digests) == _fresh(changed)
    same = plan.model_copy()
    assert same.__dict__["digest"] == plan.digest  # nothing changed: kept
