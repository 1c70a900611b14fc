"""``status``, ``verify``, ``claim``, ``approve``, ``revoke``, ``retry``, ``cancel``,
``history``: evidence and the gate."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Collection, Mapping
from typing import TYPE_CHECKING, Any

from .common import Output, common_options, name_text, open_plangraph, reading_store, table
from .report_formats import offer_plugin_formats, plugin_report
from .tables import patched, printable

if TYPE_CHECKING:
    from ..api import PlanGraph
    from ..judge.logfold import LogFold
    from ..judge.states import NodeState, PlanState, Reason


def register(commands: Any) -> None:
    """Add the evidence and gate subcommands."""
    common = common_options()
    status = commands.add_parser(
        "status",
        parents=[common_options()],  # a --format of its own: it takes plugin formats
        help="the state table of every node",
        description="Derive every node's status from the plan, the evidence and the files now.",
    )
    status.add_argument(
        "--check",
        action="store_true",
        help="exit 1 when a claimed node is not completed or a once-satisfied node no longer is",
    )
    status.set_defaults(handler=_status)
    offer_plugin_formats(status)

    verify = commands.add_parser(
        "verify",
        parents=[common],
        help="run the schema, artifact, command and plug-in verifiers and record evidence",
        description="Run every verifier that needs no pytest (test criteria are verified by "
        "`pytest --plangraph`; approvals by `plangraph approve`).",
    )
    verify.add_argument("nodes", nargs="*", metavar="NODE", help="only these nodes")
    verify.add_argument(
        "--by", type=name_text, help="who records the evidence (default: $PLANGRAPH_ACTOR)"
    )
    verify.add_argument(
        "--dry-run",
        action="store_true",
        help="run the verifiers and print what they find, recording nothing",
    )
    verify.set_defaults(handler=_verify)

    claim = commands.add_parser(
        "claim",
        parents=[common],
        help="claim a node is done; the gate answers",
        description="Record a claim and print the gate's decision. Exit 0 when the node is "
        "completed, 1 when the claim is refused.",
    )
    claim.add_argument("node", metavar="NODE")
    claim.add_argument(
        "--by", type=name_text, required=True, help="who claims it (a person or an agent)"
    )
    claim.add_argument(
        "--idempotency-key",
        type=name_text,
        help="the same key twice records one claim (a key recorded for another node is "
        "refused: IDEMPOTENCY_CONFLICT, exit 1)",
    )
    claim.add_argument(
        "--expected-plan-version",
        type=int,
        metavar="N",
        help="refuse (PLAN_VERSION_CONFLICT, exit 1) unless the store's plan version is N",
    )
    claim.set_defaults(handler=_claim)

    for name, (helptext, target, done) in _DECISIONS.items():
        sub = commands.add_parser(name, parents=[common], help=helptext, description=helptext)
        sub.add_argument(target, metavar=target.upper().replace("REF", "NODE/CRITERION"))
        sub.add_argument("--by", type=name_text, required=True, help="who decides")
        sub.add_argument("--note", default="", help="why")
        if name == "approve":
            sub.add_argument(
                "--role",
                type=name_text,
                help="the role approving (default: the criterion's role); with keys "
                "configured, it counts only when signed by a key trusted for that role",
            )
        sub.set_defaults(handler=_decide, decision=name, done=done)

    history = commands.add_parser(
        "history",
        parents=[common],
        help="a node's events and its status after each",
        description="Replay the store's log for one node.",
    )
    history.add_argument("node", metavar="NODE")
    history.set_defaults(handler=_history)


def _status(args: argparse.Namespace, out: Output) -> int:
    from ..derived.kept import kept_status

    kept = kept_status(args.root, getattr(args, "plan", None), args.store, out.fmt)
    if kept is None:
        failing = _plan_free_status(out)
        if failing is None:
            failing = _derived_status(args, out)
    else:  # nothing it depends on changed: what it printed last time
        for line in kept.warnings:
            print(line, file=sys.stderr)
        if kept.printed is not None:
            print(kept.printed)
        failing = kept.failures
    if not args.check:
        return 0
    for node_id, why in failing:
        print(f"status --check: {node_id} {why}", file=sys.stderr)
    return 1 if failing else 0


def _plan_free_status(out: Output) -> list[tuple[str, str]] | None:
    """Print the status after files changed, judged without opening the plan
    (:mod:`..derived.planfree`); return the nodes that fail ``--check``, or None when it
    cannot be judged so (nothing printed)."""
    from ..derived.planfree import plan_free_miss
    from ..judge.states import PlanState

    miss = plan_free_miss(out.fmt)
    if miss is None:
        return None
    states = miss.states
    header = ["node", "kind", "status", "criteria", "reasons"]
    printed = None
    if isinstance(miss.look.answer[0], str):  # the kept table, the judged nodes' lines anew
        changed = {miss.at[n]: (_kept_cells(miss.was[n]), _cells(states[n])) for n in states}
        printed = patched(miss.look.answer[0], header, changed)
    if printed is None:  # a column's width may change: every row printed again
        try:
            rows = [miss.row(i) for i in range(len(miss.order))]
        except ValueError:  # a kept row that is not its node's: the command runs in full
            return None
        cells = [_cells(states[r[0]]) if r[0] in states else _kept_cells(r) for r in rows]
        printed = out.render({}, table(cells, header))
    now = dict(_check_failures(PlanState(states, {}), miss.fold, miss.settled))
    failing = []
    for node in miss.order:
        failure = now.get(node) if node in states else miss.failures.get(node)
        if failure is not None:
            failing.append((node, failure))
    miss.keep(printed, failing)
    for line in miss.warnings:
        print(line, file=sys.stderr)
    if printed is not None:
        print(printed)
    return failing


def _kept_cells(row: list[Any]) -> list[str]:
    """The table's cells of a node's kept row (:func:`~..judge.statejson.node_to_json`), as
    :func:`_cells` gives them for its state."""
    required = [c for c in row[4] if c[1]]
    count = f"{sum(c[2] == 'valid' for c in required)}/{len(required)}"
    reasons = row[3]
    why = "; ".join(r[1] or r[0] for r in reasons[:3]) + (" …" if len(reasons) > 3 else "")
    return [row[0], row[1], row[2], count, why]


def _cells(n: NodeState) -> list[str]:
    """The table's cells of node state *n*."""
    return [n.id, n.kind, n.status, _count(n), _reasons(n.reasons)]


