"""Reading a plan file written as JSON (:func:`read_json`): duplicate keys, ``NaN`` and
``Infinity``, numbers too large to hold and unpaired surrogate escapes are refused with their
line and column, as the YAML reader refuses what it does not take."""

from __future__ import annotations

import contextlib
import json
import math
import re
from collections.abc import Callable
from typing import Any

from ..canonical import encodes_as_utf8, json_loads
from ..errors import PlanError, Problem
from .messages import FieldPath, format_path
from .positions import LazyPositions


def read_json(
    text: str, name: str, read_yaml: Callable[[str, str], tuple[Any, Any]]
) -> tuple[Any, dict[FieldPath, tuple[int, int]]]:
    """The data of a JSON plan *text* and its positions (found by reading it as YAML with
    *read_yaml* when a message needs one); :class:`PlanError` when it is not a plan's JSON."""

    def no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        seen: dict[str, Any] = {}
        for key, value in pairs:
            if key in seen:
                raise _DuplicateKeyError(key)
            seen[key] = value
        return seen

    try:
        data = json.loads(text, object_pairs_hook=no_duplicates, parse_constant=_not_a_number)
    except _NotANumberError:
        message = "NaN and Infinity are not JSON numbers; write a finite number"
        line, column = _json_position(text, lambda token: token.lstrip("-") in _CONSTANTS)
        raise PlanError([Problem(name, line, column, "", message)]) from None
    except json.JSONDecodeError as exc:
        raise PlanError(
            [Problem(name, exc.lineno, exc.colno, "", f"invalid JSON: {exc.msg}")]
        ) from None
    except _DuplicateKeyError as exc:
        raise _located_duplicate(text, name, exc.key, read_yaml) from None
    except RecursionError:
        raise PlanError([Problem(name, 0, 0, "", _TOO_DEEP)]) from None
    except ValueError as exc:  # a whole number of more digits than Python converts
        message = f"a number that cannot be read ({str(exc).split(':')[0]}); write a shorter one"
        raise PlanError([Problem(name, 0, 0, "", message)]) from None
    _check_json_values(data, text, name)
    return data, LazyPositions(text, lambda whole: read_yaml(whole, name)[1])


_TOO_DEEP = "values nested too deeply to read; a plan nests a few levels of objects"


def _located_duplicate(
    text: str, name: str, key: str, read_yaml: Callable[[str, str], tuple[Any, Any]]
) -> PlanError:
    """The error for a key written twice in a JSON plan, with its line, column and field
    path when the text reads as YAML too (JSON is YAML; the YAML reader locates duplicates)."""
    try:
        read_yaml(text, name)
    except PlanError as located:
        if any("duplicate key" in problem.message for problem in located.problems):
            return located
    return PlanError([Problem(name, 0, 0, "", f"duplicate key {key!r}")])


def _check_json_values(data: Any, text: str, name: str) -> None:
    """Refuse what Python's JSON reader takes although no JSON value means it: a text with an
    unpaired surrogate escape (``"\\ud800"``, no character) and a number too large for a
    float (``1e400``, read as infinity)."""
    try:
        json.dumps(data, ensure_ascii=False, allow_nan=False).encode("utf-8")
    except UnicodeEncodeError:
        where = format_path(_surrogate_path(data, ()) or ())
        message = (
            f"{where + ': ' if where else ''}text holds an unpaired surrogate escape (such as "
            "\\ud800), which stands for no character; write the character itself or remove it"
        )
        line, column = _json_position(text, _unpaired_surrogate)
        raise PlanError([Problem(name, line, column, "", message)]) from None
    except ValueError:  # allow_nan: an infinite float
        message = "a number too large to hold (such as 1e400); write a finite number"
        line, column = _json_position(text, _infinite)
        raise PlanError([Problem(name, line, column, "", message)]) from None
    except RecursionError:
        raise PlanError([Problem(name, 0, 0, "", _TOO_DEEP)]) from None


_CONSTANTS = ("NaN", "Infinity")
_JSON_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*"|-?[0-9][0-9.eE+-]*|-?Infinity|NaN')
"""The JSON texts and numbers (and the constants Python's reader takes) of a JSON text."""


def _json_position(text: str, wanted: Callable[[str], bool]) -> tuple[int, int]:
    """Line and column of the first text or number token of a JSON *text* that is *wanted*
    ((0, 0) when none is). The text was read up to that token, so its tokens are sound."""
    for match in _JSON_TOKENS.finditer(text):
        token = match.group()
        with contextlib.suppress(ValueError):
            if wanted(token):
                start = match.start()
                return text.count("\n", 0, start) + 1, start - text.rfind("\n", 0, start)
    return 0, 0


def _unpaired_surrogate(token: str) -> bool:
    return token.startswith('"') and not encodes_as_utf8(json_loads(token))


def _infinite(token: str) -> bool:
    return not token.startswith('"') and math.isinf(float(token))


class _NotANumberError(Exception):
    """``NaN`` or ``Infinity`` in a JSON plan (Python's reader takes them)."""


def _not_a_number(constant: str) -> Any:
    raise _NotANumberError(constant)


def _surrogate_path(value: Any, path: FieldPath) -> FieldPath | None:
    """Where in *value* a text holds an unpaired surrogate (None when nowhere)."""
    if isinstance(value, str):
        return None if value.isascii() or encodes_as_utf8(value) else path
    if isinstance(value, dict):
        for key, item in value.items():
            found = path if not encodes_as_utf8(key) else _surrogate_path(item, (*path, key))
            if found is not None:
                return found
    if isinstance(value, list):
        for index, item in enumerate(value):
            if (found := _surrogate_path(item, (*path, index))) is not None:
                return found
    return None


class _DuplicateKeyError(Exception):
    def __init__(self, key: str) -> None:
        self.key = key
