"""The ``schema`` verifier: an artifact (JSON or YAML) validated against a JSON Schema file.

Files ending in ``.yaml``/``.yml`` are read as YAML (safely, and with dates kept as strings, as
JSON would have them); anything else as JSON. ``$ref`` to other schema files resolves relative
to the schema file, inside the repository only — nothing is ever fetched from the network.
Formats are checked as :mod:`~pytest_plangraph.verifiers.formats` says (the same on every
machine). jsonschema is imported when a schema is checked,
never at import time.

Reasons: ``SCHEMA_MISSING``/``SCHEMA_INVALID`` (outcome ``error``: the check itself is broken),
``ARTIFACT_MISSING``/``ARTIFACT_UNREADABLE``/``SCHEMA_VIOLATION`` (outcome ``failed``),
``PATH_OUTSIDE_ROOT`` for a file that resolves outside the repository.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import posixpath
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import urlsplit

from ..canonical import utf8_safe
from ..values import dataclass, replace
from . import (
    ARTIFACT_MISSING,
    ARTIFACT_UNREADABLE,
    PATH_OUTSIDE_ROOT,
    SCHEMA_INVALID,
    SCHEMA_MISSING,
    SCHEMA_VIOLATION,
    VerdictError,
    VerifierResult,
    path_setting_problems,
    settings_of,
)

if TYPE_CHECKING:
    from jsonschema.exceptions import ValidationError
    from jsonschema.protocols import Validator

    from ..plan.model import Criterion, Node
    from ..vcs.workspace import Workspace

MAX_ERRORS = 10
"""At most this many violations are listed; the count says how many there were."""
_IDENTIFIER = r"^[A-Za-z_][A-Za-z0-9_]*$"
"""A key written as ``.key`` in a path (matched through :mod:`re`'s cache: compiled when a
violation is first described)."""


@dataclass(frozen=True)
class _Role:
    """How a problem with a file is judged: a broken schema is an error of the check, a broken
    artifact is a failure of the criterion."""

    outcome: Literal["failed", "error"]
    missing: str
    unreadable: str


_SCHEMA = _Role("error", SCHEMA_MISSING, SCHEMA_INVALID)
_ARTIFACT = _Role("failed", ARTIFACT_MISSING, ARTIFACT_UNREADABLE)


class SchemaType:
    """Built-in ``schema`` verifier type (settings ``schema``, ``artifact``)."""

    name = "schema"
    runs_in_pytest = True

    def subjects(self, settings: Mapping[str, Any]) -> list[str]:
        """The schema and the artifact (files reached through ``$ref`` are added when run)."""
        return [str(settings["schema"]), str(settings["artifact"])]

    def config_problems(self, settings: Mapping[str, Any], workspace: Workspace) -> list[str]:
        """Bad paths, and a schema file that is missing or not a valid JSON Schema."""
        problems = path_setting_problems(settings, ("schema", "artifact"), workspace)
        if problems:
            return problems
        rel = settings["schema"]
        try:
            data = _read(workspace, rel, _SCHEMA)
            marker = _marker(workspace, rel, data)
            if marker is not None and _exists(marker):
                return problems  # these very bytes, read this way, were found valid before
            _compile(rel, _Refs(workspace, rel), data)  # the bytes the key names
        except VerdictError as stop:
            problems.append(stop.result.message)
        else:
            _remember(marker)
        return problems

    def run(self, node: Node, criterion: Criterion, workspace: Workspace) -> VerifierResult:
        """Validate the artifact; subjects are the schema, the artifact and any ``$ref`` files."""
        settings = settings_of(criterion.verifier)
        refs = _Refs(workspace, settings["schema"])
        try:
            result = _validate(workspace, settings["schema"], settings["artifact"], refs)
        except VerdictError as stop:
            result = stop.result
        subjects = dict.fromkeys([settings["schema"], settings["artifact"], *refs.read])
        return replace(result, subjects=tuple(subjects))


def _marker(workspace: Workspace, rel: str, data: bytes) -> Path | None:
    """The marker kept in the workspace's cache once the schema file *rel* with content
    *data*, read as its name says (YAML or JSON), was compiled as a valid schema by this code
    and this jsonschema (importing jsonschema and checking a schema cost every command about
    0.2 s); None without a cache."""
    if workspace.cache is None:
        return None
    from ..codehash import code_fingerprint
    from ..plan.cache import machine_salt
    from .documents import YAML_SUFFIXES

    library = _library_version()
    if library is None:
        return None
    mode = "yaml" if rel.lower().endswith(YAML_SUFFIXES) else "json"
    key = hashlib.sha256(machine_salt())
    key.update(data)
    key.update(f"\0{mode}\0{code_fingerprint()}\0{library}".encode())
    return workspace.cache / "valid-schemas" / key.hexdigest()


def _library_version() -> str | None:
    """jsonschema's version, from the name of the one ``jsonschema-VERSION.dist-info`` folder
    beside the package (the name changes with every install of another version), without
    importing jsonschema or :mod:`importlib.metadata` (which costs a command more than the
    check it saves); else as :func:`importlib.metadata.version` tells it; None when it is not
    installed."""
    import importlib.util

    try:
        spec = importlib.util.find_spec("jsonschema")
    except (ImportError, ValueError):
        spec = None
    if spec is not None and spec.origin:
        site = os.path.dirname(os.path.dirname(spec.origin))
        try:
            names = os.listdir(site)
        except OSError:
            names = []
        found = [
            n[len("jsonschema-") : -len(".dist-info")]
            for n in names
            if n.startswith("jsonschema-") and n.endswith(".dist-info")
        ]
        if len(found) == 1:
            return f"{site}:{found[0]}"
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("jsonschema")
    except PackageNotFoundError:
        return None


KEPT_SCHEMAS = 64
"""How many valid-schema markers the cache keeps (the ones written last)."""


def _exists(marker: Path) -> bool:
    try:
        return marker.exists()
    except OSError:  # a cache that cannot be read is not used
        return False


def _remember(marker: Path | None) -> None:
    """Leave *marker* (see :func:`_marker`), and remove the oldest markers beyond
    :data:`KEPT_SCHEMAS`; a cache that cannot be written is not used."""
    if marker is None:
        return
    from ..plan.cache import in_use, make_cache_dir

    cache = marker.parent.parent
    if cache.name.endswith(".cache") and not in_use(cache):  # beside a store not made (yet)
        return
    try:
        make_cache_dir(marker.parent.parent)
        marker.parent.mkdir(exist_ok=True)
        marker.touch()
        kept = sorted(marker.parent.iterdir(), key=lambda p: p.stat().st_mtime_ns)
    except OSError:
        return
    for old in kept[: max(len(kept) - KEPT_SCHEMAS, 0)]:
        with contextlib.suppress(OSError):
            old.unlink()


def _stop(role: _Role, reason: str, message: str) -> VerdictError:
    return VerdictError(VerifierResult(role.outcome, reason, message))


def _load(workspace: Workspace, rel: str, role: _Role) -> Any:
    return _parsed(_read(workspace, rel, role), rel, role)


def _read(workspace: Workspace, rel: str, role: _Role) -> bytes:
    # the reading, the documents' parsers and the formats: only where a schema is checked
    from ..regularfile import NotRegularFileError
    from ..vcs.reading import read_bytes

    if workspace.escapes(rel):
        raise _stop(role, PATH_OUTSIDE_ROOT, f"{rel} resolves outside the repository root")
    try:
        return read_bytes(workspace, rel)
    except FileNotFoundError:
        raise _stop(role, role.missing, f"{rel} does not exist") from None
    except (NotRegularFileError, NotADirectoryError):
        raise _stop(role, role.missing, f"{rel} is not a regular file") from None
    except OSError as exc:
        raise _stop(role, role.unreadable, f"{rel} cannot be read: {exc.strerror}") from None


def _parsed(data: bytes, rel: str, role: _Role) -> Any:
    from .documents import parse_document

    try:
        return parse_document(data, rel)
    except ValueError as exc:
        raise _stop(role, role.unreadable, str(exc)) from None


class _Refs:
    """Resolves ``$ref`` to files next to the schema, and remembers what it read or refused."""

    def __init__(self, workspace: Workspace, schema_rel: str) -> None:
        self.workspace = workspace
        self.base = posixpath.dirname(schema_rel)
        self.read: list[str] = []
        self.failure: VerdictError | None = None
        self.root_id: str | None = None
        """The schema file's own ``$id``: relative ``$ref``s resolve against it."""
        self.dialect: Any = None
        """The schema file's validator class: a referenced file without ``$schema`` is of the
        same dialect."""

    def registry(self) -> Any:
        """A referencing registry that retrieves through this object."""
        import referencing

        return referencing.Registry(retrieve=self.retrieve)  # type: ignore[call-arg]

    def retrieve(self, uri: str) -> Any:
        """The schema file named by a relative *uri*; remote URIs are refused."""
        import referencing
        import referencing.jsonschema

        if urlsplit(uri).scheme:
            because = (
                f" (relative $refs resolve against the schema's $id {self.root_id!r}: leave the "
                "$id out to resolve them next to the schema file)"
                if self.root_id and urlsplit(self.root_id).scheme
                else ""
            )
            self.failure = _stop(
                _SCHEMA,
                SCHEMA_INVALID,
                f"$ref {uri!r} is not fetched: keep referenced schemas in the repository"
                f" and refer to them by relative path{because}",
            )
            raise self.failure
        rel = posixpath.normpath(posixpath.join(self.base, uri))
        try:
            contents = _load(self.workspace, rel, _SCHEMA)
            dialect = _checked_ref(contents, rel, self.dialect)  # as the schema file itself
        except VerdictError as stop:
            self.failure = stop
            raise
        self.read.append(rel)
        uri = dialect.META_SCHEMA.get("$schema", "")
        spec = referencing.jsonschema.specification_with(
            uri, default=referencing.jsonschema.DRAFT202012
        )
        return referencing.Resource.from_contents(contents, default_specification=spec)