def _derived_status(args: argparse.Namespace, out: Output) -> list[tuple[str, str]]:
    """Print the status derived now (kept for the next call: :mod:`..derived.kept`); return
    the nodes that fail ``--check``."""
    from ..derived.kept import keep_status, kept_lint, kept_status_of_meaning, known_files

    warned: list[str] = []

    def kept(plangraph: PlanGraph) -> list[str] | None:
        return kept_lint(plangraph, out.fmt)  # the plan's check, when it cannot have changed

    with open_plangraph(args, reading=True, warned=warned, kept=kept) as plangraph:
        plan = getattr(args, "plan", None)
        same = None  # the plan's bytes changed, not its meaning: the answer kept for it
        if not warned:
            same = kept_status_of_meaning(args.root, plan, args.store, out.fmt, plangraph)
        if same is not None:
            if same.printed is not None:
                print(same.printed)
            return same.failures
        # the files the kept answer's watch found as kept a moment ago are not looked at again
        plangraph.known_files = known_files(plangraph.store_path, f"status-{out.fmt}")
        fold = plangraph.fold()  # what the log says: status and --check need no more
        state = plangraph.status(fold)
        settled = {n for n, node in plangraph.graph.nodes.items() if node.cancelled}
        shown = _markdown(plangraph, state) if out.fmt == "markdown" else ""
        json_like = out.fmt not in ("text", "markdown")  # each format builds only what it prints
        if out.fmt == "markdown":
            printed = out.render({}, shown)
        elif json_like:
            data = plangraph.status_json(fold, state)
            printed = out.render(data, plugin_report(out.fmt, data) or "")
        else:
            nodes = list(state.nodes.values())
            rows = [_cells(n) for n in nodes]
            printed = out.render({}, table(rows, ["node", "kind", "status", "criteria", "reasons"]))
        failing = _check_failures(state, fold, settled)
        keep_status(plangraph, fold, out.fmt, printed, warned, failing)
    if printed is not None:
        print(printed)
    return failing


