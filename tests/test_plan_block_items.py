"""The keys of a block-read plan's items taken by block (``plan/blockitems.py``): after each
kind of edit (a title, a node added, removed, a run of nodes moved, an edge changed) they are
the keys hashed item by item, an edit hashes the items of the runs it touched alone, the plan
and its digests are those read without any cache, and a damaged ``blockitems.txt`` is a
miss."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from test_plan_items import _big

from pytest_plangraph.plan import blockitems, itemcache
from pytest_plangraph.plan.blockcache import read_blocks_keyed
from pytest_plangraph.plan.file import MAX_YAML_NODES, load_plan


@pytest.fixture
def hashed(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many items each call of :func:`~.itemcache.item_keys` hashed."""
    counts: list[int] = []
    real = itemcache.item_keys

    def counting(field: str, items: Any) -> list[str] | None:
        counts.append(len(items))
        return real(field, items)

    monkeypatch.setattr(blockitems, "item_keys", counting)
    monkeypatch.setattr(itemcache, "item_keys", counting)
    return counts


def _replace(old: str, new: str) -> Callable[[str], str]:
    def edit(text: str) -> str:
        assert old in text
        return text.replace(old, new, 1)

    return edit


def _moved(text: str) -> str:
    """The text with the nodes n40 to n59 moved to the end of the node list."""
    start, end = text.index("- id: n40\n"), text.index("- id: n60\n")
    run = text[start:end]
    rest = text[:start] + text[end:]
    at = rest.index("edges:\n")
    return rest[:at] + run + rest[at:]


EDITS: list[tuple[str, Callable[[str], str]]] = [
    ("a title", _replace("- id: n100\n  title: x", "- id: n100\n  title: y")),
    ("a node added", _replace("- id: n7\n", "- id: extra\n- id: n7\n")),
    ("a node removed", _replace("- id: n9\n", "- id: n9\n  cancelled: true\n- id: gone\n")),
    ("a run moved", _moved),
    (
        "an edge changed",
        _replace("- {from: n3, to: n4, type: related}", "- {from: n3, to: n5, type: requires}"),
    ),
]


def _keys_now(plan: Path, cache: Path) -> dict[str, list[str]] | None:
    found = read_blocks_keyed(plan.read_text(), "plangraph.yaml", MAX_YAML_NODES, cache)
    assert found is not None  # the bench's layout splits
    return found[2]()


def _read_then_edited(tmp_path: Path, edit: Callable[[str], str]) -> tuple[Path, Path]:
    """The bench's plan read once with a cache, then given *edit*: the plan file and the
    cache folder."""
    plan, cache = tmp_path / "plangraph.yaml", tmp_path / "cache"
    _big(plan)
    load_plan(plan, cache_dir=cache)
    plan.write_text(edit(plan.read_text()))
    return plan, cache


@pytest.mark.parametrize("edit", [e for _, e in EDITS], ids=[n for n, _ in EDITS])
def test_the_keys_by_block_are_the_keys_of_each_item(
    tmp_path: Path, hashed: list[int], edit: Callable[[str], str]
) -> None:
    plan, cache = _read_then_edited(tmp_path, edit)
    hashed.clear()
    by_block = _keys_now(plan, cache)
    found = read_blocks_keyed(plan.read_text(), "plangraph.yaml", MAX_YAML_NODES, cache)
    assert found is not None
    data = json.loads(found[0])
    hashed_by_item = itemcache._keyed(data)
    assert by_block == hashed_by_item and by_block is not None
    assert 0 < hashed[0] <= 2 * 64  # the items of the runs the edit touched
    assert hashed[0] < len(by_block["nodes"]) + len(by_block["edges"])


@pytest.mark.parametrize("edit", [e for _, e in EDITS], ids=[n for n, _ in EDITS])
def test_an_edit_reads_the_plan_as_without_a_cache(
    tmp_path: Path, hashed: list[int], edit: Callable[[str], str]
) -> None:
    plan, cache = _read_then_edited(tmp_path, edit)
    hashed.clear()
    edited = load_plan(plan, cache_dir=cache)
    fresh = load_plan(plan)
    assert sum(hashed) < 300  # not every item hashed again
    assert edited.plan == fresh.plan and edited.plan.to_data() == fresh.plan.to_data()
    assert edited.plan.digest == fresh.plan.digest
    assert edited.plan.criterion_digests == fresh.plan.criterion_digests
    assert edited.plan.topological_order == fresh.plan.topological_order


@pytest.mark.parametrize(
    "damage",
    [
        lambda key, keys: f"{key}\t{keys[:-1]}",
        lambda key, keys: f"{key}\t{keys.upper()}",
        lambda key, keys: f"{key}\t{keys},{keys[:64]}",
        lambda key, keys: f"{key}\t",
        lambda key, keys: f"{key[:10]}\t{keys}",
        lambda key, keys: "\udcff not text",
    ],
)
def test_a_damaged_block_items_file_is_a_miss(
    tmp_path: Path, hashed: list[int], damage: Any
) -> None:
    plan, cache = tmp_path / "plangraph.yaml", tmp_path / "cache"
    _big(plan)
    expected = _keys_now(plan, cache)
    path = cache / blockitems.FILE_NAME
    rows = [row.split("\t", 1) for row in path.read_text().splitlines()]
    body = "\n".join(damage(key, keys) for key, keys in rows) + "\n"
    path.write_bytes(body.encode("utf-8", "surrogateescape"))
    hashed.clear()
    assert _keys_now(plan, cache) == expected  # no traceback: every run hashed again
    assert sum(hashed) == 300 + 299
    hashed.clear()
    assert _keys_now(plan, cache) == expected  # and kept anew
    assert sum(hashed) == 0
