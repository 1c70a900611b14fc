"""JSON Patch (RFC 6902) over a plan's JSON form, pure: the other way to write a patch.

A patch file whose content is a list — a JSON array, or the same list written in YAML — is a
JSON Patch; a mapping is the small format of :mod:`.patch`. Each operation is an object with
``op`` (``add``, ``remove``, ``replace``, ``move``, ``copy`` or ``test``), ``path`` (an RFC 6901
JSON Pointer: ``/nodes/2/acceptance/-``, ``~1`` for ``/`` and ``~0`` for ``~`` in a name), and
``value`` or ``from`` as the operation needs; other members are ignored, as the RFC says.

The *plan's JSON form* is the plan file read as data: the same keys and the same list order as
the file, so ``/nodes/0`` is the first node the file lists. Operations apply in order, each to the
result of the one before; a pointer that names nothing, an index out of range, or a ``test``
whose value differs stops the whole patch (:class:`~pytest_plangraph.errors.UsageError` naming
the operation's index and pointer), and nothing is written.

A patch changes nodes, criteria and edges, as the small format does: an operation that would
change anything outside ``/nodes`` and ``/edges`` (``/max_replan_rounds``, ``/plan`` …) is
refused — a plan-level setting is a person's edit of the plan file. ``test`` may read anything,
and ``copy`` may copy from anywhere.

The operations are applied by :func:`apply_ops` to any mutable mappings and lists: plain
``dict``/``list`` data, or the ``ruamel.yaml`` round-trip structure of a YAML plan, where what the
patch does not touch keeps its comments and layout; *wrap* turns each new value into YAML
nodes laid out as plans usually are. The nodes an operation touches (for the replan budget) are
the nodes its pointers name — ``/nodes/3/...`` names the node at index 3 — before the operation
for what it removes or replaces, after it for what it adds; ``/edges/3/...`` names the dependent
end (``to``) of that edge.
"""

from __future__ import annotations

import copy
import json
import math
import re
from collections.abc import (
    Callable,
    Iterable,
    Iterator,
    Mapping,
    MutableMapping,
    MutableSequence,
    Sequence,
)
from dataclasses import dataclass
from typing import Any

from ..errors import UsageError, quoted

__all__ = ["OPERATIONS", "JsonPatch", "apply_ops", "read_json_patch"]

OPERATIONS = ("add", "remove", "replace", "move", "copy", "test")
_NEEDS_VALUE = ("add", "replace", "test")
_NEEDS_FROM = ("move", "copy")
MAX_VALUES = 100_000
"""The most values a plan may hold after a JSON Patch: beyond, the patch is refused before it
copies anything."""
_CHANGEABLE = ("nodes", "edges")
_INDEX = re.compile(r"0|[1-9][0-9]*")
_BAD_ESCAPE = re.compile(r"~(?![01])")


@dataclass(frozen=True)
class Operation:
    """One checked operation: its index in the patch, kind, pointers (as tokens) and value."""

    index: int
    op: str
    path: str
    tokens: tuple[str, ...]
    source: tuple[str, ...] | None
    value: Any

    def where(self) -> str:
        """The operation as messages name it: ``op 2 (remove /nodes/7)``."""
        return f"op {self.index} ({self.op} {self.path or '(the whole plan)'})"


@dataclass(frozen=True)
class JsonPatch:
    """A checked JSON Patch: its operations in order, and the list as it was written."""

    operations: tuple[Operation, ...]
    written: tuple[Mapping[str, Any], ...]
    name: str = "patch"
    """What messages call the patch (its file name)."""

    def to_json(self) -> list[dict[str, Any]]:
        """The operations as JSON (what a ``patch`` event records)."""
        return [dict(op) for op in self.written]

    def is_empty(self) -> bool:
        """True when no operation changes anything (none, or only ``test``)."""
        return all(op.op == "test" for op in self.operations)


