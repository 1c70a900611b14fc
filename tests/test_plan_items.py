"""Validating a large plan item by item (``plan/itemcache.py``): on generated plans and generated
edits of them, the plan built from kept and newly validated items is the plan the whole plan's
validation gives (equal values, field sets, validated form and digests), and a plan that is not
valid is refused as the whole validation refuses it; a real plan file validates only its new
items after an edit, says what is wrong with an invalid node as without the cache, and a damaged
item file is a miss."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError
from test_plan_builders import _parts
from test_runtime_models import SETTINGS, edges, nodes, plans

from pytest_plangraph.errors import PlanError
from pytest_plangraph.plan import boundary, itemcache
from pytest_plangraph.plan.file import load_plan
from pytest_plangraph.plan.itemcache import FILE_NAME, validated_by_item
from pytest_plangraph.plan.model import Plan, runtime_plan

INVALID = [
    {"max_retry": -1},
    {"colour": "red"},
    {"id": ""},
    {"acceptance": [{"id": "c", "verifier": {"type": "artifact"}}]},
    {"timeout_s": "soon"},
]
"""Changes that make a node invalid."""


def _whole(data: dict[str, Any]) -> Plan | None:
    try:
        return runtime_plan(data)
    except ValidationError:
        return None


def _same(found: tuple[Any, ...] | None, whole: Plan | None) -> None:
    if whole is None:
        assert found is None
        return
    assert found is not None
    plan, form = found[0], found[1]
    assert plan == whole and form == whole.to_data()
    assert found[3] == json.dumps(form, ensure_ascii=False)  # the text kept, as encoded
    for part, expected in zip(_parts(plan), _parts(whole), strict=True):
        assert type(part) is type(expected) and part.fields_set == expected.fields_set
    assert plan.digest == whole.digest
    assert plan.criterion_digests == whole.criterion_digests


@st.composite
def edited(draw: st.DrawFn, base: dict[str, Any]) -> dict[str, Any]:
    """*base* after one to three edits: an item replaced, added, copied or removed, a node made
    invalid, a node's title set, changed, removed or made a number, or a top-level field
    changed."""
    data = json.loads(json.dumps(base))
    for _ in range(draw(st.integers(1, 3))):
        field = draw(st.sampled_from(["nodes", "edges"]))
        items = data.setdefault(field, [])
        what = draw(
            st.sampled_from(["replace", "add", "copy", "remove", "invalid", "title", "retitle"])
        )
        if what == "title":
            data["title"] = draw(st.text(max_size=4))
        elif what == "retitle" and field == "nodes" and items:  # a node's title alone
            node = items[draw(st.integers(0, len(items) - 1))]
            title = draw(st.one_of(st.text(max_size=4), st.none(), st.integers(0, 3)))
            if title is None:
                node.pop("title", None)
            else:
                node["title"] = title
        elif what == "copy" and items:  # an item written twice: alike, one key
            items.insert(draw(st.integers(0, len(items))), dict(draw(st.sampled_from(items))))
        elif what == "add" or not items:
            items.insert(
                draw(st.integers(0, len(items))), draw(nodes if field == "nodes" else edges)
            )
        elif what == "remove":
            items.pop(draw(st.integers(0, len(items) - 1)))
        elif what == "replace":
            items[draw(st.integers(0, len(items) - 1))] = draw(nodes if field == "nodes" else edges)
        else:
            item = items[draw(st.integers(0, len(items) - 1))]
            item.update(draw(st.sampled_from(INVALID)) if field == "nodes" else {"type": "x"})
    return data


@SETTINGS
@given(st.data())
def test_items_validate_as_the_whole_plan(data: st.DataObject) -> None:
    base = data.draw(plans)
    with tempfile.TemporaryDirectory() as name:
        cache = Path(name)
        _same(validated_by_item(json.loads(json.dumps(base)), cache), _whole(base))
        for _ in range(2):  # edits of it, read with the items kept so far
            edit = data.draw(edited(base))
            found = validated_by_item(json.dumps(edit).encode(), cache)
            _same(found, _whole(edit))
            if found is not None:  # the form as the boundary dumps it, key for key
                model = boundary.Plan.model_validate(edit)
                assert found[3] == json.dumps(boundary.plan_data(model), ensure_ascii=False)


def _big(path: Path, count: int = 300) -> None:
    nodes = "".join(
        f"- id: n{i}\n  title: {'x' * 40}\n  outputs: [out/n{i}.txt]\n  acceptance:\n"
        f"  - id: ac\n    verifier: {{type: artifact, path: out/n{i}.txt}}\n"
        for i in range(count)
    )
    edges = "".join(f"- {{from: n{i}, to: n{i + 1}, type: related}}\n" for i in range(count - 1))
    path.write_text(f"plangraph: 1\nplan: big\nnodes:\n{nodes}edges:\n{edges}")


def _lines(cache: Path) -> int:
    return len((cache / FILE_NAME).read_text().splitlines())


def test_an_edit_validates_its_new_items_only(tmp_path: Path) -> None:
    plan, cache = tmp_path / "plangraph.yaml", tmp_path / "cache"
    _big(plan)
    first = load_plan(plan, cache_dir=cache)
    assert _lines(cache) == 300 + 299 + 1  # every node and edge kept, and the other fields
    plan.write_text(plan.read_text().replace("- id: n7\n", "- id: n7\n  risk: high\n", 1))
    edited = load_plan(plan, cache_dir=cache)
    assert _lines(cache) == 300 + 299 + 2  # the one node changed, validated alone
    fresh = load_plan(plan)  # no cache: validated whole
    assert edited.plan == fresh.plan != first.plan
    assert edited.plan.to_data() == fresh.plan.to_data()
    assert edited.plan.digest == fresh.plan.digest
    assert all(edge.strength == "weak" for edge in edited.plan.edges)  # related: weak


def test_an_invalid_node_is_explained_as_without_the_cache(tmp_path: Path) -> None:
    plan, cache = tmp_path / "plangraph.yaml", tmp_path / "cache"
    _big(plan)
    load_plan(plan, cache_dir=cache)
    text = plan.read_text().replace("- id: n9\n", "- id: n9\n  max_retry: -1\n  colour: red\n", 1)
    plan.write_text(text.replace("type: related}\n", "type: relates}\n", 1))
    messages = []
    for where in (cache, None, cache):
        with pytest.raises(PlanError) as info:
            load_plan(plan, cache_dir=where)
        messages.append(str(info.value))
    assert messages[0] == messages[1] == messages[2]
    assert "max_retry" in messages[0] and "colour" in messages[0] and "relates" in messages[0]
    line = text.split("\n").index("  max_retry: -1") + 1
    assert f"plangraph.yaml:{line}:" in messages[0]


@pytest.mark.parametrize(
    "damage",
    [
        lambda key, text: f"{key}\t{{",
        lambda key, text: f"{key}\t5",
        lambda key, text: f"{key}\t{{}}",
        lambda key, text: f'{key}\t{text[:-1]}, "colour": 1}}',
        lambda key, text: f"{key}\t]",
        lambda key, text: f"{key[:10]}\t{text}",
        lambda key, text: "\udcff not text",
    ],
)
def test_a_damaged_item_file_is_a_miss(tmp_path: Path, damage: Any) -> None:
    plan, cache = tmp_path / "plangraph.yaml", tmp_path / "cache"
    _big(plan)
    first = load_plan(plan, cache_dir=cache)
    rows = [row.split("\t", 1) for row in (cache / FILE_NAME).read_text().splitlines()]
    body = "\n".join(damage(key, text) for key, text in rows) + "\n"
    (cache / FILE_NAME).write_bytes(body.encode("utf-8", "surrogateescape"))
    plan.write_text(plan.read_text().replace("- id: n7\n", "- id: n7\n  risk: high\n", 1))
    edited = load_plan(plan, cache_dir=cache)  # no traceback: validated whole
    fresh = load_plan(plan)
    assert edited.plan == fresh.plan != first.plan
    assert edited.plan.digest == fresh.plan.digest


def test_a_title_edit_validates_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    plan, cache = tmp_path / "plangraph.yaml", tmp_path / "cache"
    _big(plan)
    load_plan(plan, cache_dir=cache)
    validations: list[int] = []
    real = itemcache._validated

    def counting(data: Any, new: Any) -> Any:
        validations.append(sum(len(found) for found in new.values()))
        return real(data, new)

    monkeypatch.setattr(itemcache, "_validated", counting)
    text, x = plan.read_text(), "x" * 40
    for old, new in [
        (f"- id: n7\n  title: {x}\n", "- id: n7\n  title: y\n"),  # a title changed
        ("- id: n7\n  title: y\n", "- id: n7\n  title: 'z: z'\n"),  # and changed again
        (f"- id: n8\n  title: {x}\n", "- id: n8\n"),  # a title removed: validated again
        (f"- id: n9\n  title: {x}\n", f"- id: n9\n  titlex: {x}\n"),  # a wrong field
        (f"- id: n10\n  title: {x}\n", "- id: n10\n  title: 7\n"),  # not text
    ]:
        assert old in text
        text = text.replace(old, new, 1)
        plan.write_text(text)
        with_cache = None
        try:
            with_cache = load_plan(plan, cache_dir=cache)
        except PlanError as error:
            with pytest.raises(PlanError) as whole:
                load_plan(plan)
            assert str(error) == str(whole.value)
            continue
        fresh = load_plan(plan)
        assert with_cache.plan == fresh.plan and with_cache.plan.digest == fresh.plan.digest
        form = json.dumps(with_cache.plan.to_data())
        assert form == json.dumps(fresh.plan.to_data())  # the same form, key for key
    # the two title edits validate nothing; the title removed, the wrong field, and that one
    # with the title that is not text (the wrong field still there) are validated
    assert validations == [1, 1, 2]


@pytest.mark.parametrize(
    "damage",
    [
        lambda rows: [f"{key}\t{kept[:-1]}" for key, kept in rows],  # a key cut short
        lambda rows: [f"{key}\t{rows[0][1]}" for key, _ in rows],  # all the first node's
        lambda rows: ["\t".join(row)[:-3] for row in rows],  # cut lines
        lambda rows: ["not a line"],
    ],
)
def test_a_damaged_titles_file_is_a_miss(tmp_path: Path, damage: Any) -> None:
    plan, cache = tmp_path / "plangraph.yaml", tmp_path / "cache"
    _big(plan)
    x = "x" * 40
    plan.write_text(plan.read_text().replace(f"- id: n7\n  title: {x}\n", "- id: n7\n  title: a\n"))
    load_plan(plan, cache_dir=cache)
    path = cache / itemcache.TITLES_NAME
    rows = [row.split("\t", 1) for row in path.read_text().splitlines()]
    path.write_text("\n".join(damage(rows)) + "\n")
    plan.write_text(plan.read_text().replace("- id: n7\n  title: a\n", "- id: n7\n  title: b\n"))
    edited = load_plan(plan, cache_dir=cache)  # no traceback: validated, or taken rightly
    fresh = load_plan(plan)
    assert edited.plan == fresh.plan and edited.plan.digest == fresh.plan.digest
    assert json.dumps(edited.plan.to_data()) == json.dumps(fresh.plan.to_data())
