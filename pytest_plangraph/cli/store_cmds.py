"""``audit``, ``export`` and ``merge``: the store as a record others can check."""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import sys
from datetime import timedelta
from pathlib import Path
from typing import Any

from ..errors import UsageError, quoted
from .common import Output, common_options, open_plangraph, reading_store
from .writing import standard_output, write_whole

_AGE = re.compile(r"^(\d+)([smhdw])$")
_UNITS = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days", "w": "weeks"}


def register(commands: Any) -> None:
    """Add the store subcommands."""
    audit = commands.add_parser(
        "audit",
        parents=[common_options()],
        help="verify the hash chain and find phantom completions and stale evidence",
        description="Verify the store's hash chain and signatures, list claims without valid "
        "evidence (phantom completions) and stale or too old evidence. Exit 1 on any finding.",
    )
    audit.add_argument(
        "--max-age",
        metavar="AGE",
        help="also report evidence older than AGE (e.g. 12h, 7d, 2w)",
    )
    audit.add_argument(
        "--expect-head",
        metavar="SEQ:HASH",
        help="also report when the store does not hold this head (what `plangraph head` "
        "printed) at its sequence number: a store rolled back, cut short or replaced",
    )
    audit.set_defaults(handler=_audit)
    head = commands.add_parser(
        "head",
        parents=[common_options(plan=False)],
        help="print the last event of the chain as SEQ:HASH",
        description="Print the sequence number and chain hash of the store's last event "
        "(0: for a store without events). Publish it where agents cannot write (a CI log, a "
        "status check), and check it later with `plangraph audit --expect-head SEQ:HASH`.",
    )
    head.set_defaults(handler=_head)
    export = commands.add_parser(
        "export",
        parents=[common_options(formats=("jsonl", "json", "in-toto"), plan=False)],
        help="write every event as JSON Lines (or in-toto attestations)",
        description="Write the store's events, chain fields included, one JSON object a line "
        '(each carrying "format": 1; --format json and jsonl both write this). With --format '
        "in-toto, write instead one signed attestation (a DSSE envelope, as `plangraph attest` "
        "makes) per completed node, one a line; signed with PLANGRAPH_SIGNING_KEY_FILE.",
    )
    export.add_argument(
        "--plan",
        type=Path,
        metavar="PATH",
        help="plan file, for --format in-toto (default: plangraph.yaml at the repository root)",
    )
    export.add_argument("--output", "-o", type=Path, metavar="FILE", help="default: stdout")
    export.set_defaults(handler=_export)
    merge = commands.add_parser(
        "merge",
        parents=[common_options(plan=False)],
        help="union other stores (e.g. CI shards) into this one",
        description="Append the events of each STORE that this store lacks. Every input's chain "
        "is verified first; a tampered input is refused by name and nothing is written.",
    )
    merge.add_argument("sources", nargs="+", type=Path, metavar="STORE")
    merge.set_defaults(handler=_merge)


def parse_age(text: str) -> timedelta:
    """``12h`` → 12 hours; raise :class:`UsageError` on anything else."""
    match = _AGE.match(text.strip())
    if not match:
        raise UsageError(
            f"--max-age {quoted(text)}: expected a number and a unit s, m, h, d or w (7d)"
        )
    try:
        return timedelta(**{_UNITS[match.group(2)]: int(match.group(1))})
    except (OverflowError, ValueError):  # ValueError: more digits than int() takes
        raise UsageError(f"--max-age {quoted(text)}: too long; write at most 999999999d") from None


def parse_head(text: str) -> tuple[int, str]:
    """``12:<64 hex digits>`` (or ``0:`` for a store without events) → (12, the hash); raise
    :class:`UsageError` on anything else."""
    match = _HEAD.fullmatch(text.strip())
    if match is None or (match.group(2) == "") != (int(match.group(1)) == 0):
        raise UsageError(
            f"--expect-head {quoted(text)}: expected SEQ:HASH as `plangraph head` prints it, a "
            "sequence number and a 64-digit hex chain hash (e.g. 12:3f5a…), or 0: for a store "
            "without events"
        )
    return int(match.group(1)), match.group(2)


_HEAD = re.compile(r"([0-9]{1,18}):([0-9a-f]{64}|)")


def _head(args: argparse.Namespace, out: Output) -> int:
    from ..store.sqlite import Store
    from ..store.tail import Head
    from ..vcs.environment import DEFAULT_PLAN, resolve_paths

    if args.root is not None and not Path(args.root).is_dir():
        what = "is not a directory" if Path(args.root).exists() else "does not exist"
        raise UsageError(f"the root directory {args.root} {what}; pass an existing one as --root")
    root, _, store_path = resolve_paths(args.root, None, args.store)
    named = args.store is not None or bool(os.environ.get("PLANGRAPH_STORE"))
    if not named and not (root / ".git").exists() and not (root / DEFAULT_PLAN).exists():
        # "0:" would be published as the head, and every store holds "no event"
        raise UsageError(
            f"{root} is not a repository (no .git and no {DEFAULT_PLAN}) and no --store is "
            "given; run head at the repository root, or pass --root or --store"
        )
    if store_path.is_file() and store_path.stat().st_size > 0:
        with Store.open(store_path, create=False, readonly=True) as store:
            head = store.head()
    elif args.store is not None or os.environ.get("PLANGRAPH_STORE") or store_path.exists():
        Store.open(store_path, create=False, readonly=True).close()  # it says what is wrong
        head = Head(0, "", None)  # not reached: an empty or missing file is refused
    else:
        head = Head(0, "", None)  # no store yet: nothing recorded
    out.emit(head.to_json(), str(head))
    return 0


