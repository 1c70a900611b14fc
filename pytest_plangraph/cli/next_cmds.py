"""``next``: the nodes ready to work on, in topological order, and what to run for each."""

from __future__ import annotations

import argparse
from typing import Any

from .common import Output, common_options, open_plangraph


def register(commands: Any) -> None:
    """Add the ``next`` subcommand."""
    found = commands.add_parser(
        "next",
        parents=[common_options()],
        help="the nodes ready to work on, and what to run for each",
        description="List, in topological order, the nodes ready to work on: every strong "
        "prerequisite completed, the node itself neither completed, cancelled nor blocked. "
        "Each comes with its status and, as `plangraph explain` says, the criteria still "
        "missing and the tests or commands that settle them.",
    )
    found.set_defaults(handler=_next)


def _next(args: argparse.Namespace, out: Output) -> int:
    with open_plangraph(args, reading=True) as plangraph:
        found = plangraph.next()
    out.emit(found.to_json(), found.text())
    return 0
