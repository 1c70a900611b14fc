"""What every request shares: opening the repository for one request, and the rules of a write.

Each request opens its own :class:`~pytest_plangraph.api.PlanGraph` (one object serves one
thread; SQLite lets the readers run side by side), so the plan file is read as it is now. A
write — a claim, a patch, received evidence — runs one at a time in this server and:

1. needs an ``Idempotency-Key`` header (400 without one): the answer to a write made with a key
   is kept in the store (:mod:`pytest_plangraph.store.answers`), and the same key sent again
   with the same request gets that first answer back (header ``Idempotency-Replayed: true``)
   and writes nothing, after a restart too; sent with another request, 422
   ``IDEMPOTENCY_CONFLICT``. A claim's key is also its event's idempotency key, as
   ``plangraph claim --idempotency-key`` gives it, so the store holds one claim whatever happens
   between the write and the keeping of its answer. Refusals (4xx) are not kept: the same
   request may be sent again with the same key once the reason is gone.
2. needs ``expected_plan_version`` in its body, checked against the plan now (409
   ``PLAN_VERSION_CONFLICT`` with ``current_plan_version``): two agents that decided against the
   same version race, one wins and the other learns it must read the plan again.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from starlette.responses import JSONResponse

from ..apicheck import name_problem
from ..canonical import digest, encodes_as_utf8, non_finite_member
from ..errors import ConflictError
from ..plan.model import FORMAT_VERSION
from ..store.answers import KeptAnswer
from .problems import ProblemError, from_error

if TYPE_CHECKING:
    from ..api import PlanGraph

REPLAYED = "Idempotency-Replayed"


@dataclass
class Served:
    """The repository a server answers for (paths as ``--root``, ``--plan``, ``--store`` give
    them), and the lock its writes take one at a time."""

    root: Path | None
    plan: Path | None
    store: Path | None
    lock: threading.Lock = field(default_factory=threading.Lock)

    @contextmanager
    def open(self, plan_id: str, *, checked: bool = True) -> Iterator[PlanGraph]:
        """The repository opened for one request about plan *plan_id* (404 when another plan
        is served); *checked*: a plan that lint rejects is refused (409 ``PLAN_INVALID``)."""
        from ..api import PlanGraph

        graph = PlanGraph.open(self.root, plan=self.plan, store=self.store)
        try:
            if graph.plan.plan != plan_id:
                raise ProblemError(
                    404,
                    "PLAN_NOT_FOUND",
                    f"no plan {plan_id!r} is served here; this server serves plan "
                    f"{graph.plan.plan!r} (GET /plans/{graph.plan.plan})",
                )
            if checked:
                graph.check_plan()
            yield graph
        finally:
            graph.close()

    def write(
        self,
        plan_id: str,
        key: str | None,
        request: Any,
        action: Callable[[PlanGraph, str], dict[str, Any]],
        *,
        checked: bool = True,
    ) -> JSONResponse:
        """Carry out one write (module text): *action* gets the repository and the key, and
        returns the answer (without ``format``); *request* is what the key is kept for."""
        key = _checked_key(key)
        fingerprint = digest(plain_json(request, "the request"))
        with self.lock, self.open(plan_id, checked=False) as graph:
            kept = graph.store.kept_answer(key)
            if kept is not None:  # the first answer, whatever became of the plan since
                return _replayed(kept, fingerprint, key)
            if checked:
                graph.check_plan()
            try:
                body = {"format": FORMAT_VERSION, **action(graph, key)}
            except ConflictError as exc:
                if exc.reason != "PLAN_VERSION_CONFLICT":
                    raise
                graph.refresh()
                return from_error(exc, current_version=graph.plan_ref().version)
            kept = graph.store.keep_answer(key, KeptAnswer(fingerprint, 200, body))
        return JSONResponse(kept.body, status_code=kept.status)


def plain_json(value: Any, what: str) -> Any:
    """*value* (JSON data) when every text in it can be written as UTF-8 and every number is
    finite; a 422 problem otherwise: a text holding a lone surrogate (a JSON escape such as
    ``"\\ud800"``), which no store takes, or ``NaN``, ``Infinity`` or a number too large for
    a float (``1e400``), which Python's JSON reader takes but JSON has no value for (a patch
    would write it as the text ``"NaN"``, an event could not be read back), naming the member."""
    texts = [value] if isinstance(value, str) else []
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            texts += [k for k in item if isinstance(k, str)]
            stack += list(item.values())
        elif isinstance(item, list):
            stack += item
        elif isinstance(item, str):
            texts.append(item)
    if not all(encodes_as_utf8(text) for text in texts):
        raise ProblemError(
            422,
            "BAD_TEXT",
            f"{what} holds text that is not valid Unicode (a lone surrogate "
            "escape such as \\ud800); send names, notes and ids as UTF-8 text",
        )
    found = non_finite_member(value)
    if found is not None:
        member = found[0] or "the body"
        raise ProblemError(
            422,
            "BAD_NUMBER",
            f"{what}: {member} holds {json.dumps(found[1])}, which JSON has no value for "
            "(NaN, Infinity or a number too large for a float); send a finite number, a text "
            "or null there (nothing was written)",
            field=member,
        )
    return value


def _checked_key(key: str | None) -> str:
    if key is None:
        raise ProblemError(
            400,
            "IDEMPOTENCY_KEY_MISSING",
            "a write needs an Idempotency-Key header: a fresh unique text for each distinct "
            "request (a UUID), sent again unchanged when the request is retried",
        )
    problem = name_problem(key) if len(key) <= 200 else "longer than 200 characters"
    if problem is not None:
        raise ProblemError(400, "IDEMPOTENCY_KEY_INVALID", f"Idempotency-Key: {problem}")
    return key


def _replayed(kept: KeptAnswer, fingerprint: str, key: str) -> JSONResponse:
    if kept.request != fingerprint:
        raise ProblemError(
            422,
            "IDEMPOTENCY_CONFLICT",
            f"the Idempotency-Key {key!r} was used for another request (another path or "
            "body); nothing was written — use a fresh key for each distinct request",
        )
    return JSONResponse(kept.body, status_code=kept.status, headers={REPLAYED: "true"})
