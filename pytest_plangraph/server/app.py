"""The routes of the HTTP API: each one a few lines over one :class:`PlanGraph` method, answering
with the JSON of the matching ``plangraph … --format json`` command (docs/http-api.md)."""

from __future__ import annotations

import json
import logging
from typing import TYPE_CHECKING, Annotated, Any

from fastapi import Body, FastAPI, Header, Request
from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException
from starlette.responses import JSONResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from .._version import __version__
from ..errors import PlanError, PlangraphError
from ..plan.model import FORMAT_VERSION
from .bodies import ChangeBody, ClaimBody, EvidenceBody, ImpactBody, Problem, VerifyBody
from .problems import MEDIA_TYPE, ProblemError, from_error, problem
from .writes import Served, plain_json

if TYPE_CHECKING:
    from ..api import PlanGraph

MAX_BODY = 4 * 1024 * 1024
"""The largest request body taken (as ``plangraph patch`` reads at most 4 MiB of a patch)."""

LOG = logging.getLogger("plangraph.serve")

PATCH_NAME = "the request's patch"
"""What messages call the patch of ``POST /plans/{id}/changes``."""

_ERRORS: dict[int | str, dict[str, Any]] = {
    status: {"model": Problem, "content": {MEDIA_TYPE: {}}, "description": why}
    for status, why in (
        (404, "No plan of that id is served"),
        (409, "The plan has lint errors, or the store refuses to be read"),
        (422, "A body that does not fit, or names what the plan does not have"),
        (503, "The store cannot be opened"),
    )
}
_WRITE_ERRORS: dict[int | str, dict[str, Any]] = {
    **_ERRORS,
    400: {"model": Problem, "content": {MEDIA_TYPE: {}}, "description": "No Idempotency-Key"},
    409: {
        "model": Problem,
        "content": {MEDIA_TYPE: {}},
        "description": "PLAN_VERSION_CONFLICT (with current_plan_version), or a plan with "
        "lint errors",
    },
}


def _answer(said: str, errors: dict[int | str, dict[str, Any]]) -> dict[int | str, Any]:
    """The documented answers of a route: 200 as *said*, and its problems."""
    return {200: {"description": said}, **errors}


KEY_HEADER = Header(
    alias="Idempotency-Key",
    description="Required on writes: a fresh unique text per distinct request, sent again "
    "unchanged on a retry (the first answer comes back, nothing is written twice).",
)


def create_app(served: Served | None = None) -> FastAPI:
    """The FastAPI application over the repository *served* (none: only for the OpenAPI
    document, which does not depend on it)."""
    app = FastAPI(
        title="pytest-plangraph",
        version=__version__,
        description="Decide from evidence which plan steps are done: the HTTP API of "
        "`plangraph serve` (docs/http-api.md).",
    )
    app.add_middleware(_Bounded)
    _handlers(app)
    _reads(app, served)
    _writes(app, served)
    return app


def _repo(served: Served | None) -> Served:
    assert served is not None, "create_app(None) serves only the OpenAPI document"
    return served