def read_json_patch(data: Sequence[Any], name: str) -> JsonPatch:
    """*data* (a list read from the patch file *name*) as a :class:`JsonPatch`;
    :class:`UsageError` naming each malformed operation."""
    problems: list[str] = []
    operations: list[Operation] = []
    for index, entry in enumerate(data):
        try:
            operations.append(_operation(index, entry))
        except _Bad as exc:
            problems.append(str(exc))
    if problems:
        lines = "\n".join(f"{name}: {p}" for p in problems)
        raise UsageError(f"the JSON Patch cannot be applied, nothing was changed:\n{lines}")
    return JsonPatch(tuple(operations), tuple(dict(e) for e in data), name)


class _Bad(Exception):
    """One operation that is malformed or does not fit the document (its message says which)."""


def _operation(index: int, entry: Any) -> Operation:
    if not isinstance(entry, Mapping):
        raise _Bad(f"op {index}: expected an object with 'op' and 'path', got {_kind(entry)}")
    op = entry.get("op")
    if op not in OPERATIONS:
        raise _Bad(f"op {index}: 'op' must be one of {', '.join(OPERATIONS)}, not {op!r}")
    path = entry.get("path")
    if not isinstance(path, str):
        raise _Bad(f"op {index} ({op}): 'path' must be a JSON Pointer (text), not {_kind(path)}")
    where = f"op {index} ({op} {path or '(the whole plan)'})"
    tokens = _pointer(path, where, "path")
    source = None
    if op in _NEEDS_FROM:
        found = entry.get("from")
        if not isinstance(found, str):
            raise _Bad(f"{where}: 'from' must be a JSON Pointer (text), not {_kind(found)}")
        source = _pointer(found, where, "from")
    if op in _NEEDS_VALUE and "value" not in entry:
        raise _Bad(f"{where}: '{op}' needs a 'value'")
    changed = [tokens] if op != "test" else []
    if op == "move" and source is not None:
        changed.append(source)
    for pointer in changed:
        if not pointer or pointer[0] not in _CHANGEABLE:
            raise _Bad(
                f"{where}: a patch changes nodes, criteria and edges only (pointers under "
                "/nodes or /edges); plan-level settings are changed by a person in the plan file"
            )
    if op == "move" and source is not None and tokens[: len(source)] == source != tokens:
        raise _Bad(f"{where}: cannot move a value into one of its own children")
    odd = _not_json(entry, "")
    if odd is not None:  # a date or bytes a YAML patch wrote: the event records every member
        member, value = odd
        raise _Bad(
            f"{where}: '{member}' holds {type(value).__name__} {quoted(value)}, which JSON has "
            "no form for; write a finite number, or put it in quotes to make it text"
        )
    return Operation(index, op, path, tokens, source, entry.get("value"))


def _not_json(value: Any, at: str) -> tuple[str, Any] | None:
    """The first member of *value* (and where it is) that is not a JSON value, or None (NaN
    and the infinities are none: the recorded event would not read back as it was written)."""
    if value is None or isinstance(value, str | bool | int):
        return None
    if isinstance(value, float):
        return None if math.isfinite(value) else (at, value)
    if isinstance(value, Mapping):
        items: Iterable[tuple[str, Any]] = (
            (f"{at}.{k}" if at else str(k), v) for k, v in value.items()
        )
    elif isinstance(value, list):
        items = ((f"{at}[{i}]", v) for i, v in enumerate(value))
    else:
        return at, value
    for where, item in items:
        found = _not_json(item, where)
        if found is not None:
            return found
    return None


def _pointer(text: str, where: str, member: str) -> tuple[str, ...]:
    """The reference tokens of the RFC 6901 pointer *text*."""
    if text == "":
        return ()
    if not text.startswith("/"):
        raise _Bad(f"{where}: '{member}' {text!r} is not a JSON Pointer: it must start with '/'")
    tokens = text[1:].split("/")
    if any(_BAD_ESCAPE.search(token) for token in tokens):
        raise _Bad(f"{where}: '{member}' {text!r}: '~' must be written ~0, and '/' as ~1")
    return tuple(token.replace("~1", "/").replace("~0", "~") for token in tokens)


