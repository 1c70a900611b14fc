"""Pydantic models of the plan format and of evidence and events (pure, no I/O).

A plan is a set of :class:`Node` with acceptance :class:`Criterion` and typed :class:`Edge`.
Every model is frozen and forbids unknown fields, so a typo in a plan is an error, not a silent
default; the models of the plan file are strict too, so no value is coerced to another type (a
``true`` or ``"3"`` where a number belongs is an error, not ``1`` or ``3``). Edges read "``to``
depends on ``from``" for every type: staleness flows from ``from`` to ``to``. Digests are
computed from the normalised model, so key order, quoting, comments, whitespace and spelled-out
defaults never change them.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cached_property
from typing import Annotated, Any, Literal, Protocol, get_args

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    Tag,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticCustomError

from ..canonical import canonical_json, digest
from .base import FrozenModel, empty_default
from .evidence import Evidence
from .formats import FORMAT_VERSION as FORMAT_VERSION  # where the rest of the package reads it
from .order import rounds
from .policy import TEST_POLICY_DEFAULTS, PlanDefaults, Policy, effective_policy

ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]*$"
"""Ids are ASCII: letters, digits, ``.``, ``_`` and ``-``, starting with a letter or digit."""
Id = Annotated[str, Field(pattern=ID_PATTERN, max_length=200)]
SHA256_PATTERN = r"^[0-9A-Fa-f]{64}$"
"""A pinned sha256: 64 hexadecimal digits, either case (kept lowercase)."""

NodeKind = Literal["objective", "step", "milestone"]
EdgeType = Literal["requires", "consumes", "validates", "conflicts", "related", "contains"]
Strength = Literal["strong", "weak"]
Effect = Literal["read", "write", "irreversible"]


PROPAGATING_EDGES: frozenset[str] = frozenset({"requires", "consumes", "validates"})
BUILTIN_VERIFIERS: tuple[str, ...] = ("test", "schema", "artifact", "approval", "command")


class _Strict(FrozenModel):
    """A part of the plan file: values must already have their type (YAML and JSON give
    text, numbers and booleans natively), so nothing is silently coerced."""

    model_config = ConfigDict(strict=True)


class TestVerifier(_Strict):
    """Passes when the pytest tests mapped to the criterion (``tests`` patterns and/or
    ``@pytest.mark.criterion`` markers, less those ``exclude`` matches) passed: none failed,
    at least ``min_passed`` ran and passed, and a skip or xfail is allowed only where
    ``skips``/``xfail`` say ``allow`` (unset: the plan's ``defaults.test``, else ``fail``)."""

    __test__ = False
    type: Literal["test"]
    tests: list[Annotated[str, Field(min_length=1)]] = empty_default(list)
    exclude: list[Annotated[str, Field(min_length=1)]] = empty_default(list)
    skips: Policy | None = None
    xfail: Policy | None = None
    min_passed: int | None = None


class SchemaVerifier(_Strict):
    """Passes when ``artifact`` (JSON or YAML) validates against the JSON Schema ``schema``."""

    type: Literal["schema"]
    schema_path: str = Field(alias="schema", min_length=1)
    artifact: str = Field(min_length=1)


class ArtifactVerifier(_Strict):
    """Passes when ``path`` exists, optionally with a pinned ``sha256`` and ``min_bytes``."""

    type: Literal["artifact"]
    path: str = Field(min_length=1)
    sha256: Annotated[str, Field(pattern=SHA256_PATTERN), AfterValidator(str.lower)] | None = None
    min_bytes: Annotated[int, Field(ge=0)] | None = None


class ApprovalVerifier(_Strict):
    """Satisfied by an ``approve`` event bound to the node's current input digest."""

    type: Literal["approval"]
    role: str | None = None


class CommandVerifier(_Strict):
    """Passes when the program ``run`` (an argv list, no shell) exits 0 within ``timeout_s``
    seconds, run in ``cwd``; the files ``subjects`` names are bound into the evidence."""

    type: Literal["command"]
    run: list[Annotated[str, Field(min_length=1)]] = Field(min_length=1)
    timeout_s: Annotated[float, Field(gt=0, le=86400)] = 600
    subjects: list[Annotated[str, Field(min_length=1)]] = empty_default(list)
    cwd: Annotated[str, Field(min_length=1)] | None = None


class PluginVerifier(BaseModel):
    """A verifier type added by a plugin; its settings are checked by that plugin."""

    model_config = ConfigDict(extra="allow", frozen=True, strict=True)
    type: Annotated[
        str,
        Field(
            pattern=ID_PATTERN,
            description="A verifier type registered by an installed plugin.",
            json_schema_extra={"not": {"enum": list(BUILTIN_VERIFIERS)}},
        ),
    ]

    @property
    def settings(self) -> dict[str, Any]:
        """The settings other than ``type``."""
        return dict(self.model_extra or {})


def _verifier_tag(value: Any) -> str:
    kind = value.get("type") if isinstance(value, dict) else getattr(value, "type", None)
    return kind if kind in BUILTIN_VERIFIERS else "plugin"


Verifier = Annotated[
    Annotated[TestVerifier, Tag("test")]
    | Annotated[SchemaVerifier, Tag("schema")]
    | Annotated[ArtifactVerifier, Tag("artifact")]
    | Annotated[ApprovalVerifier, Tag("approval")]
    | Annotated[CommandVerifier, Tag("command")]
    | Annotated[PluginVerifier, Tag("plugin")],
    Discriminator(_verifier_tag),
]


class Criterion(_Strict):
    """One acceptance criterion of a node, checked by exactly one verifier."""

    id: Id
    assertion: str = ""
    required: bool = True
    verifier: Verifier


class Node(_Strict):
    """An objective, step or milestone of the plan, with its contract fields (DESIGN §3.3)."""

    id: Id
    kind: NodeKind = "step"
    title: str = ""
    parent: Id | None = None
    outputs: list[Annotated[str, Field(min_length=1)]] = empty_default(list)
    acceptance: list[Criterion] = empty_default(list)
    constraints: list[str] = empty_default(list)
    risk: str | None = None
    owner: str | None = None
    cancelled: bool = False
    effect: Effect = "read"
    compensate: str | None = None
    idempotent: bool = False
    max_retry: Annotated[int, Field(ge=0)] = 2
    timeout_s: Annotated[float, Field(gt=0)] | None = None
    inputs: dict[str, str] = empty_default(dict)
    outputs_schema: dict[str, str] = empty_default(dict)

    def criterion(self, criterion_id: str) -> Criterion | None:
        """Return the criterion with this id, or None."""
        return next((c for c in self.acceptance if c.id == criterion_id), None)


class Edge(_Strict):
    """A typed edge; ``to`` depends on ``from``. Strength defaults by type."""

    # a related edge is weak unless the plan says otherwise: set by Plan, once per plan
    from_: Id = Field(alias="from")
    to: Id
    type: EdgeType
    strength: Strength = "strong"
    artifacts: list[Annotated[str, Field(min_length=1)]] | None = None
    source: str = "declared"
    confidence: Annotated[float, Field(ge=0, le=1)] = 1.0
    status: Literal["active", "proposed", "inactive"] = "active"

    @property
    def propagates(self) -> bool:
        """True when a change of ``from`` invalidates ``to`` (strong, active, propagating type)."""
        return (
            self.status == "active" and self.strength == "strong" and self.type in PROPAGATING_EDGES
        )


class Plan(_Strict):
    """A whole plan file."""

    plangraph: Literal[1] = Field(
        description="Format version of the plan file; must be 1.",
    )
    plan: Id
    title: str = ""
    description: str = ""
    max_replan_rounds: Annotated[int, Field(ge=0)] = 2
    defaults: PlanDefaults = Field(default_factory=PlanDefaults)
    nodes: list[Node] = empty_default(list)
    edges: list[Edge] = empty_default(list)

    @field_validator("plangraph", mode="before")
    @classmethod
    def _format_is_a_number(cls, value: Any) -> Any:
        # a literal compares by equality, so true and 1.0 would pass for 1 even when strict
        if type(value) is not int:
            raise PydanticCustomError("format_version_type", "expected the whole number 1")
        return value

    @model_validator(mode="after")
    def _related_edges_are_weak(self) -> Plan:
        # One pass over the edges of the plan rather than a Python call for each edge as it
        # is validated (most of the cost of validating a large plan's edges). The default
        # counts as written, as the plan's digest has always had it.
        for edge in self.edges:
            if edge.type == "related" and "strength" not in edge.model_fields_set:
                edge.__dict__["strength"] = "weak"
                edge.model_fields_set.add("strength")
        return self

    def node(self, node_id: str) -> Node | None:
        """Return the node with this id (the first one if ids repeat), or None."""
        return next((n for n in self.nodes if n.id == node_id), None)

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> Plan:
        """A copy; with *update*, without the values computed from this plan's content."""
        copied = super().model_copy(update=update, deep=deep)
        if update:
            for name in _COMPUTED:
                copied.__dict__.pop(name, None)
        return copied

    @cached_property
    def digest(self) -> str:
        """sha256 of the canonical form: the plan's identity."""
        return plan_digest(self)

    @cached_property
    def topological_order(self) -> tuple[str, ...]:
        """Node ids upstream first (:meth:`Graph.topological_order
        <pytest_plangraph.plan.graph.Graph.topological_order>`), computed once per plan."""
        node_ids = list(dict.fromkeys(node.id for node in self.nodes))
        pairs = [
            (edge.from_, edge.to)
            for edge in self.edges
            if edge.type in PROPAGATING_EDGES and edge.status == "active"
        ]
        return tuple(rounds(node_ids, pairs))

    @cached_property
    def criterion_digests(self) -> dict[tuple[str, str], str]:
        """:func:`criterion_digest` of every criterion, keyed by (node id, criterion id); of
        repeated ids the first counts, as in the plan's graph. Read it, never change it."""
        return plan_criterion_digests(self)

    @cached_property
    def checked_artifacts(self) -> dict[str, tuple[str, ...]]:
        """Per node id, the artifacts its verifiers check (:func:`checked_artifacts`), for the
        nodes that have any; computed once per plan. Read it, never change it."""
        found: dict[str, tuple[str, ...]] = {}
        seen: set[str] = set()  # of repeated ids the first counts, as in the plan's graph
        for node in self.nodes:
            if node.id not in seen and (paths := checked_artifacts(node)):
                found[node.id] = paths
            seen.add(node.id)
        return found


def checked_artifacts(node: Node) -> tuple[str, ...]:
    """The files *node*'s verifiers check: a schema verifier's ``artifact`` and an artifact
    verifier's ``path``. They are products of the node even when ``outputs`` does not name
    them (DESIGN §5), so they are part of its input digest and flow downstream; a schema
    verifier's ``schema`` is not (it binds its own criterion only)."""
    paths: list[str] = []
    for criterion in node.acceptance:
        verifier = criterion.verifier
        if isinstance(verifier, SchemaVerifier):
            paths.append(verifier.artifact)
        elif isinstance(verifier, ArtifactVerifier):
            paths.append(verifier.path)
    return tuple(dict.fromkeys(paths))


def canonical_plan(plan: Plan) -> dict[str, Any]:
    """The normalised JSON form of a plan: defaults dropped, nodes and edges in a fixed order."""
    data = plan.model_dump(mode="json", by_alias=True, exclude_defaults=True)
    data["plangraph"] = plan.plangraph
    data["nodes"] = sorted(data.get("nodes", []), key=lambda n: n["id"])
    data["edges"] = sorted(
        data.get("edges", []), key=lambda e: (e["from"], e["to"], e["type"], canonical_json(e))
    )
    return data


def plan_digest(plan: Plan) -> str:
    """sha256 over :func:`canonical_plan`."""
    return digest(canonical_plan(plan))


def criterion_digest(
    node_id: str, criterion: Criterion, defaults: PlanDefaults | None = None
) -> str:
    """sha256 of a criterion's canonical definition, bound to its node id; a test verifier's
    effective policy (under the plan's *defaults*) counts only where it is not the built-in
    one, so a criterion that uses none of it keeps the digest it always had."""
    body = criterion.model_dump(mode="json", by_alias=True, exclude_defaults=True)
    verifier = criterion.verifier.model_dump(mode="json", by_alias=True)
    body["verifier"] = _digest_verifier(criterion.verifier, verifier, defaults)
    return digest({"node": node_id, "criterion": body})


def _digest_verifier(
    verifier: Any, dumped: dict[str, Any], defaults: PlanDefaults | None
) -> dict[str, Any]:
    """*dumped* (a verifier's full dump) as its criterion's digest reads it: a test
    verifier's policy fields replaced by its effective policy, each where it differs from
    :data:`TEST_POLICY_DEFAULTS`, and ``exclude`` only when it names something."""
    if not isinstance(verifier, TestVerifier):
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


_COMPUTED = ("digest", "topological_order", "criterion_digests", "checked_artifacts")
"""The cached properties of :class:`Plan`, which depend on its content."""


def plan_criterion_digests(plan: Plan) -> dict[tuple[str, str], str]:
    """:func:`criterion_digest` of every criterion of *plan* (the first of repeated node or
    criterion ids), from two dumps of the whole plan rather than two per criterion."""
    trimmed = plan.model_dump(mode="json", by_alias=True, exclude_defaults=True)
    full = plan.model_dump(mode="json", by_alias=True, include=_VERIFIERS)
    digests: dict[tuple[str, str], str] = {}
    seen: set[str] = set()
    for index, node in enumerate(plan.nodes):
        if node.id in seen:
            continue
        seen.add(node.id)
        bodies = trimmed["nodes"][index].get("acceptance", ())
        verifiers = full["nodes"][index]["acceptance"]
        for criterion, body, verifier in zip(node.acceptance, bodies, verifiers, strict=True):
            key = (node.id, criterion.id)
            if key not in digests:
                body["verifier"] = _digest_verifier(
                    criterion.verifier, verifier["verifier"], plan.defaults
                )
                digests[key] = digest({"node": node.id, "criterion": body})
    return digests


_VERIFIERS = {"nodes": {"__all__": {"acceptance": {"__all__": {"verifier"}}}}}
"""Just the verifiers of a plan's dump."""


# --- events (DESIGN §9); evidence records are in .evidence ---------------------------------------


EventKind = Literal[
    "evidence",  # payload: an Evidence record
    "claim",  # a claimed completion: payload {}
    "approval",  # payload {"input_digest", "note", "role"}
    "revoke",  # an approval withdrawn
    "cancel",  # the node is cancelled (it never settles a parent: only the plan file does)
    "retry",  # a person grants a fresh retry budget after RETRY_BUDGET_EXHAUSTED
    "change",  # an observed change: payload {"path", "change", "old", "new", "commit"}
    "patch",  # a plan patch tried on this node: payload {"outcome", "patch", versions, ...}
]


EVENT_KINDS: tuple[str, ...] = get_args(EventKind)


class Event(FrozenModel):
    """One append-only entry of the store. Status is derived from these, never stored.

    ``id`` addresses the content (everything but the chain fields), so merging stores is a
    union; ``seq``, ``prev``, ``hash`` and ``signature`` belong to one store's chain.
    """

    id: str = ""
    seq: int = 0
    kind: EventKind
    node: str | None = None
    criterion: str | None = None
    at: str
    by: str
    plan_digest: str
    payload: dict[str, Any] = empty_default(dict)
    idempotency_key: str | None = None
    prev: str = ""
    hash: str = ""
    signature: str | None = None

    def content(self) -> dict[str, Any]:
        """The content-addressed part: everything but id and the chain fields."""
        return self.model_dump(mode="json", exclude={"id", "seq", "prev", "hash", "signature"})

    @property
    def evidence(self) -> Evidence | None:
        """The evidence record carried by an ``evidence`` event."""
        return Evidence.model_validate(self.payload) if self.kind == "evidence" else None


class LoggedEvent(Protocol):
    """What derivation reads of an event: a stored :class:`Event`, or the lighter row
    :meth:`Store.log <pytest_plangraph.store.Store.log>` reads for status (the store hands over
    light rows, the judge and the store's trust screen read them)."""

    @property
    def seq(self) -> int: ...
    @property
    def id(self) -> str: ...
    @property
    def kind(self) -> str: ...
    @property
    def node(self) -> str | None: ...
    @property
    def criterion(self) -> str | None: ...
    @property
    def by(self) -> str: ...
    @property
    def payload(self) -> Mapping[str, Any]: ...
