"""Every error of the HTTP API as one RFC 9457 problem answer (``application/problem+json``:
``type``, ``title``, ``status``, ``detail``, and our ``code``), never a traceback.

=====  ======================================================================================
400    the request cannot be read: no ``Idempotency-Key`` on a write, a body that is not JSON
413    a body larger than 4 MiB; 415 a body not sent as ``application/json``
403    evidence without a signature the gate trusts (nothing stored)
404    no plan of that id is served, or no such path
409    ``PLAN_VERSION_CONFLICT`` (with ``current_plan_version``); the repository's plan has
       lint errors (``PLAN_INVALID``); the store refuses to be read (``STORE_TAMPERED``)
422    a body that does not fit its model, ``NaN`` or an infinity in it (``BAD_NUMBER``, with
       ``field``), a patch that cannot be read (``BAD_PATCH``), a node
       that is not in the plan, an idempotency key sent with another request
       (``IDEMPOTENCY_CONFLICT``), an unknown revision
503    the store cannot be opened or written (its message says why), or a patch was recorded
       but the plan file could not be replaced (``SYSTEM_REFUSED``: how to finish)
500    a bug: the problem says so, the traceback goes to the server's log only
=====  ======================================================================================
"""

from __future__ import annotations

from typing import Any

from starlette.responses import JSONResponse

from ..errors import (
    ConflictError,
    GitError,
    PlanError,
    PlangraphError,
    PlanMoveError,
    SignatureError,
    StoreError,
    StoreTamperedError,
)
from ..vcs.spawn import GitTimeoutError

MEDIA_TYPE = "application/problem+json"

TITLES = {
    400: "Bad request",
    403: "Not trusted",
    404: "Not found",
    405: "Method not allowed",
    409: "Conflict",
    413: "Request body too large",
    415: "Unsupported media type",
    422: "Unprocessable request",
    500: "Internal error",
    503: "Store unavailable",
}
CODE_TITLES = {"GIT_TIMEOUT": "Repository unavailable"}
"""The title of a reason whose status's title would not fit it."""


class ProblemError(Exception):
    """A problem found by the HTTP layer itself (a missing header, an unknown plan id)."""

    def __init__(self, status: int, code: str, detail: str, **extra: Any) -> None:
        self.status = status
        self.code = code
        self.detail = detail
        self.extra = extra
        super().__init__(detail)


def problem(status: int, code: str, detail: str, **extra: Any) -> JSONResponse:
    """The problem answer of *status* with reason *code* and *detail*."""
    body = {
        "type": f"urn:plangraph:{code}",
        "title": CODE_TITLES.get(code) or TITLES.get(status, "Error"),
        "status": status,
        "detail": detail,
        "code": code,
        **{k: v for k, v in extra.items() if v is not None},
    }
    return JSONResponse(body, status_code=status, media_type=MEDIA_TYPE)


def from_error(exc: PlangraphError, *, current_version: int | None = None) -> JSONResponse:
    """The problem answer of an error the API raised on purpose."""
    message = str(exc)
    if isinstance(exc, SignatureError):
        return problem(403, exc.reason, message)
    if isinstance(exc, ConflictError):
        if exc.reason == "PLAN_VERSION_CONFLICT":
            return problem(409, exc.reason, message, current_plan_version=current_version)
        return problem(422, exc.reason, message)
    if isinstance(exc, StoreTamperedError):
        return problem(409, exc.reason, message)
    if isinstance(exc, PlanMoveError):  # recorded, and the message says how to finish
        return problem(503, "SYSTEM_REFUSED", message)
    if isinstance(exc, StoreError):
        return problem(503, "STORE_UNAVAILABLE", message)
    if isinstance(exc, PlanError):
        return problem(
            409,
            "PLAN_INVALID",
            f"the plan in the repository cannot be used: {message}; repair it (a patch may)",
        )
    if isinstance(exc, GitTimeoutError):  # the repository was not read in time: not the request
        return problem(503, "GIT_TIMEOUT", message)
    if isinstance(exc, GitError):
        return problem(422, "GIT_ERROR", message)
    return problem(422, "BAD_REQUEST", message)
