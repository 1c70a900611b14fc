"""Verifier types and their registry: what turns a criterion into a verdict.

A verifier *type* (``schema``, ``artifact``, a plug-in's ``linecount`` …) checks its settings for
lint and runs one criterion into a :class:`VerifierResult`. Types reach the :class:`Registry`
through the ``plangraph_verifier_types`` hook (:mod:`pytest_plangraph.hooks.specs`); the built-ins
are registered the same way, by an internal plugin of :mod:`pytest_plangraph.hooks.manager`.

Two built-in types are never *run* by the registry: ``test`` criteria are verified by the pytest
plugin, which maps tests to criteria itself, and ``approval`` criteria are satisfied by an
``approve`` event. Both have ``runs_in_pytest = False``; :meth:`Registry.run_safely` answers
``error``/``NOT_RUNNABLE`` for them instead of running anything.

This module imports nothing heavy: jsonschema and YAML are imported inside the verifiers that
need them, when they run.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import PurePath
from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable

from ..errors import VerifierError
from ..plan.paths import is_glob, path_problem
from ..values import dataclass, field

if TYPE_CHECKING:
    from ..plan.graph import Graph
    from ..plan.model import Criterion, Node
    from ..vcs.workspace import Workspace
    from .approval import ApprovalType
    from .artifact import ArtifactType
    from .test import TestType

# Reason codes of verifier results (DESIGN §4); the pytest plugin adds TEST_* codes of its own.
ARTIFACT_MISSING = "ARTIFACT_MISSING"
ARTIFACT_UNREADABLE = "ARTIFACT_UNREADABLE"
SCHEMA_MISSING = "SCHEMA_MISSING"
SCHEMA_INVALID = "SCHEMA_INVALID"
SCHEMA_VIOLATION = "SCHEMA_VIOLATION"
PATH_OUTSIDE_ROOT = "PATH_OUTSIDE_ROOT"
HASH_MISMATCH = "HASH_MISMATCH"
TOO_SMALL = "TOO_SMALL"
VERIFIER_CRASHED = "VERIFIER_CRASHED"
NOT_RUNNABLE = "NOT_RUNNABLE"
UNKNOWN_VERIFIER = "UNKNOWN_VERIFIER"


@functools.cache
def _name() -> re.Pattern[str]:
    """What a plug-in's verifier type may be named (compiled when a plug-in's type is first
    checked: a run whose types are the built-ins checks none)."""
    return re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


@dataclass(frozen=True)
class VerifierResult:
    """The verdict of one verifier run on one criterion.

    ``details`` holds plain JSON values only (it travels on xdist reports and into evidence);
    ``subjects`` are the repository-relative paths the verdict depended on — the caller hashes
    them before and after the run and binds the hashes into the evidence.
    """

    outcome: Literal["passed", "failed", "error"]
    reason: str | None = None
    message: str = ""
    details: dict[str, Any] = field(default_factory=dict)
    subjects: tuple[str, ...] = ()


class VerdictError(Exception):
    """Raised inside a verifier to end its run early with *result* (not a crash)."""

    def __init__(self, result: VerifierResult) -> None:
        self.result = result
        super().__init__(result.message)


@runtime_checkable
class VerifierType(Protocol):
    """What a plugin registers through ``plangraph_verifier_types``.

    ``name`` is the ``type:`` written in plans. ``runs_in_pytest`` is True for types that run as
    pytest items of their own (and under ``plangraph verify``); False for ``test`` and
    ``approval``, which are not run by the registry. A type may also define
    ``subjects(settings) -> list[str]``: the paths it will read, known before it runs (see
    :meth:`Registry.declared_subjects`).
    """

    name: str
    runs_in_pytest: bool

    def config_problems(self, settings: Mapping[str, Any], workspace: Workspace) -> list[str]:
        """One message per problem in *settings* (for lint's ``VERIFIER_CONFIG``)."""
        ...

    def run(self, node: Node, criterion: Criterion, workspace: Workspace) -> VerifierResult:
        """Check *criterion* of *node* against the files of *workspace*."""
        ...


def settings_of(verifier: Any) -> dict[str, Any]:
    """The settings of a verifier model (or mapping) as plain JSON values, without ``type``.

    Field aliases are used, so a schema verifier gives ``{"schema": …, "artifact": …}``.
    """
    data = dict(verifier) if isinstance(verifier, Mapping) else verifier.to_json(by_alias=True)
    data.pop("type", None)
    return data


BUILTIN_ORIGIN = "plangraph-builtins"
"""The name the built-in types are registered under (the plugin manager's name for them)."""


def builtin_types() -> list[VerifierType]:
    """Fresh instances of the five built-in verifier types."""
    from .approval import ApprovalType
    from .artifact import ArtifactType
    from .command import CommandType
    from .schema import SchemaType
    from .test import TestType

    return [TestType(), SchemaType(), ArtifactType(), ApprovalType(), CommandType()]


def builtin_settings_problems(verifier: Any) -> list[str] | None:
    """The problems of a built-in verifier's settings that :meth:`Registry.settings_alone`
    types find from the settings alone (*verifier* is the plan model), or None for any other
    type (its check may look at files)."""
    checks = _settings_alone()
    for vtype in checks:
        if vtype.name == verifier.type:
            return vtype.settings_problems(settings_of(verifier))
    return None


@functools.cache
def _settings_alone() -> tuple[type[TestType], type[ArtifactType], type[ApprovalType]]:
    """The built-in types whose settings check looks at nothing on disk."""
    from .approval import ApprovalType
    from .artifact import ArtifactType
    from .test import TestType

    return (TestType, ArtifactType, ApprovalType)


class Registry:
    """Verifier types by name, with the plugin that registered each.

    A name registered by two plugins is kept out: :meth:`get` explains the clash,
    :meth:`config_problems` gives it as the problem of each criterion that uses the name (lint's
    ``VERIFIER_CONFIG``) and :meth:`run_safely` answers ``error``, so one bad installation
    breaks only the criteria that use that name.
    """

    def __init__(self, sources: Iterable[tuple[str, Sequence[Any]]]) -> None:
        """Build from ``(plugin name, types it returned)`` pairs; raise VerifierError on a
        value that is not a verifier type."""
        self._types: dict[str, VerifierType] = {}
        self._origin: dict[str, list[str]] = {}
        for plugin, types in sources:
            for vtype in types:
                _check_type(vtype, plugin)
                self._origin.setdefault(vtype.name, []).append(plugin)
                self._types.setdefault(vtype.name, vtype)

    @classmethod
    def builtin(cls) -> Registry:
        """A registry of the built-in types only (no plugins loaded)."""
        return cls([(BUILTIN_ORIGIN, builtin_types())])

    def names(self) -> list[str]:
        """Every registered type name, sorted (clashing names included)."""
        return sorted(self._types)

    def get(self, name: str) -> VerifierType:
        """The type called *name*; VerifierError when unknown or registered twice."""
        origin = self._origin.get(name)
        if origin is None:
            known = ", ".join(self.names())
            raise VerifierError(f"unknown verifier type {name!r}; known types: {known}")
        if len(origin) > 1:
            raise VerifierError(self._clash(name))
        return self._types[name]

    def settings_alone(self, name: str) -> bool:
        """True when the type registered as *name* is a built-in one whose settings check reads
        the settings alone (``test``, ``artifact``, ``approval``; a path's escape through a
        symlink is lint's own check): lint checks those with its rules that read the plan
        alone (:func:`builtin_settings_problems`), whose findings are kept between runs."""
        return not self.clashing(name) and isinstance(self._types.get(name), _settings_alone())

    def clashing(self, name: str) -> bool:
        """True when *name* is registered by several plugins (kept out: see :meth:`get`)."""
        return len(self._origin.get(name, ())) > 1

    def runnable(self, name: str) -> bool:
        """True when criteria of type *name* go to :meth:`run_safely`: a type that runs, or a
        name registered by several plugins (run_safely answers ``error`` for its criteria, so
        they are refused one by one); VerifierError when *name* is unknown."""
        if self.clashing(name):
            return True
        return self.get(name).runs_in_pytest

    def runs(self, name: str) -> bool:
        """True when criteria of type *name* go to :meth:`run_safely` (:meth:`runnable`); False
        for a name nobody registered (lint reports it as ``UNKNOWN_VERIFIER``)."""
        return name in self._origin and self.runnable(name)

    def declared_subjects(self, criterion: Criterion) -> list[str]:
        """Paths the criterion's verifier will read, known before it runs.

        Never raises: an unknown or clashing type, a ``subjects()`` that raises or answers
        something other than a list of paths all give ``[]`` here, and :meth:`run_safely`
        answers ``error`` for that criterion.
        """
        try:
            return self._declared(self.get(criterion.verifier.type), criterion)
        except VerifierError:
            return []

    def config_problems(self, criterion: Criterion, workspace: Workspace) -> list[str]:
        """The type's problems with the criterion's settings, one message each.

        A crash, or an answer that is not a list of messages, becomes one problem (a string
        answer is taken as one message); a type registered by several plugins is one problem
        too, so lint reports it on the criteria that use it. Raises VerifierError for an
        unknown type (lint reports that as ``UNKNOWN_VERIFIER``).
        """
        name = criterion.verifier.type
        if len(self._origin.get(name, ())) > 1:
            return [self._clash(name)]
        vtype = self.get(name)
        try:
            return _messages(vtype.config_problems(settings_of(criterion.verifier), workspace))
        except _AnswerError as wrong:
            return [
                f"verifier {vtype.name!r} returned {wrong} from config_problems, not a list of"
                " messages (a bug in its plugin)"
            ]
        except (Exception, SystemExit) as exc:  # a plug-in's bug must not stop lint
            return [f"verifier {vtype.name!r} crashed checking its settings: {_describe(exc)}"]

    def run_safely(self, node: Node, criterion: Criterion, workspace: Workspace) -> VerifierResult:
        """Run the criterion's verifier; never raises for anything the verifier does.

        Unknown and clashing types, non-runnable types, crashes (``SystemExit`` included;
        ``KeyboardInterrupt`` goes through), a failing ``subjects()`` and malformed results all
        become outcome ``error`` with a reason code and a message a person can act on.
        """
        try:
            vtype = self.get(criterion.verifier.type)
        except VerifierError as exc:
            return VerifierResult("error", UNKNOWN_VERIFIER, str(exc))
        try:
            runnable = vtype.runs_in_pytest
        except (Exception, SystemExit) as exc:
            return VerifierResult(
                "error", VERIFIER_CRASHED, f"verifier {vtype.name!r}: {_describe(exc)}"
            )
        if not runnable:
            return not_runnable(vtype.name)
        try:
            declared = self._declared(vtype, criterion)  # known before it runs
        except VerifierError as exc:
            return VerifierResult("error", VERIFIER_CRASHED, str(exc))
        try:
            result = vtype.run(node, criterion, workspace)
        except VerdictError as stop:
            result = stop.result
        except (Exception, SystemExit, GeneratorExit) as exc:  # a plugin's bug: its criterion's
            return VerifierResult(
                "error",
                VERIFIER_CRASHED,
                f"verifier {vtype.name!r} crashed: {_describe(exc)}",
                {"exception": type(exc).__name__},
            )
        checked = _checked(result, vtype.name)
        if self._origin.get(vtype.name) == [BUILTIN_ORIGIN] or checked.outcome == "error":
            return checked
        return _subjects_checked(checked, vtype.name, workspace, declared)

    def _declared(self, vtype: VerifierType, criterion: Criterion) -> list[str]:
        """The type's ``subjects(settings)``; VerifierError when it fails or answers junk."""
        declare = getattr(vtype, "subjects", None)
        if declare is None:
            return []
        try:
            paths = declare(settings_of(criterion.verifier))
        except (Exception, SystemExit) as exc:
            raise VerifierError(
                f"verifier {vtype.name!r} crashed declaring its subjects: {_describe(exc)}"
            ) from exc
        if not isinstance(paths, (list, tuple)):
            wrong: Any = type(paths).__name__
        else:
            wrong = next((repr(p) for p in paths if not (isinstance(p, (str, PurePath)) and p)), "")
        if wrong:
            raise VerifierError(
                f"verifier {vtype.name!r} returned {wrong} from subjects(), not a list of paths"
                " (a bug in its plugin)"
            )
        return [str(p) for p in paths]

    def _clash(self, name: str) -> str:
        return (
            f"verifier type {name!r} is registered by several plugins"
            f" ({', '.join(self._origin[name])}); uninstall or block all but one"
        )


def runnable_criteria(
    graph: Graph, registry: Registry, nodes: list[str] | None
) -> list[tuple[Node, Criterion]]:
    """Criteria of *nodes* (all when None) whose verifier runs outside pytest, in plan order
    (here, beside the registry asked, so that a run's session imports no ``plangraph verify``)."""
    chosen: list[tuple[Node, Criterion]] = []
    runs: dict[str, bool] = {}
    for node_id in graph.topological_order():
        node = graph.nodes[node_id]
        if (nodes is not None and node_id not in nodes) or node.cancelled:
            continue
        for criterion in node.acceptance:
            kind = criterion.verifier.type
            found = runs.get(kind)
            if found is None:  # asked once per type
                found = runs[kind] = registry.runs(kind)
            if found:
                chosen.append((node, criterion))
    return chosen


def path_setting_problems(
    settings: Mapping[str, Any], keys: Iterable[str], workspace: Workspace | None
) -> list[str]:
    """Problems of the path settings *keys*: each must name one file inside the repository
    (with *workspace* None, by their text alone: no symlink on the way is looked at)."""
    problems: list[str] = []
    for key in keys:
        value = settings.get(key)
        if not isinstance(value, str) or not value:
            problems.append(f"{key}: expected a path relative to the repository root")
        elif why := path_problem(value):
            problems.append(f"{key}: {value!r}: {why}")
        elif is_glob(value):
            problems.append(f"{key}: {value!r} is a glob pattern; name one file")
        elif workspace is not None and workspace.escapes(value):
            problems.append(f"{key}: {value!r} resolves outside the repository root (symlink)")
    return problems


def not_runnable(name: str) -> VerifierResult:
    """The answer for criteria that no verifier run can satisfy (``test``, ``approval``)."""
    how = {
        "approval": "are satisfied by `plangraph approve`",
        "test": "are verified by running `pytest --plangraph`",
    }.get(name, "are not run by the registry")
    return VerifierResult("error", NOT_RUNNABLE, f"{name} criteria {how}, not run")


def _describe(exc: BaseException) -> str:
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


class _AnswerError(Exception):
    """A verifier answered a value of the wrong type (the message is the type's name)."""


def _messages(found: Any) -> list[str]:
    """A ``config_problems`` answer as messages: a list (or any iterable) of them, one string
    taken as one message, None as none; _AnswerError for anything else."""
    if found is None:
        return []
    if isinstance(found, str):
        return [found] if found else []
    if isinstance(found, (bytes, Mapping)) or not isinstance(found, Iterable):
        raise _AnswerError(type(found).__name__)
    return [str(p) for p in found]


def _check_type(vtype: Any, plugin: str) -> None:
    try:
        conforms = isinstance(vtype, VerifierType)  # reads each attribute: a property may raise
    except (Exception, SystemExit) as exc:
        raise VerifierError(
            f"plugin {plugin!r} returned a verifier type ({type(vtype).__name__}) that failed "
            f"when its attributes were read: {_describe(exc)}"
        ) from None
    if not conforms:
        raise VerifierError(
            f"plugin {plugin!r} returned {vtype!r} from plangraph_verifier_types, which is not a"
            " verifier type (it needs name, runs_in_pytest, config_problems and run)"
        )
    if not isinstance(vtype.name, str) or not _name().match(vtype.name):
        raise VerifierError(
            f"plugin {plugin!r} registered a verifier with a bad name {vtype.name!r}"
        )


def _checked(result: Any, name: str) -> VerifierResult:
    """The result itself when it is well formed, else an error result saying what is wrong."""
    problem = _result_problem(result)
    if problem is None:
        assert isinstance(result, VerifierResult)
        return result
    return VerifierResult("error", VERIFIER_CRASHED, f"verifier {name!r} {problem}")


def _subjects_checked(
    result: VerifierResult, name: str, workspace: Workspace, declared: Sequence[str]
) -> VerifierResult:
    """*result*, or an error when a subject it names or *declared* cannot be bound into the
    evidence: a path outside the repository (it would be dropped, and the evidence would never
    go stale) or a directory (nothing to hash; the verifier should name the files it read)."""
    for path in [*declared, *result.subjects]:
        if workspace.escapes(path):
            problem = "which is outside the repository"
        elif (workspace.root / path).is_dir():
            problem = "which is a directory; return the files the verdict read"
        else:
            continue
        return VerifierResult(
            "error", VERIFIER_CRASHED, f"verifier {name!r} names the subject {path!r}, {problem}"
        )
    return result


def _result_problem(result: Any) -> str | None:
    if not isinstance(result, VerifierResult):
        return f"returned {type(result).__name__}, not a VerifierResult"
    if not isinstance(result.outcome, str) or result.outcome not in ("passed", "failed", "error"):
        return f"returned the outcome {result.outcome!r}"
    if result.reason is not None and not isinstance(result.reason, str):
        return f"returned a reason of type {type(result.reason).__name__}, not text or None"
    if not isinstance(result.message, str):
        return f"returned a message of type {type(result.message).__name__}, not text"
    if not isinstance(result.details, dict):
        return f"returned details of type {type(result.details).__name__}, not a mapping"
    if not isinstance(result.subjects, tuple | list):
        return f"returned subjects of type {type(result.subjects).__name__}, not a tuple of paths"
    if not all(isinstance(s, str) and s for s in result.subjects):
        return "returned subjects that are not paths"
    if not _text_keys(result.details):
        return "returned details with a mapping key that is not text"
    try:
        json.dumps(result.details, allow_nan=False)
    except (TypeError, ValueError) as exc:
        return f"returned details that are not plain JSON ({exc})"
    return None


def _text_keys(value: Any) -> bool:
    """True when every mapping in *value* has text keys (``json.dumps`` would turn a key ``1``
    into ``"1"`` without a word, and the record would not be the details returned)."""
    if isinstance(value, dict):
        return all(isinstance(k, str) and _text_keys(v) for k, v in value.items())
    if isinstance(value, list | tuple):
        return all(_text_keys(item) for item in value)
    return True
