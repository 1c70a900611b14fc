"""Evidence records (DESIGN §4): which plan, node and criterion a verdict is about, the digests
it was judged by, the files it saw, and the git state and run it came from. Frozen values,
validated where they enter; a record's ``id`` is its content address.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from ..canonical import digest
from .base import FrozenModel, empty_default

__all__ = ["Evidence", "GitInfo", "Outcome", "PlanRef", "RunInfo", "evidence_id"]

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

    @classmethod
    def create(cls, **fields: Any) -> Evidence:
        """Build a record and compute its content address."""
        draft = cls.model_validate({**fields, "id": ""})
        return draft.model_copy(update={"id": evidence_id(draft)})

    @property
    def ref(self) -> str:
        """``node/criterion``."""
        return f"{self.node}/{self.criterion}"


def evidence_id(record: Evidence) -> str:
    """Content address of an evidence record: sha256 of it without ``id``."""
    return digest(record.model_dump(mode="json", exclude={"id"}))