def _compile(schema_rel: str, refs: _Refs, data: bytes) -> Validator:
    """The validator of the schema file *schema_rel* whose content, already read, is *data*."""

    schema = _parsed(data, schema_rel, _SCHEMA)
    cls = refs.dialect = _checked_schema(schema, schema_rel)
    if isinstance(schema, dict) and isinstance(schema.get("$id"), str):
        refs.root_id = schema["$id"]
    from .formats import format_checker

    checker = format_checker(cls)
    validator: Validator = cls(schema, registry=refs.registry(), format_checker=checker)
    return validator


def _checked_ref(schema: Any, schema_rel: str, root: Any) -> Any:
    """The validator class of a schema file reached through ``$ref``, once it is valid. One
    that names its ``$schema`` is of that dialect. One that names none is of its referrer's,
    which is not known here (a draft-07 part of a 2020-12 schema may refer to it): it is taken
    in the root schema's dialect when valid there, else in the first other dialect it is valid
    in, and is SCHEMA_INVALID only when it is valid in none."""
    from jsonschema import validators

    if not isinstance(schema, dict) or "$schema" in schema:
        return _checked_schema(schema, schema_rel, root)
    try:
        return _checked_schema(schema, schema_rel, root)
    except VerdictError as first:
        others = [
            validators.Draft202012Validator,
            validators.Draft201909Validator,
            validators.Draft7Validator,
            validators.Draft6Validator,
            validators.Draft4Validator,
        ]
        for dialect in others:
            if dialect is root:
                continue
            try:
                return _checked_schema(schema, schema_rel, dialect)
            except VerdictError:
                continue
        raise first


