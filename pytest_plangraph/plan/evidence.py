"""Evidence records (DESIGN §4): which plan, node and criterion a verdict is about, the digests
it was judged by, the files it saw, and the git state and run it came from. Frozen values,
checked where they enter; a record's ``id`` is its content address.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar, Literal, get_args

from ..canonical import digest
from .frozen import Frozen

if TYPE_CHECKING:
    from typing_extensions import Self

__all__ = ["ABSENT", "Evidence", "GitInfo", "Outcome", "PlanRef", "RunInfo", "evidence_id"]

Outcome = Literal["passed", "failed", "error"]
OUTCOMES = frozenset(get_args(Outcome))

ABSENT = "absent"
"""The value of a subject that was bound absent: a path where no file was when the evidence
was recorded, and where a file would change the verdict (a ``conftest.py``, a pytest
configuration file pytest would have preferred). It can never equal a sha256, so a reader
that does not know it sees the subject as changed; the gate holds it while no file is there
and reports ``ARTIFACT_CHANGED`` once one appears."""


class PlanRef(Frozen):
    """Which plan (id, store-numbered version, digest) a record was made against."""

    __slots__ = ("id", "version", "digest")  # noqa: RUF023 (field order)

    id: str
    version: int
    digest: str


class GitInfo(Frozen):
    """Where the repository stood when evidence was recorded."""

    __slots__ = ("commit", "dirty", "branch")  # noqa: RUF023 (field order)
    DEFAULTS: ClassVar[Mapping[str, Any]] = {"commit": None, "dirty": False, "branch": None}

    commit: str | None
    dirty: bool
    branch: str | None


class RunInfo(Frozen):
    """The verification run that produced a record."""

    __slots__ = (
        "assert_mode",
        "ci",
        "finished",
        "id",
        "optimize",
        "plugin",
        "pytest",
        "python",
        "started",
    )
    DEFAULTS: ClassVar[Mapping[str, Any]] = {
        "pytest": None,
        "ci": dict,
        "optimize": None,
        "assert_mode": None,
    }

    OMIT_NONE: ClassVar[frozenset[str]] = frozenset({"optimize", "assert_mode"})
    id: str
    started: str
    finished: str
    python: str
    pytest: str | None
    plugin: str
    ci: dict[str, str]
    # Added after the first records were stored: left out of a record (and so of its content
    # address) when unknown, so a record stored before them keeps its id when read again.
    optimize: int | None
    """``sys.flags.optimize`` of the run's interpreter (the highest of its xdist workers): above
    0, ``assert`` statements outside rewritten test modules were stripped."""
    assert_mode: str | None
    """pytest's ``--assert`` mode: ``rewrite`` or ``plain`` (``plain`` when any worker's was)."""


_NO_GIT = GitInfo()


class Evidence(Frozen):
    """An immutable verdict of one verifier for one criterion (DESIGN §4).

    ``id`` is the sha256 of the canonical record without ``id``; build records with
    :meth:`create` so the id is always right.
    """

    __slots__ = (
        "criterion",
        "criterion_digest",
        "details",
        "git",
        "id",
        "input_digest",
        "node",
        "outcome",
        "plan",
        "reason",
        "recorded_by",
        "run",
        "subjects",
        "verifier",
    )
    DEFAULTS: ClassVar[Mapping[str, Any]] = {
        "reason": None,
        "details": dict,
        "subjects": dict,
        "git": _NO_GIT,
    }

    id: str
    plan: PlanRef
    node: str
    criterion: str
    criterion_digest: str
    input_digest: str
    verifier: str
    outcome: Outcome
    reason: str | None
    details: dict[str, Any]
    subjects: dict[str, str]
    git: GitInfo
    run: RunInfo
    recorded_by: str

    @classmethod
    def create(cls, **fields: Any) -> Evidence:
        """Build a record and compute its content address. Fields of the types the record
        declares are taken as they are; anything else is checked (and converted where the
        record model allows it) by the pydantic model of the boundary."""
        draft = {**fields, "id": ""}
        data = {
            key: value.to_json() if isinstance(value, Frozen) else value
            for key, value in draft.items()
        }
        record = checked_evidence(data)
        return record.replace(id=evidence_id(record))

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> Self:
        """The record of checked JSON *data* (as stored), as it is."""
        values = dict(data)
        values["plan"] = PlanRef.from_data(data["plan"])
        values["run"] = RunInfo.from_data(data["run"])
        if "git" in data:
            values["git"] = GitInfo.from_data(data["git"])
        return cls(**values, fields_set=frozenset(values))

    @property
    def ref(self) -> str:
        """``node/criterion``."""
        return f"{self.node}/{self.criterion}"


def checked_evidence(data: Mapping[str, Any]) -> Evidence:
    """The record of *data* (its JSON form): taken as it is when every value has the type the
    record declares (:func:`record_problem`), else checked and converted by the pydantic model
    of the boundary (``pydantic.ValidationError``, a ValueError, when it is not a record)."""
    if record_problem(data) is None:
        return Evidence.from_data(data)
    from .boundary import Evidence as EvidenceModel

    return Evidence.from_data(EvidenceModel.model_validate(data).model_dump(mode="json"))


def evidence_id(record: Evidence) -> str:
    """Content address of an evidence record: sha256 of it without ``id``."""
    return digest(record.to_json(exclude=_ID))


_ID = frozenset({"id"})


def record_problem(data: Mapping[str, Any]) -> str | None:
    """None when *data* is the JSON form of an evidence record with every value of exactly the
    type the record declares (what the record model takes as it is), else the first field that
    is not: such data goes to the model, which converts it or says what is wrong."""
    fields = (_RECORD, data), (_PLAN, data.get("plan")), (_GIT, data.get("git", {}))
    for shape, value in (*fields, (_RUN, data.get("run"))):
        if type(value) is not dict or not value.keys() <= shape.keys():
            return "shape"
        for name, check in shape.items():
            if name in value:
                if not check(value[name]):
                    return name
            elif name in _NEEDED:
                return name
    return None


def _text(value: Any) -> bool:
    return type(value) is str


def _text_or_none(value: Any) -> bool:
    return value is None or type(value) is str


def _texts(value: Any) -> bool:
    return type(value) is dict and all(type(k) is str and type(v) is str for k, v in value.items())


def _plain(value: Any) -> bool:
    """JSON made of dicts with text keys, lists, text, integers, finite floats, booleans and
    None: what the record model keeps as it is and dumps unchanged."""
    kind = type(value)
    if value is None or kind in (str, int, bool):
        return True
    if kind is float:
        return math.isfinite(value)
    if kind is list:
        return all(_plain(item) for item in value)
    if kind is dict:
        return all(type(key) is str and _plain(item) for key, item in value.items())
    return False


def _integer(value: Any) -> bool:
    return type(value) is int


_RECORD: dict[str, Any] = {
    "id": _text,
    "plan": lambda value: True,
    "node": _text,
    "criterion": _text,
    "criterion_digest": _text,
    "input_digest": _text,
    "verifier": _text,
    "outcome": lambda value: type(value) is str and value in OUTCOMES,
    "reason": _text_or_none,
    "details": lambda value: type(value) is dict and _plain(value),
    "subjects": _texts,
    "git": lambda value: True,
    "run": lambda value: True,
    "recorded_by": _text,
}
_PLAN: dict[str, Any] = {"id": _text, "version": _integer, "digest": _text}
_GIT: dict[str, Any] = {
    "commit": _text_or_none,
    "dirty": lambda value: type(value) is bool,
    "branch": _text_or_none,
}
_RUN: dict[str, Any] = {
    "id": _text,
    "started": _text,
    "finished": _text,
    "python": _text,
    "pytest": _text_or_none,
    "plugin": _text,
    "ci": _texts,
    "optimize": lambda value: value is None or type(value) is int,
    "assert_mode": _text_or_none,
}
_NEEDED = frozenset(
    {
        "id",
        "plan",
        "node",
        "criterion",
        "criterion_digest",
        "input_digest",
        "verifier",
        "outcome",
        "run",
        "recorded_by",
        "version",
        "digest",
        "started",
        "finished",
        "python",
        "plugin",
    }
)
"""The fields without a default (of the record, its plan reference and its run)."""
