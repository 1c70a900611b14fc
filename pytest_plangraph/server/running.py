"""Running the server: bind the socket first (so ``--port 0`` can say which port it got, and a
port in use is one message), say where it listens, then hand the socket to uvicorn."""

from __future__ import annotations

import ipaddress
import json
import socket
import sys

from ..errors import UsageError
from .app import create_app
from .writes import Served


def is_loopback(host: str) -> bool:
    """Whether *host* names this machine only (``127.0.0.1``, ``::1``, ``localhost``)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def bind(host: str, port: int) -> socket.socket:
    """A listening socket on *host*:*port* (0: a free port); UsageError when it cannot be."""
    if not 0 <= port <= 65535:
        raise UsageError(f"--port {port} is not a port; give 0 to 65535 (0: any free port)")
    try:
        family = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0][0]
        return socket.create_server((host, port), family=family, backlog=128)
    except (OSError, UnicodeError) as exc:
        reason = getattr(exc, "strerror", None) or str(exc)
        raise UsageError(
            f"cannot listen on {host}:{port}: {reason}; give another --host or --port "
            "(--port 0 takes any free port)"
        ) from None


def serve(served: Served, host: str, port: int, *, as_json: bool = False) -> None:
    """Serve *served* on *host*:*port* until interrupted (Ctrl-C, SIGTERM); the first line
    printed says where it listens (*as_json*: ``{"format": 1, "url": …}``)."""
    import uvicorn

    listening = bind(host, port)
    bound = listening.getsockname()[1]
    shown = f"[{host}]" if ":" in host else host
    if not is_loopback(host):
        print(
            f"plangraph serve: warning: {host} is reachable from other machines, and the API has "
            "no authentication: anyone who reaches it can patch the plan and claim nodes "
            "(docs/trust.md, 'The HTTP API')",
            file=sys.stderr,
        )
    url = f"http://{shown}:{bound}"
    said = (
        json.dumps({"format": 1, "url": url}) if as_json else f"plangraph serve: listening on {url}"
    )
    print(said, flush=True)
    config = uvicorn.Config(create_app(served), log_level="warning", access_log=False)
    try:
        uvicorn.Server(config).run(sockets=[listening])
    finally:
        listening.close()
