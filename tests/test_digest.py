"""Plan and criterion digests: the identity of a plan survives formatting, not meaning."""

from __future__ import annotations

import json

import pytest

from pytest_plangraph.plan.file import load_plan
from pytest_plangraph.plan.model import criterion_digest

BASE = """
plangraph: 1
plan: auth-login
nodes:
  - id: step-a
    outputs: [src/a.json]
    acceptance:
      - id: ac-1
        assertion: the schema is valid
        verifier: {type: schema, schema: src/a.json, artifact: fixtures/a.json}
  - id: step-b
edges:
  - {from: step-a, to: step-b, type: consumes}
"""

REFORMATTED = """
# the same plan, written differently
plan: "auth-login"
plangraph: 1
edges:
  - type: consumes
    to: step-b
    from: 'step-a'
    strength: strong        # the default, spelled out
nodes:
  - id: step-b
    kind: step
  - acceptance:
      - verifier:
          artifact: fixtures/a.json
          type: schema
          schema: src/a.json
        assertion: "the schema is valid"
        id: ac-1
        required: true
    outputs:
      - src/a.json
    id: step-a
"""


def digests(write_plan, text):
    plan = load_plan(write_plan(text)).plan
    node = plan.node("step-a")
    assert node is not None
    return plan.digest, criterion_digest("step-a", node.acceptance[0])


def test_reformatted_plan_has_the_same_digests(write_plan):
    assert digests(write_plan, BASE) == digests(write_plan, REFORMATTED)


def test_json_and_yaml_forms_agree(tmp_path, write_plan):
    plan = load_plan(write_plan(BASE)).plan
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(plan.to_json(by_alias=True)))
    assert load_plan(path).plan.digest == plan.digest


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("the schema is valid", "the schema is valid and strict"),
        ("artifact: fixtures/a.json}", "artifact: fixtures/b.json}"),
        ("type: schema, schema: src/a.json", "type: schema, schema: src/b.json"),
        ("id: ac-1", "id: ac-2"),
    ],
    ids=["assertion", "artifact-setting", "schema-setting", "criterion-id"],
)
def test_a_changed_criterion_changes_both_digests(write_plan, old, new):
    before = digests(write_plan, BASE)
    after = digests(write_plan, BASE.replace(old, new))
    assert before[0] != after[0]
    assert before[1] != after[1]


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("type: consumes}", "type: requires}"),
        ("outputs: [src/a.json]", "outputs: [src/a.json, src/c.json]"),
        ("  - id: step-b\n", "  - id: step-b\n    title: B\n"),
    ],
    ids=["edge-type", "outputs", "title"],
)
def test_structure_changes_the_plan_digest_only(write_plan, old, new):
    before = digests(write_plan, BASE)
    after = digests(write_plan, BASE.replace(old, new))
    assert before[0] != after[0]
    assert before[1] == after[1]


def test_optional_flag_changes_the_criterion_digest(write_plan):
    text = BASE.replace(
        "assertion: the schema is valid", "assertion: the schema is valid\n        required: false"
    )
    assert digests(write_plan, BASE)[1] != digests(write_plan, text)[1]


def test_canonical_json_is_json_dumps_with_sorted_keys_and_no_spaces() -> None:
    import json
    import random

    from pytest_plangraph.canonical import canonical_json

    rng = random.Random(7)

    def value(depth: int) -> object:
        kind = rng.randrange(8 if depth < 3 else 5)
        if kind == 0:
            return rng.choice([None, True, False])
        if kind == 1:
            return rng.randint(-(10**20), 10**20)
        if kind == 2:
            return rng.choice([0.1, -2.5e-9, 1e300, 3.0])
        if kind in (3, 4):
            return "".join(rng.choice('aé"\\\n✓𝄞/ ') for _ in range(rng.randrange(6)))
        if kind in (5, 6):
            return {f"k{rng.randrange(9)}é": value(depth + 1) for _ in range(rng.randrange(4))}
        return [value(depth + 1) for _ in range(rng.randrange(4))]

    for _ in range(300):
        data = value(0)
        expected = json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        assert canonical_json(data) == expected


RELATED = """
plangraph: 1
plan: auth-login
nodes:
  - id: step-a
  - id: step-b
edges:
  - {from: step-a, to: step-b, type: related}
  - {from: step-b, to: step-a, type: related, strength: strong}
"""


def test_a_related_edge_is_weak_by_default_and_its_digest_never_moves(write_plan):
    """The default strength of a ``related`` edge counts as written: it is in the plan's
    digest, so the digest stays the one evidence was bound to (the value is fixed here)."""
    plan = load_plan(write_plan(RELATED)).plan
    assert [edge.strength for edge in plan.edges] == ["weak", "strong"]
    assert all("strength" in edge.fields_set for edge in plan.edges)
    assert plan.digest == "f12754a34d32c078afd8ca9e350177117678935f919833829d36e811d91c08c1"
    spelled = RELATED.replace("type: related}", "type: related, strength: weak}", 1)
    assert load_plan(write_plan(spelled)).plan.digest == plan.digest


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"a": [1, 2.5, "NaN"], "b": null}', None),
        ("NaN", ("", "nan")),
        ('{"a": {"b": [0, Infinity]}}', ("a.b[1]", "inf")),
        ('[{"x": 1}, {"y": -Infinity, "z": NaN}]', ("[1].y", "-inf")),
        ('{"big": 1e400}', ("big", "inf")),
    ],
)
def test_the_first_member_json_has_no_value_for_is_named(text: str, expected) -> None:
    from pytest_plangraph.canonical import non_finite_member

    found = non_finite_member(json.loads(text))
    assert (found if found is None else (found[0], repr(found[1]))) == expected
