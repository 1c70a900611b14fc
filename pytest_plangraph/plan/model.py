"""The runtime plan, its parts and events: plain frozen classes (pure, no I/O, no pydantic).

A plan is a set of :class:`Node` with acceptance :class:`Criterion` and typed :class:`Edge`.
pydantic validates a plan where its bytes are new (:mod:`.boundary`, whose models of the same
names also give the plan format's JSON Schema); the values here are built once from the
validated data, or from the validated form the plan cache keeps, and never change. Edges read
"``to`` depends on ``from``" for every type: staleness flows from ``from`` to ``to``. Digests
are computed from the normalised JSON form (:meth:`~.frozen.Frozen.to_json`, value for value
the pydantic models' dump), so key order, quoting, comments, whitespace and spelled-out defaults
never change them.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cached_property
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from .events import EVENT_KINDS as EVENT_KINDS  # the events: .events
from .events import Event as Event
from .events import LoggedEvent as LoggedEvent
from .events import checked_event as checked_event
from .formats import FORMAT_VERSION as FORMAT_VERSION  # where the rest of the package reads it
from .frozen import Frozen, ListOf, builder_of
from .names import BUILTIN_VERIFIERS as BUILTIN_VERIFIERS
from .names import ID_PATTERN as ID_PATTERN
from .names import SHA256_PATTERN as SHA256_PATTERN
from .names import EdgeType as EdgeType
from .names import Effect as Effect
from .names import EventKind as EventKind
from .names import NodeKind as NodeKind
from .names import Strength as Strength
from .policy import PlanDefaults, Policy

if TYPE_CHECKING:
    from typing_extensions import Self

    from .digests import canonical_plan as canonical_plan
    from .digests import criterion_digest as criterion_digest
    from .digests import plan_criterion_digests as plan_criterion_digests
    from .digests import plan_digest as plan_digest


PROPAGATING_EDGES: frozenset[str] = frozenset({"requires", "consumes", "validates"})


class TestVerifier(Frozen):
    """Passes when the pytest tests mapped to the criterion passed (see the plan format)."""

    __slots__ = ("type", "tests", "exclude", "skips", "xfail", "min_passed")  # noqa: RUF023 (field order)
    DEFAULTS: ClassVar[Mapping[str, Any]] = {
        "tests": list,
        "exclude": list,
        "skips": None,
        "xfail": None,
        "min_passed": None,
    }

    __test__: ClassVar[bool] = False
    type: Literal["test"]
    tests: list[str]
    exclude: list[str]
    skips: Policy | None
    xfail: Policy | None
    min_passed: int | None


class SchemaVerifier(Frozen):
    """Passes when ``artifact`` (JSON or YAML) validates against the JSON Schema ``schema``."""

    __slots__ = ("type", "schema_path", "artifact")  # noqa: RUF023 (field order)

    ALIASES: ClassVar[Mapping[str, str]] = {"schema_path": "schema"}
    type: Literal["schema"]
    schema_path: str
    artifact: str


class ArtifactVerifier(Frozen):
    """Passes when ``path`` exists, optionally with a pinned ``sha256`` and ``min_bytes``."""

    __slots__ = ("type", "path", "sha256", "min_bytes")  # noqa: RUF023 (field order)
    DEFAULTS: ClassVar[Mapping[str, Any]] = {"sha256": None, "min_bytes": None}

    type: Literal["artifact"]
    path: str
    sha256: str | None
    min_bytes: int | None


class ApprovalVerifier(Frozen):
    """Satisfied by an ``approve`` event bound to the node's current input digest."""

    __slots__ = ("type", "role")  # noqa: RUF023 (field order)
    DEFAULTS: ClassVar[Mapping[str, Any]] = {"role": None}

    type: Literal["approval"]
    role: str | None


class CommandVerifier(Frozen):
    """Passes when the program ``run`` (an argv list, no shell) exits 0 within ``timeout_s``
    seconds, run in ``cwd``; the files ``subjects`` names are bound into the evidence."""

    __slots__ = ("type", "run", "timeout_s", "subjects", "cwd")  # noqa: RUF023 (field order)
    DEFAULTS: ClassVar[Mapping[str, Any]] = {"timeout_s": 600, "subjects": list, "cwd": None}

    FLOATS: ClassVar[frozenset[str]] = frozenset({"timeout_s"})
    type: Literal["command"]
    run: list[str]
    timeout_s: float
    subjects: list[str]
    cwd: str | None


