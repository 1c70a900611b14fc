"""``plangraph init``: write a starter plan from the repository's code and tests."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from .common import Output


def register(commands: Any) -> None:
    """Add the ``init`` subcommand."""
    init = commands.add_parser(
        "init",
        help="write a starter plangraph.yaml from the code and tests",
        description="Write a commented starter plan: one step per source module or package "
        "(its outputs), a criterion per step mapped to the test files that test it (by name "
        "and by import), consumes edges from the import graph (import cycles become related "
        "edges), one objective over them, and the $schema line for editors. Never overwrites "
        "a file. Exit 2 when the plan file exists or no Python code is found.",
    )
    init.add_argument(
        "--from-tests",
        action="store_true",
        help="only modules that some test file tests become steps",
    )
    init.add_argument(
        "--package",
        action="extend",
        nargs="+",
        default=[],
        metavar="DIR",
        help="source package directories or modules, relative to the root (repeatable; "
        "default: the packages and modules at the root and under src/)",
    )
    init.add_argument(
        "--output",
        type=Path,
        metavar="FILE",
        help="where to write the plan (default: plangraph.yaml at the repository root)",
    )
    init.add_argument("--format", choices=("text", "json"), default="text", help="output format")
    init.add_argument(
        "--root",
        type=Path,
        metavar="DIR",
        help="repository root (default: the nearest directory above holding .git)",
    )
    init.set_defaults(handler=_init)


def _init(args: argparse.Namespace, out: Output) -> int:
    from ..api import PlanGraph

    written = PlanGraph.init(
        args.root, output=args.output, packages=args.package, from_tests=args.from_tests
    )
    text = (
        f"wrote {written}\nnext: plangraph lint {_shown(written)} && "
        f"pytest --plangraph{'' if written.name == 'plangraph.yaml' else '=' + _shown(written)}"
    )
    out.emit({"plan": str(written)}, text)
    return 0


def _shown(path: Path) -> str:
    try:
        return path.relative_to(Path.cwd()).as_posix()
    except ValueError:
        return str(path)
