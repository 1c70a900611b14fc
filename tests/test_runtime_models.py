"""The runtime classes against the pydantic models of the boundary, on generated plans, records
and events: the same JSON forms, the same digests, and the validated form the plan cache keeps
builds the same plan again. The reference digests are computed here the way the code before the
runtime classes computed them: from the pydantic models' own dumps."""

from __future__ import annotations

import json
import string
from typing import Any

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from pytest_plangraph.canonical import canonical_json, digest
from pytest_plangraph.plan import boundary
from pytest_plangraph.plan.evidence import Evidence, checked_evidence, evidence_id
from pytest_plangraph.plan.model import (
    Event,
    Plan,
    criterion_digest,
    plan_criterion_digests,
    plan_digest,
    runtime_plan,
)
from pytest_plangraph.plan.policy import TEST_POLICY_DEFAULTS, effective_policy

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

ids = st.text(string.ascii_letters + string.digits + "._-", min_size=1, max_size=8).filter(
    lambda s: s[0].isalnum()
)
texts = st.text(max_size=6)
paths = st.text(string.ascii_lowercase + "/._", min_size=1, max_size=10)
numbers = st.one_of(st.integers(1, 5000), st.floats(0.5, 5000, allow_nan=False))
policies = st.sampled_from(["fail", "allow"])


def _some(**fields: Any) -> st.SearchStrategy[dict[str, Any]]:
    """A dict with any subset of *fields* (each a strategy)."""
    return st.fixed_dictionaries({}, optional=fields)


verifiers = st.one_of(
    _some(
        tests=st.lists(paths, max_size=2),
        exclude=st.lists(paths, max_size=2),
        skips=st.one_of(st.none(), policies),
        xfail=st.one_of(st.none(), policies),
        min_passed=st.one_of(st.none(), st.integers(0, 3)),
    ).map(lambda d: {"type": "test", **d}),
    st.fixed_dictionaries({"schema": paths, "artifact": paths}).map(
        lambda d: {"type": "schema", **d}
    ),
    st.fixed_dictionaries(
        {"path": paths},
        optional={
            "sha256": st.one_of(
                st.none(), st.text("0123456789abcdefABCDEF", min_size=64, max_size=64)
            ),
            "min_bytes": st.one_of(st.none(), st.integers(0, 9)),
        },
    ).map(lambda d: {"type": "artifact", **d}),
    _some(role=st.one_of(st.none(), texts)).map(lambda d: {"type": "approval", **d}),
    st.fixed_dictionaries(
        {"run": st.lists(paths, min_size=1, max_size=2)},
        optional={
            "timeout_s": numbers,
            "subjects": st.lists(paths, max_size=2),
            "cwd": st.one_of(st.none(), paths),
        },
    ).map(lambda d: {"type": "command", **d}),
    st.dictionaries(
        st.sampled_from(["level", "url", "opts"]),
        st.one_of(
            st.integers(), texts, st.booleans(), st.none(), st.lists(st.integers(), max_size=2)
        ),
        max_size=2,
    ).map(lambda d: {"type": "lighthouse", **d}),
)
criteria = st.fixed_dictionaries(
    {"id": ids, "verifier": verifiers},
    optional={"assertion": texts, "required": st.booleans()},
)
nodes = st.fixed_dictionaries(
    {"id": ids},
    optional={
        "kind": st.sampled_from(["objective", "step", "milestone"]),
        "title": texts,
        "parent": st.one_of(st.none(), ids),
        "outputs": st.lists(paths, max_size=2),
        "acceptance": st.lists(criteria, max_size=3),
        "constraints": st.lists(texts, max_size=2),
        "risk": st.one_of(st.none(), texts),
        "cancelled": st.booleans(),
        "effect": st.sampled_from(["read", "write", "irreversible"]),
        "compensate": st.one_of(st.none(), texts),
        "idempotent": st.booleans(),
        "max_retry": st.integers(0, 4),
        "timeout_s": st.one_of(st.none(), numbers),
        "inputs": st.dictionaries(ids, paths, max_size=2),
        "outputs_schema": st.dictionaries(ids, texts, max_size=2),
    },
)
edges = st.fixed_dictionaries(
    {
        "from": ids,
        "to": ids,
        "type": st.sampled_from(
            ["requires", "consumes", "validates", "conflicts", "related", "contains"]
        ),
    },
    optional={
        "strength": st.sampled_from(["strong", "weak"]),
        "artifacts": st.one_of(st.none(), st.lists(paths, max_size=2)),
        "source": texts,
        "confidence": st.one_of(st.just(1), st.just(0), st.floats(0, 1)),
        "status": st.sampled_from(["active", "proposed", "inactive"]),
    },
)
plans = st.fixed_dictionaries(
    {"plangraph": st.just(1), "plan": ids},
    optional={
        "title": texts,
        "description": texts,
        "max_replan_rounds": st.integers(0, 3),
        "defaults": _some(test=_some(skips=policies, xfail=policies, min_passed=st.integers(0, 3))),
        "nodes": st.lists(nodes, max_size=5),
        "edges": st.lists(edges, max_size=5),
    },
)