def _checked_schema(schema: Any, schema_rel: str, default: Any = None) -> Any:
    """The validator class of *schema* (read from *schema_rel*; of the *default* dialect when
    it names none, else 2020-12), once it is a valid schema of its dialect; SCHEMA_INVALID
    otherwise."""
    from jsonschema import exceptions

    from .documents import short

    if not isinstance(schema, (dict, bool)):
        kind = type(schema).__name__
        raise _stop(
            _SCHEMA, SCHEMA_INVALID, f"{schema_rel}: a JSON Schema is an object, not {kind}"
        )
    cls = _validator_class(schema, schema_rel, default)
    try:
        cls.check_schema(schema)
    except exceptions.SchemaError as exc:
        where = json_path(exc.absolute_path)
        message = f"{schema_rel}: not a valid JSON Schema: {where}: {short(exc.message)}"
        raise _stop(_SCHEMA, SCHEMA_INVALID, message) from None
    return cls


def _validator_class(schema: dict[str, Any] | bool, schema_rel: str, default: Any = None) -> Any:
    """The validator of the schema's ``$schema`` dialect (*default*, else 2020-12, when it
    names none)."""
    from jsonschema import validators

    if not isinstance(schema, dict) or "$schema" not in schema:
        return default or validators.Draft202012Validator
    cls = validators.validator_for(schema, default=None)  # type: ignore[arg-type]
    if cls is None:
        message = (
            f"{schema_rel}: unknown $schema {schema['$schema']!r}; name a JSON Schema draft such"
            " as 'https://json-schema.org/draft/2020-12/schema', or leave $schema out"
        )
        raise _stop(_SCHEMA, SCHEMA_INVALID, message)
    return cls


