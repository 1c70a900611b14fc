"""What follows from a large plan's meaning alone (its facts, its plan-only lint errors) is kept
under its content key, so an edit of comments or layout reuses it; lint errors, which name
lines, are reused for other bytes only when there are none."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import git

from pytest_plangraph.api import PlanGraph
from pytest_plangraph.errors import PlanError
from pytest_plangraph.lint import check, nodecache
from pytest_plangraph.plan import file as plan_file
from pytest_plangraph.plan import itemcache
from pytest_plangraph.plan.cache import keyed, read_keyed
from pytest_plangraph.plan.file import load_plan
from pytest_plangraph.plan.model import plan_criterion_digests, plan_digest, runtime_plan


def _repo(tmp_path: Path, edge_to: str = "n1") -> Path:
    root = tmp_path / "repo"
    (root / "out").mkdir(parents=True)
    git(root, "init", "-q")
    nodes = "".join(
        f"- id: n{i}\n  title: {'x' * 40}\n  outputs: [out/n{i}.txt]\n  acceptance:\n"
        f"  - id: ac\n    verifier: {{type: artifact, path: out/n{i}.txt}}\n"
        for i in range(300)
    )
    edges = f"edges:\n- {{from: n0, to: {edge_to}, type: requires}}\n"
    (root / "plangraph.yaml").write_text(f"plangraph: 1\nplan: big\nnodes:\n{nodes}{edges}")
    return root


@pytest.fixture
def rules_run(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """One entry each time the plan-only lint rules run for a command's check."""
    runs: list[int] = []
    real = check.plan_findings

    def counting(*args: Any, **kwargs: Any) -> Any:
        runs.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(check, "plan_findings", counting)
    monkeypatch.setattr(nodecache, "plan_findings", counting)  # a plan whose meaning changed
    return runs


def _check(root: Path) -> str:
    with PlanGraph.open(root) as graph:
        try:
            graph.check_plan()
        except PlanError as exc:
            return str(exc)
    return ""


def _comment(root: Path, where: str = "nodes:\n", comment: str = "# a\n# b\n") -> None:
    plan = root / "plangraph.yaml"
    plan.write_text(plan.read_text().replace(where, where + comment, 1))


