"""Canonical JSON and sha256 digests: the identity of plans, criteria, evidence and events.

Two values that mean the same thing must give the same digest, so the canonical form sorts keys,
uses no whitespace and encodes text as UTF-8. Everything that is content-addressed goes through
:func:`digest`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from json.encoder import c_make_encoder, encode_basestring  # type: ignore[attr-defined]

from .hashes import sha256_hex

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_ENCODER = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False)
"""The one encoder of the canonical form (``json.dumps`` would build one per call; encoding
keeps no state between calls)."""

_encode: Callable[[Any], str] = _ENCODER.encode
if c_make_encoder is not None:  # CPython: the C encoder itself, built once as well
    # No cycle check (``markers`` None): what is encoded is JSON data and model dumps.
    _chunks = c_make_encoder(
        None, _ENCODER.default, encode_basestring, None, ":", ",", True, False, True
    )

    def _encode(value: Any) -> str:
        return "".join(_chunks(value, 0))


def canonical_json(value: Any) -> str:
    """Return the canonical JSON text of *value* (sorted keys, no whitespace, UTF-8 kept)."""
    return _encode(value)


def encoded_members(value: Mapping[str, Any]) -> dict[str, str]:
    """The canonical JSON text of each member of the object *value* (text keys), for
    :func:`join_members`: members encoded once can be joined into several objects."""
    return {key: _encode(item) for key, item in value.items()}


_NAMES: dict[str, str] = {}
"""``"name":`` of each member name joined so far (the names of records and events: few)."""


def member_name(key: str) -> str:
    """The canonical JSON of the member name *key* followed by its colon, encoded once."""
    text = _NAMES.get(key)
    if text is None:
        text = _encode(key) + ":"
        if len(_NAMES) < 4096:  # names of a few kinds of object; any other text is not kept
            _NAMES[key] = text
    return text


def join_members(members: Mapping[str, str]) -> str:
    """The canonical JSON text of the object whose members' texts are *members* (as
    :func:`encoded_members` gives them): the same text :func:`canonical_json` gives."""
    return "{" + joined_members(members, sorted(members)) + "}"


def joined_members(members: Mapping[str, str], keys: Iterable[str]) -> str:
    """The members *keys* (sorted, each a key of *members*) of an object's canonical JSON
    text, comma-separated, without the braces: :func:`join_members` in parts, so that a text
    can be joined from pieces joined once."""
    names = _NAMES
    return ",".join([(names.get(key) or member_name(key)) + members[key] for key in keys])


def utf8_safe(value: Any) -> Any:
    """*value* (JSON data: dicts, lists, tuples, text and scalars) with each character that no
    UTF-8 text can carry (a lone surrogate, ``"\\ud800"``) written as its escape, in keys and
    values; *value* itself when it holds none."""
    if type(value) is str:
        if value.isascii():
            return value
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return value.encode("utf-8", "backslashreplace").decode("utf-8")
        return value
    if isinstance(value, dict):
        found = {utf8_safe(key): utf8_safe(item) for key, item in value.items()}
        same = len(found) == len(value) and all(
            key in value and found[key] is value[key] for key in found
        )
        return value if same else found
    if isinstance(value, (list, tuple)):
        items = [utf8_safe(item) for item in value]
        if all(new is old for new, old in zip(items, value, strict=True)):
            return value
        return items if isinstance(value, list) else tuple(items)
    return value


def text_digest(text: str) -> str:
    """The hex sha256 of canonical JSON *text* (what :func:`digest` gives for its value)."""
    return sha256_hex(text.encode("utf-8"))


def digest(value: Any) -> str:
    """Return the hex sha256 of the canonical JSON of *value*."""
    return sha256_hex(canonical_json(value).encode("utf-8"))


def encodes_as_utf8(text: str) -> bool:
    """Whether *text* can be written as UTF-8: False when it holds a lone surrogate, as text read
    from undecodable bytes (``surrogateescape``) or from a JSON escape like ``"\\ud800"`` does."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def non_finite_member(value: Any) -> tuple[str, float] | None:
    """The first member of the JSON data *value* (dicts, lists, texts, numbers) that holds NaN
    or an infinity, which Python's ``json`` reads (``NaN``, ``Infinity``, ``1e400``) and
    writes but JSON has no value for, as ``nodes.add[0].title`` (``""``: *value* itself) and
    the number; None when there is none."""
    import math

    stack: list[tuple[Any, tuple[Any, ...]]] = [(value, ())]
    while stack:
        item, where = stack.pop()
        if isinstance(item, float):
            if not math.isfinite(item):
                return _member(where), item
        elif isinstance(item, dict):
            stack += [(member, (where, key)) for key, member in reversed(item.items())]
        elif isinstance(item, list | tuple):
            stack += [(member, (where, index)) for index, member in reversed(list(enumerate(item)))]
    return None


def _member(where: tuple[Any, ...]) -> str:
    """The member *where* names (nested ``(parent, key)`` pairs) as ``nodes.add[0].title``."""
    parts: list[str] = []
    while where:
        where, key = where
        parts.append(f"[{key}]" if isinstance(key, int) else f".{key}")
    return "".join(reversed(parts)).lstrip(".")


def json_loads(text: str | bytes, **options: Any) -> Any:
    """``json.loads(text, **options)``, but a document nested too deep for the parser (100,000
    ``[`` in a cache file or an event edited by hand) raises :class:`json.JSONDecodeError`, as
    any other text that is not JSON does, instead of :class:`RecursionError`: every reader that
    treats bad JSON as a damaged entry treats this one so too."""
    try:
        return json.loads(text, **options)
    except RecursionError:
        shown = text if isinstance(text, str) else text.decode("utf-8", "replace")
        raise json.JSONDecodeError("nested too deeply to read", shown, 0) from None