def _reads(app: FastAPI, served: Served | None) -> None:
    @app.get(
        "/plans/{plan_id}",
        responses=_answer("`plan` (id, version, digest) and `document` (the plan)", _ERRORS),
        summary="The plan and its version",
    )
    def get_plan(plan_id: str) -> dict[str, Any]:
        with _repo(served).open(plan_id, checked=False) as graph:
            ref = graph.plan_ref(create=False)
            document = graph.plan.to_json(by_alias=True, exclude_unset=True)
        return {"format": FORMAT_VERSION, "plan": ref.to_json(), "document": document}

    @app.get(
        "/plans/{plan_id}/status",
        responses=_answer("As `plangraph status --format json`", _ERRORS),
        summary="Every node's state",
    )
    def get_status(plan_id: str) -> dict[str, Any]:
        with _repo(served).open(plan_id) as graph:
            fold = graph.fold()
            data = graph.status_json(fold, graph.status(fold))
        return {"format": FORMAT_VERSION, **data}

    @app.get(
        "/plans/{plan_id}/next",
        responses=_answer("As `plangraph next --format json`", _ERRORS),
        summary="The nodes ready to work on, in topological order, with what to run",
    )
    def get_next(plan_id: str) -> dict[str, Any]:
        with _repo(served).open(plan_id) as graph:
            agenda = graph.next()
        return {"format": FORMAT_VERSION, **agenda.to_json()}

    @app.post(
        "/plans/{plan_id}/impact-analysis",
        responses=_answer("As `plangraph impact --format json`", _ERRORS),
        summary="What changed and which evidence it invalidates",
    )
    def impact(plan_id: str, body: Annotated[ImpactBody | None, Body()] = None) -> dict[str, Any]:
        asked = body or ImpactBody()
        plain_json(asked.model_dump(), "the request")
        with _repo(served).open(plan_id) as graph:
            report = graph.impact(asked.since, commits=asked.commits)
        return {"format": FORMAT_VERSION, **report.to_json()}

    @app.post(
        "/plans/{plan_id}/verify",
        responses=_answer("As `plangraph verify --dry-run --format json`", _ERRORS),
        summary="Run the verifiers that need no pytest; records nothing",
    )
    def verify(plan_id: str, body: Annotated[VerifyBody | None, Body()] = None) -> dict[str, Any]:
        asked = body or VerifyBody()
        plain_json(asked.model_dump(), "the request")
        with _repo(served).open(plan_id) as graph:
            found = graph.verify(asked.nodes, by=asked.by, record=False)
        return {"format": FORMAT_VERSION, "evidence": [e.to_json() for e in found]}


def _writes(app: FastAPI, served: Served | None) -> None:
    @app.post(
        "/plans/{plan_id}/claims",
        responses=_answer(
            "The gate's decision, as `plangraph claim --format json` (a refusal too)",
            _WRITE_ERRORS,
        ),
        summary="Claim a node is done",
    )
    def claim(
        plan_id: str, body: ClaimBody, key: Annotated[str | None, KEY_HEADER] = None
    ) -> Response:
        def action(graph: PlanGraph, key: str) -> dict[str, Any]:
            decision = graph.claim(
                body.node,
                by=body.by,
                idempotency_key=key,
                expected_plan_version=body.expected_plan_version,
            )
            return decision.to_json()

        return _repo(served).write(plan_id, key, _asked("claims", body), action)

    @app.post(
        "/plans/{plan_id}/changes",
        responses=_answer(
            "As `plangraph patch --format json`: applied, or refused whole", _WRITE_ERRORS
        ),
        summary="Re-plan with a patch (applied, or refused whole)",
    )
    def change(
        plan_id: str, body: ChangeBody, key: Annotated[str | None, KEY_HEADER] = None
    ) -> Response:
        patch = body.patch
        text = patch if isinstance(patch, str) else json.dumps(patch, ensure_ascii=False)

        def action(graph: PlanGraph, key: str) -> dict[str, Any]:
            try:
                result = graph.patch(
                    text.encode("utf-8"),
                    by=body.by,
                    expected_plan_version=body.expected_plan_version,
                    name=PATCH_NAME,
                )
            except PlanError as exc:  # the patch itself, not the plan, when it names the patch
                if any(problem.file == PATCH_NAME for problem in exc.problems):
                    raise ProblemError(422, "BAD_PATCH", str(exc)) from None
                raise
            return result.to_json()

        # a plan that lint rejects may be patched: that is how it gets repaired
        return _repo(served).write(plan_id, key, _asked("changes", body), action, checked=False)

    @app.post(
        "/plans/{plan_id}/evidence",
        responses={
            **_answer("`event`: the event as stored", _WRITE_ERRORS),
            403: {
                "model": Problem,
                "content": {MEDIA_TYPE: {}},
                "description": "Not signed by a key trusted for evidence: nothing stored",
            },
        },
        summary="Store one evidence event signed by a key trusted for role ci",
    )
    def evidence(
        plan_id: str, body: EvidenceBody, key: Annotated[str | None, KEY_HEADER] = None
    ) -> Response:
        def action(graph: PlanGraph, key: str) -> dict[str, Any]:
            stored = graph.receive_evidence(
                body.event, expected_plan_version=body.expected_plan_version
            )
            return {"event": stored.to_json()}

        return _repo(served).write(plan_id, key, _asked("evidence", body), action)


