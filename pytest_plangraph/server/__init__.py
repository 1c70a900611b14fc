"""``plangraph serve``: the HTTP API for agents and orchestrators (issue 20 §2), a thin layer over
:class:`~pytest_plangraph.api.PlanGraph` (FastAPI and uvicorn, the optional extra ``server``).

:mod:`.app` holds the routes, :mod:`.bodies` the request and answer models, :mod:`.problems` the
RFC 9457 problem answers every error becomes, :mod:`.writes` the rules every write follows
(``expected_plan_version``, the ``Idempotency-Key`` header and its kept answer, one write at a
time), and :mod:`.running` binds the socket and runs uvicorn. ``docs/http-api.md`` is the
user's version; ``docs/openapi.json`` the generated document.
"""
