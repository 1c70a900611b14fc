"""Reading a large YAML plan block by block, so that an edit re-reads only the blocks it touched.

A plan file is mostly a long list of nodes (and one of edges) under a few top-level keys. When
the text is written plainly, it splits at the lines that start a top-level key or an item of
such a list into **blocks**: a key with what is written under it, or a run of about
:data:`CHUNK` items of its list. Each reads, on its own, as the one key or the items it holds.
Each block's data is kept in the plan cache under the block's bytes
(:mod:`~pytest_plangraph.plan.blockcache`), so after an edit only the new blocks are parsed and
the plan's data is put together from the others.

The split is conservative: whatever it cannot split safely is read whole, as before. That is a
text with a tab, a carriage return, a byte-order mark or another line break YAML knows; a line at
the left margin that is neither a plain key nor a list item (a document marker, a directive, a
quoted or flow key); a list whose lines are indented less than its items, or items at the margin
after indented ones; any block that does not read on its own as exactly its key or its items (a
quoted text or a flow collection running over a boundary leaves its first part unterminated,
which fails); an alias or an anchor anywhere (an anchor's name is the file's: named in two
blocks, it is refused); a key written twice at the top; or a plan of more values than the
reader allows. A block's positions are found only when a message needs one, by reading that
block again and moving its lines to its place in the file, so the lines of blocks after an
edited one are right.
"""

from __future__ import annotations

import bisect
import contextlib
import json
import re
import zlib
from collections.abc import Callable
from typing import Any

from ..errors import PlanError
from ..values import dataclass
from .messages import FieldPath

_NOT_SPLIT = re.compile("[\t\r\x85\u2028\u2029\ufeff]")
"""Characters after which the text is read whole: YAML's other line breaks, tabs (which YAML
refuses as indentation but takes elsewhere), a byte-order mark past the start."""
_MARGIN = re.compile(
    r"^(?:(?P<item>-(?: |$))|(?P<key>[A-Za-z_][A-Za-z0-9_-]*):(?P<empty>(?:[ ]+#.*)?[ ]*$)?"
    r"(?(empty)|(?: |$))|(?P<other>[^ \n#]))",
    re.MULTILINE,
)
"""A line at the left margin that is not a comment: a list item, a plain key (with its value
on the following lines when *empty* matched) or anything else (*other*: read whole)."""
_CONTENT = re.compile(r"^( *)[^ \n#]", re.MULTILINE)
"""A line that is neither blank nor a comment, with its indentation."""
CHUNK = 16
"""Items of a list are kept in runs of about this many: a run ends at an item whose text hashes
to a multiple of it, so inserting or removing an item changes the run it is in only."""
MAX_CHUNK = 64
"""The most items a run holds (when many items hash alike, say identical ones)."""


@dataclass(frozen=True, slots=True)
class Block:
    """One block of a plan file: its text, where it starts in the file (a character offset),
    the top-level key it belongs to and, for a run of items of that key's list, the index of
    the first and how many there are (None and 0 for the key itself)."""

    text: str
    start: int
    key: str
    first: int | None = None
    count: int = 0


_Unit = tuple[int, str, bool]
"""Where a key line or an item starts, the top-level key, and whether it is an item."""


def split(text: str) -> list[Block] | None:
    """The blocks of a plan *text*, in file order, or None when it cannot be split safely."""
    if _NOT_SPLIT.search(text):
        return None
    matches = list(_MARGIN.finditer(text))
    if not matches or matches[0].group("key") is None:
        return None
    units: list[_Unit] = []
    margin_items = False  # may items at the margin follow (the key's value is a list of them)
    for n, found in enumerate(matches):
        if found.group("item") is not None and margin_items:
            units.append((found.start(), units[-1][1], True))
            continue
        key = found.group("key")
        if key is None:
            return None
        units.append((found.start() if units else 0, key, False))  # comments above: the first
        margin_items = found.group("empty") is not None
        if margin_items:
            end = matches[n + 1].start() if n + 1 < len(matches) else len(text)
            inner = _indented_items(text, found.end(), end)
            if inner is None:
                return None
            if inner:
                units.extend((at, key, True) for at in inner)
                margin_items = False
    return _blocks(text, units)


def _indented_items(text: str, begin: int, end: int) -> list[int] | None:
    """Where each item of a list indented under a key line starts (the key line ends at
    *begin*, what is written under it ends at *end*): [] when no indented list is there; None
    when the lines are not all indented at least as far as the items, which start at one
    indentation (then the text is read whole)."""
    first = _CONTENT.search(text, begin, end)
    if first is None:
        return []
    indent = len(first.group(1))
    if not indent or not re.match(r"-(?: |\n|$)", text[first.end() - 1 : first.end() + 1]):
        return []
    lines = rf"^ {{{indent}}}(?!-(?: |$))[^ \n#]"  # at the items' indentation, not an item
    if indent > 1:
        lines += rf"|^ {{0,{indent - 1}}}[^ \n#]"  # indented less than the items
    if re.compile(lines, re.MULTILINE).search(text, begin, end):
        return None
    items = re.compile(rf"^ {{{indent}}}-(?: |$)", re.MULTILINE)
    return [found.start() for found in items.finditer(text, begin, end)]