def test_a_comment_edit_keeps_the_facts(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    plan, cache = root / "plangraph.yaml", tmp_path / "cache"
    first = load_plan(plan, cache_dir=cache)
    [facts] = cache.glob("facts-*.json")
    key = facts.stem.removeprefix("facts-")
    kept = json.loads(read_keyed(facts, key))
    marked = json.dumps({**kept, "digest": "f" * 64}).encode()
    facts.write_bytes(keyed(key, marked))  # marks the facts as read
    _comment(root)
    edited = load_plan(plan, cache_dir=cache)
    assert edited.cache_key != first.cache_key and edited.content_key == first.content_key
    assert edited.plan.digest == "f" * 64  # given from the kept facts, not computed
    assert list(cache.glob("facts-*.json")) == [facts]
    # a change of meaning gets facts of its own
    plan.write_text(plan.read_text().replace("to: n1,", "to: n2,"))
    changed = load_plan(plan, cache_dir=cache).plan
    fresh = runtime_plan(changed.to_json(by_alias=True))
    assert (changed.digest, changed.criterion_digests) == (
        plan_digest(fresh),
        plan_criterion_digests(fresh),
    )
    assert len(list(cache.glob("facts-*.json"))) == 2


def test_a_comment_edit_of_a_clean_plan_keeps_its_lint_result(
    tmp_path: Path, rules_run: list[int]
) -> None:
    root = _repo(tmp_path)
    assert _check(root) == "" and rules_run == [1]
    _comment(root)
    assert _check(root) == "" and rules_run == [1]  # kept: no error, nothing to locate
    _comment(root, "edges:\n", "- {from: n0, to: nowhere, type: requires}\n")
    assert "MISSING_DEP" in _check(root) and rules_run == [1, 1]


def test_lint_errors_are_found_again_where_the_edit_moved_them(
    tmp_path: Path, rules_run: list[int]
) -> None:
    root = _repo(tmp_path, edge_to="nowhere")
    before = _check(root)
    line = (root / "plangraph.yaml").read_text().split("\n").index("edges:") + 2
    assert f"plangraph.yaml:{line}:" in before
    assert _check(root) == before and rules_run == [1]  # the same bytes: kept
    _comment(root)
    after = _check(root)
    assert rules_run == [1, 1]
    assert f"plangraph.yaml:{line + 2}:" in after and "MISSING_DEP" in after
    assert after == before.replace(f":{line}:", f":{line + 2}:")


@pytest.fixture
def validations(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """One entry each time a plan's data is validated by the boundary's models (whole, or
    item by item: a second entry when the items path refuses it and it is validated whole)."""
    runs: list[int] = []
    whole, by_item = plan_file.validate_plan, itemcache.validated_by_item

    def counting(*args: Any, **kwargs: Any) -> Any:
        runs.append(1)
        return whole(*args, **kwargs)

    def counting_items(*args: Any, **kwargs: Any) -> Any:
        runs.append(1)
        return by_item(*args, **kwargs)

    monkeypatch.setattr(plan_file, "validate_plan", counting)
    monkeypatch.setattr(itemcache, "validated_by_item", counting_items)
    return runs


def test_a_comment_edit_is_not_validated_again(tmp_path: Path, validations: list[int]) -> None:
    root = _repo(tmp_path)
    plan, cache = root / "plangraph.yaml", tmp_path / "cache"
    first = load_plan(plan, cache_dir=cache)
    assert validations == [1]
    _comment(root)
    _comment(root, "edges:\n", "# the edges\n")
    edited = load_plan(plan, cache_dir=cache)
    assert validations == [1]  # the same data: its validated form is kept by its content
    assert edited.cache_key != first.cache_key and edited.content_key == first.content_key
    fresh = load_plan(plan)  # no cache: read and validated in full
    validations.pop()
    assert edited.plan == fresh.plan and edited.plan.to_data() == fresh.plan.to_data()
    assert edited.plan.digest == fresh.plan.digest
    assert edited.plan.criterion_digests == fresh.plan.criterion_digests
    # kept under the new bytes too: the next read takes it by its bytes
    # (each file's first line is the key it is kept under)
    by_bytes = read_keyed(cache / f"valid-{edited.cache_key}.json", edited.cache_key)
    assert by_bytes == read_keyed(cache / f"valid-{edited.content_key}.json", edited.content_key)
    assert load_plan(plan, cache_dir=cache).plan == fresh.plan and validations == [1]
    # a change of meaning is validated
    plan.write_text(plan.read_text().replace("to: n1,", "to: n2,"))
    changed = load_plan(plan, cache_dir=cache)
    assert validations == [1, 1] and changed.content_key != first.content_key
    assert changed.plan == load_plan(plan).plan != first.plan


@pytest.mark.parametrize(
    "damage", ["", "{", "[1, 2]", '{"plangraph": 1, "plan": "big", "nodes": 5}', '{"nodes": [{}]}']
)
def test_a_damaged_entry_kept_by_content_is_a_miss(
    tmp_path: Path, validations: list[int], damage: str
) -> None:
    root = _repo(tmp_path)
    plan, cache = root / "plangraph.yaml", tmp_path / "cache"
    first = load_plan(plan, cache_dir=cache)
    entry = cache / f"valid-{first.content_key}.json"
    good = entry.read_bytes()
    entry.write_text(damage)
    _comment(root)
    edited = load_plan(plan, cache_dir=cache)
    assert validations == [1, 1]  # validated again, no traceback
    assert edited.plan == first.plan and edited.plan.digest == first.plan.digest
    assert entry.read_bytes() == good  # and kept anew


def test_a_plan_refused_after_a_comment_edit_is_explained_as_before(tmp_path: Path) -> None:
    root = _repo(tmp_path, edge_to="n1, confidence: '2'")
    plan, cache = root / "plangraph.yaml", tmp_path / "cache"
    messages = []
    for _ in range(2):
        with pytest.raises(PlanError) as info:
            load_plan(plan, cache_dir=cache)
        messages.append(str(info.value))
        _comment(root)
    assert "confidence" in messages[0] and "plangraph.yaml:" in messages[0]
    line = plan.read_text().split("\n").index("edges:") + 2
    assert messages[1] == messages[0].replace(f":{line - 4}:", f":{line - 2}:")
    assert not list(cache.glob("valid-*.json"))  # nothing validated is kept for it


def _answer(path: Path, cache: Path) -> Any:
    try:
        loaded = load_plan(path, cache_dir=cache)
    except PlanError as exc:
        return str(exc).replace(path.name, "PLAN")
    return loaded.plan.to_data(), loaded.plan.digest, loaded.plan.criterion_digests


@pytest.mark.parametrize("first", [".json", ".yaml"])
@pytest.mark.parametrize(
    "path", ['"out/a\\ud83d\\ude00.txt"', '"out/a\u0085b.txt"'], ids=["surrogate pair", "NEL"]
)
def test_the_same_bytes_as_json_and_as_yaml_are_each_read_as_written(
    tmp_path: Path, first: str, path: str
) -> None:
    """A text that YAML and JSON read differently (an escaped surrogate pair YAML refuses, a
    NEL YAML folds in a quoted string), read as a ``.json`` plan then as a ``.yaml`` plan (or
    the other way) with one cache folder: each as it reads with an empty one."""
    nodes = [
        {"id": f"n{i}", "acceptance": [{"id": "ac", "verifier": {"type": "artifact", "path": "P"}}]}
        for i in range(130)
    ]
    text = json.dumps({"plangraph": 1, "plan": "big", "nodes": nodes}, indent=1)
    text = text.replace('"P"', path, 1)
    cache = tmp_path / "cache"
    suffixes = [first, ".json" if first == ".yaml" else ".yaml"]
    for suffix in suffixes:
        (tmp_path / f"plan{suffix}").write_text(text, encoding="utf-8")
        assert (tmp_path / f"plan{suffix}").stat().st_size >= plan_file.CACHE_MIN_BYTES
    found = [_answer(tmp_path / f"plan{suffix}", cache) for suffix in suffixes]
    fresh = [_answer(tmp_path / f"plan{s}", tmp_path / f"fresh{s}") for s in suffixes]
    assert found == fresh
    assert fresh[0] != fresh[1]  # the two readings differ indeed
