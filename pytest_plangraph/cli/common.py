"""What every ``plangraph`` subcommand shares: common options, opening the repository, output."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import UsageError
from ..plan.formats import FORMAT_VERSION
from .tables import table

if TYPE_CHECKING:
    from ..api import PlanGraph

__all__ = [
    "Output",
    "common_options",
    "name_text",
    "open_plangraph",
    "reading_store",
    "table",
]


def common_options(*, formats: tuple[str, ...] = ("text", "json"), plan: bool = True) -> Any:
    """A parent parser with ``--format`` (none when *formats* is empty), ``--plan``,
    ``--store`` and ``--root``."""
    parent = argparse.ArgumentParser(add_help=False)
    if formats:
        parent.add_argument(
            "--format", choices=formats, default="text", help="output format (default: text)"
        )
    if plan:
        parent.add_argument(
            "--plan",
            type=Path,
            metavar="PATH",
            help="plan file (default: plangraph.yaml at the repository root)",
        )
    parent.add_argument(
        "--store",
        type=Path,
        metavar="PATH",
        help="evidence store (default: .plangraph/store.db at the repository root, "
        "or $PLANGRAPH_STORE)",
    )
    parent.add_argument(
        "--root",
        type=Path,
        metavar="DIR",
        help="repository root (default: the nearest directory above holding .git)",
    )
    return parent


def name_text(value: str) -> str:
    """An argparse ``type`` for names and keys (``--by``, ``--idempotency-key``): the rules
    of :func:`~pytest_plangraph.apicheck.name_problem`."""
    from ..apicheck import name_problem

    problem = name_problem(value)
    if problem is not None:
        raise argparse.ArgumentTypeError(problem)
    return value


def open_plangraph(
    args: argparse.Namespace,
    *,
    reading: bool = False,
    warned: list[str] | None = None,
    kept: Callable[[PlanGraph], list[str] | None] | None = None,
) -> PlanGraph:
    """Open the repository named by the common options; a plan with lint errors is refused.
    A *reading* command's store named by ``--store`` or ``$PLANGRAPH_STORE`` must exist (see
    :func:`reading_store`), which is checked first: nothing is made for it. The warnings
    printed are added to *warned* when given. *kept*, when it gives the warning lines of a
    check of this very plan that cannot have changed since, stands for the check."""
    from ..api import PlanGraph

    plangraph = PlanGraph.open(args.root, plan=getattr(args, "plan", None), store=args.store)
    try:
        if reading:
            reading_store(plangraph, args)
        lines = None if kept is None else kept(plangraph)
        if lines is not None:
            plangraph.checked_as_kept()
        settings = plangraph.check_plan() if lines is None else []
    except BaseException:
        plangraph.close()
        raise
    for line in lines or ():
        print(line, file=sys.stderr)
        if warned is not None:
            warned.append(line)
    for finding in settings:  # the files changed under the plan: shown, not a stop
        line = (
            f"plangraph: warning: {finding.location}: {finding.code}: {finding.hint} "
            "(the command goes on; `plangraph lint` lists it)"
        )
        print(line, file=sys.stderr)
        if warned is not None:
            warned.append(line)
    return plangraph


def reading_store(
    plangraph: PlanGraph, args: argparse.Namespace, *, required: bool = False
) -> bool:
    """True when the store exists; a reading command creates none. With no store at
    a path named by ``--store`` or ``$PLANGRAPH_STORE`` (a typo would otherwise read as a
    store with nothing wrong in it), or with none where one is *required*, UsageError."""
    if plangraph.has_store():
        return True
    named = args.store is not None or bool(os.environ.get("PLANGRAPH_STORE"))
    if named or required:
        raise UsageError(
            f"there is no store at {plangraph.store_path} (no file, or an empty one); "
            "check --store and $PLANGRAPH_STORE "
            "(this command reads a store and creates none)"
        )
    return False


class Output:
    """Writes a command's result as text or as JSON carrying ``"format": 1``."""

    def __init__(self, fmt: str) -> None:
        self.fmt = fmt

    @property
    def json(self) -> bool:
        """True when the user asked for JSON."""
        return self.fmt == "json"

    def emit(self, data: dict[str, Any], text: str) -> None:
        """Print *data* as JSON or *text* as is."""
        shown = self.render(data, text)
        if shown is not None:
            print(shown)

    def render(self, data: dict[str, Any], text: str) -> str | None:
        """What :meth:`emit` prints (None: nothing)."""
        if self.json:
            return json.dumps({"format": FORMAT_VERSION, **data}, indent=2, ensure_ascii=False)
        return text or None

    def error(self, message: str, **extra: Any) -> None:
        """Report an error on stderr (and as JSON on stdout when JSON was asked for)."""
        print(f"plangraph: error: {message}", file=sys.stderr)
        if self.json:
            print(json.dumps({"format": FORMAT_VERSION, "error": message, **extra}, indent=2))