def _markdown(plangraph: PlanGraph, state: PlanState) -> str:
    """``status --format markdown``: the report's Markdown without the audit."""
    from ..report.markdown import markdown
    from ..report.view import build

    version = plangraph.plan_ref(create=False).version
    records = plangraph.decided_by(state)
    return markdown(build(plangraph.graph, state, version, records)).rstrip("\n")


def _check_failures(
    state: PlanState, fold: LogFold, settled: Collection[str]
) -> list[tuple[str, str]]:
    """Nodes that fail ``status --check``: claimed but not completed, completed once (every
    required criterion had passing evidence or an approval at some point) but not now, or
    stale (a required criterion's evidence no longer matches what it checked). Only a cancel
    in the plan file (*settled*) excuses a node: a ``cancel`` event is anyone's word, so a
    node claimed or satisfied before and cancelled by an event since still fails."""
    claimed, passed = fold.claimed, fold.passed
    failing = []
    for node in state.nodes.values():
        if node.status == "completed" or node.id in settled:
            continue
        status: str = node.status
        if status == "cancelled":
            status = "cancelled by an event, which settles nothing (`cancelled: true` does)"
        required = [c.id for c in node.criteria if c.required]
        if node.id in claimed:
            failing.append((node.id, f"is claimed but {status}"))
        elif required and all((node.id, c) in passed for c in required):
            failing.append((node.id, f"was satisfied by evidence before and is {status} now"))
        elif node.status == "stale":
            codes = ", ".join(dict.fromkeys(r.code for r in node.reasons))
            failing.append((node.id, f"is stale ({codes})"))
    return failing


def _count(node: NodeState) -> str:
    required = [c for c in node.criteria if c.required]
    return f"{sum(c.state == 'valid' for c in required)}/{len(required)}"


def _reasons(reasons: tuple[Reason, ...]) -> str:
    return "; ".join(r.message or r.code for r in reasons[:3]) + (" …" if len(reasons) > 3 else "")


def _verify(args: argparse.Namespace, out: Output) -> int:
    with open_plangraph(args) as plangraph:
        evidence = plangraph.verify(args.nodes, by=args.by, record=not args.dry_run)
    rows = [[e.ref, e.verifier, e.outcome, e.reason or "", e.id[:12]] for e in evidence]
    text = table(rows, ["criterion", "verifier", "outcome", "reason", "evidence"])
    for record in evidence:
        if record.outcome != "passed" and record.details.get("message"):
            text += f"\n{record.ref}: {record.details['message']}"
    if not evidence:
        text = "nothing to verify: no schema, artifact, command or plug-in criteria selected"
    out.emit({"evidence": [e.to_json() for e in evidence]}, text)
    return 1 if any(e.outcome != "passed" for e in evidence) else 0


def _claim(args: argparse.Namespace, out: Output) -> int:
    with open_plangraph(args) as plangraph:
        decision = plangraph.claim(
            args.node,
            by=args.by,
            idempotency_key=args.idempotency_key,
            expected_plan_version=args.expected_plan_version,
        )
    lines = [f"{decision.node}: {decision.verdict} (status {decision.status})"]
    lines += [f"  - {r.code}: {r.message}" for r in decision.reasons]
    lines += [f"  evidence {e}" for e in decision.evidence]
    out.emit(decision.to_json(), "\n".join(lines))
    return 0 if decision.verdict == "PASSED" else 1


def _split(ref: str) -> tuple[str, str]:
    from ..errors import UsageError, quoted

    node, _, criterion = ref.partition("/")
    if not node or not criterion:
        raise UsageError(f"expected NODE/CRITERION, got {quoted(ref)}")
    return node, criterion


_DECISIONS = {
    # name: (help, positional argument, past tense for the confirmation)
    "approve": (
        "approve an approval criterion (bound to the node's current inputs)",
        "ref",
        "approved",
    ),
    "revoke": ("withdraw an approval", "ref", "revoked"),
    "retry": (
        "give a node whose retry budget is spent a fresh budget (and clear a node marked for a "
        "person by REPLAN_BUDGET_EXHAUSTED, renewing its replan rounds)",
        "node",
        "retry granted",
    ),
    "cancel": ("cancel a node: it no longer needs to be completed", "node", "cancelled"),
}
"""The commands that record one person's decision about a node or a criterion."""