def _asked(what: str, body: Any) -> dict[str, Any]:
    """What an idempotency key is kept for: the request's path and body (checked as sent:
    the JSON form would turn NaN into null)."""
    plain_json(body.model_dump(), "the request")
    return {"request": what, "body": body.model_dump(mode="json")}


def _handlers(app: FastAPI) -> None:
    @app.exception_handler(ProblemError)
    def _problem(request: Request, exc: ProblemError) -> JSONResponse:
        return problem(exc.status, exc.code, exc.detail, **exc.extra)

    @app.exception_handler(PlangraphError)
    def _plangraph(request: Request, exc: PlangraphError) -> JSONResponse:
        return from_error(exc)

    @app.exception_handler(RequestValidationError)
    def _invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        errors = list(exc.errors())
        kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
        if kind != "application/json" and any(e.get("loc") == ("body",) for e in errors):
            return problem(
                415,
                "UNSUPPORTED_MEDIA_TYPE",
                f"the body is sent as {kind or 'no media type'}; send it as JSON with "
                "Content-Type: application/json",
            )
        if any(e.get("type") == "json_invalid" for e in errors):
            return problem(400, "BAD_JSON", "the request body is not JSON: " + _said(errors))
        return problem(422, "BAD_REQUEST", _said(errors))

    @app.exception_handler(HTTPException)
    def _http(request: Request, exc: HTTPException) -> JSONResponse:
        code = _HTTP_CODES.get(exc.status_code, "HTTP_ERROR")
        return problem(exc.status_code, code, f"{request.method} {request.url.path}: {exc.detail}")

    @app.exception_handler(OSError)
    def _system(request: Request, exc: OSError) -> JSONResponse:
        what = exc.strerror or str(exc)
        where = f": {exc.filename}" if exc.filename is not None else ""
        return problem(503, "SYSTEM_REFUSED", f"the system refused: {what}{where}")

    @app.exception_handler(Exception)
    def _bug(request: Request, exc: Exception) -> JSONResponse:
        LOG.error("a bug answering %s %s", request.method, request.url.path, exc_info=exc)
        return problem(
            500,
            "INTERNAL_ERROR",
            "plangraph serve failed on this request (a bug: its log holds the traceback; "
            "please report it)",
        )


_HTTP_CODES = {
    400: "BAD_JSON",  # the body could not be parsed (JSON nested too deep, not UTF-8 …)
    404: "NOT_FOUND",
    405: "METHOD_NOT_ALLOWED",
    413: "BODY_TOO_LARGE",
}

TOO_LARGE = f"a request body of at most {MAX_BODY} bytes is taken"


class _Bounded:
    """Refuse a request body larger than :data:`MAX_BODY` (413): at once when its
    ``Content-Length`` says so, else as soon as that many bytes have come (a chunked body)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        length = dict(scope["headers"]).get(b"content-length", b"0")
        if not length.isdigit() or int(length) > MAX_BODY:
            if length.isdigit():
                answer = problem(413, "BODY_TOO_LARGE", TOO_LARGE)
            else:
                answer = problem(400, "BAD_REQUEST", "a Content-Length that is not a number")
            await answer(scope, receive, send)
            return
        seen = 0

        async def bounded() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > MAX_BODY:  # FastAPI passes an HTTPException raised here on
                    raise HTTPException(413, TOO_LARGE)
            return message

        await self.app(scope, bounded, send)


def _said(errors: list[Any]) -> str:
    """Validation errors as ``where: what`` lines joined by ``; ``."""
    said = []
    for error in errors[:10]:
        where = ".".join(str(part) for part in error.get("loc", ()) if part != "body") or "body"
        said.append(f"{where}: {error.get('msg', 'invalid')}")
    return "; ".join(said)


def openapi_document() -> str:
    """The OpenAPI document of the API, as ``docs/openapi.json`` keeps it."""
    return json.dumps(create_app().openapi(), indent=2, ensure_ascii=False) + "\n"


__all__ = ["create_app", "openapi_document"]