class PluginVerifier(Frozen):
    """A verifier type added by a plugin; its settings are checked by that plugin."""

    __slots__ = ("type", "extras")  # noqa: RUF023 (field order)
    DEFAULTS: ClassVar[Mapping[str, Any]] = {"extras": dict}
    HIDDEN: ClassVar[frozenset[str]] = frozenset({"extras"})

    type: str
    extras: Mapping[str, Any]
    """The settings other than ``type``, as the plan file gave them."""

    @property
    def settings(self) -> dict[str, Any]:
        """The settings other than ``type``."""
        return dict(self.extras)

    def extra(self) -> Mapping[str, Any]:
        """The settings: in the JSON form beside ``type``."""
        return self.extras


Verifier = (
    TestVerifier
    | SchemaVerifier
    | ArtifactVerifier
    | ApprovalVerifier
    | CommandVerifier
    | PluginVerifier
)
_VERIFIER_TYPES: dict[str, Any] = {
    "test": TestVerifier,
    "schema": SchemaVerifier,
    "artifact": ArtifactVerifier,
    "approval": ApprovalVerifier,
    "command": CommandVerifier,
}


def verifier_from_data(data: Mapping[str, Any]) -> Verifier:
    """The verifier of validated data (a plan file's names, only the fields it set)."""
    build = _VERIFIER_BUILDERS.get(data["type"])
    if build is not None:
        built: Verifier = build(data)
        return built
    kind = _VERIFIER_TYPES.get(data["type"])
    if kind is None:
        extras = {k: v for k, v in data.items() if k != "type"}
        return PluginVerifier(type=data["type"], extras=extras, fields_set=frozenset(data))
    _VERIFIER_BUILDERS[data["type"]] = builder_of(kind)
    return verifier_from_data(data)


_VERIFIER_BUILDERS: dict[str, Any] = {}
"""The builder (:func:`~.frozen.builder_of`) of each built-in verifier type, once used."""


class Criterion(Frozen):
    """One acceptance criterion of a node, checked by exactly one verifier."""

    __slots__ = ("id", "assertion", "required", "verifier")  # noqa: RUF023 (field order)
    DEFAULTS: ClassVar[Mapping[str, Any]] = {"assertion": "", "required": True}
    CONVERT: ClassVar[Mapping[str, Any]] = {"verifier": verifier_from_data}

    id: str
    assertion: str
    required: bool
    verifier: Verifier


class Node(Frozen):
    """An objective, step or milestone of the plan, with its contract fields (DESIGN §3.3)."""

    __slots__ = (
        "acceptance",
        "cancelled",
        "compensate",
        "constraints",
        "effect",
        "id",
        "idempotent",
        "inputs",
        "kind",
        "max_retry",
        "outputs",
        "outputs_schema",
        "owner",
        "parent",
        "risk",
        "timeout_s",
        "title",
    )
    DEFAULTS: ClassVar[Mapping[str, Any]] = {
        "kind": "step",
        "title": "",
        "parent": None,
        "outputs": list,
        "acceptance": list,
        "constraints": list,
        "risk": None,
        "owner": None,
        "cancelled": False,
        "effect": "read",
        "compensate": None,
        "idempotent": False,
        "max_retry": 2,
        "timeout_s": None,
        "inputs": dict,
        "outputs_schema": dict,
    }
    CONVERT: ClassVar[Mapping[str, Any]] = {"acceptance": ListOf(Criterion)}

    FLOATS: ClassVar[frozenset[str]] = frozenset({"timeout_s"})
    id: str
    kind: NodeKind
    title: str
    parent: str | None
    outputs: list[str]
    acceptance: list[Criterion]
    constraints: list[str]
    risk: str | None
    owner: str | None
    cancelled: bool
    effect: Effect
    compensate: str | None
    idempotent: bool
    max_retry: int
    timeout_s: float | None
    inputs: dict[str, str]
    outputs_schema: dict[str, str]

    def criterion(self, criterion_id: str) -> Criterion | None:
        """Return the criterion with this id, or None."""
        return next((c for c in self.acceptance if c.id == criterion_id), None)


