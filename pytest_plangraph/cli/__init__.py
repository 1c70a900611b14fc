"""The ``plangraph`` command: a thin layer over :class:`pytest_plangraph.api.PlanGraph`.

Exit codes: 0 ok; 1 the check found a problem (lint errors, gate refused, stale evidence under
``status --check``, audit findings, a write refused by ``PLAN_VERSION_CONFLICT``); 2 bad input or
usage (one message on stderr, no traceback). :class:`PlangraphError` is caught, and an
``OSError`` that reaches the top (a path the system refuses, a full disk when printing) is told
as one message with exit 2; anything else is a bug and keeps its traceback.
"""

from __future__ import annotations

import contextlib
import gc
import sys

from ..errors import ConflictError, PlangraphError, cut

TYPE_CHECKING = False
if TYPE_CHECKING:  # argparse is imported where a parser is built: a kept answer needs none
    import argparse
    from collections.abc import Sequence

MODULES = (
    "init_cmds",
    "plan_cmds",
    "state_cmds",
    "explain_cmds",
    "next_cmds",
    "store_cmds",
    "impact_cmds",
    "key_cmds",
    "agent_cmds",
    "report_cmds",
    "attest_cmds",
    "import_cmds",
    "mcp_cmds",
    "serve_cmds",
)
"""The command modules, in the order ``plangraph --help`` lists their commands; each has a
``register(commands)`` that adds its subcommands."""

COMMANDS = {
    "init": "init_cmds",
    "lint": "plan_cmds",
    "schema": "plan_cmds",
    **dict.fromkeys(
        ("status", "verify", "claim", "approve", "revoke", "retry", "cancel", "history"),
        "state_cmds",
    ),
    "explain": "explain_cmds",
    **dict.fromkeys(("audit", "head", "export", "merge"), "store_cmds"),
    "impact": "impact_cmds",
    "keygen": "key_cmds",
    "patch": "agent_cmds",
    "saga": "agent_cmds",
    "report": "report_cmds",
    "attest": "attest_cmds",
    "import": "import_cmds",
    "next": "next_cmds",
    "mcp": "mcp_cmds",
    "serve": "serve_cmds",
}
"""Which module registers each command: ``plangraph CMD`` imports that module alone (a
command's imports are its own cost); ``--help``, ``--version`` and a name that is not a
command import every module, so the list and the "invalid choice" message name them all.
A test checks this table against what the modules register."""


def _parser_class() -> type[argparse.ArgumentParser]:
    """The top-level parser's class (made here: :mod:`argparse` is imported when a parser is
    built, not by a kept answer)."""
    import argparse

    class Parser(argparse.ArgumentParser):
        """The top-level parser: an argument no command takes is reported by that command's
        own parser (its usage line, ``plangraph COMMAND: error: …``), not by the top level."""

        commands: dict[str, argparse.ArgumentParser]

        def parse_args(  # type: ignore[override]
            self, args: Sequence[str] | None = None, namespace: None = None
        ) -> argparse.Namespace:
            parsed, extra = self.parse_known_args(args, namespace)
            if extra:
                owner = self.commands.get(getattr(parsed, "command", ""), self)
                owner.error(f"unrecognized arguments: {' '.join(extra)}")
            return parsed

    return Parser


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The argument parser of every subcommand, or of *command* alone when it is one
    (:data:`COMMANDS`)."""
    import importlib

    from .._version import __version__

    parser = _parser_class()(
        prog="plangraph",
        description="Decide from evidence which steps of a plan are done.",
        epilog="Exit codes: 0 ok, 1 a check found a problem, 2 bad input or usage.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    names = (COMMANDS[command],) if command in COMMANDS else MODULES
    for name in names:
        importlib.import_module(f"{__name__}.{name}").register(commands)
    parser.commands = dict(commands.choices)  # type: ignore[attr-defined]
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit code."""
    argv = sys.argv[1:] if argv is None else list(argv)
    kept = None
    if argv[:1] == ["impact"]:  # a repeated question: its kept answer, without a parser
        from .impact_kept import kept_impact

        try:
            kept = kept_impact(argv[1:])
        except BrokenPipeError:
            sys.stderr.close()
            return 0
        except OSError as exc:
            return _system_refused(exc)
        if isinstance(kept, int):
            return kept
    from .common import Output

    parser = build_parser(_command_named(argv))
    _options_after_the_command(parser, argv)
    for arg in argv:
        if arg == "--":
            break
        option, _, value = arg.partition("=")
        if option.startswith("-") and value == "--":  # argparse would read it as no value
            parser.error(f"argument {option}: '--' is not a value; write `{option} VALUE`")
    args = parser.parse_args(argv)
    if kept is not None:  # what the look for a kept answer read, for the command to go on from
        args.kept_key = kept
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


def _command_named(argv: Sequence[str]) -> str | None:
    """The command *argv* names (its first argument, when no option comes before it: an
    option there is ``--help``, ``--version`` or a usage error, which every module serves)."""
    return argv[0] if argv and not argv[0].startswith("-") else None


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
    from ..canonical import encodes_as_utf8

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
    where = f": {cut(str(exc.filename))}" if exc.filename is not None else ""
    with contextlib.suppress(OSError):
        print(f"plangraph: error: {what}{where}", file=sys.stderr)
    return 2


def run() -> None:
    """Console-script entry point."""
    # A short-lived process that builds large object graphs (plans, logs): fewer, later
    # collections save the repeated full-heap scans; memory is released at exit anyway.
    gc.set_threshold(200_000, 50, 50)
    from ..bundle import install

    install()  # the package's modules read from one file from now on
    sys.exit(main())
