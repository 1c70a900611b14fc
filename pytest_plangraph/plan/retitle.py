"""A large plan whose one node changed by its ``title`` alone, patched from the plan read before
it: no split of the whole text, no kept line read, no fact put together again.

A title is any text and counts nowhere but in its node's canonical form, so such an edit leaves
the plan's structure, order and criterion digests as they were; what changes is that node's
validated form, its canonical text (and with it the plan's digest and the node's signature in
:func:`~.factcache.shape`) and its item key. Two files make the patch possible:

* ``lastread.txt`` — the bytes of the YAML plan file read last by blocks
  (:mod:`~.blockcache`), with where its list of nodes lies in them (the first item, the end,
  the items' indentation) and how many values the plan holds; its first line is the plan
  file's key (:func:`~.file.cache_key`: the salt, the code, the bytes) and the CRC-32 of the
  rest, and the key is computed again from the bytes kept, so a file of another plan or of
  another user never serves; the head is taken only under its seal (:func:`_seal`: this
  user's salt, the key, the head), since the patch seals the head it derives from it and a
  ``status`` answer keeps that head (:mod:`pytest_plangraph.derived.retitled`);
* ``canon-<content key>.json`` — the key of each node (:func:`~.itemcache.item_keys`) and the
  canonical text of the plan (what its digest hashes), under the plan's content key with its
  CRC-32 as the other keyed files (:func:`~.cache.keyed`).

The new text is compared with the kept bytes: when it differs from them inside one item of the
list of nodes alone, and that item's new text keeps the lines the split reads
(:mod:`~.blocks`: no line of its own at the items' indentation or less, no character that
stops a split), both texts of the item are read as YAML alone; when they differ by a title that
is text (the rest the same JSON text), the plan's parsed data, validated form and canonical
text kept for the old bytes are patched in that item alone (each only where the item's old
text is found exactly once), and the facts kept for the old meaning are checked against them
(the digest of the canonical text, the node's signature, its key). Anything else is a miss: the
plan is read as before. A cache never decides: the patched plan is the plan read without a
cache (``tests/test_plan_retitle.py``).
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..canonical import canonical_json, json_loads, text_digest
from ..errors import PlanError
from .blocks import _NOT_SPLIT, Block, Entry, entry_of
from .cache import (
    _write,
    cache_key,
    code_version,
    content_key,
    keep_parsed,
    keep_validated,
    keyed,
    machine_salt,
    read_keyed,
    read_parsed,
    read_regular,
    validated_text,
    with_facts,
)
from .factcache import SHAPE

if TYPE_CHECKING:
    from .model import Plan

LAST = "lastread.txt"
LIST = "nodes"
LAST_HEAD: list[tuple[str, dict[str, Any]]] = []
"""The cache key and the head of the plan bytes this process kept last as ``lastread.txt``
(by :func:`keep_last` or a patch): the head a kept ``status`` answer may hold for them, where
no other process could have written it (:mod:`pytest_plangraph.derived.retitled`)."""
_MISSES = (OSError, ValueError, KeyError, TypeError, AttributeError, IndexError, PlanError)


def keep_last(
    cache_dir: Path, key: str, raw: bytes, blocks: list[Block], entries: list[Entry]
) -> None:
    """Keep *raw*, the bytes of a plan file read by *blocks* (with their *entries*) under
    *key*, with where its list of nodes lies, as the plan the next title edit is patched from;
    nothing is kept when the nodes are not written as runs of items."""
    runs = [block for block in blocks if block.key == LIST and block.first is not None]
    if not runs:
        return
    first, last = runs[0], runs[-1]
    indent = len(first.text) - len(first.text.lstrip(" "))
    if first.text[indent : indent + 2] != "- ":
        return
    total = 1 + sum(entry[0] - 1 for entry in entries)
    head = {
        "first": first.start,
        "end": last.start + len(last.text),
        "indent": indent,
        "total": total,
    }
    keep_bytes(cache_dir, key, raw, head)


def keep_bytes(cache_dir: Path, key: str, raw: bytes, head: dict[str, Any]) -> None:
    """Keep *raw* (under its cache *key*) with its *head* as ``lastread.txt``, and remember
    the head as :data:`LAST_HEAD`. The head is sealed with the key (:func:`_seal`)."""
    head = {**head, "seal": _seal(key, head)}
    _write(cache_dir / LAST, keyed(key, json.dumps(head).encode() + b"\n" + raw))
    LAST_HEAD[:] = [(key, head)]


def sealed_head(cache_dir: Path, key: str) -> dict[str, Any] | None:
    """The head of the plan bytes whose cache key is *key*: the one this process kept last
    (:data:`LAST_HEAD`), else the one ``lastread.txt`` keeps for them under a seal this user
    made (:func:`_seal`: the salt no repository holds, the key, the head); None otherwise."""
    if LAST_HEAD and LAST_HEAD[0][0] == key:
        return LAST_HEAD[0][1]
    try:
        found = _last(cache_dir)
    except (*_MISSES, UnicodeError):
        return None
    if found is None or found[0] != key or found[1].get("seal") != _seal(key, found[1]):
        return None
    return found[1]


def _seal(key: str, head: dict[str, Any]) -> str:
    """The sha256 of this user's salt, the plan bytes' cache *key* and *head* (its seal left
    out): a head no other user, nor a file of the repository, can have made."""
    import hashlib

    bare = json.dumps({k: v for k, v in head.items() if k != "seal"}, sort_keys=True)
    return hashlib.sha256(machine_salt() + b"\0head\0" + f"{key}\0{bare}".encode()).hexdigest()


def keep_canonical(cache_dir: Path, meaning: str, node_keys: list[str], text: str) -> None:
    """Keep the key of each node and the canonical *text* of the plan whose content key is
    *meaning* (``canon-<meaning>.json``)."""
    body = ",".join(node_keys).encode() + b"\n" + text.encode("utf-8")
    _write(cache_dir / f"canon-{meaning}.json", keyed(meaning, body))


def retitled(
    raw: bytes, name: str, key: str, cache_dir: Path, max_nodes: int
) -> tuple[Plan, str, tuple[str, ...]] | None:
    """The runtime plan of the YAML plan file *raw* (its cache key *key*), with its facts, its
    content key and the key of each node, when it is the plan read last with one node's title
    changed (see above), of at most *max_nodes* values; None otherwise."""
    try:
        return _retitled(raw, name, key, cache_dir, max_nodes)
    except (*_MISSES, UnicodeError, RecursionError):
        return None


def _retitled(
    raw: bytes, name: str, key: str, cache_dir: Path, max_nodes: int
) -> tuple[Plan, str, tuple[str, ...]] | None:
    found = _last(cache_dir)
    if found is None:
        return None
    old_key, head, old_raw = found
    if head.get("seal") != _seal(old_key, head):
        return None  # a head this user did not make: the patch would seal what it derives
    old, text = old_raw.decode("utf-8-sig"), raw.decode("utf-8-sig")
    edit = _title_edit(old, text, head, name, max_nodes, lambda: cache_key(old_raw) == old_key)
    if edit is None:
        return None
    at, old_item, new_item, new_head = edit
    title = new_item["title"]
    start, end, indent = int(head["first"]), int(head["end"]), int(head["indent"])
    marker = "\n" + " " * indent + "- "
    index = old.count(marker, start - 1, at)
    # the parsed data: the item's JSON text replaced where it is found once
    old_parsed = read_parsed(cache_dir, old_key)
    parsed = _replaced(old_parsed, _json(old_item), _json(new_item))
    if parsed is None:
        return None
    old_meaning, meaning = content_key(old_parsed), content_key(parsed)
    if old_meaning is None or meaning is None:
        return None
    valid = validated_text(cache_dir, old_key)
    validated = json_loads(valid)
    nodes = validated[LIST]
    if old.count(marker, start - 1, end) != len(nodes):
        return None
    form = nodes[index]
    if not (form["id"] == old_item.get("id") == new_item.get("id")) or type(form["id"]) is not str:
        return None
    from .itemcache import _key_of, _with_title

    new_form = _with_title(_json(form).decode(), title)
    if new_form is None:
        return None
    patched = _replaced(valid, _json(form), _json(new_form))
    if patched is None:
        return None
    nodes[index] = new_form
    keys, canonical = _canonical(cache_dir, old_meaning)
    if len(keys) != len(nodes) or keys[index] != _key_of(LIST, old_item):
        return None
    keys[index] = _key_of(LIST, new_item)
    from .model import Plan

    plan = Plan.from_data(validated)
    facts = _facts(cache_dir, old_meaning, plan, canonical)
    if facts is None:
        return None
    old_node = type(plan.nodes[index]).from_data(form)
    new_canonical = _patched_facts(plan, index, old_node, facts, canonical)
    if new_canonical is None:
        return None
    keep_parsed(cache_dir, key, parsed)
    keep_validated(cache_dir, key, plan, meaning, text=patched.decode())
    with_facts(plan, cache_dir, meaning, key)
    keep_canonical(cache_dir, meaning, keys, new_canonical)
    keep_bytes(cache_dir, key, raw, new_head)
    return plan, meaning, tuple(keys)


def title_edit(
    old_raw: bytes,
    head: dict[str, Any],
    raw: bytes,
    name: str,
    max_nodes: int,
    vouched: Callable[[], bool],
) -> dict[str, Any] | None:
    """The head of *raw* when it is *old_raw* (its list of nodes where *head* says, a head
    the caller vouches for) with one node's title changed to another text, read as the patch
    reads it (see above), of at most *max_nodes* values, and *vouched* (asked once the edit
    is one item's) says *old_raw* may be compared with; None otherwise."""
    try:
        old, text = old_raw.decode("utf-8-sig"), raw.decode("utf-8-sig")
        edit = _title_edit(old, text, head, name, max_nodes, vouched)
    except (*_MISSES, UnicodeError, RecursionError):
        return None
    return None if edit is None else edit[3]


def _title_edit(
    old: str,
    text: str,
    head: dict[str, Any],
    name: str,
    max_nodes: int,
    vouched: Callable[[], bool],
) -> tuple[int, dict[str, Any], dict[str, Any], dict[str, Any]] | None:
    """Where the one item of *old* (its list of nodes where *head* says) that *text* changed
    by its title alone begins, its data before and after, and the head of *text*; None for
    any other edit, or when *vouched* (asked once the edit is one item's) says the kept bytes
    are not to be used."""
    start, end, indent = int(head["first"]), int(head["end"]), int(head["indent"])
    if not 0 <= indent < start:  # the items' indentation lies on a line after the key's
        return None
    edit = _edited_item(old, text, start, end, " " * indent)
    if edit is None or not vouched():  # checked once the edit is one item's: a hash of it all
        return None
    at, old_end, new_end = edit
    old_item, old_count = _item(old[at:old_end], name, at, max_nodes)
    new_item, new_count = _item(text[at:new_end], name, at, max_nodes)
    title = new_item.get("title")
    if type(title) is not str or _bare(old_item) != _bare(new_item) or old_item == new_item:
        return None  # not a title alone; or the same meaning, kept as such
    total = int(head["total"]) - old_count + new_count
    if total > max_nodes:
        return None
    new_head = {**head, "end": end + len(text) - len(old), "total": total}
    return at, old_item, new_item, new_head


def _last(cache_dir: Path) -> tuple[str, dict[str, Any], bytes] | None:
    """The key, the head and the bytes of the plan file read last (``lastread.txt``), when the
    file is whole (its CRC-32; whether the key is the key of the bytes is for the caller to
    check)."""
    first, _, body = read_regular(cache_dir / LAST).partition(b"\n")
    old_key, _, check = first.decode("ascii").partition(" ")
    if check != f"{zlib.crc32(body):08x}":
        return None
    line, _, old_raw = body.partition(b"\n")
    head = json.loads(line)
    return (old_key, head, old_raw) if isinstance(head, dict) else None


def _edited_item(
    old: str, text: str, start: int, end: int, indent: str
) -> tuple[int, int, int] | None:
    """Where the one item of the list (its items from *start* to *end* of *old*, at
    *indent*) that *text* changed begins, and where it ends in *old* and in *text*; None when
    the change is not inside one item, or its new text would split otherwise."""
    if not 0 < start <= end <= len(old) or old[start - 1] != "\n" or old == text:
        return None
    same = _prefix(old, text)
    tail = _suffix(old, text, min(len(old), len(text)) - same)
    marker = "\n" + indent + "- "
    at = old.rfind(marker, start - 1, same) + 1
    if at < start or same < at + len(marker) - 1:
        return None
    following = old.find(marker, at, end)
    old_end = end if following < 0 else following + 1
    if len(old) - tail > old_end:
        return None
    new_end = old_end + len(text) - len(old)
    item = text[at:new_end]
    if not item.endswith("\n") or _NOT_SPLIT.search(item):
        return None
    for line in item.split("\n")[1:-1]:
        stripped = line.lstrip(" ")
        if stripped and stripped[0] != "#" and len(line) - len(stripped) <= len(indent):
            return None  # a line the split reads as the start of something else
    return at, old_end, new_end


def _prefix(one: str, other: str) -> int:
    """The length of the longest common prefix of two texts (halves compared as wholes)."""
    low, high = 0, min(len(one), len(other))
    while low < high:
        middle = (low + high + 1) // 2
        if one[low:middle] == other[low:middle]:
            low = middle
        else:
            high = middle - 1
    return low


def _suffix(one: str, other: str, limit: int) -> int:
    """The length of the longest common suffix of two texts, at most *limit*."""
    low, high = 0, limit
    size_one, size_other = len(one), len(other)
    while low < high:
        middle = (low + high + 1) // 2
        if one[size_one - middle : size_one - low] == other[size_other - middle : size_other - low]:
            low = middle
        else:
            high = middle - 1
    return low


def _item(text: str, name: str, at: int, max_nodes: int) -> tuple[dict[str, Any], int]:
    """The parsed data of one item's *text* read alone, and how many values it holds
    (ValueError when it is not one mapping that reads as its blocks would, or it names an
    anchor: a name another item may hold too, which the whole file refuses)."""
    from .yaml_reader import anchors, read_block

    data, _, count, aliased = read_block(text, name, max_nodes)
    block = Block(text, at, LIST, 0, 1)
    if aliased or entry_of(block, data, count) is None or type(data[0]) is not dict:
        raise ValueError("not an item read alone")
    if anchors(text):  # read alone, a name taken by another item is not seen
        raise ValueError("an item naming an anchor")
    return data[0], count


def _bare(item: dict[str, Any]) -> str:
    """The JSON text of *item* without its title."""
    return json.dumps({k: v for k, v in item.items() if k != "title"}, ensure_ascii=False)


def _json(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False).encode("utf-8")


def _replaced(body: bytes | None, old: bytes, new: bytes) -> bytes | None:
    """*body* with *old* replaced by *new*, when it holds *old* exactly once (else None)."""
    if body is None or body.count(old) != 1:
        return None
    return body.replace(old, new, 1)


def _canonical(cache_dir: Path, meaning: str) -> tuple[list[str], str]:
    """The node keys and the canonical text kept under the content key *meaning*."""
    line, _, text = read_keyed(cache_dir / f"canon-{meaning}.json", meaning).partition(b"\n")
    return line.decode("ascii").split(","), text.decode("utf-8")


def _facts(cache_dir: Path, meaning: str, plan: Plan, canonical: str) -> dict[str, Any] | None:
    """The facts kept under *meaning* (``facts-…``) when they are this code's, of this plan's
    nodes, with a shape, and their digest is the one of the kept *canonical* text."""
    facts = json_loads(read_keyed(cache_dir / f"facts-{meaning}.json", meaning))
    if facts["version"] != code_version() or facts["plan"] != plan.plan:
        return None
    order = tuple(str(node) for node in facts["order"])
    ids = {node.id for node in plan.nodes}
    shape = facts.get("shape")
    if len(order) != len(ids) or ids != set(order) or len(ids) != len(plan.nodes):
        return None
    if not (isinstance(shape, list) and len(shape) == 2 and isinstance(shape[1], dict)):
        return None
    if text_digest(canonical) != facts["digest"]:
        return None
    facts["order"] = order
    return dict(facts)


def _patched_facts(
    plan: Plan, index: int, old_node: Any, facts: dict[str, Any], canonical: str
) -> str | None:
    """Give *plan* the kept *facts* with its node at *index* (*old_node* before) in its
    canonical text, digest and shape; the new canonical text, or None when the kept facts
    are not those of *old_node*."""
    node = plan.nodes[index]
    criteria = {(str(n), str(c)): str(d) for n, c, d in facts["criteria"]}
    digests = json.dumps(
        [[criterion.id, criteria[(node.id, criterion.id)]] for criterion in node.acceptance],
        ensure_ascii=False,
    )
    before = canonical_json(old_node.to_json(by_alias=True, exclude_defaults=True))
    after = canonical_json(node.to_json(by_alias=True, exclude_defaults=True))
    structure, signatures = facts["shape"]
    if signatures.get(node.id) != text_digest(f"{before}\n{digests}"):
        return None
    if canonical.count(before) != 1:
        return None
    canonical = canonical.replace(before, after, 1)
    signatures = {**signatures, node.id: text_digest(f"{after}\n{digests}")}
    plan.__dict__["digest"] = text_digest(canonical)
    plan.__dict__["criterion_digests"] = criteria
    plan.__dict__["topological_order"] = facts["order"]
    plan.__dict__[SHAPE] = [structure, signatures]
    return canonical
