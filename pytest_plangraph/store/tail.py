"""The end of the chain: the head a store shows (``plangraph head``) and the check of the events
the gate reads after a point of the chain it trusts.

Status and claim read the ``log`` table, which the events fill. Before the gate uses the events
after event *N* (the log's checkpoint, or the start of the chain), :meth:`ChainTail.check_tail`
recomputes each one's content id from its stored content, checks that it links to the event
before it — the first one to the chain hash the caller trusts at *N* — and that the ``log`` rows
status reads are the ones its events make (as :data:`~.schema.LOG_SOURCE` makes them, never as
a view in the file does). The first event that fails is named by a :class:`ChainProblem` with
the code ``STORE_TAMPERED``; a file that holds SQL objects plangraph did not make was refused
when the store was opened (:mod:`.schemacheck`), with the same code. Events up to *N* are not
read again: what the gate needs of them is in the checkpoint, which was folded from events
checked this way.

This check leaves signatures to the keys' own check (``chain.py``); with no key, a chain edited
and rehashed from the edit to its end is one only a head kept elsewhere can expose
(``plangraph audit --expect-head``).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any, NamedTuple

from ..canonical import canonical_json
from ..errors import StoreError
from ..hashes import sha256_hex
from .chain import ChainProblem, chain_hash
from .rows import COLUMNS, LOG_DIFFERENCES, row_link

STORE_TAMPERED = "STORE_TAMPERED"
"""Reason code: an event the gate would use does not match its id or the chain."""


HEAD_MISSING = "HEAD_MISSING"
"""Audit code: the store does not hold the head it was expected to (``--expect-head``)."""

STORE_CORRUPT = "STORE_CORRUPT"
"""Audit code: SQLite's own check of the file found damage (``PRAGMA integrity_check``)."""


class Head(NamedTuple):
    """The last event of a store's chain: its ``seq`` and ``hash`` (0 and ``""`` for a store
    without events) and its signature, if it has one. ``str()`` gives ``SEQ:HASH``."""

    seq: int
    hash: str
    signature: str | None

    def __str__(self) -> str:
        return f"{self.seq}:{self.hash}"

    def to_json(self) -> dict[str, Any]:
        """The JSON shape of ``plangraph head`` (without the ``format`` key)."""
        return {"seq": self.seq, "hash": self.hash, "signature": self.signature}


class Missing(NamedTuple):
    """What a store holds instead of an expected event: the chain hash of its event at that
    ``seq`` (None when it has none) and how many events it holds."""

    found: str | None
    held: int


_TAIL_LOG_DIFFERENCES = f"SELECT * FROM ({LOG_DIFFERENCES}) WHERE seq > ? ORDER BY seq LIMIT 1"