def _audit(args: argparse.Namespace, out: Output) -> int:
    max_age = parse_age(args.max_age) if args.max_age is not None else None
    expected = parse_head(args.expect_head) if args.expect_head is not None else None
    with open_plangraph(args, reading=True) as plangraph:
        report = plangraph.audit(expect_head=expected, max_age=max_age)
    text = _audit_text(report.findings)
    out.emit(report.to_json(), "\n".join([*report.notes, text]))
    return 0 if report.clean else 1


def _audit_text(data: dict[str, list[dict[str, Any]]]) -> str:
    lines = []
    for problem in data["chain"]:
        lines.append(f"chain: {problem.get('code')}: {problem.get('message')}")
    for ignored in data["ignored_events"]:
        lines.append(f"signature: {ignored['code']}: {ignored['message']}")
    for p in data["phantom_completions"]:
        lines.append(
            f"phantom completion: {p['node']} is {p['status']}, last claimed by {p['by']} "
            f"at {p['at'][:19]} ({p['claims']} claim(s))"
        )
    for s in data["stale"]:
        lines.append(f"stale: {s['node']}/{s['criterion']} ({', '.join(s['reasons'])})")
    for o in data["too_old"]:
        lines.append(f"too old: {o['node']}/{o['criterion']} recorded {o['recorded'][:19]}")
    for h in data["needs_person"]:
        lines.append(f"needs a person: {h['node']} ({h['code']}): `{h['run']}` clears it")
    if not lines:
        return "audit: chain intact, no phantom completions, no stale evidence"
    count = sum(len(v) for v in data.values())
    return "\n".join([*lines, f"audit: {count} finding(s)"])


def _export(args: argparse.Namespace, out: Output) -> int:
    from ..store.sqlite import Store
    from ..vcs.environment import resolve_paths

    _, _, store_path = resolve_paths(args.root, None, args.store)
    if args.output is not None and _is_store_file(args.output, store_path):
        raise UsageError(
            f"refusing to export into {args.output}: it is the store itself (or one of its "
            "journal files), which the export would overwrite; name another file, e.g. "
            "events.jsonl"
        )
    if args.format == "in-toto":
        return _export_in_toto(args)
    if args.plan is not None:
        raise UsageError("--plan goes with --format in-toto; the events need no plan")
    with Store.open(store_path, create=False, readonly=True) as store:
        if args.output is None:
            count = store.export_jsonl(standard_output("the events"))
        else:
            count = write_whole(args.output, store.export_jsonl)
    print(f"exported {count} event(s)", file=sys.stderr)
    return 0


def _export_in_toto(args: argparse.Namespace) -> int:
    from ..attest.dsse import dumps
    from .writing import write_text

    with open_plangraph(args, reading=True) as plangraph:
        reading_store(plangraph, args, required=True)
        envelopes = [a.envelope for a in plangraph.attest_completed() if a.envelope is not None]
    text = "".join(dumps(envelope) + "\n" for envelope in envelopes)
    if args.output is None:
        standard_output("the attestations").write(text)
    else:
        write_text(args.output, text)
    print(f"exported {len(envelopes)} attestation(s), one per completed node", file=sys.stderr)
    return 0


def _is_store_file(output: Path, store_path: Path) -> bool:
    """Whether writing *output* would overwrite the store at *store_path* or its journal files
    (the same path, through a symlink or a hard link too)."""
    targets = [Path(f"{store_path}{suffix}") for suffix in ("", "-wal", "-shm", "-journal")]
    real = os.path.realpath(output)
    for target in targets:
        if real == os.path.realpath(target):
            return True
        with contextlib.suppress(OSError):
            if os.path.samefile(output, target):
                return True
    return False


def _merge(args: argparse.Namespace, out: Output) -> int:
    from ..store.chain import signing_key_from_env
    from ..store.merging import load_source
    from ..store.sqlite import Store
    from ..vcs.environment import resolve_paths

    _, _, store_path = resolve_paths(args.root, None, args.store)
    # every input is checked before the target is opened: a refused merge makes no store
    loaded = [load_source(source, signing_key_from_env(), Store.open) for source in args.sources]
    with Store.open(store_path) as store:
        result = store.merge(args.sources, loaded=loaded)
    data = vars(result)
    text = f"merged into {store_path}: " + ", ".join(f"{k} {v}" for k, v in data.items())
    if result.unchecked_signatures:
        print(
            f"plangraph: warning: {result.unchecked_signatures} merged event(s) were signed, "
            "but PLANGRAPH_SIGNING_KEY is not set: their signatures were not checked and this "
            "store keeps them unsigned; set the key they were signed with before merging to "
            "check them",
            file=sys.stderr,
        )
    out.emit({"merge": data}, text)
    return 0