def _reference_criterion_digest(
    node_id: str, criterion: boundary.Criterion, defaults: boundary.PlanDefaults
) -> str:
    """A criterion's digest as the code before the runtime classes computed it."""
    body = criterion.model_dump(mode="json", by_alias=True, exclude_defaults=True)
    dumped = criterion.verifier.model_dump(mode="json", by_alias=True)
    if isinstance(criterion.verifier, boundary.TestVerifier):
        for name in ("exclude", *TEST_POLICY_DEFAULTS):
            dumped.pop(name, None)
        policy = effective_policy(criterion.verifier, defaults)  # type: ignore[arg-type]
        for name, default in TEST_POLICY_DEFAULTS.items():
            if getattr(policy, name) != default:
                dumped[name] = getattr(policy, name)
        if policy.exclude:
            dumped["exclude"] = list(policy.exclude)
    body["verifier"] = dumped
    return digest({"node": node_id, "criterion": body})


def _reference_plan_digest(model: boundary.Plan) -> str:
    data = model.model_dump(mode="json", by_alias=True, exclude_defaults=True)
    data["plangraph"] = model.plangraph
    data["nodes"] = sorted(data.get("nodes", []), key=lambda n: n["id"])
    data["edges"] = sorted(
        data.get("edges", []), key=lambda e: (e["from"], e["to"], e["type"], canonical_json(e))
    )
    return digest(data)


def _validated(data: dict[str, Any]) -> tuple[boundary.Plan, Plan]:
    try:
        return boundary.Plan.model_validate(data), runtime_plan(data)
    except ValidationError:
        assume(False)
        raise


@SETTINGS
@given(plans)
def test_generated_plans_have_the_digests_the_models_give(data: dict[str, Any]) -> None:
    model, plan = _validated(data)
    assert plan.digest == plan_digest(plan) == _reference_plan_digest(model)
    expected: dict[tuple[str, str], str] = {}
    seen: set[str] = set()
    for node in model.nodes:
        if node.id not in seen:
            seen.add(node.id)
            for criterion in node.acceptance:
                key = (node.id, criterion.id)
                if key not in expected:
                    expected[key] = _reference_criterion_digest(node.id, criterion, model.defaults)
    assert plan_criterion_digests(plan) == plan.criterion_digests == expected
    for node, runtime_node in zip(model.nodes, plan.nodes, strict=True):
        for criterion, runtime_criterion in zip(
            node.acceptance, runtime_node.acceptance, strict=True
        ):
            assert criterion_digest(
                node.id, runtime_criterion, plan.defaults
            ) == _reference_criterion_digest(node.id, criterion, model.defaults)


@SETTINGS
@given(plans)
def test_generated_plans_dump_as_the_models_do(data: dict[str, Any]) -> None:
    model, plan = _validated(data)
    for options in (
        {},
        {"by_alias": True},
        {"by_alias": True, "exclude_defaults": True},
        {"by_alias": True, "exclude_unset": True},
        {"exclude_unset": True},
    ):
        assert plan.to_json(**options) == model.model_dump(mode="json", **options), options
    for node, runtime_node in zip(model.nodes, plan.nodes, strict=True):
        assert runtime_node.fields_set == node.model_fields_set
    for edge, runtime_edge in zip(model.edges, plan.edges, strict=True):
        assert runtime_edge.fields_set == edge.model_fields_set
        assert runtime_edge.propagates == (
            edge.status == "active"
            and edge.strength == "strong"
            and edge.type in ("requires", "consumes", "validates")
        )


