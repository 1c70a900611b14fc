"""The plan's digests (DESIGN §5): the plan digest over its canonical form, and each
criterion's digest bound to its node id — computed from the normalised JSON form of the runtime
values, so key order, quoting, comments and spelled-out defaults never change them."""

from __future__ import annotations

from typing import Any

from ..canonical import canonical_json, digest
from .policy import TEST_POLICY_DEFAULTS, PlanDefaults, effective_policy

# The plan and its criteria are typed ``Any`` here: they are :mod:`.model`'s runtime values, and
# that module imports this one (its ``digest`` and ``criterion_digests`` properties).


def canonical_plan(plan: Any) -> dict[str, Any]:
    """The normalised JSON form of a plan: defaults dropped, nodes and edges in a fixed order."""
    data: dict[str, Any] = plan.to_json(by_alias=True, exclude_defaults=True)
    data["plangraph"] = plan.plangraph
    data["nodes"] = sorted(data.get("nodes", []), key=lambda n: n["id"])
    data["edges"] = sorted(
        data.get("edges", []), key=lambda e: (e["from"], e["to"], e["type"], canonical_json(e))
    )
    return data


def plan_digest(plan: Any) -> str:
    """sha256 over :func:`canonical_plan`."""
    return digest(canonical_plan(plan))


def criterion_digest(node_id: str, criterion: Any, defaults: PlanDefaults | None = None) -> str:
    """sha256 of a criterion's canonical definition, bound to its node id; a test verifier's
    effective policy (under the plan's *defaults*) counts only where it is not the built-in
    one, so a criterion that uses none of it keeps the digest it always had."""
    body = criterion.to_json(by_alias=True, exclude_defaults=True)
    verifier = criterion.verifier.to_json(by_alias=True)
    body["verifier"] = _digest_verifier(criterion.verifier, verifier, defaults)
    return digest({"node": node_id, "criterion": body})


def _digest_verifier(
    verifier: Any, dumped: dict[str, Any], defaults: PlanDefaults | None
) -> dict[str, Any]:
    """*dumped* (a verifier's full dump) as its criterion's digest reads it: a test
    verifier's policy fields replaced by its effective policy, each where it differs from
    :data:`TEST_POLICY_DEFAULTS`, and ``exclude`` only when it names something."""
    if verifier.type != "test":
        return dumped
    for name in ("exclude", *TEST_POLICY_DEFAULTS):
        dumped.pop(name, None)
    policy = effective_policy(verifier, defaults)
    for name, default in TEST_POLICY_DEFAULTS.items():
        if getattr(policy, name) != default:
            dumped[name] = getattr(policy, name)
    if policy.exclude:
        dumped["exclude"] = list(policy.exclude)
    return dumped


def plan_criterion_digests(plan: Any) -> dict[tuple[str, str], str]:
    """:func:`criterion_digest` of every criterion of *plan* (the first of repeated node or
    criterion ids)."""
    digests: dict[tuple[str, str], str] = {}
    seen: set[str] = set()
    for node in plan.nodes:
        if node.id in seen:
            continue
        seen.add(node.id)
        for criterion in node.acceptance:
            key = (node.id, criterion.id)
            if key not in digests:
                digests[key] = criterion_digest(node.id, criterion, plan.defaults)
    return digests
