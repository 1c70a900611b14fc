"""``import``: a starter plan from what agents already write (spec-kit, task-master)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from .attest_cmds import read_text
from .common import Output
from .writing import standard_output, write_text


def register(commands: Any) -> None:
    """Add the ``import`` subcommand."""
    command = commands.add_parser(
        "import",
        help="make a starter plan from a spec-kit tasks.md or a task-master tasks.json",
        description="Read a spec-kit tasks.md or a task-master tasks.json and write a starter "
        "plan: one node per task (phases and parent tasks as milestones), dependencies as "
        "`requires` edges, acceptance text as criteria with `approval` verifiers (a `test` "
        "verifier where a test file is named) to fill in. What could not be mapped is listed "
        "on stderr (in JSON under `unmapped`). The plan is linted; an existing --output file "
        "is never overwritten.",
    )
    command.add_argument(
        "source",
        choices=("spec-kit", "task-master"),
        metavar="SOURCE",
        help="spec-kit or task-master",
    )
    command.add_argument("file", type=Path, metavar="FILE", help="tasks.md or tasks.json")
    command.add_argument("--format", choices=("text", "json"), default="text")
    command.add_argument(
        "--output", "-o", type=Path, metavar="FILE", help="write the plan here (default: stdout)"
    )
    command.add_argument("--tag", metavar="TAG", help="task-master tag to read (default: master)")
    command.add_argument("--plan-id", metavar="ID", help="the plan's id (default: from the file)")
    command.set_defaults(handler=_import)


def _import(args: argparse.Namespace, out: Output) -> int:
    from ..api import PlanGraph

    text = read_text(args.file)
    result = PlanGraph.import_tasks(
        args.source, text, name=str(args.file), tag=args.tag, plan_id=args.plan_id
    )
    errors = [f for f in result.findings if f.severity == "error"]
    if errors:  # never written: a starter plan must lint clean
        lines = ["the imported plan does not lint clean; nothing written:"]
        lines += [f"  {f}" for f in result.findings]
        out.emit(result.to_json(), "\n".join(lines))
        return 1
    if args.output is not None:
        write_text(args.output, result.text, overwrite=False)
    for line in result.unmapped:
        print(f"plangraph: unmapped: {line}", file=sys.stderr)
    for finding in result.findings:
        print(f"plangraph: lint: {finding}", file=sys.stderr)
    summary = (
        f"imported {result.nodes} node(s) and {result.edges} edge(s) from {args.file}"
        + (f" into {args.output}" if args.output is not None else "")
        + f"; {len(result.unmapped)} item(s) not mapped"
    )
    if out.json:
        out.emit(
            {**result.to_json(), "output": None if args.output is None else str(args.output)}, ""
        )
    elif args.output is None:
        standard_output("the plan").write(result.text)
        print(summary, file=sys.stderr)
    else:
        print(summary)
    return 0