@SETTINGS
@given(plans)
def test_the_validated_form_builds_the_same_plan_again(data: dict[str, Any]) -> None:
    _, plan = _validated(data)
    kept = json.loads(json.dumps(plan.to_data()))  # as the plan cache writes and reads it
    again = Plan.from_data(kept)
    assert again == plan
    assert again.digest == plan.digest
    assert again.criterion_digests == plan.criterion_digests
    assert again.topological_order == plan.topological_order
    assert again.to_json(by_alias=True, exclude_unset=True) == plan.to_json(
        by_alias=True, exclude_unset=True
    )


plain = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), texts),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(texts, inner, max_size=3)),
    max_leaves=8,
)
records = st.fixed_dictionaries(
    {
        "plan": st.fixed_dictionaries({"id": ids, "version": st.integers(0, 9), "digest": texts}),
        "node": ids,
        "criterion": ids,
        "criterion_digest": texts,
        "input_digest": texts,
        "verifier": ids,
        "outcome": st.sampled_from(["passed", "failed", "error"]),
        "run": st.fixed_dictionaries(
            {"id": texts, "started": texts, "finished": texts, "python": texts, "plugin": texts},
            optional={
                "pytest": st.one_of(st.none(), texts),
                "ci": st.dictionaries(ids, texts, max_size=2),
                "optimize": st.one_of(st.none(), st.integers(0, 2)),
                "assert_mode": st.one_of(st.none(), st.sampled_from(["rewrite", "plain"])),
            },
        ),
        "recorded_by": texts,
    },
    optional={
        "reason": st.one_of(st.none(), texts),
        "details": st.dictionaries(texts, plain, max_size=3),
        "subjects": st.dictionaries(paths, texts, max_size=2),
        "git": _some(
            commit=st.one_of(st.none(), texts),
            dirty=st.booleans(),
            branch=st.one_of(st.none(), texts),
        ),
    },
)


@SETTINGS
@given(records)
def test_generated_records_have_the_ids_the_model_gives(fields: dict[str, Any]) -> None:
    model = boundary.Evidence.model_validate({**fields, "id": ""})
    expected = digest(model.model_dump(mode="json", exclude={"id"}))
    record = Evidence.create(**fields)
    assert record.id == evidence_id(record) == expected
    stored = {**model.model_dump(mode="json"), "id": expected}
    assert record.to_json() == stored
    assert checked_evidence(stored) == record  # as an evidence event's payload reads back
    event = Event(kind="evidence", node="n", at="t", by="b", plan_digest="d", payload=stored)
    assert event.evidence == record


@SETTINGS
@given(
    st.sampled_from(["claim", "approval", "revoke", "cancel", "retry", "change"]),
    st.one_of(st.none(), ids),
    st.dictionaries(texts, plain, max_size=3),
    st.one_of(st.none(), texts),
)
def test_generated_events_have_the_content_the_model_gives(
    kind: str, criterion: str | None, payload: dict[str, Any], key: str | None
) -> None:
    fields = {
        "kind": kind,
        "node": "n",
        "criterion": criterion,
        "at": "2026-01-01T00:00:00+00:00",
        "by": "someone",
        "plan_digest": "d" * 64,
        "payload": payload,
        "idempotency_key": key,
    }
    model = boundary.Event.model_validate(fields)
    event = Event(**fields)  # type: ignore[arg-type]
    content = model.model_dump(mode="json", exclude={"id", "seq", "prev", "hash", "signature"})
    assert event.content() == content
    assert event.to_json() == model.model_dump(mode="json")


def test_values_that_are_not_plain_json_convert_as_pydantic_converts_them() -> None:
    payload = {"tuple": (1, 2), "set": {3}, "inf": float("inf"), "nested": {"t": ("a",)}}
    fields = {"kind": "claim", "at": "t", "by": "b", "plan_digest": "d", "payload": payload}
    model = boundary.Event.model_validate(fields)
    assert Event(**fields).content() == model.model_dump(  # type: ignore[arg-type]
        mode="json", exclude={"id", "seq", "prev", "hash", "signature"}
    )
