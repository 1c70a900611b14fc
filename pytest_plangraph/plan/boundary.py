"""The pydantic models of the plan format, evidence records and events: the boundary.

They validate what comes in (a plan file whose bytes are new, a patch, an evidence record or an
event given to the API, an exported store read back) and generate the plan format's JSON Schema.
What the rest of the package works with are the plain frozen classes of the same names in
:mod:`.model`, :mod:`.policy` and :mod:`.evidence`, made once from the validated data
(:func:`~.model.runtime_plan`, :func:`~.evidence.checked_evidence`,
:func:`~.model.checked_event`). Every model is frozen
and forbids unknown fields, so a typo in a plan is an error, not a silent default; the models of
the plan file are strict too, so no value is coerced to another type. Imported only where such
input is validated: a run on a known plan never imports pydantic.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    JsonValue,
    Tag,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticCustomError

from .base import FrozenModel, empty_default
from .names import (
    BUILTIN_VERIFIERS,
    ID_PATTERN,
    SHA256_PATTERN,
    EdgeType,
    Effect,
    EventKind,
    NodeKind,
    Strength,
)
from .policy import Policy

Id = Annotated[str, Field(pattern=ID_PATTERN, max_length=200)]


class _Strict(FrozenModel):
    """A part of the plan file: values must already have their type (YAML and JSON give
    text, numbers and booleans natively), so nothing is silently coerced."""

    model_config = ConfigDict(strict=True)


class TestDefaults(_Strict):
    """Plan-wide defaults of every test verifier that does not set its own."""

    __test__ = False
    skips: Policy = "fail"
    xfail: Policy = "fail"
    min_passed: int = 1


class PlanDefaults(_Strict):
    """The plan's ``defaults:`` block."""

    test: TestDefaults = Field(default_factory=TestDefaults)


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

    # JSON values only: a date or bytes YAML can write has no JSON form to digest or record,
    # and NaN or an infinity would not read back as it was written
    model_config = ConfigDict(extra="allow", frozen=True, strict=True, allow_inf_nan=False)
    __pydantic_extra__: dict[str, JsonValue]
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


Outcome = Literal["passed", "failed", "error"]


class PlanRef(FrozenModel):
    """Which plan (id, store-numbered version, digest) a record was made against."""

    id: str
    version: int
    digest: str


class GitInfo(FrozenModel):
    """Where the repository stood when evidence was recorded."""

    commit: str | None = None
    dirty: bool = False
    branch: str | None = None


class RunInfo(FrozenModel):
    """The verification run that produced a record."""

    id: str
    started: str
    finished: str
    python: str
    pytest: str | None = None
    plugin: str
    ci: dict[str, str] = empty_default(dict)
    # Added after the first records were stored: left out of a record (and so of its content
    # address) when unknown, so a record stored before them keeps its id when read again.
    optimize: int | None = Field(default=None, exclude_if=lambda value: value is None)
    """``sys.flags.optimize`` of the run's interpreter (the highest of its xdist workers): above
    0, ``assert`` statements outside rewritten test modules were stripped."""
    assert_mode: str | None = Field(default=None, exclude_if=lambda value: value is None)
    """pytest's ``--assert`` mode: ``rewrite`` or ``plain`` (``plain`` when any worker's was)."""


class Evidence(FrozenModel):
    """An immutable verdict of one verifier for one criterion (DESIGN §4).

    ``id`` is the sha256 of the canonical record without ``id``; build records with
    :meth:`create` so the id is always right.
    """

    id: str
    plan: PlanRef
    node: str
    criterion: str
    criterion_digest: str
    input_digest: str
    verifier: str
    outcome: Outcome
    reason: str | None = None
    details: dict[str, Any] = empty_default(dict)
    subjects: dict[str, str] = empty_default(dict)
    git: GitInfo = GitInfo()
    run: RunInfo
    recorded_by: str


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


def plan_data(plan: Plan) -> dict[str, Any]:
    """The validated form of *plan*: its values as the file gave them (the fields it set, with
    their file names; a related edge's ``weak`` counts as set), Python values as validated. What
    the plan cache keeps of a plan file, and what :func:`runtime_plan` is built from."""
    data: dict[str, Any] = plan.model_dump(mode="python", by_alias=True, exclude_unset=True)
    return data


def plan_json_schema() -> dict[str, Any]:
    """The JSON Schema of the plan format, generated from the models of the boundary."""
    schema = Plan.model_json_schema(by_alias=True, mode="validation")
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://pytest-plangraph.readthedocs.io/plangraph.schema.json",
        **schema,
    }
