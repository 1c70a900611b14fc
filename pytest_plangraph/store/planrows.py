"""The store's ``plans`` table: each plan digest the store has seen, numbered in the order it
was first seen (the plan version writes may expect)."""

from __future__ import annotations

import sqlite3
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING

from .exchange import PlanVersion
from .opening import now
from .rows import add_plan


class PlanVersions:
    """The plan-version methods of :class:`~pytest_plangraph.store.Store`."""

    if TYPE_CHECKING:

        def _reading(self) -> AbstractContextManager[sqlite3.Connection]: ...
        def _transaction(self) -> AbstractContextManager[sqlite3.Connection]: ...

    def register_plan(self, digest: str, plan_id: str) -> int:
        """The version number of plan *digest*, numbering it (1, 2, 3 …) when it is new."""
        known = self.plan_version(digest)
        if known is not None:
            return known
        with self._transaction() as con:
            return add_plan(con, PlanVersion(digest, plan_id, 0, now()))

    def plan_version(self, digest: str) -> int | None:
        """The version number of plan *digest*, or None when this store has not seen it."""
        with self._reading() as con:
            row = con.execute("SELECT version FROM plans WHERE digest = ?", (digest,)).fetchone()
        return None if row is None else int(row[0])

    def latest_plan_version(self) -> int | None:
        """The highest plan version registered, or None when none is."""
        with self._reading() as con:
            row = con.execute("SELECT max(version) FROM plans").fetchone()
        return None if row[0] is None else int(row[0])

    def plans(self) -> list[PlanVersion]:
        """Every registered plan digest, by version."""
        with self._reading() as con:
            rows = con.execute(
                "SELECT digest, plan_id, version, first_seen FROM plans ORDER BY version"
            ).fetchall()
        return [PlanVersion(*row) for row in rows]
