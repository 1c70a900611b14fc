"""``plangraph lint`` (text, JSON or SARIF 2.1.0) and ``plangraph schema``: the plan file itself."""

from __future__ import annotations

import argparse
import contextlib
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .common import Output, common_options

if TYPE_CHECKING:
    from ..api import PlanGraph
    from ..lint.findings import Finding


def register(commands: Any) -> None:
    """Add the plan subcommands."""
    lint = commands.add_parser(
        "lint",
        parents=[common_options(formats=("text", "json", "sarif"), plan=False)],
        help="check the plan's structure, types and side effects",
        description="Check the plan against every lint rule (docs/lint-codes.md). "
        "Exit 0 when clean or warnings only, 1 on any error, 2 when the plan cannot be read.",
    )
    lint.add_argument(
        "plan", nargs="?", type=Path, metavar="PLAN", help="plan file (default: plangraph.yaml)"
    )
    lint.set_defaults(handler=_lint)
    schema = commands.add_parser(
        "schema",
        help="print the JSON Schema of the plan format",
        description="Print the JSON Schema of plan files (for editors and validators).",
    )
    schema.add_argument(
        "--format", choices=("json",), default="json", help="output format (JSON only)"
    )
    schema.set_defaults(handler=_schema)


def _lint(args: argparse.Namespace, out: Output) -> int:
    from ..api import PlanGraph
    from ..lint.findings import has_errors

    with PlanGraph.open(args.root, plan=args.plan, store=args.store) as plangraph:
        findings = plangraph.lint()
        data = {"plan": plangraph.plan.plan, "findings": [f.to_json() for f in findings]}
        if args.format == "sarif":
            print(json.dumps(_sarif(plangraph, findings), indent=2, ensure_ascii=False))
            return 1 if has_errors(findings) else 0
    errors = sum(f.severity == "error" for f in findings)
    warnings = len(findings) - errors
    lines = [f"{f.location}: {f.severity} {f.code}{_node(f.node)}: {f.hint}" for f in findings]
    lines.append(f"{data['plan']}: {errors} error(s), {warnings} warning(s)")
    out.emit(data, "\n".join(lines))
    return 1 if has_errors(findings) else 0


def _sarif(plangraph: PlanGraph, findings: list[Finding]) -> dict[str, Any]:
    """The SARIF log of *findings*, with the plan's path relative to the repository root."""
    from .._version import __version__
    from ..lint.findings import LINT_CODES
    from ..report.sarif import sarif

    uris = {}
    if plangraph.plan_path is not None:
        with contextlib.suppress(ValueError):
            relative = plangraph.plan_path.resolve().relative_to(plangraph.root.resolve())
            uris[plangraph.loaded.file] = relative.as_posix()
    return sarif(findings, LINT_CODES, version=__version__, uris=uris)


def _node(node: str | None) -> str:
    return f" [{node}]" if node else ""


def _schema(args: argparse.Namespace, out: Output) -> int:
    from ..plan.boundary import plan_json_schema

    print(json.dumps(plan_json_schema(), indent=2, ensure_ascii=False))
    return 0
