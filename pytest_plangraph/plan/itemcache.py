"""Validating a large plan item by item: the validated form of each node and edge is kept under
its content, so a plan whose meaning changed (a node edited, added or removed) validates only
its new items with the boundary's models.

The entries are the lines of ``items.txt`` in the plan cache folder, each the key and the JSON
text of the item's validated form, tab separated (JSON text holds no tab nor line break). The
key is the sha256 of the machine salt, the fingerprint of the package's code, the list the
item is in (``nodes`` or ``edges``) and the JSON text of the item as parsed
(:func:`~pytest_plangraph.plan.cache.machine_salt`: an entry that came with a repository never
matches; :func:`~pytest_plangraph.codehash.code_fingerprint`: a rule changed by an upgrade never
meets items validated by the old one).

The plan's other fields and its new items are validated together, as one plan of the same
top-level fields whose lists hold the new items only: a node's validation reads the node alone,
and an edge's the edge alone (a ``related`` edge's default strength included), so an item valid
in one plan is valid, with the same validated form, in any. Whatever is not valid is validated
again whole by the caller, so a message and its location are those of the whole plan's
validation. A file that cannot be read, a line that is not an entry, or an entry that does not
build is a miss (the plan is validated whole): a cache never decides. The file is written anew,
with the entries of the plan just read only, when it holds more than twice as many as that plan
needs.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..codehash import code_fingerprint
from .cache import machine_salt
from .linestore import TextLines

if TYPE_CHECKING:
    from .model import Plan

FILE_NAME = "items.txt"
LISTS = ("nodes", "edges")
"""The lists of a plan whose items are validated one by one."""
SPARE = 256
"""Entries beyond twice those of the plan just read that the file may hold before it is
written anew."""


def validated_by_item(
    data: Any,
    cache_dir: Path,
    by_block: Callable[[], dict[str, list[str]] | None] | None = None,
) -> tuple[Plan, dict[str, Any], dict[str, list[str]]] | None:
    """The runtime plan of parsed *data* (or of its JSON text), its validated form and the key
    of each item (per list, in the plan's order: what :mod:`.factcache` keeps the items' facts
    under), its nodes and edges taken from the items kept under *cache_dir* and the rest
    validated by the boundary's models (the new items then kept); None when the data is not
    valid or not of a plan's shape (then it is validated whole, which says what is wrong).
    *by_block*, when given, gives the items' keys as the blocks they were read in know them
    (:mod:`.blockitems`), used when they fit the data's lists."""
    from pydantic import ValidationError  # new bytes only: the boundary

    from .boundary import Plan as PlanModel
    from .boundary import plan_data
    from .model import Plan

    try:
        if isinstance(data, bytes):
            data = json.loads(data)
        known = None if by_block is None else by_block()
        keyed = known if _fits(data, known) else _keyed(data)
    except (ValueError, TypeError, RecursionError):
        return None
    if keyed is None:
        return None
    store = TextLines(cache_dir / FILE_NAME, SPARE)
    new: dict[str, dict[str, int]] = {}  # per list, each key not kept: its first item's index
    for field, keys in keyed.items():
        new[field] = {}
        for index, key in enumerate(keys):
            if key not in store.entries:
                new[field].setdefault(key, index)  # items alike are validated once
    unkept = {field: [data[field][n] for n in found.values()] for field, found in new.items()}
    try:
        validated = plan_data(PlanModel.model_validate({**data, **unkept}))
    except ValidationError:
        return None
    encode = json.JSONEncoder(ensure_ascii=False).encode
    try:
        for field, keys in keyed.items():
            for key, item in zip(new[field], validated[field], strict=True):
                store.add(key, encode(item))  # validated just now
            texts = [store.entries[key] for key in keys]
            items = json.loads(f"[{','.join(texts)}]")  # one read of them all
            if len(items) != len(keys):
                return None
            validated[field] = items
        plan = Plan.from_data(validated)
    except (ValueError, KeyError, TypeError, AttributeError, StopIteration):
        return None  # a kept entry that is not an item's validated form
    store.save({key for keys in keyed.values() for key in keys})
    return plan, validated, keyed


def _fits(data: Any, keyed: dict[str, list[str]] | None) -> bool:
    """Whether *keyed* holds a key for each item of the lists of *data*, which holds lists of
    mappings only (what :func:`_keyed` would give keys for)."""
    if keyed is None or not isinstance(data, dict):
        return False
    if keyed.keys() != {field for field in LISTS if field in data}:
        return False
    for field, keys in keyed.items():
        items = data[field]
        if not isinstance(items, list) or len(items) != len(keys):
            return False
        if not all(type(item) is dict for item in items):
            return False
    return True


def _keyed(data: Any) -> dict[str, list[str]] | None:
    """The key of each item of the lists of *data* that it holds; None when *data* is not a
    mapping or a list is not one of mappings."""
    if not isinstance(data, dict):
        return None
    keyed: dict[str, list[str]] = {}
    for field in LISTS:
        if field not in data:
            continue
        keys = item_keys(field, data[field])
        if keys is None:
            return None
        keyed[field] = keys
    return keyed


def item_keys(field: str, items: Any) -> list[str] | None:
    """The key of each of *items*, parsed items of the list *field* of a plan: the sha256 of the
    salt, the code's fingerprint, *field* and the item's JSON text; None when *items* is not a
    list of mappings."""
    if not isinstance(items, list) or not all(type(item) is dict for item in items):
        return None
    head = hashlib.sha256(machine_salt() + code_fingerprint().encode() + b"\0")
    head.update(field.encode() + b"\0")
    encode = json.JSONEncoder(ensure_ascii=False).encode  # one encoder for every item
    keys = []
    for item in items:
        each = head.copy()
        each.update(encode(item).encode("utf-8", "surrogatepass"))
        keys.append(each.hexdigest())
    return keys