class Edge(Frozen):
    """A typed edge; ``to`` depends on ``from``. Strength defaults by type."""

    __slots__ = ("from_", "to", "type", "strength", "artifacts", "source", "confidence", "status")  # noqa: RUF023 (field order)
    DEFAULTS: ClassVar[Mapping[str, Any]] = {
        "strength": "strong",
        "artifacts": None,
        "source": "declared",
        "confidence": 1.0,
        "status": "active",
    }

    ALIASES: ClassVar[Mapping[str, str]] = {"from_": "from"}
    FLOATS: ClassVar[frozenset[str]] = frozenset({"confidence"})
    from_: str
    to: str
    type: EdgeType
    strength: Strength
    artifacts: list[str] | None
    source: str
    confidence: float
    status: Literal["active", "proposed", "inactive"]

    @property
    def propagates(self) -> bool:
        """True when a change of ``from`` invalidates ``to`` (strong, active, propagating type)."""
        return (
            self.status == "active" and self.strength == "strong" and self.type in PROPAGATING_EDGES
        )


class Plan(Frozen):
    """A whole plan file."""

    __slots__ = (
        "__dict__",
        "defaults",
        "description",
        "edges",
        "max_replan_rounds",
        "nodes",
        "plan",
        "plangraph",
        "title",
    )
    DEFAULTS: ClassVar[Mapping[str, Any]] = {
        "title": "",
        "description": "",
        "max_replan_rounds": 2,
        "defaults": PlanDefaults,
        "nodes": list,
        "edges": list,
    }
    CONVERT: ClassVar[Mapping[str, Any]] = {
        "defaults": PlanDefaults,
        "nodes": ListOf(Node),
        "edges": ListOf(Edge),
    }

    plangraph: Literal[1]
    plan: str
    title: str
    description: str
    max_replan_rounds: int
    defaults: PlanDefaults
    nodes: list[Node]
    edges: list[Edge]

    def replace(self, **changes: Any) -> Self:
        """A copy with *changes*; without any, it keeps the values computed from this plan."""
        copied = super().replace(**changes)
        if not changes:
            for name in _COMPUTED:
                if name in self.__dict__:
                    copied.__dict__[name] = self.__dict__[name]
        return copied

    def node(self, node_id: str) -> Node | None:
        """Return the node with this id (the first one if ids repeat), or None."""
        return next((n for n in self.nodes if n.id == node_id), None)

    @cached_property
    def digest(self) -> str:
        """sha256 of the canonical form: the plan's identity."""
        from .digests import plan_digest  # a plan read from its cache carries its digests

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
        from .order import rounds  # a plan read from its cache carries its order

        return tuple(rounds(node_ids, pairs))

    @cached_property
    def criterion_digests(self) -> dict[tuple[str, str], str]:
        """:func:`criterion_digest` of every criterion, keyed by (node id, criterion id); of
        repeated ids the first counts, as in the plan's graph. Read it, never change it."""
        from .digests import plan_criterion_digests

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


def __getattr__(name: str) -> Any:
    """The digest functions named here too (:mod:`.digests`), imported when first asked for: a
    plan read from its cache carries its digests, and a run computes none."""
    if name in ("canonical_plan", "criterion_digest", "plan_criterion_digests", "plan_digest"):
        from . import digests

        return getattr(digests, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


_COMPUTED = (
    "digest",
    "topological_order",
    "criterion_digests",
    "checked_artifacts",
    "node_shape",  # kept with the facts: pytest_plangraph.plan.factcache.shape
)
"""The cached properties of :class:`Plan`, which depend on its content."""


def runtime_plan(data: Any) -> Plan:
    """Validate *data* (a plan file's parsed content) with the pydantic model of the boundary
    and return the runtime plan (``pydantic.ValidationError`` when it is not a plan)."""
    from .boundary import Plan as PlanModel
    from .boundary import plan_data

    return Plan.from_data(plan_data(PlanModel.model_validate(data)))
