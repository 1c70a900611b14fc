"""``serve``: the HTTP API (docs/http-api.md) over this repository, for agents and orchestrators.

FastAPI and uvicorn are an optional extra (``pytest-plangraph[server]``): without them the
command says how to install them (exit 2). The server binds to loopback unless ``--host`` says
otherwise; docs/trust.md says what exposing it means.
"""

from __future__ import annotations

import argparse
import importlib
from typing import Any

from ..errors import UsageError
from .common import Output, common_options, open_plangraph

INSTALL = "pip install 'pytest-plangraph[server]'"


def register(commands: Any) -> None:
    """Add ``serve``."""
    serve = commands.add_parser(
        "serve",
        parents=[common_options()],
        help="serve the HTTP API (status, claims, patches, signed evidence) on a port",
        description="Answer the HTTP API of docs/http-api.md for this repository's plan until "
        "interrupted. Every write needs expected_plan_version and an Idempotency-Key header. "
        f"Needs the optional extra: {INSTALL}.",
    )
    serve.add_argument(
        "--host",
        default="127.0.0.1",
        help="the address to listen on (default: 127.0.0.1, this machine only; another "
        "exposes an API without authentication, see docs/trust.md)",
    )
    serve.add_argument(
        "--port", type=int, default=8000, help="the port (default: 8000; 0: any free port)"
    )
    serve.add_argument(
        "--openapi",
        action="store_true",
        help="print the OpenAPI document (docs/openapi.json) and exit",
    )
    serve.set_defaults(handler=_serve)


def _serve(args: argparse.Namespace, out: Output) -> int:
    for module in ("fastapi", "uvicorn"):
        try:
            importlib.import_module(module)
        except ImportError as exc:
            raise UsageError(
                f"plangraph serve needs {module}, which cannot be imported ({exc}); install "
                f"the optional extra: {INSTALL}"
            ) from None
    from ..server.app import openapi_document
    from ..server.running import serve
    from ..server.writes import Served

    if args.openapi:
        print(openapi_document(), end="")
        return 0
    with open_plangraph(args) as plangraph:  # a repository, a plan that lint accepts, a store
        plangraph.plan_ref()  # the plan's version is numbered before the first request
        served = Served(plangraph.root, plangraph.plan_path, plangraph.store_path)
    serve(served, args.host, args.port, as_json=out.json)
    return 0
