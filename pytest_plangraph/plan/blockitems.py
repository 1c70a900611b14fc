"""The keys of a block-read plan's items (:mod:`.itemcache`'s keys of each node and edge), taken
by block: the keys of a run of items are kept under the run's own key, so an edited plan hashes
the items of the blocks it touched alone, not every item of the plan.

The entries are the lines of ``blockitems.txt`` in the plan cache folder, each the sha256 of the
block's key (:mod:`.blockcache`: the salt, the code's fingerprint and the block's text) and of
the list its items belong to, then the keys of its items in order, comma separated. A run's
items follow from its text (the block's data is what its key keeps), so their keys do too. An
entry that does not hold as many keys as the run holds items, or a key that is not a sha256, is
a miss: the run's items are hashed again. A cache never decides.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from pathlib import Path

from .blocks import Block, Entry
from .itemcache import LISTS, item_keys
from .linestore import TextLines

FILE_NAME = "blockitems.txt"
SPARE = 64
"""Entries beyond twice those of the plan just read that the file may hold before it is
written anew."""
_KEYS = re.compile(r"[0-9a-f]{64}(?:,[0-9a-f]{64})*")


def keys_by_block(
    blocks: Sequence[Block], block_keys: Sequence[str], entries: Sequence[Entry], cache_dir: Path
) -> dict[str, list[str]] | None:
    """The key of each item of the plan's lists (per list, in the plan's order: what
    :func:`~.itemcache.validated_by_item` would compute) from the runs of *blocks* (their keys
    and entries in the same order), the runs kept under *cache_dir* not hashed again; None when
    a list is written otherwise than as runs of items (then the items are hashed one by one)."""
    store = TextLines(cache_dir / FILE_NAME, SPARE)
    keyed: dict[str, list[str]] = {}
    wanted: set[str] = set()
    for block, block_key, (_, text, is_null) in zip(blocks, block_keys, entries, strict=True):
        field = block.key
        if field not in LISTS:
            continue
        if block.first is None:
            if not is_null:  # a list written inline, or not a list: hashed item by item
                return None
            keyed[field] = []
            continue
        key = hashlib.sha256(f"{block_key}\0{field}".encode()).hexdigest()
        wanted.add(key)
        kept = store.entries.get(key)
        found = kept.split(",") if kept is not None and _KEYS.fullmatch(kept) else None
        if found is None or len(found) != block.count:
            try:
                items = json.loads(f"[{text}]")
            except ValueError:
                return None
            made = item_keys(field, items)
            if made is None or len(made) != block.count:
                return None
            store.add(key, ",".join(made))
            found = made
        keyed.setdefault(field, []).extend(found)
    store.save(wanted)
    return keyed
