"""The answers of requests made with an idempotency key (the HTTP API's ``Idempotency-Key``),
kept in the store's ``meta`` table under ``answer:<key>`` so that the same key sent again —
after a restart of the server too — gets the first answer back and writes nothing again.

An answer is not evidence: the gate never reads it, and nothing is derived from it. It only
spares a request that was already carried out from being carried out twice (a claim counted
twice against a retry budget, a patch applied twice). The events themselves stay the record.
"""

from __future__ import annotations

import json
import sqlite3
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

from ..canonical import json_loads
from ..values import dataclass

PREFIX = "answer:"


@dataclass(frozen=True)
class KeptAnswer:
    """What a request with an idempotency key was answered: the request's fingerprint (so
    that the key sent with another request is told apart), the HTTP status and the body."""

    request: str
    status: int
    body: Any


class Answers:
    """The kept-answer methods of :class:`~pytest_plangraph.store.Store`."""

    if TYPE_CHECKING:

        def _reading(self) -> AbstractContextManager[sqlite3.Connection]: ...
        def _transaction(self) -> AbstractContextManager[sqlite3.Connection]: ...

    def kept_answer(self, key: str) -> KeptAnswer | None:
        """The answer kept for idempotency *key*, or None."""
        with self._reading() as con:
            row = con.execute("SELECT value FROM meta WHERE key = ?", (PREFIX + key,)).fetchone()
        return None if row is None else _answer(row[0])

    def keep_answer(self, key: str, answer: KeptAnswer) -> KeptAnswer:
        """Keep *answer* for *key* unless one is kept already; the answer kept."""
        value = json.dumps(
            {"request": answer.request, "status": answer.status, "body": answer.body},
            ensure_ascii=False,
            sort_keys=True,
        )
        with self._transaction() as con:
            con.execute(
                "INSERT OR IGNORE INTO meta (key, value) VALUES (?, ?)", (PREFIX + key, value)
            )
            row = con.execute("SELECT value FROM meta WHERE key = ?", (PREFIX + key,)).fetchone()
        return _answer(row[0])


def _answer(text: str) -> KeptAnswer:
    """A kept answer read back; one that does not parse (edited by hand) is no answer."""
    try:
        data = json_loads(text)
        return KeptAnswer(str(data["request"]), int(data["status"]), data["body"])
    except (ValueError, TypeError, KeyError):
        return KeptAnswer("", 0, None)
