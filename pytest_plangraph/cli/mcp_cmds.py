"""``mcp``: serve the gate to MCP clients (coding agents) over stdio (docs/mcp.md).

The server needs the optional extra ``pytest-plangraph[mcp]`` (the official ``mcp`` SDK);
without it the command says how to install it. The repository is opened once before serving,
so a missing root or a plan that lint rejects is a usage error (exit 2) and no server starts.
"""

from __future__ import annotations

import argparse
from typing import Any

from ..errors import UsageError
from .common import Output, common_options

INSTALL_HINT = (
    "`plangraph mcp` needs the MCP SDK, which is not installed; install the extra with "
    "`pip install 'pytest-plangraph[mcp]'`"
)


def register(commands: Any) -> None:
    """Add the ``mcp`` subcommand."""
    server = commands.add_parser(
        "mcp",
        parents=[common_options(formats=())],
        help="serve status, explain, next, impact, claim and propose_patch to MCP clients",
        description="Run an MCP server over stdio for coding agents: tools status, explain, "
        "next, impact, claim and propose_patch, resources plangraph://plan and "
        "plangraph://status. No tool records evidence or approvals. Needs the extra "
        "pytest-plangraph[mcp].",
    )
    server.set_defaults(handler=_mcp)


def _mcp(args: argparse.Namespace, out: Output) -> int:
    try:
        from ..mcp.server import serve
    except ModuleNotFoundError as exc:  # only the SDK's absence; any other is a bug
        if (exc.name or "").partition(".")[0] not in ("mcp", "mcp_types"):
            raise
        raise UsageError(INSTALL_HINT) from None
    from ..mcp.answers import ServedRepository

    repo = ServedRepository.resolve(args.root, args.plan, args.store)
    serve(repo)
    return 0