def _decide(args: argparse.Namespace, out: Output) -> int:
    with open_plangraph(args) as plangraph:
        if args.decision in ("approve", "revoke"):
            node, criterion = _split(args.ref)
            if args.decision == "approve":
                event = plangraph.approve(
                    node, criterion, by=args.by, note=args.note, role=args.role
                )
            else:
                event = plangraph.revoke(node, criterion, by=args.by, note=args.note)
            what = args.ref
        else:
            on_node = plangraph.allow_retry if args.decision == "retry" else plangraph.cancel
            event = on_node(args.node, by=args.by, note=args.note)
            what = args.node
    out.emit(_event_json(event), f"{what}: {args.done} by {args.by} (event {event.id[:12]})")
    return 0


def _event_json(event: Any) -> dict[str, Any]:
    data: dict[str, Any] = event.to_json()
    return {"event": data}


def _history(args: argparse.Namespace, out: Output) -> int:
    from ..judge.history import event_node, history
    from ..store.trust import policy_from_env, screen

    with open_plangraph(args, reading=True) as plangraph:
        # replayed light; the node's own events are read in full
        log = plangraph.store.log() if reading_store(plangraph, args) else []
        untrusted = screen(plangraph.store, log, policy_from_env()) if log else {}
        if args.node in plangraph.graph.nodes:
            replay = history(plangraph.graph, log, plangraph.snapshot(log), args.node, untrusted)
        else:  # a node removed from the plan keeps its events, with no status to replay
            replay = [(e, REMOVED) for e in log if event_node(e) == args.node]
            if not replay:
                plangraph.require_node(args.node)  # unknown: the message lists the known ones
        seqs = [e.seq for e, _ in replay]
        shown = plangraph.store.events(seqs=seqs, checked=True) if seqs else []
        events = {e.seq: e for e in shown}
    if gone := [e.seq for e, _ in replay if e.seq not in events]:
        from ..errors import StoreError

        raise StoreError(
            f"the store's log lists event {gone[0]} of {args.node}, which is not in the store "
            "(edited by hand?); run plangraph audit to see what changed"
        )
    full = [(events[e.seq], status) for e, status in replay]
    rows = [_history_row(e, status, untrusted) for e, status in full]
    data = {
        "node": args.node,
        "events": [
            {**_event_json(e)["event"], "status_after": s, "ignored": untrusted.get(e.seq)}
            for e, s in full
        ],
    }
    text = table(rows, ["seq", "at", "event", "criterion", "by", "outcome", "status after"])
    out.emit(data, text if rows else f"{args.node}: no events yet")
    return 0


def _history_row(event: Any, status: str, untrusted: Mapping[int, str]) -> list[str]:
    """One row of ``history``'s table; who recorded it shown with its control characters
    escaped (a name stored before they were refused, or merged from another store)."""
    said = _outcome(event, untrusted)
    by = printable(event.by)
    return [str(event.seq), event.at[:19], event.kind, event.criterion or "", by, said, status]


REMOVED = "(not in the plan)"
"""The status column of ``history`` for a node that the plan no longer has."""


def _outcome(event: Any, untrusted: Mapping[int, str]) -> str:
    """What the event says, in a word or two: an evidence outcome, a claim's verdict, an
    observed change with its path and commit; an event the gate does not count says so."""
    said = _said(event)
    code = untrusted.get(event.seq)
    return said if code is None else f"{said} (ignored: {code})".lstrip()


def _said(event: Any) -> str:
    payload = event.payload
    if event.kind == "evidence":
        return str(payload.get("outcome", ""))
    if event.kind == "claim":
        return str(payload.get("verdict", ""))
    if event.kind == "change":
        commit = f" (commit {str(payload['commit'])[:7]})" if payload.get("commit") else ""
        return f"{payload.get('change', 'changed')} {payload.get('path', '')}{commit}"
    if event.kind == "patch":
        code = f" {payload['code']}" if payload.get("code") else ""
        versions = f" v{payload.get('version_before')} -> v{payload.get('version_after')}"
        return f"{payload.get('outcome', '')}{code}" + (
            versions if payload.get("outcome") == "applied" else ""
        )
    return ""
