"""Checking a whole store: every event's id, the chain, the signatures and the ``log`` table,
as a mixin of :class:`~pytest_plangraph.store.sqlite.Store` (``plangraph audit`` reads it)."""

from __future__ import annotations

import sqlite3
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING

from ..memory import collector_paused
from . import schema
from .chain import APPEND_ONLY_DISABLED, ChainProblem, check_link, event_id
from .rows import (
    COLUMNS,
    log_differences,
    log_problem,
    readable_event,
    row_link,
    written_as_stored,
)

__all__ = ["ChainAudit"]


class ChainAudit:
    """The whole-store checks of :class:`~pytest_plangraph.store.sqlite.Store`."""

    if TYPE_CHECKING:
        _key: bytes | None
        _schema: int

        def _reading(self) -> AbstractContextManager[sqlite3.Connection]: ...

    def verify(self) -> list[ChainProblem]:
        """Recompute every id, the chain and (with a key) the signatures, and check that the
        ``log`` table status reads still matches the events; problems in seq order.

        Store-wide problems (the append-only triggers removed) come last with ``seq`` 0.
        """
        with self._reading() as con:
            rows = con.execute(f"SELECT {COLUMNS} FROM events ORDER BY seq").fetchall()
            differ = log_differences(con, self._schema)
            triggers = {r[0] for r in con.execute("SELECT name FROM sqlite_master")}
        problems: list[ChainProblem] = []
        prev = ""
        with collector_paused():
            for row in rows:
                link, event = row_link(row), readable_event(row)
                computed = None if event is None else event_id(event)
                if event is not None and not written_as_stored(event, row):
                    computed = ""  # the text was edited (say, a second "outcome" key added)
                own = check_link(link, computed, prev, self._key)
                problems.extend(own)
                prev = link.hash
                if own or event is None:  # an event edited by hand is reported as such
                    differ.pop(link.seq, None)
        problems.extend(log_problem(seq, *found) for seq, found in differ.items())
        problems.sort(key=lambda p: p.seq)
        expected = schema.TRIGGERS if self._schema >= 2 else schema.TRIGGERS[:2]
        if missing := [t for t in expected if t not in triggers]:
            message = f"the append-only triggers {', '.join(missing)} were removed by hand"
            problems.append(ChainProblem(0, "", APPEND_ONLY_DISABLED, message))
        return problems

    def signed_count(self) -> int:
        """How many events carry a signature (audit says when it could not check them)."""
        with self._reading() as con:
            return int(
                con.execute("SELECT count(*) FROM events WHERE signature IS NOT NULL").fetchone()[0]
            )
