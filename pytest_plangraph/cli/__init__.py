"""The ``plangraph`` command: a thin layer over :class:`pytest_plangraph.api.PlanGraph`.

Exit codes: 0 ok; 1 the check found a problem (lint errors, gate refused, stale evidence under
``status --check``, audit findings, a write refused by ``PLAN_VERSION_CONFLICT``); 2 bad input or
usage (one message on stderr, no traceback). :class:`PlangraphError` is caught, and an
``OSError`` that reaches the top (a path the system refuses, a full disk when printing) is told
as one message with exit 2; anything else is a bug and keeps its traceback.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import sys
from collections.abc import Sequence

from .._version import __version__
from ..canonical import encodes_as_utf8
from ..errors import ConflictError, PlangraphError
from . import (
    agent_cmds,
    attest_cmds,
    explain_cmds,
    impact_cmds,
    import_cmds,
    init_cmds,
    key_cmds,
    plan_cmds,
    report_cmds,
    serve_cmds,
    state_cmds,
    store_cmds,
)
from .common import Output


class _Parser(argparse.ArgumentParser):
    """The top-level parser: an argument no command takes is reported by that command's own
    parser (its usage line, ``plangraph COMMAND: error: …``), not by the top level."""

    commands: dict[str, argparse.ArgumentParser]

    def parse_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: None = None
    ) -> argparse.Namespace:
        parsed, extra = self.parse_known_args(args, namespace)
        if extra:
            owner = self.commands.get(getattr(parsed, "command", ""), self)
            owner.error(f"unrecognized arguments: {' '.join(extra)}")
        return parsed


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of every subcommand."""
    parser = _Parser(
        prog="plangraph",
        description="Decide from evidence which steps of a plan are done.",
        epilog="Exit codes: 0 ok, 1 a check found a problem, 2 bad input or usage.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for module in (
        init_cmds,
        plan_cmds,
        state_cmds,
        explain_cmds,
        store_cmds,
        impact_cmds,
        key_cmds,
        agent_cmds,
        report_cmds,
        attest_cmds,
        import_cmds,
        serve_cmds,
    ):
        module.register(commands)
    parser.commands = dict(commands.choices)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit code."""
    parser = build_parser()
    argv = sys.argv[1:] if argv is None else list(argv)
    _options_after_the_command(parser, argv)
    for arg in argv:
        if arg == "--":
            break
        option, _, value = arg.partition("=")
        if option.startswith("-") and value == "--":  # argparse would read it as no value
            parser.error(f"argument {option}: '--' is not a value; write `{option} VALUE`")
    args = parser.parse_args(argv)
    out = Output(getattr(args, "format", "text"))
    if (problem := _undecodable(parser, args)) is not None:
        out.error(problem)
        return 2
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
    except OSError as exc:
        return _system_refused(exc)
    return code


def _options_after_the_command(parser: argparse.ArgumentParser, argv: list[str]) -> None:
    """A command's option written before the command (``plangraph --format json status``) is a
    usage error that says where it goes; argparse would call its value an unknown command."""
    for arg in argv:
        if not arg.startswith("-"):
            return  # the command
        option = arg.partition("=")[0]
        if option in ("--format", "--plan", "--store", "--root"):
            parser.error(f"{option} goes after the command, e.g. `plangraph status {option} …`")


def _undecodable(parser: argparse.ArgumentParser, args: argparse.Namespace) -> str | None:
    """The first text argument that is not UTF-8 (the system hands such bytes over as lone
    surrogates, which no store, JSON or terminal takes), said as a problem; paths may hold any
    bytes the system allows and are not checked."""
    command = getattr(parser, "commands", {}).get(getattr(args, "command", ""), parser)
    names = {a.dest: (a.option_strings or [a.metavar or a.dest])[-1] for a in command._actions}
    for name, value in vars(args).items():
        for text in value if isinstance(value, list) else [value]:
            if isinstance(text, str) and not encodes_as_utf8(text):
                shown = text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
                return (
                    f'argument {names.get(name, name)} "{shown}" is not valid UTF-8 text; pass '
                    "names, notes and ids as UTF-8"
                )
    return None


def _system_refused(exc: OSError) -> int:
    """Tell an ``OSError`` that reached the top as one line on stderr; exit 2."""
    what = exc.strerror or str(exc)
    where = f": {exc.filename}" if exc.filename is not None else ""
    with contextlib.suppress(OSError):
        print(f"plangraph: error: {what}{where}", file=sys.stderr)
    return 2


def run() -> None:
    """Console-script entry point."""
    # A short-lived process that builds large object graphs (plans, logs): fewer, later
    # collections save the repeated full-heap scans; memory is released at exit anyway.
    gc.set_threshold(200_000, 50, 50)
    sys.exit(main())
