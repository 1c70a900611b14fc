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

The plan's other fields are kept too (as an item of the list ``plan``). When they and every
item are kept, nothing is validated and pydantic is not imported; a node that differs from a
node kept before by its ``title`` alone (any text: the boundary reads it apart from the rest)
takes that node's validated form with its title (``titles.txt`` keeps, for each node with a
title, its key under the key of its data without the title). Otherwise the plan's other fields
and its new items are validated together, as one plan of the same top-level fields whose lists
hold the new items only: a node's validation reads the node alone,
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
TITLES_NAME = "titles.txt"
"""The keys of the nodes with a title, each under the key of its data without the title."""
LISTS = ("nodes", "edges")
"""The lists of a plan whose items are validated one by one."""
REST = "plan"
"""What the plan's other fields are kept as in ``items.txt``: their validated form under the
key of their parsed data as an item of this name (no list of a plan has it)."""
SPARE = 256
"""Entries beyond twice those of the plan just read that the file may hold before it is
written anew."""


def validated_by_item(
    data: Any,
    cache_dir: Path,
    by_block: Callable[[], dict[str, list[str]] | None] | None = None,
) -> tuple[Plan, dict[str, Any], dict[str, list[str]], str] | None:
    """The runtime plan of parsed *data* (or of its JSON text), its validated form, the key
    of each item (per list, in the plan's order: what :mod:`.factcache` keeps the items' facts
    under) and the validated form's JSON text (as ``json.dumps`` writes it: what the plan
    cache keeps, put together from the items' kept texts), its nodes and edges taken from
    the items kept under *cache_dir* and the rest validated by the boundary's models (the new
    items then kept); None when the data is not valid or not of a plan's shape (then it is
    validated whole, which says what is wrong).
    *by_block*, when given, gives the items' keys as the blocks they were read in know them
    (:mod:`.blockitems`), used when they fit the data's lists."""
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
    titles = TextLines(cache_dir / TITLES_NAME, SPARE)
    encode = json.JSONEncoder(ensure_ascii=False).encode
    rest_key = _key_of(REST, {k: v for k, v in data.items() if k not in LISTS})
    new: dict[str, dict[str, int]] = {}  # per list, each key not kept: its first item's index
    for field, keys in keyed.items():
        new[field] = {}
        for index, key in enumerate(keys):
            if key not in store.entries:
                new[field].setdefault(key, index)  # items alike are validated once
    made = _retitled(data, new.get("nodes", {}), store, titles, encode)
    validated = _kept_rest(store, rest_key, data) if not any(new.values()) else None
    if validated is None:
        validated = _validated(data, new)
        if validated is None:
            return None
        if rest_key not in store.entries:
            store.add(rest_key, encode({k: v for k, v in validated.items() if k not in LISTS}))
    lists: dict[str, str] = {}
    try:
        for field, keys in keyed.items():
            for key, item in zip(new[field], validated[field], strict=True):
                store.add(key, encode(item))  # validated just now
            lists[field] = ", ".join(store.entries[key] for key in keys)
            items = json.loads(f"[{lists[field]}]")  # one read of them all
            if len(items) != len(keys):
                return None
            validated[field] = items
        plan = Plan.from_data(validated)
        text = _text(validated, lists, encode)
    except (ValueError, KeyError, TypeError, AttributeError, StopIteration):
        return None  # a kept entry that is not an item's validated form
    for index in [*new.get("nodes", {}).values(), *made]:
        _keep_title(data["nodes"][index], keyed["nodes"][index], titles, encode)
    store.save({rest_key, *(key for keys in keyed.values() for key in keys)})
    titles.save(set(titles.new))
    return plan, validated, keyed, text


def _text(validated: dict[str, Any], lists: dict[str, str], encode: Callable[[Any], str]) -> str:
    """The JSON text ``json.dumps`` writes of *validated*, its lists from their items' kept
    texts as they are (*lists*: each list's items joined as ``json.dumps`` joins them), not
    encoded again."""
    members = (
        f"{encode(name)}: {f'[{lists[name]}]' if name in lists else encode(value)}"
        for name, value in validated.items()
    )
    return "{" + ", ".join(members) + "}"


def _validated(data: dict[str, Any], new: dict[str, dict[str, int]]) -> dict[str, Any] | None:
    """The validated form of *data*'s other fields and its *new* items (per list, the index
    of each), validated together by the boundary's models; None when they are not valid."""
    from pydantic import ValidationError  # new items or fields only: the boundary

    from .boundary import Plan as PlanModel
    from .boundary import plan_data

    unkept = {field: [data[field][n] for n in found.values()] for field, found in new.items()}
    try:
        return plan_data(PlanModel.model_validate({**data, **unkept}))
    except ValidationError:
        return None


def _kept_rest(store: TextLines, key: str, data: dict[str, Any]) -> dict[str, Any] | None:
    """The validated form of the plan's other fields kept under *key*, with a place for each
    list *data* holds (after them, as the plan's fields are ordered); None when it is not
    kept or not a mapping."""
    text = store.entries.get(key)
    if text is None:
        return None
    try:
        found = json.loads(text)
    except ValueError:
        return None
    if not isinstance(found, dict) or any(field in found for field in LISTS):
        return None
    for field in LISTS:
        if field in data:
            found[field] = []
    return found


def _retitled(
    data: dict[str, Any],
    new: dict[str, int],
    store: TextLines,
    titles: TextLines,
    encode: Callable[[Any], str],
) -> list[int]:
    """Keep the validated form of each *new* node (its key → its index) that differs from a
    node validated before by its ``title`` alone (a text): that node's form with this title
    (a node's title is any text, read apart from the rest); the indices of those taken off
    *new*."""
    made = []
    for key, index in list(new.items()):
        item = data["nodes"][index]
        title = item.get("title")
        if type(title) is not str:
            continue
        bare = _key_of("nodes", {k: v for k, v in item.items() if k != "title"})
        text = store.entries.get(bare)  # the node as it was without a title
        if text is None:
            titled = titles.entries.get(bare)  # the node as it was with another title
            text = None if titled is None else store.entries.get(titled)
        form = _with_title(text, title)
        if form is not None and form["id"] == item.get("id"):  # not another node's
            store.add(key, encode(form))
            del new[key]
            made.append(index)
    return made


def _with_title(text: str | None, title: str) -> dict[str, Any] | None:
    """The node's validated form kept as *text* with *title* (placed where the boundary's
    model puts it: after ``id`` and ``kind``); None when *text* is not a node's form."""
    if text is None:
        return None
    try:
        form = json.loads(text)
    except ValueError:
        return None
    if not isinstance(form, dict) or type(form.get("id")) is not str:
        return None
    found: dict[str, Any] = {}
    for name, value in form.items():
        if name == "title":
            continue
        if "title" not in found and name not in ("id", "kind"):
            found["title"] = title
        found[name] = value
    found.setdefault("title", title)
    return found


def _keep_title(
    item: dict[str, Any], key: str, titles: TextLines, encode: Callable[[Any], str]
) -> None:
    """Keep, for a node with a title, its key under the key of its data without the title:
    a later edit of its title alone finds its validated form (:func:`_retitled`)."""
    if type(item.get("title")) is str:
        titles.add(_key_of("nodes", {k: v for k, v in item.items() if k != "title"}), key)


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


def _key_of(field: str, item: dict[str, Any]) -> str:
    """The key of one *item* of the list *field* (:func:`item_keys`)."""
    keys = item_keys(field, [item])
    assert keys is not None
    return keys[0]


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
