"""Building the runtime plan from its validated form (``Frozen.from_data``): the per-class
builders store the fields straight into the slots, and must give what the constructor gives,
value for value and field set for field set, on every fixture plan and on generated plans; a
known plan is read without calling the constructor once per node; data that is not of the
class is refused as the constructor refused it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from test_runtime_models import SETTINGS, _validated, plans

from pytest_plangraph.plan.cache import keyed, read_validated, validated_text
from pytest_plangraph.plan.file import cache_key, load_plan
from pytest_plangraph.plan.frozen import Frozen, ListOf
from pytest_plangraph.plan.model import (
    Criterion,
    Edge,
    Node,
    Plan,
    PluginVerifier,
    verifier_from_data,
)
from pytest_plangraph.values import FrozenInstanceError

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
FIXTURE_PLANS = sorted([*FIXTURES.glob("*/plangraph.yaml"), *FIXTURES.glob("lint/*.yaml")], key=str)


def _reference(cls: type[Frozen], data: dict[str, Any]) -> Any:
    """The value as the constructor builds it (the way ``from_data`` built it before)."""
    names = {alias: name for name, alias in cls.ALIASES.items()}
    values: dict[str, Any] = {}
    for key, item in data.items():
        name = names.get(key, key)
        how = cls.CONVERT.get(name)
        if isinstance(how, ListOf):
            item = [_reference(how.cls, part) for part in item]
        elif isinstance(how, type):
            item = _reference(how, item)
        elif how is verifier_from_data:  # a plug-in's verifier keeps its settings as they are
            kind = type(verifier_from_data(item))
            item = verifier_from_data(item) if kind is PluginVerifier else _reference(kind, item)
        values[name] = item
    return cls(**values, fields_set=frozenset(values))


def _parts(plan: Plan) -> list[Frozen]:
    parts: list[Frozen] = [plan, plan.defaults, plan.defaults.test, *plan.nodes, *plan.edges]
    for node in plan.nodes:
        for criterion in node.acceptance:
            parts += [criterion, criterion.verifier]
    return parts


def _same(built: Plan, reference: Plan) -> None:
    assert built == reference
    for part, expected in zip(_parts(built), _parts(reference), strict=True):
        assert type(part) is type(expected)  # the open twin became the class itself
        assert part.fields_set == expected.fields_set
        assert part.to_data() == expected.to_data()
    assert built.digest == reference.digest
    assert built.criterion_digests == reference.criterion_digests


@pytest.mark.parametrize("path", FIXTURE_PLANS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_fixture_plan_builds_as_the_constructor_builds_it(path: Path) -> None:
    plan = load_plan(path).plan
    data = json.loads(json.dumps(plan.to_data()))  # as the plan cache keeps it
    _same(Plan.from_data(data), _reference(Plan, data))


@SETTINGS
@given(plans)
def test_generated_plans_build_as_the_constructor_builds_them(data: dict[str, Any]) -> None:
    _, plan = _validated(data)
    kept = json.loads(json.dumps(plan.to_data()))
    _same(Plan.from_data(kept), _reference(Plan, kept))


def test_built_values_stay_frozen() -> None:
    node = Node.from_data({"id": "a", "acceptance": [{"id": "c", "verifier": {"type": "test"}}]})
    edge = Edge.from_data({"from": "a", "to": "b", "type": "requires"})
    with pytest.raises(FrozenInstanceError):
        node.title = "changed"  # type: ignore[misc]
    with pytest.raises(FrozenInstanceError):
        del edge.to
    assert edge.from_ == "a" and edge.fields_set == {"from_", "to", "type"}
    assert node.acceptance[0].verifier.tests == [] and node.outputs == []
    # a default made by a factory is a new value in every built value
    assert Node.from_data({"id": "b"}).outputs is not Node.from_data({"id": "c"}).outputs


def test_data_that_is_not_of_the_class_is_refused() -> None:
    with pytest.raises(TypeError, match="no field 'colour'"):
        Edge.from_data({"from": "a", "to": "b", "type": "requires", "colour": "red"})
    with pytest.raises(TypeError, match="'to'"):
        Edge.from_data({"from": "a", "type": "requires"})
    with pytest.raises(TypeError, match="'id'"):
        Criterion.from_data({"verifier": {"type": "approval"}})
    # the same keys seen before are still checked
    Edge.from_data({"from": "a", "to": "b", "type": "requires"})
    with pytest.raises(TypeError):
        Edge.from_data({"from": "a", "to": "b", "typo": "requires"})


def test_a_damaged_validated_entry_is_read_anew(tmp_path: Path) -> None:
    plan_file = tmp_path / "plangraph.yaml"
    plan_file.write_bytes((FIXTURES / "jwt-login/plangraph.yaml").read_bytes())
    cache = tmp_path / ".plangraph/cache"
    cache.mkdir(parents=True)
    first = load_plan(plan_file, cache_dir=cache).plan
    key = cache_key(plan_file.read_bytes())
    data = json.loads(validated_text(cache, key))
    data["nodes"][0]["colour"] = "red"  # well kept (its check holds), but no plan's form
    (cache / f"valid-{key}.json").write_bytes(keyed(key, json.dumps(data).encode()))
    assert read_validated(cache, key) is None
    assert load_plan(plan_file, cache_dir=cache).plan == first


def test_a_known_plan_calls_no_constructor_per_node(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    plan_file = tmp_path / "plangraph.yaml"
    plan_file.write_bytes((FIXTURES / "jwt-login/plangraph.yaml").read_bytes())
    cache = tmp_path / ".plangraph/cache"
    cache.mkdir(parents=True)
    first = load_plan(plan_file, cache_dir=cache).plan
    made: list[str] = []
    constructor = Frozen.__init__

    def counting(self: Frozen, **values: Any) -> None:
        made.append(type(self).__name__)
        constructor(self, **values)

    monkeypatch.setattr(Frozen, "__init__", counting)
    again = load_plan(plan_file, cache_dir=cache).plan
    assert again == first and again.nodes
    assert not {"Node", "Edge", "Criterion"} & set(made), made
