"""The ``plangraph`` command: a thin layer over :class:`pytest_plangraph.api.PlanGraph`.

Exit codes: 0 ok; 1 the check found a problem (lint errors, gate refused, stale evidence under
``status --check``, audit findings, a write refused by ``PLAN_VERSION_CONFLICT``); 2 bad input or
usage (one message on stderr, no traceback). Only :class:`PlangraphError` is caught: anything else
is a bug and keeps its traceback.
"""

from __future__ import annotations

import argparse
import gc
import sys
from collections.abc import Sequence

from .. import __version__
from ..errors import ConflictError, PlangraphError
from . import impact_cmds, plan_cmds, state_cmds, store_cmds
from .common import Output


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of every subcommand."""
    parser = argparse.ArgumentParser(
        prog="plangraph",
        description="Decide from evidence which steps of a plan are done.",
        epilog="Exit codes: 0 ok, 1 a check found a problem, 2 bad input or usage.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for module in (plan_cmds, state_cmds, store_cmds, impact_cmds):
        module.register(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    out = Output(getattr(args, "format", "text"))
    try:
        code: int = args.handler(args, out)
    except ConflictError as exc:
        out.error(str(exc), reason=exc.reason)
        return exc.exit_code
    except PlangraphError as exc:
        out.error(str(exc))
        return exc.exit_code
    except BrokenPipeError:
        sys.stderr.close()
        return 0
    except KeyboardInterrupt:
        print("plangraph: interrupted", file=sys.stderr)
        return 130
    return code


def run() -> None:
    """Console-script entry point."""
    # A short-lived process that builds large object graphs (plans, logs): fewer, later
    # collections save the repeated full-heap scans; memory is released at exit anyway.
    gc.set_threshold(200_000, 50, 50)
    sys.exit(main())
