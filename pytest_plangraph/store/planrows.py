"""The store's ``plans`` table: each plan digest the store has seen, numbered in the order it
was first seen (the plan version writes may expect)."""

from __future__ import annotations

import sqlite3
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import ConflictError
from .exchange import PlanVersion
from .faults import damaged
from .opening import now
from .rows import add_plan

_BAD_VERSION = (
    "SELECT digest, version FROM plans WHERE typeof(version) != 'integer' OR version < 1 "
    "OR typeof(digest) != 'text' OR typeof(plan_id) != 'text' OR typeof(first_seen) != 'text' "
    "LIMIT 1"
)


def check_plan_rows(con: sqlite3.Connection, path: Path) -> None:
    """Refuse a store whose ``plans`` table holds a row plangraph cannot have written: a
    version that is not a whole number from 1 up (text, a fraction, a blob, a negative
    number), or a digest, plan id or time that is not text. Readers would crash on it, and a
    write would number the next plan from it."""
    row = con.execute(_BAD_VERSION).fetchone()
    if row is None:
        return
    digest = row[0][:12] if isinstance(row[0], str) else _shown(row[0])
    raise damaged(
        path,
        f"is damaged: its plans table holds plan {digest} with version {_shown(row[1])}, not "
        "a whole number from 1 up, or a column that is not text (edited outside plangraph)",
    )


def register_in(con: sqlite3.Connection, plan: PlanVersion, path: Path) -> None:
    """Register *plan* in the transaction *con* has begun, where it must get the version it
    names (what the events written with it recorded, reckoned before): another number means
    another plan was registered meanwhile (:class:`ConflictError`, the transaction undone)."""
    check_plan_rows(con, path)
    given = add_plan(con, plan)
    if given != plan.version:
        raise ConflictError(
            f"PLAN_VERSION_CONFLICT: plan {plan.digest[:12]} would be version {given} in the "
            f"store at {path}, not {plan.version}: another plan was registered meanwhile; "
            "nothing was written — read the plan again and retry"
        )


def _shown(value: object) -> str:
    """*value* quoted for a message, at most 40 characters of it."""
    text = repr(value)
    return text if len(text) <= 40 else f"{text[:40]}… ({len(text)} characters)"


class PlanVersions:
    """The plan-version methods of :class:`~pytest_plangraph.store.Store`."""

    if TYPE_CHECKING:

        def _reading(self) -> AbstractContextManager[sqlite3.Connection]: ...
        def _transaction(self) -> AbstractContextManager[sqlite3.Connection]: ...

        path: Path

    def register_plan(self, digest: str, plan_id: str) -> int:
        """The version number of plan *digest*, numbering it (1, 2, 3 …) when it is new."""
        known = self.plan_version(digest)
        if known is not None:
            return known
        with self._transaction() as con:
            check_plan_rows(con, self.path)
            return add_plan(con, PlanVersion(digest, plan_id, 0, now()))

    def plan_version(self, digest: str) -> int | None:
        """The version number of plan *digest*, or None when this store has not seen it."""
        with self._reading() as con:
            check_plan_rows(con, self.path)
            row = con.execute("SELECT version FROM plans WHERE digest = ?", (digest,)).fetchone()
        return None if row is None else int(row[0])

    def latest_plan_version(self) -> int | None:
        """The highest plan version registered, or None when none is."""
        with self._reading() as con:
            check_plan_rows(con, self.path)
            row = con.execute("SELECT max(version) FROM plans").fetchone()
        return None if row[0] is None else int(row[0])

    def next_plan_version(self, digest: str) -> int:
        """The version plan *digest* has, or would get if registered now."""
        return self.plan_version(digest) or (self.latest_plan_version() or 0) + 1

    def plans(self) -> list[PlanVersion]:
        """Every registered plan digest, by version."""
        with self._reading() as con:
            check_plan_rows(con, self.path)
            rows = con.execute(
                "SELECT digest, plan_id, version, first_seen FROM plans ORDER BY version"
            ).fetchall()
        return [PlanVersion(*row) for row in rows]
