"""What a plan file's validation errors say: one line per defect, naming the field and what
was expected there (pydantic's own wording is replaced for the errors a plan commonly has)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..errors import Problem, cut, quoted
from .model import SHA256_PATTERN

FieldPath = tuple[str | int, ...]
"""Where a value is in a plan's data: keys and list indexes from the top."""


def format_path(path: FieldPath) -> str:
    """``nodes[2].acceptance[0].verifier`` from ``("nodes", 2, "acceptance", 0, "verifier")``."""
    text = ""
    for part in path:
        if isinstance(part, str):
            part = cut(part)  # a huge unknown key
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else part)
    return text


_MESSAGES = {
    "missing": "required field is missing",
    "list_type": "expected a list",
    "dict_type": "expected a mapping",
    "string_type": "expected text",
    "bool_type": "expected true or false",
    "bool_parsing": "expected true or false",
    "int_type": "expected a whole number",
    "int_parsing": "expected a whole number",
    "float_type": "expected a number",
    "float_parsing": "expected a number",
    "format_version_type": "expected the whole number 1",
    "string_too_short": "expected a path, got an empty text",
    "finite_number": "expected a finite number (JSON has no NaN or infinity)",
    "invalid-json-value": (
        "expected a JSON value (text, a number, true or false, null, a list or a mapping)"
    ),
}


def position(
    positions: Mapping[FieldPath, tuple[int, int]], path: FieldPath
) -> tuple[int, int] | None:
    """The (line, column) of the deepest prefix of *path* that *positions* knows, or None."""
    for end in range(len(path), -1, -1):
        found = positions.get(path[:end])
        if found:
            return found
    return None


def problem(
    file: str, positions: Mapping[FieldPath, tuple[int, int]], data: Any, err: Any
) -> Problem:
    """One :class:`Problem` for one pydantic error *err* of validating *data*, read from
    *file*, located with the *positions* of its fields."""
    path = _data_path(data, err["loc"])
    kind = err["type"]
    if kind == "extra_forbidden":
        message = f"unknown field {quoted(path[-1])}{_allowed_hint(data, path)}"
    elif kind == "missing":
        missing = err["loc"][-1]
        message = f"required field {quoted(missing)} is missing"
        path = (*path, str(missing)) if path[-1:] != (missing,) else path
    elif kind == "literal_error":
        message = f"expected {err['ctx']['expected']}, got {quoted(err.get('input'))}"
    elif kind == "string_pattern_mismatch":
        message = _pattern_message(err["ctx"]["pattern"], err.get("input"))
    elif kind == "string_too_long":
        message = f"too long: at most {err['ctx']['max_length']} characters"
    elif kind == "model_type":
        got = err.get("input")
        example = " such as {type: test}" if path[-1:] == ("verifier",) else ""
        message = f"expected a mapping{example}, got {type(got).__name__} {quoted(got)}"
    else:
        message = _type_message(kind, err["msg"], err.get("input"))
    line, col = position(positions, path) or (0, 0)
    return Problem(file, line, col, format_path(path), message)


_SCALARS = frozenset({"bool_type", "int_type", "float_type", "format_version_type"})
"""Errors of a number or true/false field, which text never fills (``"3"`` is not ``3``)."""


def _type_message(kind: str, text: str, got: Any) -> str:
    if kind not in _MESSAGES:
        return text
    if kind == "string_too_short":
        return f"{_MESSAGES[kind]}; write a path relative to the repository root"
    if kind == "invalid-json-value":  # a plug-in's setting: a date or bytes YAML wrote
        return (
            f"{_MESSAGES[kind]}, got {type(got).__name__} {quoted(got)}; put it in quotes "
            "to keep it as text"
        )
    message = f"{_MESSAGES[kind]}, got {type(got).__name__} {quoted(got)}"
    if kind in _SCALARS and isinstance(got, str) and got.strip().lower() in _YAML11_BOOLEANS:
        message += "; write true or false (yes, no, on and off are text, as in YAML 1.2 and JSON)"
    elif kind in _SCALARS and isinstance(got, str) and _looks_plain(got):
        message += "; write it without quotes"
    return message


_YAML11_BOOLEANS = frozenset({"yes", "no", "on", "off", "y", "n"})


def _looks_plain(text: str) -> bool:
    """True when *text* would be a number or true/false if it were written without quotes."""
    if text.strip().lower() in ("true", "false"):
        return True
    try:
        float(text)
    except ValueError:
        return False
    return True


def _pattern_message(pattern: str, got: Any) -> str:
    if pattern == SHA256_PATTERN:
        return f"expected 64 hexadecimal digits (sha256sum's output), got {quoted(got)}"
    return (
        f"{quoted(got)} is not a valid id: use ASCII letters, digits, '.', '_' or '-', "
        "starting with an ASCII letter or digit"
    )


_VERIFIER_TAGS = frozenset({"test", "schema", "artifact", "approval", "command", "plugin"})


def _data_path(data: Any, loc: tuple[Any, ...]) -> FieldPath:
    """Drop pydantic's union tags from *loc*, keeping only steps that exist in the data."""
    path: list[str | int] = []
    current = data
    for index, step in enumerate(loc):
        if index and loc[index - 1] == "verifier" and step in _VERIFIER_TAGS:
            continue
        if isinstance(current, dict) and step in current:
            path.append(step)
            current = current[step]
        elif isinstance(current, list) and isinstance(step, int) and step < len(current):
            path.append(step)
            current = current[step]
        elif isinstance(current, dict) and step == loc[-1]:
            path.append(step)
            break
    return tuple(path)


def _allowed_hint(data: Any, path: FieldPath) -> str:
    owner = _owner_model(path, data)
    if owner is None:
        return ""
    names = sorted((f.alias or n) for n, f in owner.model_fields.items())
    return f"; allowed: {', '.join(names)}"


def _owner_model(path: FieldPath, data: Any) -> Any:
    from .boundary import (  # the models that validated the data
        ApprovalVerifier,
        ArtifactVerifier,
        Criterion,
        Edge,
        Node,
        Plan,
        PlanDefaults,
        SchemaVerifier,
        TestDefaults,
        TestVerifier,
    )

    parent = [p for p in path[:-1] if not isinstance(p, int)]
    if not parent:
        return Plan
    last = parent[-1]
    if last == "verifier":
        current = data
        for step in path[:-1]:
            current = current[step]
        verifiers = {
            "test": TestVerifier,
            "schema": SchemaVerifier,
            "artifact": ArtifactVerifier,
            "approval": ApprovalVerifier,
        }
        return verifiers.get(str(current.get("type"))) if isinstance(current, dict) else None
    if parent == ["defaults", "test"]:
        return TestDefaults
    owners = {"nodes": Node, "edges": Edge, "acceptance": Criterion, "defaults": PlanDefaults}
    return owners.get(str(last))
