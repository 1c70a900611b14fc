"""The bytes of the derived-state cache: one file in the plan cache folder
(``.plangraph/cache/derived.json``) holding the last derived state and the key it was derived
under (:func:`~pytest_plangraph.judge.statejson.derivation_key`).

The file starts with a tag, a keyed BLAKE2b digest of the rest with this user's key
(:func:`~.localkey.local_key`): a file written or edited by anything but plangraph run by this
user — copied from another machine, planted by a process that cannot read the key — is a miss.
A miss of any kind (no file, a damaged one, another key) means deriving again; nothing read
from here is ever needed, so deleting the file changes no answer. Writes are atomic.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path

from ..canonical import json_loads
from ..hashes import blake2b
from ..plan.cache import read_tagged_file, read_tagged_json, write_tagged_file
from .localkey import local_key

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "FREE",
    "FREE_PERSON",
    "NAME",
    "KeptRow",
    "StateRows",
    "keep_derived",
    "read_derived",
    "read_state_rows",
    "read_tagged",
    "read_tagged_of",
    "write_state",
    "write_tagged",
]

NAME = "derived.json"
"""The file's name in the cache folder."""

FREE = "derived-free.json"
"""The file of the nodes judged again without the plan since :data:`NAME` was written (its
overlay: :mod:`pytest_plangraph.derived.planfree`), beside it."""

FREE_PERSON = b"plangraph-free"
"""The tag's person of :data:`FREE` (it never reads as the derived state itself)."""

_PERSON = b"plangraph-derive"


def read_derived(cache_dir: Path, key: str) -> Any:
    """The data kept under *key*, or None (no file, another key, a tag that does not match,
    not JSON)."""
    kept = read_tagged(cache_dir / NAME)
    if not isinstance(kept, dict) or kept.get("key") != key:
        return None
    return kept.get("data")


def keep_derived(cache_dir: Path, key: str, data: Any) -> None:
    """Keep *data* under *key* in place of what was kept; nothing happens when the file
    cannot be written."""
    write_tagged(cache_dir / NAME, {"key": key, "data": data})


def read_tagged(path: Path, person: bytes = _PERSON) -> Any:
    """The JSON value kept at *path* by :func:`write_tagged` with the same *person*, or None
    (no file, a tag that does not match, not JSON)."""
    found = read_tagged_of(path, person)
    return None if found is None else found[1]


def read_tagged_of(path: Path, person: bytes = _PERSON) -> tuple[str, Any] | None:
    """The tag and the JSON value kept at *path* by :func:`write_tagged` with the same
    *person*, or None (no file, a tag that does not match, not JSON). The tag names the
    bytes written: a file kept beside this one names it by its tag."""
    return read_tagged_json(path, lambda body: _tag(body, person))


class StateRows:
    """The rows of a kept derived state (``data["nodes"]``) in their order: the node of each
    (*order*), each row decoded when asked for (:meth:`row`)."""

    def __init__(self, order: list[str], lines: Sequence[bytes], rows: list[Any] | None) -> None:
        self.order = order
        self._lines = lines
        self._rows = rows

    def text(self, index: int) -> str | None:
        """The JSON text of the row at *index* as it was kept, when it was kept on a line of
        its own (:func:`write_state`), else None."""
        if self._rows is not None:
            return None
        return self._lines[index].removesuffix(b",").decode("utf-8", "surrogateescape")

    def all_rows(self) -> list[list[Any]]:
        """Every row, in order, decoded in one go (ValueError when one is not the row of its
        node in ``order``)."""
        if self._rows is not None:
            rows = self._rows
        else:  # the lines are the rows with the commas between them: one JSON array
            rows = json_loads(b"[" + b"\n".join(self._lines) + b"]")
        if not isinstance(rows, list) or len(rows) != len(self.order):
            raise ValueError("the kept rows are not one a node")
        for row, node in zip(rows, self.order, strict=True):
            if not isinstance(row, list) or not row or row[0] != node:
                raise ValueError(f"the kept row of {node!r} is not its own")
        return rows

    def row(self, index: int) -> list[Any]:
        """The row at *index* (ValueError when it is not the row of ``order[index]``)."""
        if self._rows is not None:
            row = self._rows[index]
        else:  # each line but the last ends with the comma between two rows
            row = json_loads(self._lines[index].removesuffix(b","))
        if not isinstance(row, list) or not row or row[0] != self.order[index]:
            raise ValueError(f"the kept row {index} is not {self.order[index]!r}'s")
        return row