def apply_ops(
    document: Any,
    patch: JsonPatch,
    name: str,
    *,
    wrap: Callable[[Any], Any] = lambda value: value,
) -> list[str]:
    """Apply *patch* to *document* (the plan file *name* as data) in place (*wrap* turns each
    new value into the document's own kind of value); return the ids of the nodes it touches,
    in order. :class:`UsageError` naming the first operation that does not fit (the document
    is then half changed: apply to a copy, or throw the document away)."""
    touched: list[str] = []
    total = _count(document)
    for operation in patch.operations:
        try:
            total += _added(document, operation)
            if total > MAX_VALUES:
                raise _Bad(
                    f"the plan would hold more than {MAX_VALUES:,} values (objects, lists, "
                    "texts, numbers); copy what you mean once, not a value into itself again "
                    "and again"
                )
            touched += _apply(document, operation, wrap)
        except _Bad as exc:
            raise UsageError(
                f"{patch.name}: {operation.where()} on {name}: {exc}; the JSON Patch was not "
                "applied, nothing was changed"
            ) from None
    return list(dict.fromkeys(touched))


def _added(document: Any, op: Operation) -> int:
    """How many values *op* adds to *document* at most (what it removes is not subtracted)."""
    if op.op in ("add", "replace"):
        return _count(op.value)
    if op.op == "copy" and op.source is not None:
        return _count(_get(document, op.source))
    return 0


def _count(value: Any) -> int:
    """The number of values in *value* (itself, and each item and member inside it), counted
    up to just past :data:`MAX_VALUES`: a copy of a copy doubles a document each time, and
    counting must stop before memory runs out."""
    count, todo = 0, [value]
    while todo and count <= MAX_VALUES:
        item = todo.pop()
        count += 1
        if isinstance(item, Mapping):
            todo.extend(item.values())
        elif isinstance(item, list | tuple):
            todo.extend(item)
    return count


def _apply(document: Any, op: Operation, wrap: Callable[[Any], Any]) -> list[str]:
    kind, tokens = op.op, op.tokens
    if kind == "test":
        found = _get(document, tokens)
        if not _equal(found, op.value):
            raise _Bad(f"the value there is {_short(found)}, not {_short(op.value)}")
        return []
    before = list(_named(document, op.source)) if kind == "move" and op.source else []
    if kind in ("remove", "replace") or len(tokens) > 2:
        # what is removed or replaced, or changed inside an item that is there (an addition
        # at /nodes/2 itself inserts a new item before the one there, which it leaves alone)
        before += _named(document, tokens)
    if kind == "remove":
        _remove(document, tokens)
        return before
    if kind == "replace":
        _get(document, tokens)  # it must be there
        _put(document, tokens, wrap(copy.deepcopy(op.value)), replace=True)
    elif kind == "add":
        _put(document, tokens, wrap(copy.deepcopy(op.value)), replace=False)
    else:
        assert op.source is not None  # checked when read
        value = copy.deepcopy(_get(document, op.source))
        if kind == "move":
            _remove(document, op.source)
        _put(document, tokens, value, replace=False)
    return before + list(_named(document, tokens, added=kind != "replace"))


def _get(document: Any, tokens: Sequence[str]) -> Any:
    current = document
    for depth, token in enumerate(tokens):
        current = _child(current, token, tokens[: depth + 1])
    return current


def _child(container: Any, token: str, upto: Sequence[str]) -> Any:
    if isinstance(container, Mapping):
        if token not in container:
            raise _Bad(f"{_show(upto)} does not exist: {_show(upto[:-1])} has no {token!r}")
        return container[token]
    if isinstance(container, Sequence) and not isinstance(container, str):
        return container[_index(container, token, upto, end_ok=False)]
    raise _Bad(f"{_show(upto)} does not exist: {_show(upto[:-1])} is {_kind(container)}")