class ChainTail:
    """The chain-end methods of :class:`~pytest_plangraph.store.Store`."""

    if TYPE_CHECKING:
        _schema: int

        def _reading(self) -> AbstractContextManager[sqlite3.Connection]: ...

        def hash_at(self, seq: int) -> str | None: ...

    def head(self) -> Head:
        """The last event of the chain (``Head(0, "", None)`` when there is none)."""
        with self._reading() as con:
            row = con.execute(
                "SELECT seq, hash, signature FROM events ORDER BY seq DESC LIMIT 1"
            ).fetchone()
        return Head(0, "", None) if row is None else Head(int(row[0]), str(row[1]), row[2])

    def missing(self, seq: int, chain: str) -> Missing | None:
        """None when the store holds event *seq* with the chain hash *chain* (a head published
        earlier, the event a checkpoint covers); else what it holds instead."""
        found = self.hash_at(seq)
        if found == chain:
            return None
        return Missing(found, self.head().seq)

    def integrity(self) -> list[ChainProblem]:
        """What SQLite's ``PRAGMA integrity_check`` finds damaged in the file (pages, b-trees,
        records, and index entries that do not match their table's rows), as ``STORE_CORRUPT``
        problems; empty for a sound file. The chain cannot see damage to an index or to pages
        that no event read touches; this check does. ``quick_check`` would not do: it does not
        compare an index with its table, so an index rebuilt on another column under its old
        SQL text (``PRAGMA writable_schema``) passes it."""
        try:
            with self._reading() as con:
                found = [str(row[0]) for row in con.execute("PRAGMA integrity_check(20)")]
        except StoreError as exc:
            found = [str(exc)]
        if found == ["ok"]:
            return []
        return [
            ChainProblem(
                0,
                "",
                STORE_CORRUPT,
                f"the store file is damaged: {text}. Restore it from a backup copy; "
                "`plangraph export` may still save the events that can be read",
            )
            for text in found
        ]

    def check_tail(
        self, after_seq: int = 0, prev: str = "", *, log: bool = True
    ) -> ChainProblem | None:
        """The first event after *after_seq* that does not match its content id, does not link
        to the one before it (the first to *prev*, the trusted hash of event *after_seq*), or
        (with *log*: status read the ``log`` table) whose ``log`` row differs from it; None
        when every one holds."""
        with self._reading() as con:
            rows = con.execute(
                f"SELECT {COLUMNS} FROM events WHERE seq > ? ORDER BY seq", (after_seq,)
            ).fetchall()
            differ = None
            if log and self._schema >= 2:  # an older store read as it is has no log table
                differ = con.execute(_TAIL_LOG_DIFFERENCES, (after_seq,)).fetchone()
        problem = first_bad_link(rows, prev)
        if differ is not None and (problem is None or int(differ[0]) < problem.seq):
            seq, id_ = int(differ[0]), str(differ[1])
            what = "its row in the log table, which status reads, is not the one its event makes"
            return tampered(seq, id_, what)
        return problem


def first_bad_link(rows: Iterable[Sequence[Any]], prev: str) -> ChainProblem | None:
    """The first of *rows* (selected with :data:`~.rows.COLUMNS`, in chain order, the first
    following the event whose hash is *prev*) whose content, id or chain link is wrong."""
    for row in rows:
        link = row_link(row)
        if stored_id(row) != link.id:
            return tampered(link.seq, link.id, "its content does not match its id")
        if link.prev != prev or link.hash != chain_hash(prev, link.id):
            return tampered(link.seq, link.id, "it does not link to the event before it")
        prev = link.hash
    return None


CONTENT_FIELDS = ("at", "by", "criterion", "idempotency_key", "kind", "node")
"""The fields of :meth:`Event.content() <pytest_plangraph.plan.model.Event.content>` besides
``payload`` and ``plan_digest``, in the order canonical JSON sorts them (``payload`` and
``plan_digest`` come after them)."""


def stored_id(row: Sequence[Any]) -> str | None:
    """The content id of a row selected with :data:`~.rows.COLUMNS`, hashing its payload text
    as stored; None when the row cannot be hashed.

    plangraph stores a payload as its canonical JSON, so for every row it wrote this equals
    :func:`~.chain.event_id` of the event, without parsing the payload: the cost of checking an
    event is one small encoding and one sha256. A payload text that is not canonical (edited by
    hand, say with a key written twice, which Python and SQLite read differently) gives another
    id, as it should."""
    _, _, kind, node, criterion, at, by, plan_digest, payload, key, _, _, _ = row
    if not isinstance(payload, str):
        return None
    values = (at, by, criterion, key, kind, node)
    try:
        head = canonical_json(dict(zip(CONTENT_FIELDS, values, strict=True)))
        text = f'{head[:-1]},"payload":{payload},"plan_digest":{canonical_json(plan_digest)}}}'
        return sha256_hex(text.encode("utf-8"))
    except (TypeError, ValueError):  # a value of no JSON type, or text that is not UTF-8
        return None


def tampered(seq: int, event_id: str, what: str) -> ChainProblem:
    """The ``STORE_TAMPERED`` problem of event *seq*, saying *what* is wrong with it."""
    message = (
        f"event {seq} ({event_id[:12] or 'no id'}): {what}; the store was edited outside "
        "plangraph, so no status is derived from it — run `plangraph audit` to see every "
        "finding, and restore the store from a copy you trust"
    )
    return ChainProblem(seq, event_id, STORE_TAMPERED, message)