def read_state_rows(path: Path) -> tuple[str, Any, StateRows] | None:
    """The tag and the value of the derived state kept at *path*, its rows left out (an empty
    ``data["nodes"]``) and given apart, decoded when asked for; None as :func:`read_tagged`.
    A state kept by :func:`write_state` decodes only the rows asked for; one kept on one line
    (by :func:`write_tagged`) is decoded whole."""
    found = _body(path, _PERSON)
    if found is None:
        return None
    tag, body = found
    head, lines, end = _state_lines(body)
    try:
        if lines is None:
            value = json_loads(body)
            rows = value["data"]["nodes"]
            value["data"]["nodes"] = []
            return tag, value, StateRows([str(r[0]) for r in rows], (), rows)
        value = json_loads(head + end)
        order = value["data"]["order"]
    except (ValueError, KeyError, TypeError, IndexError):
        return None
    if not isinstance(order, list) or len(order) != len(lines):
        return None
    return tag, value, StateRows(order, lines, None)


def _state_lines(body: bytes) -> tuple[bytes, list[bytes] | None, bytes]:
    """*body* as :func:`write_state` writes it: the value up to its rows, the rows' lines
    (each but the last ending with a comma), and what closes the value; no rows (None) for a
    body on one line."""
    head, sep, rest = body.partition(b"\n")
    lines = rest.split(b"\n")
    if not sep or lines[-1] != _END:
        return body, None, b""
    del lines[-1]
    return head, [] if lines == [b""] else lines, _END


_END = b"]}}"
"""What closes a state kept by :func:`write_state` after its rows."""


class KeptRow:
    """A row of a kept derived state written again as it was read: its node and its JSON
    text (a line of :func:`write_state`'s, without the comma), not decoded nor encoded."""

    __slots__ = ("node", "text")

    def __init__(self, node: str, text: str) -> None:
        self.node = node
        self.text = text


def write_state(path: Path, record: Mapping[str, Any]) -> None:
    """Keep the derived state *record* (``key``, ``observed``, ``data``: its ``nodes``, one
    row per node, and ``input_digests``) at *path* as :func:`write_tagged` keeps a value,
    ``data["order"]`` (the node of each row) added and the rows last, one a line: the same
    value for :func:`read_tagged`, whose rows :func:`read_state_rows` decodes only when
    asked for. A row may be a :class:`KeptRow`: its text is written as it is."""
    data = dict(record["data"])
    rows = data.pop("nodes")
    data["order"] = [row.node if isinstance(row, KeptRow) else row[0] for row in rows]
    data["nodes"] = []
    head = {k: v for k, v in record.items() if k != "data"}
    head["data"] = data
    encode = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
    try:
        text = encode(head)
        lines = ",\n".join(row.text if isinstance(row, KeptRow) else encode(row) for row in rows)
    except (TypeError, ValueError):
        return
    if not text.endswith("[]}}"):  # not the shape it was written for: on one line
        nodes = [json_loads(r.text) if isinstance(r, KeptRow) else r for r in rows]
        write_tagged(path, {**record, "data": {**record["data"], "nodes": nodes}})
        return
    body = f"{text[:-3]}\n{lines}\n{_END.decode()}"
    _write(path, body, _PERSON)


def write_tagged(path: Path, data: Any, person: bytes = _PERSON) -> None:
    """Keep the JSON value *data* at *path*, tagged with this user's key and *person* (what
    kind of file it is: a file of one kind never reads as another); atomic, and nothing
    happens when the file cannot be written."""
    try:
        body = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    except (TypeError, ValueError):
        return
    _write(path, body, person)


def _write(path: Path, body: str, person: bytes) -> None:
    """Write *body* at *path*, tagged (:func:`write_tagged`)."""
    try:
        encoded = body.encode("utf-8", "surrogateescape")
    except (TypeError, ValueError):
        return
    write_tagged_file(path, encoded, lambda data: _tag(data, person))


def _body(path: Path, person: bytes) -> tuple[str, bytes] | None:
    """The tag and the bytes kept at *path* when the tag is this user's for them, else None."""
    return read_tagged_file(path, lambda body: _tag(body, person))


def _tag(body: bytes, person: bytes) -> str:
    return blake2b(body, key=local_key(), person=person, digest_size=16).hexdigest()