def _index(items: Sequence[Any], token: str, upto: Sequence[str], *, end_ok: bool) -> int:
    """The list index *token* names; ``-`` (past the end) or ``len`` only when *end_ok*."""
    if token == "-" and end_ok:
        return len(items)
    if not _INDEX.fullmatch(token):
        raise _Bad(f"{_show(upto)}: {token!r} is not an index of the list {_show(upto[:-1])}")
    index = int(token)
    if index >= len(items) + (1 if end_ok else 0):
        raise _Bad(f"{_show(upto)} does not exist: {_show(upto[:-1])} has {len(items)} item(s)")
    return index


def _put(document: Any, tokens: Sequence[str], value: Any, *, replace: bool) -> None:
    if not tokens:
        raise _Bad("the whole plan cannot be replaced by a patch")
    parent = _get(document, tokens[:-1])
    last = tokens[-1]
    if isinstance(parent, MutableMapping):
        parent[last] = value
    elif isinstance(parent, MutableSequence):
        index = _index(parent, last, tokens, end_ok=not replace)
        if replace:
            parent[index] = value
        else:
            parent.insert(index, value)
    else:
        raise _Bad(f"{_show(tokens[:-1])} is {_kind(parent)}: nothing can be put in it")


def _remove(document: Any, tokens: Sequence[str]) -> None:
    if not tokens:
        raise _Bad("the whole plan cannot be removed by a patch")
    parent = _get(document, tokens[:-1])
    _child(parent, tokens[-1], tokens)  # it must be there
    if isinstance(parent, MutableMapping):
        del parent[tokens[-1]]
    elif isinstance(parent, MutableSequence):
        del parent[int(tokens[-1])]
    else:  # pragma: no cover - _child refused it
        raise _Bad(f"{_show(tokens[:-1])} is {_kind(parent)}")


def _named(document: Any, tokens: Sequence[str] | None, *, added: bool = False) -> Iterator[str]:
    """The node ids a pointer names (see the module text); ``-`` after an addition names the
    last item."""
    if not tokens or tokens[0] not in _CHANGEABLE or not isinstance(document, Mapping):
        return
    items = document.get(tokens[0])
    if not isinstance(items, Sequence) or isinstance(items, str):
        return
    if len(tokens) == 1:
        chosen = list(items)
    elif tokens[1] == "-" and added and items:
        chosen = [items[-1]]
    elif _INDEX.fullmatch(tokens[1]) and int(tokens[1]) < len(items):
        chosen = [items[int(tokens[1])]]
    else:
        return
    key = "id" if tokens[0] == "nodes" else "to"
    for item in chosen:
        found = item.get(key) if isinstance(item, Mapping) else None
        if isinstance(found, str):
            yield str(found)


def _equal(left: Any, right: Any) -> bool:
    """Equality as RFC 6902 ``test`` means it: objects by members, arrays in order, numbers by
    value, and ``true`` is not ``1``."""
    if isinstance(left, bool) or isinstance(right, bool):
        return isinstance(left, bool) and isinstance(right, bool) and left == right
    if isinstance(left, Mapping) and isinstance(right, Mapping):
        return left.keys() == right.keys() and all(_equal(left[k], right[k]) for k in left)
    if isinstance(left, str) or isinstance(right, str):
        return isinstance(left, str) and isinstance(right, str) and str(left) == str(right)
    if isinstance(left, Sequence) and isinstance(right, Sequence):
        return len(left) == len(right) and all(map(_equal, left, right))
    if isinstance(left, int | float) and isinstance(right, int | float):
        return left == right
    return left is None and right is None


def _show(tokens: Sequence[str]) -> str:
    if not tokens:
        return "the plan"
    return "/" + "/".join(t.replace("~", "~0").replace("/", "~1") for t in tokens)


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, Mapping):
        return "an object"
    if isinstance(value, str):
        return "text"
    if isinstance(value, Sequence):
        return "a list"
    return "a number" if isinstance(value, int | float) else type(value).__name__


def _short(value: Any) -> str:
    try:
        text = json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."
