"""``explain``: why a node is not completed, in plain words, and what to run to fix it."""

from __future__ import annotations

import argparse
from typing import Any

from .common import Output, common_options, open_plangraph


def register(commands: Any) -> None:
    """Add the ``explain`` subcommand."""
    explain = commands.add_parser(
        "explain",
        parents=[common_options()],
        help="why a node is not completed, and what to run to fix it",
        description="Tell in plain words why NODE is not completed: the tests that did not "
        "pass and how to run them, the verify, approve or retry command, the upstream nodes "
        "and children to finish first, and why evidence went stale.",
    )
    explain.add_argument("node", metavar="NODE")
    explain.set_defaults(handler=_explain)


def _explain(args: argparse.Namespace, out: Output) -> int:
    with open_plangraph(args, reading=True) as plangraph:
        found = plangraph.explain(args.node)
    out.emit(found.to_json(), found.text())
    return 0
