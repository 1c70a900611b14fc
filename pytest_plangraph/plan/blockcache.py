"""The data of each block of a large YAML plan (:mod:`~pytest_plangraph.plan.blocks`), kept in
the plan cache under the block's bytes, so an edited plan re-reads only the blocks it touched.

The entries are the lines of ``blocks.txt`` in the cache folder, each the key, the count of
values, whether the value is null and the JSON text of the value (:data:`~.blocks.Entry`), tab
separated (JSON text holds no tab nor line break):
the key is the sha256 of the machine salt, the fingerprint of the package's code and the block's
text (:func:`~pytest_plangraph.plan.cache.machine_salt`: an entry that came with a repository
never matches; :func:`~pytest_plangraph.codehash.code_fingerprint`: a reading rule changed by
an upgrade never meets data read by the old one). A block is used only when its data comes back
from JSON equal to what was read (:func:`~.blocks.entry_of`), so the data put together from
the blocks equals the data read from the whole text. New entries are appended;
the file is written anew, with the entries of the plan just read only, when it holds more than
twice as many as that plan needs. A file that cannot be read or parsed is ignored (and written
anew): a cache never decides.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path

from ..codehash import code_fingerprint
from ..errors import PlanError
from .blocks import Block, BlockPositions, Entry, assemble, entry_of, split
from .cache import machine_salt
from .linestore import LineStore
from .messages import FieldPath

ItemKeys = Callable[[], dict[str, list[str]] | None]
"""What gives the keys of a plan's items by block (:func:`.blockitems.keys_by_block`)."""
FILE_NAME = "blocks.txt"
SPARE = 64
"""Entries beyond twice those of the plan just read that the file may hold before it is written
anew (the blocks of a plan edited a few times, and of the plan read before it)."""


def read_blocks(
    text: str, name: str, max_nodes: int, cache_dir: Path
) -> tuple[bytes, dict[FieldPath, tuple[int, int]]] | None:
    """The data of a YAML plan *text*, as the JSON text ``json.dumps`` writes of it, and its
    positions (found for a block when first asked for), read block by block with the blocks
    kept under *cache_dir*; None when the text must be read whole (see
    :mod:`~pytest_plangraph.plan.blocks`)."""
    found = read_blocks_keyed(text, name, max_nodes, cache_dir)
    return None if found is None else found[:2]


class BlockItemKeys:
    """What gives the key of each item of a block-read plan's lists when called
    (:func:`.blockitems.keys_by_block`), with the blocks it was read in and their entries."""

    def __init__(
        self, blocks: list[Block], keys: list[str], entries: list[Entry], cache_dir: Path
    ) -> None:
        self.blocks = blocks
        self.keys = keys
        self.entries = entries
        self.cache_dir = cache_dir

    def __call__(self) -> dict[str, list[str]] | None:
        from .blockitems import keys_by_block

        return keys_by_block(self.blocks, self.keys, self.entries, self.cache_dir)


def read_blocks_keyed(
    text: str, name: str, max_nodes: int, cache_dir: Path
) -> tuple[bytes, dict[FieldPath, tuple[int, int]], BlockItemKeys] | None:
    """:func:`read_blocks` with what gives the key of each item of the plan's lists, taken by
    block when asked for (:func:`.blockitems.keys_by_block`)."""
    from .yaml_reader import anchors, read_block

    blocks = split(text)
    if blocks is None or len(blocks) < 2:
        return None
    store = _Store(cache_dir / FILE_NAME)
    keys = store.keys(blocks)
    entries: list[Entry] = []
    for block, key in zip(blocks, keys, strict=True):
        entry = store.entries.get(key)
        if entry is None:
            try:
                data, _, count, aliased = read_block(block.text, name, max_nodes)
            except PlanError:
                return None  # read whole: the whole text says what is wrong, and where
            entry = None if aliased else entry_of(block, data, count)
            if entry is None or anchors(block.text):  # an anchor's name is the file's: named
                return None  # in two blocks, the whole file refuses it (a block kept names none)
            store.add(key, entry)
        entries.append(entry)
    body = assemble(blocks, entries, max_nodes)
    if body is None:
        return None
    store.save(set(keys))
    positions = BlockPositions(text, blocks, lambda part: read_block(part, name, max_nodes)[1])
    return body, positions, BlockItemKeys(blocks, keys, entries, cache_dir)


class _Store(LineStore[Entry]):
    """The kept blocks: a line is the key, the block's node count, whether its data is null
    and its data as JSON."""

    def __init__(self, path: Path) -> None:
        super().__init__(path, SPARE)

    def parse(self, row: str) -> tuple[str, Entry] | None:
        parts = row.split("\t", 3)
        if len(parts) != 4 or not parts[1].isdigit() or parts[2] not in ("0", "1"):
            return None
        return parts[0], (int(parts[1]), parts[3], parts[2] == "1")

    def line(self, key: str, entry: Entry) -> str:
        return _line(key, entry)

    def keys(self, blocks: list[Block]) -> list[str]:
        """The key of each block: the sha256 of the salt, the code's fingerprint and its text."""
        base = hashlib.sha256(machine_salt() + code_fingerprint().encode() + b"\0")
        keys = []
        for block in blocks:
            each = base.copy()
            each.update(block.text.encode("utf-8", "surrogatepass"))
            keys.append(each.hexdigest())
        return keys


def _line(key: str, entry: Entry) -> str:
    count, text, is_null = entry
    return f"{key}\t{count}\t{int(is_null)}\t{text}\n"
