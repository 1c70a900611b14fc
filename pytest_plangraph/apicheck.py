"""Checks of what a caller hands the Python API, so a wrong value is one clear
:class:`~pytest_plangraph.errors.UsageError` at the call, never a traceback from deep inside.

The command line checks the same rules with :func:`name_problem` (``--by`` and
``--idempotency-key``); the API applies them to ``by=`` and ``idempotency_key=``, so an agent
runtime cannot record an anonymous claim or approval that the command line would refuse.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from .errors import UsageError

_INVISIBLE = frozenset("\u061c\u200e\u200f\u2028\u2029") | frozenset(
    map(chr, [*range(0x202A, 0x202F), *range(0x2066, 0x206A)])
)
"""Characters that change how the text around them is shown without being seen: the
bidirectional marks, embeddings, overrides and isolates (U+061C, U+200E, U+200F,
U+202A–U+202E, U+2066–U+2069), and the line and paragraph separators (U+2028, U+2029)."""


def name_problem(value: str) -> str | None:
    """Why *value* cannot name who acts (or a request's key), or None when it can: it must
    not be blank, which would record nobody, nor hold control characters (a line break or a
    terminal escape would garble every table that shows it), nor a bidirectional control
    or a line separator (shown, it reorders or breaks the text around it: ``history`` would
    show another name than the one recorded)."""
    if not value.strip():
        return "expected a name, got an empty text"
    if any(ord(char) < 32 or 127 <= ord(char) < 160 for char in value):
        return (
            f"{value!r} holds control characters (a line break, a tab, an escape); write the "
            "name on one line of plain text"
        )
    hidden = sorted({f"U+{ord(char):04X}" for char in value if char in _INVISIBLE})
    if hidden:
        return (
            f"{value!r} holds control characters that reorder or break the text shown "
            f"around them ({', '.join(hidden)}: bidirectional controls, line separators); "
            "write the name as plain text without them"
        )
    return None


def name(value: Any, what: str) -> str:
    """*value* checked as a name (``by``, ``idempotency_key``): text that
    :func:`name_problem` accepts."""
    problem = name_problem(text(value, what))
    if problem is not None:
        raise UsageError(f"{what}: {problem}")
    return str(value)


def text(value: Any, what: str) -> str:
    """*value*, which must be text (a node id, a criterion id, a note)."""
    if not isinstance(value, str):
        raise UsageError(f"{what} must be text, not {_kind(value)}")
    return value


def optional_text(value: Any, what: str) -> str | None:
    """*value*, which must be text or None."""
    return None if value is None else text(value, what)


def version(value: Any, what: str) -> int | None:
    """An expected plan version: a whole number of 1 or more, or None."""
    if value is None:
        return None
    if type(value) is not int or value < 1:
        raise UsageError(f"{what} must be a plan version (1, 2, 3 …), not {value!r}")
    return value


def texts(values: Any, what: str) -> list[str]:
    """Several ids given as a list (or another iterable) of text; one text alone is refused,
    as it would be read one character at a time."""
    if isinstance(values, str | bytes):
        raise UsageError(f"{what} must be a list of ids, not one text: write [{values!r}]")
    if not isinstance(values, Iterable):
        raise UsageError(f"{what} must be a list of ids, not {_kind(values)}")
    return [text(value, f"each of {what}") for value in values]


def is_sequence(value: object) -> bool:
    """A list or tuple of values, not a text (a ``str`` is a sequence of its letters)."""
    return isinstance(value, Sequence) and not isinstance(value, str | bytes)


def _kind(value: Any) -> str:
    return "None" if value is None else type(value).__name__