def _validate(
    workspace: Workspace, schema_rel: str, artifact_rel: str, refs: _Refs
) -> VerifierResult:
    import referencing.exceptions

    from .documents import short

    validator = _compile(schema_rel, refs, _read(workspace, schema_rel, _SCHEMA))
    instance = _load(workspace, artifact_rel, _ARTIFACT)
    try:
        errors = list(validator.iter_errors(instance))
    except referencing.exceptions.Unresolvable as exc:
        if refs.failure is not None:
            raise refs.failure from None
        message = f"{schema_rel}: cannot resolve $ref: {short(str(exc))}"
        raise _stop(_SCHEMA, SCHEMA_INVALID, message) from None
    except (TypeError, ValueError, KeyError, AttributeError, RecursionError) as exc:
        # a schema valid for check_schema that still cannot be applied (a keyword's value
        # the validator cannot compare); the check is broken, not the artifact
        message = f"{schema_rel}: cannot be applied: {type(exc).__name__}: {short(str(exc))}"
        raise _stop(_SCHEMA, SCHEMA_INVALID, message) from None
    if not errors:
        return VerifierResult("passed", message=f"{artifact_rel} conforms to {schema_rel}")
    return _violations(artifact_rel, errors)


def _violations(artifact_rel: str, errors: list[ValidationError]) -> VerifierResult:
    from jsonschema.exceptions import best_match

    from .documents import short

    best = best_match(errors)
    assert best is not None
    top = best
    while top.parent is not None:
        top = top.parent
    rest = sorted((e for e in errors if e is not top), key=lambda e: json_path(e.absolute_path))
    shown = [best, *rest][:MAX_ERRORS]
    entries = [
        {
            "path": json_path(e.absolute_path),
            "message": short(e.message),
            "keyword": str(e.validator),
            "schema_path": _pointer(e.absolute_schema_path),
        }
        for e in shown
    ]
    lines = [f"{artifact_rel}: {entry['path']}: {entry['message']}" for entry in entries]
    if len(errors) > len(shown):
        lines.append(f"... and {len(errors) - len(shown)} more")
    details = {"errors": entries, "count": len(errors)}
    return VerifierResult("failed", SCHEMA_VIOLATION, "\n".join(lines), details)


def json_path(parts: Iterable[str | int]) -> str:
    """``$.users[0].email`` from ``["users", 0, "email"]`` (odd keys as ``$["a b"]``)."""
    text = "$"
    for part in parts:
        if isinstance(part, int):
            text += f"[{part}]"
        elif re.match(_IDENTIFIER, part):
            text += f".{part}"
        else:
            text += f"[{utf8_safe(json.dumps(part, ensure_ascii=False))}]"
    return text


def _pointer(parts: Iterable[str | int]) -> str:
    escaped = (utf8_safe(str(p)).replace("~", "~0").replace("/", "~1") for p in parts)
    return "#/" + "/".join(escaped)
