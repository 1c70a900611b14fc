"""``patch`` (patch-only replanning) and ``saga`` (the compensation plan): the commands an agent
or orchestrator uses to change the plan and to know what undoing it would take."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import UsageError
from .common import Output, common_options, name_text, open_plangraph, table
from .tables import printable

if TYPE_CHECKING:
    from ..judge.saga import Saga
    from ..replan import PatchResult

MAX_PATCH_FILE = 4 * 1024 * 1024


def register(commands: Any) -> None:
    """Add ``patch`` and ``saga``."""
    patch = commands.add_parser(
        "patch",
        parents=[common_options()],
        help="re-plan with a patch: add, replace or remove nodes, criteria and edges",
        description="Apply a patch (docs/plan-format.md, 'Patches'; a file holding a list is a "
        "JSON Patch, RFC 6902, over the plan's JSON form) to the plan file, keeping "
        "its comments and layout. The patched plan is linted first: errors refuse the whole "
        "patch (LINT_ERRORS, the findings listed) and the file is not touched. A node may be "
        "re-planned max_replan_rounds times (default 2) until a person grants a retry; past "
        "that the patch is refused with REPLAN_BUDGET_EXHAUSTED. Exit 0 applied, 1 refused "
        "(or PLAN_VERSION_CONFLICT), 2 bad input.",
    )
    patch.add_argument(
        "file",
        metavar="FILE",
        help="the patch, YAML or JSON ('-': stdin); a list of operations is a JSON Patch",
    )
    patch.add_argument("--by", type=name_text, required=True, help="who proposes the patch")
    patch.add_argument(
        "--expected-plan-version",
        type=int,
        required=True,
        metavar="N",
        help="the plan version the patch was written against (PLAN_VERSION_CONFLICT, exit 1, "
        "when the plan is another version now)",
    )
    patch.set_defaults(handler=_patch)

    saga = commands.add_parser(
        "saga",
        parents=[common_options(formats=("text", "json", "markdown"))],
        help="the compensation plan of the steps with side effects that ran (executes nothing)",
        description="List, downstream first (reverse topological order), the compensate action "
        "of each step with a side effect whose work has begun; irreversible steps are flagged "
        "and idempotency is noted. With NODE: that node, its children and what depends on it. "
        "Nothing is executed.",
    )
    saga.add_argument("node", metavar="NODE", nargs="?", help="roll back only this node's part")
    saga.set_defaults(handler=_saga)


def _patch(args: argparse.Namespace, out: Output) -> int:
    from ..api import PlanGraph

    raw, name = _read(args.file)
    # not open_plangraph: a plan that lint rejects may be patched (that is how it gets repaired)
    with PlanGraph.open(args.root, plan=args.plan, store=args.store) as plangraph:
        result = plangraph.patch(
            raw, by=args.by, expected_plan_version=args.expected_plan_version, name=name
        )
    out.emit(result.to_json(), _patch_text(result))
    return 0 if result.outcome == "applied" else 1


def _read(file: str) -> tuple[bytes, str]:
    if file == "-":
        if sys.stdin is None:  # the command was started with its standard input closed
            raise UsageError(
                "patch -: standard input is closed; pipe the patch in "
                "(plangraph patch - < patch.yaml) or give the path of the patch file"
            )
        return sys.stdin.buffer.read(MAX_PATCH_FILE + 1), "<stdin>"
    path = Path(file)
    if not path.is_file():
        what = "is not a file" if path.exists() else "does not exist"
        raise UsageError(f"patch file {file} {what}; give the path of a YAML or JSON patch")
    with path.open("rb") as handle:
        return handle.read(MAX_PATCH_FILE + 1), file


def _patch_text(result: PatchResult) -> str:
    nodes = ", ".join(result.nodes)
    if result.outcome == "applied":
        lines = [f"patch applied to {nodes}: plan v{result.version_before} -> "
                 f"v{result.version_after}"]  # fmt: skip
        for entry in result.invalidated:
            reasons = ", ".join(dict.fromkeys(entry["reasons"]))  # a code once however many
            lines.append(f"  invalidated {entry['node']}/{entry['criterion']} ({reasons})")
        for entry in result.dropped:
            was = f"; was {entry['was']}" if entry["was"] else ""
            lines.append(
                f"  dropped {entry['node']}/{entry['criterion']} ({entry['how']}{was}): "
                "the gate no longer checks it"
            )
        return "\n".join(lines)
    lines = [f"patch refused: {result.code} (plan v{result.version_before} unchanged)"]
    for node, rounds in result.exhausted.items():
        lines.append(
            f"  - {node}: re-planned {rounds} round(s) already; marked for a person, blocked "
            f"until `plangraph retry {node}` (narrow the goal or hand it over)"
        )
    lines += [f"  - {f.code} [{f.node or '-'}]: {f.hint} ({f.location})" for f in result.findings]
    return "\n".join(lines)


def _saga(args: argparse.Namespace, out: Output) -> int:
    with open_plangraph(args) as plangraph:
        found = plangraph.saga(args.node)
    if out.fmt == "markdown":
        print(_saga_markdown(found))
    else:
        out.emit({k: v for k, v in found.to_json().items() if k != "format"}, _saga_text(found))
    return 0


def _saga_text(found: Saga) -> str:
    scope = f" for {found.node}" if found.node else ""
    if not found.steps:
        return f"saga of {found.plan}{scope}: no step with a side effect has run; nothing to undo"
    head = f"saga of {found.plan}{scope} (nothing is executed; run the undo in this order):"
    rows = [
        [str(i), s.node, s.status, s.effect, printable(s.compensate or "-"), s.note]
        for i, s in enumerate(found.steps, 1)
    ]
    return head + "\n" + table(rows, ["#", "node", "status", "effect", "compensate", "note"])


def _saga_markdown(found: Saga) -> str:
    scope = f" for `{found.node}`" if found.node else ""
    lines = [f"# Saga of `{found.plan}`{scope}", "", "Nothing is executed; undo in this order.", ""]
    if not found.steps:
        return "\n".join([*lines, "No step with a side effect has run: nothing to undo."])
    lines += ["| # | node | status | effect | compensate | idempotent | note |",
              "| --- | --- | --- | --- | --- | --- | --- |"]  # fmt: skip
    for i, s in enumerate(found.steps, 1):
        flag = " ⚠" if s.irreversible else ""
        cells = [str(i), f"`{s.node}`{flag}", s.status, s.effect,
                 _md(printable(s.compensate or "-")),
                 "yes" if s.idempotent else "no", _md(s.note)]  # fmt: skip
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _md(text: str) -> str:
    """*text* safe in a Markdown table cell."""
    return text.replace("|", "\\|").replace("\n", " ")
