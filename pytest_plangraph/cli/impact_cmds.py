"""``impact``: what changed, what it invalidates, what to review, what is blocked (DESIGN §6).

Without ``--since`` the store's evidence is compared with the files now (working tree
included); ``--apply`` then records each observed change as a ``change`` event on every node
it invalidates, so ``history`` shows when and why the node went stale. With ``--since REV``
no store is needed: the diff ``REV..HEAD`` plus the working tree says what would be
invalidated — a pull-request preview, plan edits included. ``--no-commits`` leaves out the
commit behind each change (on a long range, finding them is most of the time).
``--format markdown`` suits ``$GITHUB_STEP_SUMMARY``.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from ..errors import UsageError
from .common import Output, common_options, open_plangraph
from .impact_basis import BASIS, basis_extra
from .impact_kept import KeptKey, keep_printed, kept_key, kept_shape, print_kept
from .impact_text import markdown, plain

if TYPE_CHECKING:
    from ..api import PlanGraph
    from ..impact.basis import ChangedPath, ImpactReport


def register(commands: Any) -> None:
    """Add the ``impact`` subcommand."""
    impact = commands.add_parser(
        "impact",
        parents=[common_options(formats=("text", "json", "markdown"))],
        help="what changed and which evidence it invalidates",
        description="Map changed paths to the plan's nodes and follow strong edges downstream. "
        "Without --since, the store's evidence is compared with the files now; with --since "
        "REV, the diff REV..HEAD plus the working tree is judged without a store.",
    )
    impact.add_argument(
        "--since", metavar="REV", help="judge the diff from REV (e.g. origin/main) instead"
    )
    impact.add_argument("--check", action="store_true", help="exit 1 when anything is invalidated")
    impact.add_argument(
        "--no-commits",
        dest="commits",
        action="store_false",
        help="do not name the commit behind each change (skips a git log over the range)",
    )
    impact.add_argument(
        "--apply",
        action="store_true",
        help="record the observed changes as events (not with --since)",
    )
    impact.add_argument(
        "--select",
        action="store_true",
        help="print the pytest node ids that re-verify every criterion whose evidence is "
        "missing, stale or failed (one a line; not with --since, --apply or --check)",
    )
    impact.set_defaults(handler=_impact)


def _impact(args: argparse.Namespace, out: Output) -> int:
    if args.select:
        return _select(args, out)
    if args.apply and args.since is not None:
        raise UsageError(
            "--apply records changes observed against the store's evidence; "
            "it cannot be combined with --since"
        )
    key: KeptKey | None = None
    if not args.apply:
        key = getattr(args, "kept_key", None)  # read before parsing (.impact_kept)
        if not isinstance(key, KeptKey) or not key.made_for(args, out.fmt):
            plan = getattr(args, "plan", None)
            key = kept_key(args.root, plan, args.store, args.since, args.commits, out.fmt)
            if key.name is not None:
                from ..derived.kept import kept_answer

                answer = kept_shape(kept_answer(args.root, plan, args.store, key.name, key.extra))
                code = None if answer is None else print_kept(key, answer, check=args.check)
                if code is not None:  # nothing it depends on changed: what it printed last
                    return code
        if key.failed is not None:  # git did not finish while the key was made
            raise key.failed
        diff, cache = key.diff, key.cache
        if key.name is not None and diff is not None and cache is not None and not key.basis_looked:
            from .impact_basis import basis_answer  # another diff: made from the kept basis

            answered = basis_answer(
                key.options, diff, cache, out.fmt, commits=args.commits, check=args.check
            )
            if answered is not None:
                return answered
    warned: list[str] = []
    # over the store, impact reads it and makes none; --apply records what it finds
    reading = args.since is None and not args.apply
    with open_plangraph(args, reading=reading, warned=warned) as plangraph:
        diff = None if key is None else key.diff
        report = plangraph.impact(args.since, commits=args.commits, diff=diff)
        applied = apply(plangraph, report) if args.apply else 0
        notes = [f"plangraph: note: {note}" for note in report.notes]
        text = markdown(report) if args.format == "markdown" else plain(report)
        if args.apply and not out.json:
            text += f"\nrecorded {applied} change event{'s' * (applied != 1)}"
        printed = out.render(report.to_json(), text)
        reference = None if key is None or key.name is None else keep_printed(key, printed)
        if key is not None and key.name is not None and reference is not None:
            made = [reference, [*warned, *notes], len(report.invalidated)]
            _keep(plangraph, key.name, made, key.extra, storeless=args.since is not None)
        if key is not None and key.name is not None and report.basis is not None:
            basis = [warned, report.basis.to_json()]  # for the next diff (.impact_basis)
            _keep(plangraph, BASIS, basis, basis_extra(), storeless=True)
    for line in notes:
        print(line, file=sys.stderr)
    if printed is not None:
        print(printed)
    return 1 if args.check and report.invalidated else 0


def _keep(plangraph: PlanGraph, name: str, answer: Any, extra: Any, *, storeless: bool) -> None:
    """Keep *answer* for the next ``impact`` of the same inputs: with the log and the snapshot
    the report was made from, or (no store, ``--since``) with a snapshot of the plan's files,
    which the check of the plan reads."""
    from ..derived.kept import keep_answer
    from ..judge.logfold import LogFold

    taken = plangraph.taken
    fold = taken[0] if taken is not None else None
    if not isinstance(fold, LogFold):
        if not storeless or plangraph.has_store():
            return
        fold = plangraph.fold()  # none: no store is read or made
        plangraph.snapshot(fold)
    keep_answer(plangraph, fold, name, answer, extra, storeless=storeless)


def _select(args: argparse.Namespace, out: Output) -> int:
    """``impact --select``: the node ids to run, one a line (text) or in an object (json)."""
    given = [
        name
        for name, on in (
            ("--since", args.since is not None),
            ("--apply", args.apply),
            ("--check", args.check),
        )
        if on
    ]
    if given or args.format == "markdown":
        what = given[0] if given else "--format markdown"
        raise UsageError(
            f"--select lists what the store's evidence says to run again; it cannot be "
            f"combined with {what}"
        )
    with open_plangraph(args, reading=True) as plangraph:
        selection = plangraph.rerun_selection()
    for ref, why in selection.unresolved.items():
        print(
            f"plangraph: note: {ref}: {why}; run `pytest --plangraph --plangraph-stale` to "
            "collect its tests",
            file=sys.stderr,
        )
    out.emit(selection.to_json(), "\n".join(selection.node_ids))
    return 0


def apply(plangraph: PlanGraph, report: ImpactReport) -> int:
    """Record a ``change`` event for each (invalidated node, changed path behind it); the same
    observation twice is one event. Returns how many events were new."""
    from ..canonical import digest
    from ..vcs.environment import actor

    by_path = {c.path: c for c in report.changed}
    who = actor()
    before = plangraph.store.count()
    for entry in report.invalidated:
        for path in entry.paths:
            payload = _payload(by_path[path])
            key = digest({"kind": "change", "node": entry.node, **payload})
            plangraph.append("change", entry.node, by=who, payload=payload, idempotency_key=key)
    return plangraph.store.count() - before


def _payload(changed: ChangedPath) -> dict[str, Any]:
    return {
        "path": changed.path,
        "change": changed.change,
        "old": changed.old,
        "new": changed.new,
        "commit": changed.commit,
    }