def _blocks(text: str, units: list[_Unit]) -> list[Block]:
    """The blocks of *units*: each key alone, its items in runs (see :data:`CHUNK`)."""
    ends = [unit[0] for unit in units[1:]]
    ends.append(len(text))
    blocks: list[Block] = []
    index = 0  # of the next item in its key's list
    run_start = -1  # the unit the current run starts at
    for n, (start, key, is_item) in enumerate(units):
        if not is_item:
            blocks.append(Block(text[start : ends[n]], start, key))
            index = 0
            continue
        if run_start < 0:
            run_start = n
        size = n - run_start + 1
        last = n + 1 == len(units) or not units[n + 1][2]
        if last or size == MAX_CHUNK or not _hash(text[start : ends[n]]) % CHUNK:
            begin = units[run_start][0]
            blocks.append(Block(text[begin : ends[n]], begin, key, index, size))
            index += size
            run_start = -1
    return blocks


def _hash(piece: str) -> int:
    """A hash of an item's text that is the same in every process (``hash`` is not)."""
    return zlib.crc32(piece.encode("utf-8", "surrogatepass"))


Entry = tuple[int, str, bool]
"""What is kept of a block: how many values it holds, the JSON text of its value (of the key's
value for a key; the items, without the brackets, for a run) and whether that value is null."""


def entry_of(block: Block, data: Any, count: int) -> Entry | None:
    """The :data:`Entry` of *block* read as *data* holding *count* values; None when it does
    not read as the key or the items it holds, or its data does not come back from JSON as it
    is (a date, a set or a pair list read from YAML would not: then the text is read whole)."""
    if block.first is None:
        if not isinstance(data, dict) or len(data) != 1 or block.key not in data:
            return None
        value = data[block.key]
    elif not isinstance(data, list) or len(data) != block.count:
        return None
    else:
        value = data
    try:
        text = json.dumps(value, ensure_ascii=False, allow_nan=False)
        text.encode("utf-8")  # a lone surrogate, read from an escape, cannot be written
        if json.loads(text) != value:
            return None
    except (TypeError, ValueError):
        return None
    if block.first is not None:
        return count, text[1:-1], False  # the items, to be joined with those of other runs
    return count, text, value is None


def assemble(blocks: list[Block], entries: list[Entry], max_nodes: int) -> bytes | None:
    """The plan's data, as the JSON text :func:`json.dumps` writes of it (UTF-8), from the
    entries of its blocks (in the order of *blocks*): exactly what reading the whole text
    gives; None when a key is written twice, a key's own value is not null although items
    follow it, or the plan holds more than *max_nodes* values."""
    values: dict[str, str] = {}
    nulls: set[str] = set()
    lists: dict[str, list[str]] = {}
    total = 1
    for block, (count, text, is_null) in zip(blocks, entries, strict=True):
        total += count - 1
        if block.first is None:
            if block.key in values:
                return None
            values[block.key] = text
            if is_null:
                nulls.add(block.key)
        elif block.first == 0:
            if block.key not in nulls or block.key in lists:
                return None
            lists[block.key] = [text]
        elif block.key in lists:
            lists[block.key].append(text)
        else:
            return None
    if total > max_nodes:
        return None
    pairs = []
    for key, text in values.items():
        if key in lists:
            text = "[" + ", ".join(lists[key]) + "]"
        pairs.append(f"{json.dumps(key, ensure_ascii=False)}: {text}")
    return ("{" + ", ".join(pairs) + "}").encode("utf-8")


class BlockPositions(dict[FieldPath, tuple[int, int]]):
    """The positions of a plan that splits into blocks, found for one block when a message first
    needs a position in it: the block is read again and its lines moved to its place (all of
    them from the whole text when a block does not read on its own). *read* reads a text as
    YAML and gives its positions."""

    def __init__(
        self,
        text: str,
        blocks: list[Block],
        read: Callable[[str], dict[FieldPath, tuple[int, int]]],
    ) -> None:
        super().__init__()
        self._text = text
        self._read = read
        self._first = blocks[0]
        self._blocks = blocks
        self._keys = {block.key: block for block in blocks if block.first is None}
        self._runs: dict[str, list[Block]] = {}
        for block in blocks:
            if block.first is not None:
                self._runs.setdefault(block.key, []).append(block)
        self._firsts = {key: [run.first or 0 for run in runs] for key, runs in self._runs.items()}
        self._done: set[int] = set()

    def _whole(self) -> None:
        """Take every position from reading the whole text (when it reads)."""
        self._done.update(block.start for block in self._blocks)
        with contextlib.suppress(PlanError):
            self.update(self._read(self._text))

    def get(self, key: FieldPath, default: Any = None) -> Any:
        block = self._block_of(key)
        if block is not None and block.start not in self._done:
            self._done.add(block.start)
            self._place(block)
        return super().get(key, default)

    def _block_of(self, path: FieldPath) -> Block | None:
        if not path:
            return self._first
        runs = self._runs.get(str(path[0]), [])
        if len(path) > 1 and isinstance(path[1], int) and runs and path[1] >= 0:
            found = runs[bisect.bisect_right(self._firsts[str(path[0])], path[1]) - 1]
            if path[1] < (found.first or 0) + found.count:
                return found
        return self._keys.get(str(path[0]))

    def _place(self, block: Block) -> None:
        try:
            found = self._read(block.text)
        except PlanError:  # a block that does not read alone: the positions of the whole text
            self._whole()
            return
        shift = self._text.count("\n", 0, block.start)
        for path, (line, column) in found.items():
            if block.first is not None:
                if not path or not isinstance(path[0], int):
                    continue  # the list the items were read in, not the plan's
                path = (block.key, block.first + path[0], *path[1:])
            elif not path and block is not self._first:
                continue
            self.setdefault(path, (line + shift, column))
