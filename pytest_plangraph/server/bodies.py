"""The request bodies of the HTTP API and the shape of its problem answers (pydantic, strict:
a field that is not there, or of the wrong type, is a 422 problem, never a guess)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt, StrictStr

EXPECTED = (
    "The plan version the writer decided against (GET /plans/{id} gives it); another "
    "version now is refused with 409 and the current version."
)


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ChangeBody(_Body):
    """``POST /plans/{id}/changes``: a patch (docs/plan-format.md, "Patches")."""

    expected_plan_version: StrictInt = Field(ge=1, description=EXPECTED)
    by: StrictStr = Field(description="Who proposes the patch (as `plangraph patch --by`).")
    patch: dict[str, Any] | list[Any] | StrictStr = Field(
        description="The patch: its JSON form, or the text of a patch file (YAML or JSON)."
    )


class ClaimBody(_Body):
    """``POST /plans/{id}/claims``: claim a node is done; the gate answers."""

    expected_plan_version: StrictInt = Field(ge=1, description=EXPECTED)
    node: StrictStr = Field(description="The node claimed done.")
    by: StrictStr = Field(description="Who claims it (a person or an agent).")


class EvidenceBody(_Body):
    """``POST /plans/{id}/evidence``: one evidence event, signed by a key trusted for ``ci``."""

    expected_plan_version: StrictInt = Field(ge=1, description=EXPECTED)
    event: dict[str, Any] = Field(
        description="One event as a line of `plangraph export` writes it, with its signature."
    )


class ImpactBody(_Body):
    """``POST /plans/{id}/impact-analysis``: what changed and what it invalidates."""

    since: StrictStr | None = Field(
        default=None, description="Judge the diff from this revision (`impact --since`)."
    )
    commits: StrictBool = Field(
        default=True, description="Name the commit behind each change (`--no-commits`: false)."
    )


class VerifyBody(_Body):
    """``POST /plans/{id}/verify``: run the verifiers that need no pytest, recording nothing."""

    nodes: list[StrictStr] = Field(
        default_factory=list, description="Only these nodes (all when empty)."
    )
    by: StrictStr | None = Field(default=None, description="Who the records name.")


class Problem(BaseModel):
    """An error answer (RFC 9457, ``application/problem+json``)."""

    type: str = Field(description="A URI naming the kind of problem: `urn:plangraph:CODE`.")
    title: str = Field(description="The kind of problem, in a few words.")
    status: int = Field(description="The HTTP status code.")
    detail: str = Field(description="What went wrong and how to fix it.")
    code: str = Field(description="The reason code (PLAN_VERSION_CONFLICT, UNSIGNED_EVENT …).")
    current_plan_version: int | None = Field(
        default=None, description="With 409 PLAN_VERSION_CONFLICT: the plan's version now."
    )
    field: str | None = Field(
        default=None,
        description="With 422 BAD_NUMBER: the member of the body holding NaN or an infinity "
        "(`patch.nodes.add[0].title`).",
    )
